//! Where file tools may work: beneath the working directory, plus read-only beneath the folders
//! of discovered skills (so Layer 3 works for skills in `~/.claude/skills`) and of the source's
//! skills loaded in this session (their verified copies in the cache). Nothing else.
//!
//! A path is placed under one of those roots lexically here; every open, read and write then
//! goes through [`skillet_skills::confine::Beneath`], which has the kernel resolve it beneath
//! that root, so no link, dangling or not, and no race leads out. The same module names the
//! paths a write must never touch without asking ([`protection`]).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use skillet_skills::SkillFolder;
use skillet_skills::confine::{Beneath, ConfineError, normalize};

use crate::tool::{ToolContext, ToolError};

/// What a tool wants to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read it.
    Read,
    /// Create or change it.
    Write,
}

/// A path placed beneath a root.
#[derive(Debug)]
pub struct Resolved {
    /// The root, held open.
    pub beneath: Arc<Beneath>,
    /// The path relative to it.
    pub relative: PathBuf,
    /// How to show it: relative to the working directory when inside it, else absolute.
    pub shown: String,
}

impl Resolved {
    /// The absolute path (lexical, for showing and for checks by name).
    pub fn absolute(&self) -> PathBuf {
        self.beneath.root().join(&self.relative)
    }
}

/// Places a path the model gave (relative to the working directory, or absolute) beneath the
/// working directory or, to read, a skill's folder; or says why not.
pub fn resolve(
    context: &ToolContext,
    requested: &str,
    access: Access,
) -> Result<Resolved, ToolError> {
    if requested.trim().is_empty() {
        return Err(ToolError::new("the path is empty"));
    }
    let outside = || {
        let allowed = match access {
            Access::Read => {
                "the working directory, the folders added with --add-dir and those of discovered skills"
            }
            Access::Write => "the working directory and the folders added with --add-dir",
        };
        ToolError::new(format!(
            "{requested} is outside {allowed} ({}); it cannot be {}",
            context.cwd.display(),
            match access {
                Access::Read => "read",
                Access::Write => "written",
            }
        ))
    };
    let normalized = normalize(&context.cwd.join(requested)).ok_or_else(outside)?;
    let cannot_open = |root: &Path, error: &dyn std::fmt::Display| {
        ToolError::new(format!("cannot open {}: {error}", root.display()))
    };
    let library = context.skills.library();
    let added = context.added();
    let beneath = if normalized.starts_with(&context.cwd) {
        Beneath::open(&context.cwd).map_err(|error| cannot_open(&context.cwd, &error))?
    } else if let Some(dir) = added.iter().find(|dir| normalized.starts_with(dir)) {
        Beneath::open(dir).map_err(|error| cannot_open(dir, &error))?
    } else if access == Access::Read
        && let Some(skill) = library
            .skills()
            .iter()
            .find(|skill| normalized.starts_with(skill.home()))
    {
        // Opened beneath the root the skill was found under, like its body: a skill folder
        // swapped for a link out of that root since is refused.
        SkillFolder::of(skill)
            .open()
            .map_err(|error| cannot_open(&skill.dir, &error))?
    } else if access == Access::Read
        && let Some(dir) = crate::tools::load_skill::fetched_dir(context, &normalized)
    {
        Beneath::open(&dir).map_err(|error| cannot_open(&dir, &error))?
    } else {
        return Err(outside());
    };
    let relative = beneath.relative(&normalized).ok_or_else(outside)?;
    let shown = display(context, &normalized);
    Ok(Resolved {
        beneath: Arc::new(beneath),
        relative,
        shown,
    })
}

/// The real path of a folder to add for a session (`--add-dir`), `dir` read from `cwd`; or why
/// it cannot be added. An added folder is a project's: not the home folder (`home`) or one
/// holding it, nor a hidden folder at the top of it (`~/.config`, `~/.ssh`, `~/.claude`), where
/// the user's own configuration lives (skillet's, git's, the shell's) and commands could change
/// what runs next.
pub fn folder_to_add(
    cwd: &Path,
    (home, config): (Option<&Path>, Option<&Path>),
    dir: &Path,
) -> Result<PathBuf, String> {
    let real = std::fs::canonicalize(cwd.join(dir))
        .map_err(|error| format!("{}: {error}", dir.display()))?;
    if !real.is_dir() {
        return Err(format!("{} is not a folder", dir.display()));
    }
    // Skillet's own config folder, wherever XDG_CONFIG_HOME puts it: not added, nor a folder
    // holding it.
    if let Some(config) = config.and_then(|config| std::fs::canonicalize(config).ok())
        && (config.starts_with(&real) || real.starts_with(&config))
    {
        return Err(format!(
            "{} holds your own configuration (skillet's): a folder added for a session is a project's",
            real.display()
        ));
    }
    let home = home.and_then(|home| std::fs::canonicalize(home).ok());
    if let Some(home) = &home {
        let hidden_in_home = real.strip_prefix(home).is_ok_and(|inside| {
            inside
                .components()
                .next()
                .is_some_and(|top| top.as_os_str().to_string_lossy().starts_with('.'))
        });
        if home.starts_with(&real) || hidden_in_home {
            return Err(format!(
                "{} holds your own configuration (skillet's, git's, your shell's): a folder added for a session is a project's, below your home folder",
                real.display()
            ));
        }
    }
    Ok(real)
}

/// `path` with the links of its longest existing part resolved.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            return path.to_path_buf();
        };
        rest.push(name);
        existing = parent;
    }
    let mut real = std::fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    real.extend(rest.iter().rev());
    real
}

/// `path` relative to the working directory when inside it, for showing to the model.
pub fn display(context: &ToolContext, path: &Path) -> String {
    match path.strip_prefix(&context.cwd) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_string(),
        Ok(relative) => relative.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// A confinement failure as the model sees it.
#[expect(
    clippy::needless_pass_by_value,
    reason = "used as `map_err(confine_error)`"
)]
pub fn confine_error(error: ConfineError) -> ToolError {
    ToolError::new(error.to_string())
}

/// File names a write never touches without asking: each runs code or steers the model one
/// step later.
pub const PROTECTED_NAMES: [(&str, &str); 5] = [
    (
        "skillet.toml",
        "is skillet's config (it decides what skillet does next)",
    ),
    (
        ".envrc",
        "runs in your shell when you enter the folder (direnv)",
    ),
    (
        "AGENTS.md",
        "is read into every new session's instructions (it steers the model)",
    ),
    (
        "AGENTS.override.md",
        "is read into every new session's instructions (it steers the model)",
    ),
    (
        "CLAUDE.md",
        "is read into every new session's instructions (it steers the model)",
    ),
];

/// Why a write to `path` (absolute, links inside the root resolved) must be asked for each time,
/// if it must: git's folder (hooks run code), skillet's config, `.envrc`, the project instruction
/// files, and the skill roots (what skills and instructions say steers the model).
pub fn protection(context: &ToolContext, path: &Path) -> Option<&'static str> {
    // Names compare without case: on a case-insensitive file system `.GIT` is `.git`.
    if path.components().any(|component| {
        matches!(component, Component::Normal(name) if name.eq_ignore_ascii_case(".git"))
    }) {
        return Some("is inside .git (its hooks and config run code)");
    }
    if let Some(name) = path.file_name().and_then(|name| name.to_str())
        && let Some((_, why)) = PROTECTED_NAMES
            .iter()
            .find(|(protected, _)| protected.eq_ignore_ascii_case(name))
    {
        return Some(why);
    }
    let lower = |path: &Path| path.to_string_lossy().to_lowercase();
    if context
        .protected
        .iter()
        .any(|root| path.starts_with(root) || Path::new(&lower(path)).starts_with(lower(root)))
    {
        return Some("is in a skill folder (what skills say steers the model)");
    }
    // What the sandbox keeps from commands nobody reviews: git's hooks path and includes,
    // agents' settings and servers (one list, [`crate::sandbox::protect`]).
    if context.sandbox.own.iter().any(|own| path.starts_with(own)) {
        return Some("is skillet's own configuration, data or cache (trust records, sessions)");
    }
    let workspaces = context.writable_roots();
    let layout = crate::sandbox::protect::layout_for(
        &workspaces,
        &workspaces,
        &context.sandbox.guarded(&context.protected),
    );
    if let Some(home) = layout.home()
        && path.starts_with(home)
        && layout.covers(path)
    {
        return Some(
            "is in your home folder's own settings (shells' startup files, tools' configuration)",
        );
    }
    if layout.covers(path) {
        return Some(
            "is where git or an agent looks for code to run or instructions (hooks, settings, servers)",
        );
    }
    None
}
