//! Styled text wrapped at word boundaries to the terminal's width: the terminal's own wrap cuts
//! words in two (`whet`/`her`). Escape sequences (the styles [`super::style::Style`] adds) take
//! no columns and are kept where they stand; characters count by their display width. A word
//! wider than a whole line is cut where the line ends (a long address, a path).
//!
//! The text given is already safe for the terminal ([`skillet_skills::terminal_safe`]): the
//! only escapes in it are the styles' CSI sequences.

use unicode_width::UnicodeWidthChar as _;

/// The fewest columns a line's text is given, however narrow the terminal or deep the indent.
const MIN_TEXT_COLUMNS: usize = 10;

/// `body` after `first` (the first line's prefix: indentation, a bullet), wrapped to `width`
/// columns, each later line starting with `rest` (a hanging indent, a quote's bar). Lines are
/// joined by `\n`, with none at the end. Spaces where a line breaks are dropped; spaces inside
/// a line are kept as they are.
pub fn wrap(first: &str, body: &str, rest: &str, width: usize) -> String {
    let rest_width = visible_width(rest);
    let first_width = visible_width(first);
    let mut out = String::with_capacity(first.len() + body.len() + 16);
    out.push_str(first);
    let mut column = first_width;
    // Whether the current line holds a word yet (a word never moves to a line of its own
    // while the line it would leave is empty).
    let mut has_word = false;
    let mut line_start_width = first_width;
    for piece in pieces(body) {
        match piece {
            Piece::Space { text, columns } => {
                // Dropped again if a line breaks here.
                column += columns;
                out.push_str(text);
            }
            Piece::Word { text, columns } => {
                let room = width.max(line_start_width + MIN_TEXT_COLUMNS);
                if has_word && column + columns > room {
                    trim_trailing_spaces(&mut out);
                    out.push('\n');
                    out.push_str(rest);
                    column = rest_width;
                    line_start_width = rest_width;
                }
                let room = width.max(line_start_width + MIN_TEXT_COLUMNS);
                if column + columns <= room {
                    out.push_str(text);
                    column += columns;
                } else {
                    // Wider than a line: cut where each line ends.
                    for (c, escape) in chars(text) {
                        if let Some(escape) = escape {
                            out.push_str(escape);
                            continue;
                        }
                        let w = c.width().unwrap_or(0);
                        let room = width.max(line_start_width + MIN_TEXT_COLUMNS);
                        if column + w > room && column > line_start_width {
                            out.push('\n');
                            out.push_str(rest);
                            column = rest_width;
                            line_start_width = rest_width;
                        }
                        out.push(c);
                        column += w;
                    }
                }
                has_word = true;
            }
        }
    }
    out
}

/// Each line of `text` wrapped to `width`, its later rows indented two columns more than the
/// line itself (a message's `hint:` and `caused by:` lines stay apart from what they follow).
pub fn wrap_lines(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let body = line.trim_start_matches(' ');
        let lead = &line[..line.len() - body.len()];
        out.push_str(&wrap(lead, body, &format!("{lead}  "), width));
    }
    out
}

/// Columns `text` takes: escape sequences take none.
pub fn visible_width(text: &str) -> usize {
    chars(text)
        .filter(|(_, escape)| escape.is_none())
        .map(|(c, _)| c.width().unwrap_or(0))
        .sum()
}

/// Drops the spaces at the end of `out` (where a line breaks), keeping escape sequences that
/// follow them.
fn trim_trailing_spaces(out: &mut String) {
    // Escapes after the last word are moved past the removed spaces.
    let mut escapes = String::new();
    loop {
        if out.ends_with(' ') {
            out.pop();
            continue;
        }
        // An escape sequence at the very end: `ESC [ … final`.
        if let Some(start) = out.rfind('\u{1b}')
            && is_escape(&out[start..])
        {
            escapes.insert_str(0, &out[start..]);
            out.truncate(start);
            continue;
        }
        break;
    }
    out.push_str(&escapes);
}

/// Whether `text` is exactly one CSI sequence.
fn is_escape(text: &str) -> bool {
    let mut chars = chars(text);
    matches!(chars.next(), Some((_, Some(escape))) if escape.len() == text.len())
}

/// A run of spaces or of other characters (escape sequences belong to the run they are in).
enum Piece<'a> {
    Space { text: &'a str, columns: usize },
    Word { text: &'a str, columns: usize },
}

/// `text` cut into runs of spaces and runs of everything else.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut columns = 0;
    let mut space: Option<bool> = None;
    let mut at = 0;
    for (c, escape) in chars(text) {
        let length = escape.map_or(c.len_utf8(), str::len);
        if escape.is_none() {
            let is_space = c == ' ';
            if space.is_some_and(|was| was != is_space) {
                pieces.push(piece(&text[start..at], columns, space == Some(true)));
                start = at;
                columns = 0;
            }
            space = Some(is_space);
            columns += c.width().unwrap_or(0);
        }
        at += length;
    }
    if start < text.len() {
        pieces.push(piece(&text[start..], columns, space == Some(true)));
    }
    pieces
}

fn piece(text: &str, columns: usize, space: bool) -> Piece<'_> {
    if space {
        Piece::Space { text, columns }
    } else {
        Piece::Word { text, columns }
    }
}

/// Each character of `text`, or each escape sequence whole (`Some(sequence)`; its `char` is
/// the escape character).
fn chars(text: &str) -> impl Iterator<Item = (char, Option<&str>)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let c = rest.chars().next()?;
        if c == '\u{1b}' && rest[1..].starts_with('[') {
            // Parameters and intermediates, then one final byte in `@`..=`~`.
            let end = rest[2..]
                .char_indices()
                .find(|&(_, c)| ('@'..='~').contains(&c))
                .map_or(rest.len(), |(index, c)| 2 + index + c.len_utf8());
            let (escape, after) = rest.split_at(end);
            rest = after;
            return Some((c, Some(escape)));
        }
        rest = &rest[c.len_utf8()..];
        Some((c, None))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<&str> {
        text.split('\n').collect()
    }

    #[test]
    fn words_are_never_cut_and_lines_fit() {
        let text = "whether the answer streams or not, no word is ever cut in two at the edge";
        let wrapped = wrap("", text, "", 20);
        for line in lines(&wrapped) {
            assert!(visible_width(line) <= 20, "{wrapped}");
            assert!(
                !line.starts_with(' ') && !line.ends_with(' '),
                "{wrapped:?}"
            );
        }
        let words: Vec<&str> = wrapped.split_whitespace().collect();
        assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
    }

    #[test]
    fn a_hanging_indent_and_a_prefix_on_every_line() {
        let wrapped = wrap("  • ", "one two three four five six", "    ", 14);
        assert_eq!(
            lines(&wrapped),
            ["  • one two", "    three four", "    five six"]
        );
        let quoted = wrap("│ ", "alpha beta gamma delta", "│ ", 12);
        assert_eq!(lines(&quoted), ["│ alpha beta", "│ gamma", "│ delta"]);
    }

    #[test]
    fn styles_take_no_columns_and_stay_in_place() {
        let bold = "\u{1b}[1mbold words here\u{1b}[0m and plain";
        let wrapped = wrap("", bold, "", 10);
        assert_eq!(
            lines(&wrapped),
            ["\u{1b}[1mbold words", "here\u{1b}[0m and", "plain"]
        );
        assert_eq!(visible_width("\u{1b}[36mcode\u{1b}[0m"), 4);
    }

    #[test]
    fn wide_characters_and_long_words() {
        // Two columns each, and no spaces: cut where the line ends, never inside a character.
        let wrapped = wrap("", "日本語の文章 です", "", 11);
        assert_eq!(lines(&wrapped), ["日本語の文", "章 です"]);
        let long = wrap("", "see https://example.com/a/very/long/path ok", "", 16);
        for line in lines(&long) {
            assert!(visible_width(line) <= 16, "{long}");
        }
        assert!(
            long.replace('\n', "")
                .contains("https://example.com/a/very/long/path")
        );
    }

    #[test]
    fn a_message_wraps_line_by_line_with_its_indent() {
        let wrapped = wrap_lines("note: one two three four\n  hint: five six seven", 16);
        assert_eq!(
            lines(&wrapped),
            [
                "note: one two",
                "  three four",
                "  hint: five six",
                "    seven"
            ]
        );
    }

    #[test]
    fn a_narrow_terminal_still_gives_text_room() {
        let wrapped = wrap("          ", "a b c d e f g h i j k l", "          ", 12);
        for line in lines(&wrapped) {
            assert!(visible_width(line) <= 10 + MIN_TEXT_COLUMNS, "{wrapped}");
        }
    }
}
