//! Writing to stdout and stderr: plain text (no colour), a closed pipe is not an error. A
//! turn's output (the answer, calls, the spinner, colour, Markdown) goes through
//! [`crate::ui`]; what is written here erases the spinner first, should one be showing.

use std::io::{self, Write};

/// True when the error comes from writing to a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        let kind = cause
            .downcast_ref::<io::Error>()
            .map(io::Error::kind)
            .or_else(|| cause.downcast_ref::<serde_json::Error>()?.io_error_kind());
        kind == Some(io::ErrorKind::BrokenPipe)
    })
}

/// Prints `error: …` with its causes, once (neutralised: errors can carry a server's words).
pub fn print_error(error: &anyhow::Error) {
    crate::ui::screen().suspend(|| {
        let mut stderr = io::stderr().lock();
        let _ = writeln!(stderr, "error: {}", terminal_safe(&error.to_string(), true));
        for cause in error.chain().skip(1) {
            let _ = writeln!(
                stderr,
                "  caused by: {}",
                terminal_safe(&cause.to_string(), true)
            );
        }
    });
}

/// Writes `text` to stderr (diagnostics, reports, errors); failures to write there are ignored.
/// Control characters and escape sequences are neutralised, since much of what is reported
/// quotes skills, servers or the model ([`terminal_safe`]); newlines and tabs stay.
pub fn warn(text: &str) {
    crate::ui::screen().suspend(|| {
        let mut stderr = io::stderr().lock();
        let _ = writeln!(stderr, "{}", terminal_safe(text, true));
    });
}

/// Untrusted text (model output, tool previews, commands and diffs shown for approval, skill
/// names and descriptions) made safe to print: control characters and escape sequences, which
/// could move the cursor, rewrite a line or recolour the screen, are shown as visible escapes
/// (`\e`, `\r`, `\u{202e}`) instead of acting. Newlines and tabs stay when `multiline` (a
/// `\r\n` is a newline); otherwise a newline shows as `\n` too, so one line stays one line.
pub fn terminal_safe(text: &str, multiline: bool) -> std::borrow::Cow<'_, str> {
    let acts = |c: char| {
        (c.is_control() && !(multiline && (c == '\n' || c == '\t'))) || is_invisible_format(c)
    };
    if !text.chars().any(acts) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if multiline && c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if !acts(c) {
            out.push(c);
            continue;
        }
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            other => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{{{:x}}}", u32::from(other));
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Format characters that change how text reads without showing: bidi overrides and isolates,
/// zero-width characters, the byte-order mark, and tag characters.
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{061c}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{e0000}'..='\u{e007f}')
}

pub use skillet_session::settings::redacted_url;

#[cfg(test)]
mod tests {
    use super::{redacted_url, terminal_safe};

    #[test]
    fn escapes_cannot_act_on_the_terminal() {
        assert_eq!(terminal_safe("ls -la", false), "ls -la");
        assert_eq!(
            terminal_safe("echo safe\rrm -rf ~", false),
            "echo safe\\rrm -rf ~"
        );
        assert_eq!(
            terminal_safe("\u{1b}[2K\u{1b}[1Aok", false),
            "\\e[2K\\e[1Aok"
        );
        assert_eq!(terminal_safe("a\nb", false), "a\\nb");
        assert_eq!(terminal_safe("a\r\nb\tc", true), "a\nb\tc");
        assert_eq!(terminal_safe("x\u{202e}gpj.exe", true), "x\\u{202e}gpj.exe");
        assert_eq!(terminal_safe("\u{9b}31m", true), "\\u{9b}31m");
        assert_eq!(terminal_safe("é ünïcode 👍", true), "é ünïcode 👍");
    }

    #[test]
    fn urls_are_shown_without_credentials_or_queries() {
        assert_eq!(
            redacted_url("https://api.example.com/v1"),
            "https://api.example.com/v1"
        );
        assert_eq!(
            redacted_url("https://user:sk-secret@host:8080/v1?key=sk-2"),
            "https://…@host:8080/v1?…"
        );
        assert_eq!(redacted_url("http://h?api_key=x"), "http://h?…");
    }
}
