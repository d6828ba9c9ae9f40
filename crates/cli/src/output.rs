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
/// quotes skills, servers or the model ([`terminal_safe`]); newlines and tabs stay. On a
/// terminal each line is wrapped at words to its width.
pub fn warn(text: &str) {
    let safe = terminal_safe(text, true);
    // On a terminal, wrapped at words (its own wrap cuts them in two); to a file, as it is.
    let shown = match stderr_columns() {
        Some(width) => std::borrow::Cow::Owned(crate::ui::wrap::wrap_lines(&safe, width)),
        None => safe,
    };
    crate::ui::screen().suspend(|| {
        let mut stderr = io::stderr().lock();
        let _ = writeln!(stderr, "{shown}");
    });
}

/// The terminal's width when stderr is one.
fn stderr_columns() -> Option<usize> {
    use std::io::IsTerminal as _;
    if !io::stderr().is_terminal() {
        return None;
    }
    console::Term::stderr()
        .size_checked()
        .map(|(_, columns)| usize::from(columns))
}

pub use skillet_skills::terminal_safe;

pub use skillet_session::settings::redacted_url;

#[cfg(test)]
mod tests {
    use super::redacted_url;

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
