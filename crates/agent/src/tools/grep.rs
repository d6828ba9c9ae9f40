//! `grep {pattern, path?, glob?}`: lines matching a regex, .gitignore respected.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::paths::{Access, Resolved, resolve};
use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg};
use crate::tools::change;

/// The most matching lines listed.
pub const MAX_GREP_MATCHES: usize = 200;
/// A longer matching line is cut.
const MAX_GREP_LINE_CHARS: usize = 300;
/// Larger files are skipped.
pub const MAX_GREP_FILE_BYTES: u64 = 5 * 1024 * 1024;

/// Searches file contents.
pub struct Grep;

impl Tool for Grep {
    fn name(&self) -> &'static str {
        "grep"
    }

    fn description(&self, _context: &ToolContext) -> String {
        format!(
            "Search files for lines matching a regular expression (Rust regex syntax). Searches \
             the working directory, or `path` (a file or folder, which may be a skill's folder); \
             `glob` narrows the files (`*.py`). Prints `path:line: text`, at most \
             {MAX_GREP_MATCHES} lines. Files ignored by .gitignore are left out, and so are \
             hidden folders unless `path` names one (`.claude/skills`)."
        )
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "pattern": {"type": "string", "description": "Regular expression"},
            "path": {"type": "string", "description": "File or folder to search (default: the working directory)"},
            "glob": {"type": "string", "description": "Only files whose name matches this glob"}
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
            let pattern = string_arg(input, "pattern")?.to_string();
            let regex = regex::Regex::new(&pattern)
                .map_err(|error| ToolError::new(format!("bad regular expression: {error}")))?;
            let resolved = resolve(
                context,
                input.get("path").and_then(Value::as_str).unwrap_or("."),
                Access::Read,
            )?;
            let filter = match input.get("glob").and_then(Value::as_str) {
                Some(glob) => Some(
                    globset::Glob::new(glob)
                        .map_err(|error| ToolError::new(format!("bad glob '{glob}': {error}")))?
                        .compile_matcher(),
                ),
                None => None,
            };
            let cwd = context.cwd.clone();
            let rules = context.gate.rules().clone();
            change::blocking(move || {
                Ok(search(
                    &resolved,
                    &regex,
                    filter.as_ref(),
                    (&cwd, &rules),
                    &pattern,
                ))
            })
            .await
        })
    }
}

/// Searches the files beneath `resolved`; each is read through the root it lies in.
fn search(
    resolved: &Resolved,
    regex: &regex::Regex,
    filter: Option<&globset::GlobMatcher>,
    (cwd, rules): (&std::path::Path, &crate::rules::Rules),
    pattern: &str,
) -> String {
    let mut out = String::new();
    let mut matches = 0;
    let mut more = false;
    let root = resolved.beneath.root();
    let walker = ignore::WalkBuilder::new(resolved.absolute())
        .require_git(false)
        .build();
    'files: for entry in walker.filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let path = entry.path();
        // What a deny rule keeps from `read_file` is not read here either.
        if rules.denies_read(path) {
            continue;
        }
        if let Some(filter) = filter
            && !path.file_name().is_some_and(|name| filter.is_match(name))
        {
            continue;
        }
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        let shown = path
            .strip_prefix(cwd)
            .map_or_else(|_| path.display().to_string(), |p| p.display().to_string());
        // Too large, binary, unreadable, or led outside by a link swapped in: skipped.
        let Ok(bytes) = resolved.beneath.read(relative, &shown, MAX_GREP_FILE_BYTES) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        for (index, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                if matches == MAX_GREP_MATCHES {
                    more = true;
                    break 'files;
                }
                let line: String = line.chars().take(MAX_GREP_LINE_CHARS).collect();
                let _ = writeln!(out, "{shown}:{}: {line}", index + 1);
                matches += 1;
            }
        }
    }
    if matches == 0 {
        return format!("no lines match {pattern}");
    }
    if more {
        let _ = write!(
            out,
            "[stopped at {MAX_GREP_MATCHES} matches; narrow the search]"
        );
    }
    out
}
