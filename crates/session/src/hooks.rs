//! The session's hooks ([`skillet_agent::hooks`]): the user's own (`~/.claude/settings.json`)
//! always; a project's (`.claude/settings.json`, `.claude/settings.local.json`) only once the
//! project is trusted, from the very bytes whose digest trust pinned (one read: the lines shown
//! in the trust question, the digest and the hooks that run all come from it).

use std::path::{Path, PathBuf};

use skillet_agent::hooks::{Hook, Hooks, parse_settings};
use skillet_library::trust::SkillTrust;

use crate::Workspace;
use crate::builder::Report;

/// A project's Claude Code settings files that may hold hooks, read in this order.
pub const PROJECT_SETTINGS: [&str; 2] = [".claude/settings.json", ".claude/settings.local.json"];
/// The user's Claude Code settings file, under the home folder.
pub const USER_SETTINGS: &str = ".claude/settings.json";
/// The folder Claude Code keeps a project's hook scripts in: pinned with the settings, so a
/// script changed after trust stops its hook as a changed setting does.
pub const PROJECT_HOOKS_DIR: &str = ".claude/hooks";
/// The largest settings file read.
pub const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// A project's hooks as read once: where (the first settings file), each hook as a line, the
/// digest of the bytes read, the hooks, and the problems met.
pub struct ProjectHooks {
    /// The file shown (`.claude/settings.json` under the root).
    pub path: PathBuf,
    /// Each hook, as the trust question shows it.
    pub lines: Vec<String>,
    /// The digest of both files' bytes as read.
    pub digest: String,
    /// The hooks.
    pub hooks: Vec<Hook>,
    /// What could not be read or does not run.
    pub problems: Vec<String>,
}

/// The hooks of the project at `root`, read once; `None` when its settings hold none.
pub fn project_hooks(root: &Path) -> Option<ProjectHooks> {
    let mut pinned = Vec::new();
    let mut hooks = Vec::new();
    let mut problems = Vec::new();
    let mut lines = Vec::new();
    for relative in PROJECT_SETTINGS {
        let path = root.join(relative);
        let text = match read_settings(&path) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(why) => {
                problems.push(why);
                continue;
            }
        };
        pinned.extend_from_slice(relative.as_bytes());
        pinned.extend_from_slice(&(text.len() as u64).to_le_bytes());
        pinned.extend_from_slice(text.as_bytes());
        let (found, found_problems) = parse_settings(&text, &path);
        problems.extend(found_problems);
        lines.extend(found.iter().map(|hook| {
            let file = Path::new(relative)
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("{} ({file})", hook.describe())
        }));
        hooks.extend(found);
    }
    if hooks.is_empty() {
        return None;
    }
    // The scripts beside them, pinned whole; a folder that cannot be pinned (a link out of it,
    // too large) keeps the hooks from running at all: nothing the user did not see runs.
    let scripts = root.join(PROJECT_HOOKS_DIR);
    // `.claude` or `.claude/hooks` as a link: the scripts would live where the sandbox does
    // not keep them read-only (and a link swapped in keeps the digest of what it leads to), so
    // such hooks never run.
    let linked = [root.join(".claude"), scripts.clone()].iter().any(|path| {
        std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink())
    });
    if std::fs::symlink_metadata(&scripts).is_ok() || linked {
        let digest = if linked {
            None
        } else {
            skillet_library::trust::folder_digest(&scripts)
        };
        if let Some(digest) = digest {
            pinned.extend_from_slice(PROJECT_HOOKS_DIR.as_bytes());
            pinned.extend_from_slice(digest.as_bytes());
        } else {
            problems.push(format!(
                "{}: cannot be pinned (it or .claude is a link, it has a link out of it, or it is over {} entries or {} bytes); the project's hooks do not run",
                scripts.display(),
                skillet_library::trust::MAX_PINNED_FILES,
                skillet_library::trust::MAX_PINNED_BYTES
            ));
            hooks.clear();
            lines.push(format!(
                "(none of these runs: {PROJECT_HOOKS_DIR} cannot be pinned)"
            ));
        }
    }
    Some(ProjectHooks {
        path: root.join(PROJECT_SETTINGS[0]),
        lines,
        digest: skillet_library::trust::digest_of(&pinned),
        hooks,
        problems,
    })
}

/// The hooks the session runs: the user's, then the project's when trust lets them run.
pub fn session_hooks(workspace: &Workspace, trust: &SkillTrust, report: &mut dyn Report) -> Hooks {
    let mut hooks = Vec::new();
    if let Some(home) = &workspace.env.home {
        let path = home.join(USER_SETTINGS);
        match read_settings(&path) {
            Ok(Some(text)) => {
                let (found, problems) = parse_settings(&text, &path);
                for problem in problems {
                    report.note(&format!("warning: {problem}"));
                }
                hooks.extend(found);
            }
            Ok(None) => {}
            Err(why) => report.note(&format!("warning: {why}")),
        }
    }
    if let Some(project) = project_hooks(&workspace.project_root()) {
        let trusted = trust
            .trusted_hooks()
            .filter(|(path, _)| *path == project.path);
        match trusted {
            Some((_, digest)) if digest == project.digest => {
                for problem in &project.problems {
                    report.note(&format!("warning: {problem}"));
                }
                hooks.extend(project.hooks);
            }
            Some(_) => report.note(&format!(
                "warning: the hooks in {} changed since the project was trusted; they do not run until it is trusted again (`skillet trust`)",
                project.path.display()
            )),
            None => report.note(&format!(
                "note: {} holds hooks; they run once you trust the project (`skillet trust` shows them)",
                project.path.display()
            )),
        }
    }
    hooks.truncate(skillet_agent::hooks::MAX_HOOKS);
    Hooks::new(hooks)
}

/// A settings file's text: `None` when there is none; `Err` naming it when it cannot be read,
/// is not a regular file, is over [`MAX_SETTINGS_BYTES`] or is not UTF-8.
fn read_settings(path: &Path) -> Result<Option<String>, String> {
    let mut file = match skillet_skills::open_regular(path) {
        Ok(file) => file,
        Err(skillet_skills::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None);
        }
        Err(error) => return Err(format!("{}: {error}; its hooks do not run", path.display())),
    };
    let mut bytes = Vec::new();
    let cut = skillet_skills::read_capped(&mut file, &mut bytes, MAX_SETTINGS_BYTES)
        .map_err(|error| format!("{}: {error}; its hooks do not run", path.display()))?;
    if cut {
        return Err(format!(
            "{}: over {MAX_SETTINGS_BYTES} bytes; its hooks do not run",
            path.display()
        ));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| format!("{}: not UTF-8; its hooks do not run", path.display()))
}
