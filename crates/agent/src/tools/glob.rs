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
             .gitignore are left out, and so are hidden folders unless the pattern names one \
             (`.claude/skills/**/SKILL.md`)."
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
            // A pattern without wildcards names one file, hidden or not.
            if !pattern.contains(['*', '?', '[', '{'])
                && let Ok(resolved) =
                    crate::paths::resolve(context, pattern, crate::paths::Access::Read)
                && resolved.absolute().starts_with(&cwd)
                && resolved.absolute().is_file()
            {
                return Ok(resolved.shown);
            }
            // A hidden folder the pattern names is searched inside, confined like any path.
            let start = hidden_base(pattern)
                .and_then(|base| {
                    crate::paths::resolve(context, base, crate::paths::Access::Read).ok()
                })
                .map_or_else(|| cwd.clone(), |resolved| resolved.absolute());
            let rules = context.gate.rules().clone();
            let mut found = crate::tools::change::blocking(move || {
                let mut found = Vec::new();
                for entry in walk(&start) {
                    if entry.file_type().is_some_and(|kind| kind.is_file())
                        && !rules.denies_read(entry.path())
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

/// The folder a pattern names literally before its first wildcard (`.claude/skills` of
/// `.claude/skills/**/*.md`), when that names a hidden folder: a walk of the working directory
/// skips hidden folders, but one the pattern names was asked for.
fn hidden_base(pattern: &str) -> Option<&str> {
    let components: Vec<&str> = pattern.split('/').collect();
    let folders = &components[..components.len().saturating_sub(1)];
    let literal = folders
        .iter()
        .take_while(|c| !c.is_empty() && !c.contains(['*', '?', '[', ']', '{', '}', '\\']))
        .count();
    let base = &folders[..literal];
    let hidden = base
        .iter()
        .any(|c| c.starts_with('.') && *c != "." && *c != "..");
    if !hidden || base.contains(&"..") {
        return None;
    }
    let length = base.iter().map(|c| c.len()).sum::<usize>() + literal - 1;
    Some(&pattern[..length])
}

/// The files of the working directory, .gitignore and hidden files respected.
pub(crate) fn walk(cwd: &std::path::Path) -> impl Iterator<Item = ignore::DirEntry> {
    ignore::WalkBuilder::new(cwd)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
}

#[cfg(test)]
mod tests {
    use super::hidden_base;

    #[test]
    fn a_named_hidden_folder_is_the_walks_start() {
        assert_eq!(
            hidden_base(".claude/skills/**/*.md"),
            Some(".claude/skills")
        );
        assert_eq!(
            hidden_base(".github/workflows/ci.yml"),
            Some(".github/workflows")
        );
        assert_eq!(hidden_base("src/.hidden/*.rs"), Some("src/.hidden"));
        assert_eq!(hidden_base("**/*.rs"), None);
        assert_eq!(hidden_base("src/*.rs"), None);
        assert_eq!(hidden_base(".env"), None);
        assert_eq!(hidden_base("../.claude/*"), None);
        assert_eq!(hidden_base("*/.claude/*"), None);
    }
}
