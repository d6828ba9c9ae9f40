//! `glob {pattern}`: files of the working directory matching a pattern, .gitignore respected.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg};

/// The most paths listed.
pub const MAX_GLOB_RESULTS: usize = 500;

/// Finds files by pattern.
pub struct Glob;

impl Tool for Glob {
    fn name(&self) -> &'static str {
        "glob"
    }

    fn description(&self, _context: &ToolContext) -> String {
        format!(
            "List files of the working directory whose relative path matches a glob pattern \
             (`**/*.rs`, `src/*.md`), sorted, at most {MAX_GLOB_RESULTS}. Files ignored by \
             .gitignore are left out."
        )
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "pattern": {"type": "string", "description": "Glob pattern relative to the working directory"}
        }, "required": ["pattern"]})
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
            let pattern = string_arg(input, "pattern")?;
            let matcher = globset::GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map_err(|error| ToolError::new(format!("bad glob pattern '{pattern}': {error}")))?
                .compile_matcher();
            let cwd = context.cwd.clone();
            let mut found = crate::tools::change::blocking(move || {
                let mut found = Vec::new();
                for entry in walk(&cwd) {
                    if entry.file_type().is_some_and(|kind| kind.is_file())
                        && let Ok(relative) = entry.path().strip_prefix(&cwd)
                        && matcher.is_match(relative)
                    {
                        found.push(relative.display().to_string());
                    }
                }
                Ok(found)
            })
            .await?;
            found.sort();
            if found.is_empty() {
                return Ok(format!("no files match {pattern}"));
            }
            let total = found.len();
            let mut out = found
                .into_iter()
                .take(MAX_GLOB_RESULTS)
                .collect::<Vec<_>>()
                .join("\n");
            if total > MAX_GLOB_RESULTS {
                let _ = write!(
                    out,
                    "\n[{} more not listed; narrow the pattern]",
                    total - MAX_GLOB_RESULTS
                );
            }
            Ok(out)
        })
    }
}

/// The files of the working directory, .gitignore and hidden files respected.
pub(crate) fn walk(cwd: &std::path::Path) -> impl Iterator<Item = ignore::DirEntry> {
    ignore::WalkBuilder::new(cwd)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
}
