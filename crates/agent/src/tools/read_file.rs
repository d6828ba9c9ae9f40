//! `read_file {path, offset?, limit?}`: numbered lines, capped.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Value, json};
use skillet_skills::confine::ConfineError;

use crate::paths::{Access, confine_error, resolve};
use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg, usize_arg};
use crate::tools::change;

/// Lines shown when no limit is given.
pub const DEFAULT_LINE_LIMIT: usize = 2_000;
/// A longer line is cut.
pub const MAX_LINE_CHARS: usize = 2_000;
/// The most characters one call returns.
pub const MAX_OUTPUT_CHARS: usize = 100_000;
/// Larger files are refused (read a part with offset and limit from a smaller copy, or grep).
pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;

/// Reads a text file.
pub struct ReadFile;

impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }

    fn description(&self, _context: &ToolContext) -> String {
        format!(
            "Read a text file in the working directory or in a skill's folder. Lines come \
             numbered from 1. At most {DEFAULT_LINE_LIMIT} lines by default; use offset (first \
             line, 1-based) and limit to read more."
        )
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "File path, relative to the working directory or absolute"},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)"},
            "limit": {"type": "integer", "minimum": 1, "description": "How many lines"}
        }, "required": ["path"]})
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn call<'a>(
        &'a self,
        input: &'a Value,
        context: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let requested = string_arg(input, "path")?;
            let resolved = resolve(context, requested, Access::Read)?;
            let shown = resolved.shown.clone();
            let offset = usize_arg(input, "offset")?.unwrap_or(1).max(1);
            let limit = usize_arg(input, "limit")?
                .unwrap_or(DEFAULT_LINE_LIMIT)
                .max(1);
            let beneath = Arc::clone(&resolved.beneath);
            let relative = resolved.relative.clone();
            let shown_in = shown.clone();
            let bytes = change::blocking(move || {
                let cannot_read = |error: ConfineError| match error {
                    ConfineError::Io { source, .. } => {
                        ToolError::new(format!("cannot read {shown_in}: {source}"))
                    }
                    other => confine_error(other),
                };
                let metadata = beneath.metadata(&relative, &shown_in).map_err(cannot_read)?;
                if metadata.is_dir() {
                    return Err(ToolError::new(format!(
                        "{shown_in} is a folder; use glob to list files"
                    )));
                }
                beneath
                    .read(&relative, &shown_in, MAX_FILE_BYTES)
                    .map_err(|error| match error {
                        ConfineError::TooLarge { size, .. } => ToolError::new(format!(
                            "{shown_in} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit; use grep to find what you need"
                        )),
                        other => cannot_read(other),
                    })
            })
            .await?;
            let text = String::from_utf8(bytes)
                .map_err(|_| ToolError::new(format!("{shown} is not a UTF-8 text file")))?;
            Ok(number_lines(&text, offset, limit, &shown))
        })
    }
}

/// `cat -n` style lines `offset..offset+limit`, with a note when more remain or output was cut.
fn number_lines(text: &str, offset: usize, limit: usize, shown: &str) -> String {
    let total = text.lines().count();
    if total == 0 {
        return format!("({shown} is empty)");
    }
    if offset > total {
        return format!("({shown} has {total} lines; offset {offset} is past the end)");
    }
    let mut out = String::new();
    let mut last = offset - 1;
    for (index, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        if out.len() > MAX_OUTPUT_CHARS {
            break;
        }
        let line = if line.chars().count() > MAX_LINE_CHARS {
            let cut: String = line.chars().take(MAX_LINE_CHARS).collect();
            format!("{cut}… [line cut at {MAX_LINE_CHARS} characters]")
        } else {
            line.to_string()
        };
        let _ = writeln!(out, "{:>6}\t{line}", index + 1);
        last = index + 1;
    }
    if last < total {
        let _ = write!(
            out,
            "[{shown} has {total} lines; showing {offset}-{last}; read on with offset {}]",
            last + 1
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_notes_the_rest() {
        let text = "a\nb\nc\n";
        assert_eq!(
            number_lines(text, 1, 2, "f"),
            "     1\ta\n     2\tb\n[f has 3 lines; showing 1-2; read on with offset 3]"
        );
        assert_eq!(number_lines(text, 3, 5, "f"), "     3\tc\n");
        assert_eq!(number_lines("", 1, 5, "f"), "(f is empty)");
        assert!(number_lines(text, 9, 5, "f").contains("past the end"));
    }
}
