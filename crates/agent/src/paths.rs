//! Confining file tools: the working directory, plus read-only access to the folders of
//! discovered skills (so Layer 3 works for skills in `~/.claude/skills`). Nothing else.

use std::path::{Component, Path, PathBuf};

use crate::tool::{ToolContext, ToolError};

/// What a tool wants to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read it.
    Read,
    /// Create or change it.
    Write,
}

/// Resolves a path the model gave (relative to the working directory, or absolute) to a real
/// path it may use, or says why not. Links are followed before the check, so a link cannot
/// lead out.
pub fn resolve(
    context: &ToolContext,
    requested: &str,
    access: Access,
) -> Result<PathBuf, ToolError> {
    if requested.trim().is_empty() {
        return Err(ToolError::new("the path is empty"));
    }
    let joined = context.cwd.join(requested);
    let normalized = normalize(&joined);
    let real = real_path(&normalized);
    if real.starts_with(&context.cwd) {
        return Ok(real);
    }
    if access == Access::Read
        && context
            .library
            .skills()
            .iter()
            .any(|skill| real.starts_with(&skill.dir))
    {
        return Ok(real);
    }
    let allowed = match access {
        Access::Read => "the working directory and the folders of discovered skills",
        Access::Write => "the working directory",
    };
    Err(ToolError::new(format!(
        "{requested} is outside {allowed} ({}); it cannot be {}",
        context.cwd.display(),
        match access {
            Access::Read => "read",
            Access::Write => "written",
        }
    )))
}

/// Removes `.` and resolves `..` lexically (never above the root).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The real path: the deepest existing ancestor resolved through links, plus the rest.
fn real_path(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut real = real;
            for part in rest.iter().rev() {
                real.push(part);
            }
            return real;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `path` relative to the working directory when inside it, for showing to the model.
pub fn display(context: &ToolContext, path: &Path) -> String {
    path.strip_prefix(&context.cwd).map_or_else(
        |_| path.display().to_string(),
        |relative| relative.display().to_string(),
    )
}
