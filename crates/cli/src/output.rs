//! Writing to stdout and stderr: plain text (no colour), a closed pipe is not an error.

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

/// Prints `error: …` with its causes, once.
pub fn print_error(error: &anyhow::Error) {
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "error: {error}");
    for cause in error.chain().skip(1) {
        let _ = writeln!(stderr, "  caused by: {cause}");
    }
}

/// Writes `text` to stderr (diagnostics, reports); failures to write there are ignored.
pub fn warn(text: &str) {
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}
