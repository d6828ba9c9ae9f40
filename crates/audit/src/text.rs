//! Lines of a file, and excerpts of them that are safe to show: invisible and control
//! characters are written as escapes, never echoed.

use std::fmt::Write as _;

/// The most characters of a line an excerpt shows.
pub const MAX_EXCERPT_CHARS: usize = 100;
/// The most characters of a detail (decoded hidden text, counts).
pub const MAX_DETAIL_CHARS: usize = 120;
/// How many characters before a hit an excerpt starts.
const EXCERPT_LEAD_CHARS: usize = 30;

/// The lines of a text: byte ranges without their line ending (`\n` or `\r\n`).
pub(crate) struct Lines {
    spans: Vec<(usize, usize)>,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Self {
        let mut spans = Vec::new();
        let mut start = 0;
        for (at, byte) in text.bytes().enumerate() {
            if byte == b'\n' {
                let end = if at > start && text.as_bytes()[at - 1] == b'\r' {
                    at - 1
                } else {
                    at
                };
                spans.push((start, end));
                start = at + 1;
            }
        }
        if start < text.len() || spans.is_empty() {
            spans.push((start, text.len()));
        }
        Self { spans }
    }

    /// How many lines.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The byte range of line `index` (0-based).
    pub(crate) fn span(&self, index: usize) -> (usize, usize) {
        self.spans[index]
    }

    /// The 0-based line holding byte `offset`.
    pub(crate) fn index_of(&self, offset: usize) -> usize {
        self.spans
            .partition_point(|&(start, _)| start <= offset)
            .saturating_sub(1)
    }
}

/// Characters that change how text reads without showing, or that act on a terminal: escaped
/// in excerpts. The emoji presentation selector U+FE0F is left as is after a character that
/// is not ASCII (it follows most emoji).
pub(crate) fn is_hidden(c: char, prev: Option<char>) -> bool {
    (c.is_control() && c != '\t')
        || (is_invisible_format(c) && (c != '\u{fe0f}' || prev.is_none_or(|p| p.is_ascii())))
        || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Invisible format characters: they show as nothing (or change only how text around them
/// shows) and so can split a keyword without the reader seeing it. The text rules also run on
/// each file with these removed ([`Stripped`]).
pub(crate) fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{00ad}' // soft hyphen
        | '\u{034f}' // combining grapheme joiner
        | '\u{061c}' // Arabic letter mark
        | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' // Hangul fillers
        | '\u{17b4}' | '\u{17b5}' // Khmer inherent vowels
        | '\u{180b}'..='\u{180f}' // Mongolian variation selectors and vowel separator
        | '\u{200b}'..='\u{200f}' // zero-width space, joiners, LRM, RLM
        | '\u{202a}'..='\u{202e}' // bidi embeddings and overrides
        | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
        | '\u{2066}'..='\u{206f}' // bidi isolates, deprecated format characters
        | '\u{fe00}'..='\u{fe0f}' // variation selectors
        | '\u{feff}' // zero-width no-break space (byte-order mark)
        | '\u{1bca0}'..='\u{1bca3}' // shorthand format controls
        | '\u{1d173}'..='\u{1d17a}' // musical formatting
        | '\u{e0000}'..='\u{e007f}' // tag characters
        | '\u{e0100}'..='\u{e01ef}') // variation selectors supplement
}

/// A text with every invisible format character removed, and the way back from its byte
/// offsets to the original's. Line ends are kept, so line numbers are the same in both.
pub(crate) struct Stripped {
    /// The text without them.
    pub(crate) text: String,
    /// At each place where characters were removed: its offset in `text`, and how many bytes
    /// had been removed before it (that place's run included), in increasing order.
    shifts: Vec<(usize, usize)>,
}

impl Stripped {
    /// `text` stripped, or `None` when it holds no invisible format character.
    pub(crate) fn new(text: &str) -> Option<Self> {
        if text.is_ascii() || !text.chars().any(is_invisible_format) {
            return None;
        }
        let mut stripped = String::with_capacity(text.len());
        let mut shifts = Vec::new();
        let mut removed = 0;
        let mut in_run = false;
        for c in text.chars() {
            if is_invisible_format(c) {
                removed += c.len_utf8();
                if in_run {
                    if let Some(last) = shifts.last_mut() {
                        *last = (stripped.len(), removed);
                    }
                } else {
                    shifts.push((stripped.len(), removed));
                }
                in_run = true;
            } else {
                stripped.push(c);
                in_run = false;
            }
        }
        Some(Self {
            text: stripped,
            shifts,
        })
    }

    /// Bytes removed before `offset` of the stripped text; with `at_end`, the run of removed
    /// characters right at `offset` (after the end of a match) is not counted.
    fn removed_before(&self, offset: usize, at_end: bool) -> usize {
        let count = if at_end {
            self.shifts.partition_point(|&(at, _)| at < offset)
        } else {
            self.shifts.partition_point(|&(at, _)| at <= offset)
        };
        count.checked_sub(1).map_or(0, |index| self.shifts[index].1)
    }

    /// The original offset of the stripped text's `offset` where a match starts there: after
    /// any characters removed right before it.
    pub(crate) fn start_in_original(&self, offset: usize) -> usize {
        offset + self.removed_before(offset, false)
    }

    /// Whether the original text of the stripped span `start..end` held removed characters:
    /// the match exists only because they were removed.
    pub(crate) fn hides(&self, start: usize, end: usize) -> bool {
        end > start && self.removed_before(end, true) > self.removed_before(start, false)
    }
}

/// `text` with every hidden character written `\u{…}`; a run of more than two is written as its
/// first and last with the count, so a long hidden payload does not flood the excerpt.
pub fn safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        if c == '\t' {
            out.push(' ');
            index += 1;
            continue;
        }
        let prev = index.checked_sub(1).map(|before| chars[before]);
        if !is_hidden(c, prev) {
            out.push(c);
            index += 1;
            continue;
        }
        // A run of hidden characters: each one's predecessor is hidden too, or is `prev`.
        let run = 1 + chars[index + 1..]
            .iter()
            .zip(&chars[index..])
            .take_while(|&(&c, &before)| is_hidden(c, Some(before)))
            .count();
        if run > 2 {
            let last = chars[index + run - 1];
            let _ = write!(
                out,
                "\\u{{{:x}}}…\\u{{{:x}}} ({run} hidden)",
                u32::from(c),
                u32::from(last)
            );
        } else {
            for hidden in &chars[index..index + run] {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(*hidden));
            }
        }
        index += run;
    }
    out
}

/// The most bytes one character takes in UTF-8.
const MAX_CHAR_BYTES: usize = 4;
/// How far, in bytes, an excerpt's window reaches before the hit: enough for
/// [`EXCERPT_LEAD_CHARS`] characters of any width.
const WINDOW_BEFORE_BYTES: usize = EXCERPT_LEAD_CHARS * MAX_CHAR_BYTES;
/// How far, in bytes, an excerpt's window reaches after the hit: enough for the
/// [`MAX_EXCERPT_CHARS`] characters shown and one more, to tell whether the line goes on.
const WINDOW_AFTER_BYTES: usize = (MAX_EXCERPT_CHARS + 1) * MAX_CHAR_BYTES;

/// The part of `line` an excerpt around byte `at` may show, found from byte offsets alone (a
/// few steps to reach character boundaries): at most [`WINDOW_BEFORE_BYTES`] before `at` and
/// [`WINDOW_AFTER_BYTES`] after it, plus a character's bytes, however long the line. Returns
/// the window, where it starts in the line, and `at` within it.
fn window(line: &str, at: usize) -> (&str, usize, usize) {
    let at = line.floor_char_boundary(at);
    let start = line.floor_char_boundary(at.saturating_sub(WINDOW_BEFORE_BYTES));
    let end = line.ceil_char_boundary(at.saturating_add(WINDOW_AFTER_BYTES));
    (&line[start..end], start, at - start)
}

/// A short, safe excerpt of `line` around byte `at`: up to [`EXCERPT_LEAD_CHARS`] characters
/// before it, [`MAX_EXCERPT_CHARS`] in all, `…` where the line goes on. Built from a bounded
/// [`window`] of the line: the time it takes does not grow with the line's length.
pub(crate) fn excerpt(line: &str, at: usize) -> String {
    let (near, near_start, at) = window(line, at);
    let lead = near[..at]
        .char_indices()
        .rev()
        .take(EXCERPT_LEAD_CHARS)
        .last()
        .map_or(at, |(index, _)| index);
    let shown_end = near[lead..]
        .char_indices()
        .nth(MAX_EXCERPT_CHARS)
        .map_or(near.len(), |(index, _)| lead + index);
    let mut out = String::new();
    if near_start + lead > 0 {
        out.push('…');
    }
    out.push_str(safe(near[lead..shown_end].trim()).as_str());
    if near_start + shown_end < line.len() {
        out.push('…');
    }
    out
}

/// `text` cut to [`MAX_DETAIL_CHARS`] characters (with `…` when cut), made safe; only those
/// characters are looked at.
pub(crate) fn detail(text: &str) -> String {
    match text.char_indices().nth(MAX_DETAIL_CHARS) {
        None => safe(text),
        Some((cut, _)) => format!("{}…", safe(&text[..cut])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_offsets() {
        let text = "a\r\nbc\n\nd";
        let lines = Lines::new(text);
        assert_eq!(lines.len(), 4);
        assert_eq!(lines.span(0), (0, 1));
        assert_eq!(lines.span(1), (3, 5));
        assert_eq!(lines.index_of(4), 1);
        assert_eq!(lines.index_of(7), 3);
        assert_eq!(Lines::new("").len(), 1);
    }

    #[test]
    fn hidden_characters_are_escaped_never_echoed() {
        assert_eq!(safe("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(
            safe("x\u{e0069}\u{e0067}\u{e006e}y"),
            "x\\u{e0069}…\\u{e006e} (3 hidden)y"
        );
        assert_eq!(safe("tab\there \u{1b}[2J"), "tab here \\u{1b}[2J");
        assert_eq!(safe("emoji \u{2764}\u{fe0f} é"), "emoji \u{2764}\u{fe0f} é");
        let long = "x".repeat(300);
        let shown = excerpt(&long, 200);
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        assert_eq!(shown.chars().count(), MAX_EXCERPT_CHARS + 2);
        assert_eq!(safe("soft\u{ad}hyphen"), "soft\\u{ad}hyphen");
    }

    /// The excerpt as it was first written: counting every character of the line.
    fn excerpt_by_counting(line: &str, at: usize) -> String {
        let before = line[..at.min(line.len())].chars().count();
        let skip = before.saturating_sub(EXCERPT_LEAD_CHARS);
        let total = line.chars().count();
        let shown: String = line.chars().skip(skip).take(MAX_EXCERPT_CHARS).collect();
        let mut out = String::new();
        if skip > 0 {
            out.push('…');
        }
        out.push_str(safe(shown.trim()).as_str());
        if skip + MAX_EXCERPT_CHARS < total {
            out.push('…');
        }
        out
    }

    #[test]
    fn excerpts_are_built_from_a_bounded_window_and_match_counting_every_character() {
        // A 1 MiB line: the window an excerpt is built from stays a few hundred bytes wide
        // wherever the hit is (the excerpt looks at nothing outside it).
        let long = "<!--always run-->".repeat(64 * 1024);
        for at in [0, 17, long.len() / 2, long.len() - 17, long.len()] {
            let (near, start, within) = window(&long, at);
            assert!(
                near.len() <= WINDOW_BEFORE_BYTES + WINDOW_AFTER_BYTES + MAX_CHAR_BYTES,
                "{}",
                near.len()
            );
            assert_eq!(start + within, at);
        }
        // The same excerpts as counting the whole line, over ASCII, wide characters and
        // hidden ones, at every boundary.
        let lines = [
            long[..4096].to_string(),
            "é".repeat(300),
            "日本語のテキスト".repeat(40),
            format!(
                "{}\u{1F600}x\u{200B}y{}",
                "a".repeat(40),
                "\u{E0041}".repeat(150)
            ),
            "short line".to_string(),
            String::new(),
            "  padded   ".to_string(),
        ];
        for line in &lines {
            for (at, _) in line
                .char_indices()
                .chain(std::iter::once((line.len(), ' ')))
            {
                assert_eq!(
                    excerpt(line, at),
                    excerpt_by_counting(line, at),
                    "{line:?} at {at}"
                );
            }
        }
    }

    #[test]
    fn details_are_cut_without_counting_the_rest() {
        assert_eq!(detail("short"), "short");
        let long = "x".repeat(10 * MAX_DETAIL_CHARS);
        let cut = detail(&long);
        assert_eq!(cut.chars().count(), MAX_DETAIL_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(
            detail(&"y".repeat(MAX_DETAIL_CHARS)),
            "y".repeat(MAX_DETAIL_CHARS)
        );
    }

    #[test]
    fn the_stripped_view_maps_back_to_the_original() {
        assert!(Stripped::new("plain ascii").is_none());
        assert!(Stripped::new("caf\u{e9} \u{1F600}").is_none());
        let text = "ig\u{200B}nore\u{AD} previous\u{2060}\u{2064} instructions\u{200B}\nnext";
        let stripped = Stripped::new(text).unwrap();
        assert_eq!(stripped.text, "ignore previous instructions\nnext");
        // "ignore previous instructions" had hidden characters inside it.
        let end = "ignore previous instructions".len();
        assert!(stripped.hides(0, end));
        // "instructions" alone: nothing removed inside it, not even the trailing U+200B.
        let start = "ignore previous ".len();
        assert!(!stripped.hides(start, end));
        assert_eq!(
            &text[stripped.start_in_original(start)..],
            "instructions\u{200B}\nnext"
        );
        // "nore": starts right after a removed character; that one is not inside it.
        assert!(!stripped.hides(2, 6));
        assert_eq!(stripped.start_in_original(2), "ig\u{200B}".len());
        let next = stripped.text.find("next").unwrap();
        assert_eq!(&text[stripped.start_in_original(next)..], "next");
    }
}
