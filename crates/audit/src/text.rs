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

/// Characters that change how text reads without showing, or that act on a terminal.
pub(crate) fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c,
            '\u{061c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0e}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{e0000}'..='\u{e007f}'
            | '\u{e0100}'..='\u{e01ef}')
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
        if !is_hidden(c) {
            out.push(c);
            index += 1;
            continue;
        }
        let run = chars[index..].iter().take_while(|&&c| is_hidden(c)).count();
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

/// A short, safe excerpt of `line` around byte `at` (a character boundary).
pub(crate) fn excerpt(line: &str, at: usize) -> String {
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

/// `text` cut to [`MAX_DETAIL_CHARS`] characters (with `…` when cut), made safe.
pub(crate) fn detail(text: &str) -> String {
    if text.chars().count() <= MAX_DETAIL_CHARS {
        return safe(text);
    }
    let cut: String = text.chars().take(MAX_DETAIL_CHARS).collect();
    format!("{}…", safe(&cut))
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
    }
}
