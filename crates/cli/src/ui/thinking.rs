//! The model's thinking as it streams, on stderr, dimmed and set apart from the answer:
//!
//! ```text
//! ✻ thinking
//!   The user wants the tests fixed. First I should see which
//!   fail, then read the code they cover.
//!
//! Let me run the tests.                  <- the answer, as always
//! ```
//!
//! Rows are written as soon as they are whole: the text is wrapped at words to the width as it
//! comes, and every row but the last is final (a row ends where the next word did not fit, and
//! more text cannot make it fit), so nothing drawn is ever redrawn. The last row waits for the
//! line to end, or for the thinking to end (the answer starts, a call, the turn's end).
//!
//! The text is the model's, untrusted: made safe ([`terminal_safe`]) before it is styled.

use skillet_skills::terminal_safe;

use super::style::{Attrs, Style};
use super::wrap::wrap;

/// What heads the thinking.
const HEADER: &str = "✻ thinking";
/// The indent of its rows.
const INDENT: &str = "  ";
/// The width used when the terminal's is not known.
const DEFAULT_WIDTH: usize = 80;
/// The most of a line held back to be wrapped: thinking with no place to break for longer
/// (zero-width marks, one endless word) is written as it stands, so each piece costs a bounded
/// amount of wrapping.
pub const MAX_PENDING_THINKING_BYTES: usize = 16 * 1024;
/// What a tab is shown as (the wrap counts columns, and a tab has none of its own).
const TAB: &str = "    ";

/// Thinking under way: the part of its last line not written yet.
#[derive(Debug, Default)]
pub struct Thinking {
    pending: String,
    started: bool,
}

impl Thinking {
    /// More thinking; what to write now (the header first, then each row made whole).
    pub fn push(&mut self, text: &str, width: Option<usize>, style: Style) -> String {
        let mut out = String::new();
        if !self.started {
            self.started = true;
            out.push_str(&style.paint(Attrs::DIM | Attrs::ITALIC, HEADER));
            out.push('\n');
        }
        self.pending
            .push_str(&terminal_safe(text, true).replace('\t', TAB));
        let width = width.unwrap_or(DEFAULT_WIDTH);
        // Whole lines first.
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            out.push_str(&rows(line.trim_end_matches('\n'), width, style));
        }
        if self.pending.trim().is_empty() {
            // Only blanks: the row it starts drops them anyway.
            self.pending.clear();
            return out;
        }
        if self.pending.len() > MAX_PENDING_THINKING_BYTES {
            out.push_str(&rows(&std::mem::take(&mut self.pending), width, style));
            return out;
        }
        // Then every row of the line still coming but its last.
        let laid = wrap(INDENT, self.pending.trim_start(), INDENT, width);
        if let Some(last_break) = laid.rfind('\n') {
            let whole = &laid[..last_break];
            for row in whole.split('\n') {
                out.push_str(&style.paint(Attrs::DIM, row));
                out.push('\n');
            }
            self.pending = laid[last_break + 1..]
                .strip_prefix(INDENT)
                .unwrap_or_default()
                .to_string();
        }
        out
    }

    /// The thinking ended: its last row, and a blank line before what follows.
    pub fn finish(self, width: Option<usize>, style: Style) -> String {
        if !self.started {
            return String::new();
        }
        let mut out = String::new();
        if !self.pending.trim().is_empty() {
            out.push_str(&rows(&self.pending, width.unwrap_or(DEFAULT_WIDTH), style));
        }
        out.push('\n');
        out
    }
}

/// One line of thinking, wrapped, indented and dimmed, each row ended.
fn rows(line: &str, width: usize, style: Style) -> String {
    if line.trim().is_empty() {
        return "\n".to_string();
    }
    let mut out = String::new();
    for row in wrap(INDENT, line.trim_start(), INDENT, width).split('\n') {
        out.push_str(&style.paint(Attrs::DIM, row));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(pieces: &[&str], width: usize) -> Vec<String> {
        let mut thinking = Thinking::default();
        let mut shown: Vec<String> = pieces
            .iter()
            .map(|piece| thinking.push(piece, Some(width), Style::plain()))
            .collect();
        shown.push(thinking.finish(Some(width), Style::plain()));
        shown
    }

    #[test]
    fn rows_are_written_once_whole_and_never_redrawn() {
        let text =
            "The user wants the failing tests fixed first, then the docs brought up to date.";
        // One character at a time: what is written, joined, is the text laid out once.
        let pieces: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let shown = stream(&pieces, 30);
        let whole = shown.concat();
        assert_eq!(
            whole,
            "✻ thinking\n  The user wants the failing\n  tests fixed first, then the\n  docs brought up to date.\n\n"
        );
        // The first row appears before the text is all there.
        let first_row_at = shown
            .iter()
            .position(|piece| piece.contains("failing"))
            .unwrap();
        assert!(first_row_at < pieces.len() - 20, "{first_row_at}");
        for row in whole.lines() {
            assert!(super::super::wrap::visible_width(row) <= 30, "{row:?}");
        }
    }

    #[test]
    fn lines_and_paragraphs_keep_their_breaks_and_hostile_text_is_made_safe() {
        let shown = stream(&["First.\n\nSecond", " \u{1b}[2Jpart."], 40).concat();
        // The escape is shown, not obeyed.
        assert_eq!(shown, "✻ thinking\n  First.\n\n  Second \\e[2Jpart.\n\n");
        assert_eq!(stream(&[], 40).concat(), "");
    }

    #[test]
    fn tabs_take_columns_and_what_cannot_break_is_not_held_forever() {
        let shown = stream(&["a\tb\tc d e f g h\n"], 14).concat();
        assert_eq!(shown, "✻ thinking\n  a    b    c\n  d e f g h\n\n");
        // Blanks alone are not held (nor re-wrapped on every piece).
        let mut thinking = Thinking::default();
        for _ in 0..1000 {
            thinking.push("          ", Some(40), Style::plain());
        }
        assert!(thinking.pending.is_empty());
        // Zero-width marks never fill a row: past the cap, they are written as they stand.
        let mut thinking = Thinking::default();
        let mark = "\u{301}".repeat(100);
        let mut written = String::new();
        for _ in 0..200 {
            written.push_str(&thinking.push(&mark, Some(40), Style::plain()));
            assert!(thinking.pending.len() <= MAX_PENDING_THINKING_BYTES + mark.len());
        }
        assert!(
            written.len() > MAX_PENDING_THINKING_BYTES,
            "{}",
            written.len()
        );
    }

    #[test]
    fn with_colour_every_row_is_dimmed() {
        let mut thinking = Thinking::default();
        let out = thinking.push("a b\n", Some(40), Style::new(true));
        assert_eq!(
            out,
            "\u{1b}[2;3m✻ thinking\u{1b}[0m\n\u{1b}[2m  a b\u{1b}[0m\n"
        );
    }
}
