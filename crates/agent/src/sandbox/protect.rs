//! What a command nobody reviewed may not change inside the folders it may write: the paths
//! that run code or steer the model one step later. The namespace sandbox mounts each of them
//! read-only, so a change is impossible rather than undone; this module only works out which
//! paths they are, as git and the agents that read them would find them.
//!
//! - In the working directory: `.git`, `.envrc`, `skillet.toml`, the instruction files
//!   (`AGENTS.md`, `AGENTS.override.md`, `CLAUDE.md`), the agents' folders (`.agents`, `.claude`,
//!   `.opencode`: skills, settings with hooks, commands), `.mcp.json` (servers a client starts),
//!   and `skills/` when the working directory is the project root. Folders above the working
//!   directory are read-only whole.
//! - Git as git resolves it: the git directory (a `.git` folder, or the one a gitfile names) and
//!   its common directory (`commondir`, for linked worktrees): `config`, `config.worktree`,
//!   `hooks`, `commondir`, the config and hooks of submodules (`modules/…`), the gitfiles of
//!   submodules' work trees, `core.hooksPath` and every `include.path` (`includeIf` too) that
//!   git reads. Objects, refs, the index and logs stay writable, so commits work.
//! - The skill roots the session protects, where they lie inside a writable folder.
//!
//! A protected path that does not exist yet gets a placeholder at its first missing component
//! (an empty folder, or a file git reads as harmless), mounted over read-only so nothing can be
//! created there, and removed after the command. Every folder between a writable root and a
//! read-only path is a mount point too, so it cannot be renamed away with the protected path
//! inside it.

use std::path::{Component, Path, PathBuf};

/// Names protected at the top of the working directory: folders and files other tools (and
/// skillet's next session) read as instructions or run.
pub const PROTECTED_TOP_NAMES: [&str; 10] = [
    ".git",
    ".envrc",
    "skillet.toml",
    "AGENTS.md",
    "AGENTS.override.md",
    "CLAUDE.md",
    ".agents",
    ".claude",
    ".opencode",
    ".mcp.json",
];

/// Files of a git directory that decide what git runs or where it looks.
const GIT_DIR_FILES: [&str; 3] = ["config", "config.worktree", "commondir"];

/// The most submodule repositories looked into (under `modules/`, nested).
pub const MAX_GIT_MODULES: usize = 256;
/// How deep `modules/` folders nest before the search stops.
const MAX_MODULE_DEPTH: usize = 4;
/// How long `git config` may take to list a config's hooks path and includes.
pub const GIT_CONFIG_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);
/// The most bytes of a gitfile, `.gitmodules` or config read here.
const MAX_GIT_FILE_BYTES: u64 = 256 * 1024;

/// What a placeholder is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placeholder {
    /// An empty folder.
    Folder,
    /// A file with these bytes (empty for most; `commondir` holds `.`, which git reads as "the
    /// git directory itself", so git works with the placeholder in place).
    File(&'static [u8]),
}

/// The mounts that keep protected paths read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// Folders writable besides the working directory: git directories outside it (their
    /// protected parts read-only), so commits work from a subfolder or a linked worktree.
    pub git_writable: Vec<PathBuf>,
    /// Folders bound onto themselves writable so they cannot be renamed (ancestors of
    /// read-only paths, inside writable roots), outermost first.
    pub pinned: Vec<PathBuf>,
    /// Existing paths mounted read-only (real paths, no links).
    pub read_only: Vec<PathBuf>,
    /// Missing protected paths: where a placeholder goes, and what it is.
    pub missing: Vec<(PathBuf, Placeholder)>,
}

impl Layout {
    /// Whether `path` (absolute) is read-only under this layout: at or beneath a read-only
    /// path or a placeholder.
    pub fn covers(&self, path: &Path) -> bool {
        self.read_only
            .iter()
            .chain(self.missing.iter().map(|(missing, _)| missing))
            .any(|protected| path.starts_with(protected))
    }
}

/// Works out the layout for a command in `cwd` (a real path) whose writable folders are
/// `writable` (real paths, `cwd` among them); `skill_roots` are the protected skill folders.
pub fn layout(cwd: &Path, writable: &[PathBuf], skill_roots: &[PathBuf]) -> Layout {
    // A `.git` folder is a git directory: commits write there, so its parts are protected
    // (below), not the whole of it.
    let git_folder = std::fs::symlink_metadata(cwd.join(".git")).is_ok_and(|m| m.is_dir());
    let mut wanted: Vec<(PathBuf, Placeholder)> = PROTECTED_TOP_NAMES
        .iter()
        .filter(|name| !(git_folder && **name == ".git"))
        .map(|name| (cwd.join(name), placeholder_for(name)))
        .collect();
    let git_root = skillet_skills::find_git_root(cwd);
    if git_root.as_deref().is_none_or(|root| root == cwd) {
        wanted.push((
            cwd.join(skillet_skills::PROJECT_TOP_DIR),
            Placeholder::Folder,
        ));
    }
    for root in skill_roots {
        wanted.push((root.clone(), Placeholder::Folder));
    }
    let mut layout = Layout::default();
    if let Some(root) = &git_root {
        git_paths(root, writable, &mut wanted, &mut layout);
    }
    let mut all_writable: Vec<PathBuf> = writable.to_vec();
    all_writable.extend(layout.git_writable.iter().cloned());
    for (path, placeholder) in wanted {
        place(&path, placeholder, &all_writable, &mut layout);
    }
    layout.read_only.sort();
    layout.read_only.dedup();
    layout.missing.sort_by(|a, b| a.0.cmp(&b.0));
    layout.missing.dedup_by(|a, b| a.0 == b.0);
    // A placeholder inside a read-only path or another placeholder is covered already.
    let covering: Vec<PathBuf> = layout
        .read_only
        .iter()
        .cloned()
        .chain(layout.missing.iter().map(|(path, _)| path.clone()))
        .collect();
    layout.missing.retain(|(path, _)| {
        !covering
            .iter()
            .any(|other| other != path && path.starts_with(other))
    });
    let read_only = layout.read_only.clone();
    layout.read_only.retain(|path| {
        !read_only
            .iter()
            .any(|other| other != path && path.starts_with(other))
    });
    // Every folder between a writable root and a protected path is pinned (a mount point
    // cannot be renamed or removed), outermost first so the inner mounts land on top.
    let mut pinned: Vec<PathBuf> = Vec::new();
    for path in layout
        .read_only
        .iter()
        .chain(layout.missing.iter().map(|(path, _)| path))
    {
        let Some(root) = all_writable.iter().find(|root| path.starts_with(root)) else {
            continue;
        };
        let mut ancestor = path.parent();
        while let Some(folder) = ancestor {
            if folder == root || !folder.starts_with(root) {
                break;
            }
            pinned.push(folder.to_path_buf());
            ancestor = folder.parent();
        }
    }
    pinned.retain(|folder| !layout.read_only.iter().any(|ro| folder.starts_with(ro)));
    pinned.sort_by_key(|path| path.components().count());
    pinned.dedup();
    layout.pinned = pinned;
    layout
}

/// Folders among [`PROTECTED_TOP_NAMES`]; the rest are files.
const PROTECTED_TOP_FOLDERS: [&str; 4] = [".git", ".agents", ".claude", ".opencode"];

fn placeholder_for(name: &str) -> Placeholder {
    if PROTECTED_TOP_FOLDERS.contains(&name) {
        Placeholder::Folder
    } else {
        Placeholder::File(b"")
    }
}

/// Adds `path` to the layout: read-only where it exists (through a link, the real file), a
/// placeholder at its first missing component where it does not; nothing where it lies outside
/// every writable folder (read-only already).
fn place(path: &Path, placeholder: Placeholder, writable: &[PathBuf], layout: &mut Layout) {
    let Some(root) = writable.iter().find(|root| path.starts_with(root)) else {
        return;
    };
    let Ok(relative) = path.strip_prefix(root) else {
        return;
    };
    let mut current = root.clone();
    let components: Vec<Component<'_>> = relative.components().collect();
    for (index, component) in components.iter().enumerate() {
        let Component::Normal(name) = component else {
            return;
        };
        let next = current.join(name);
        match std::fs::symlink_metadata(&next) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                // Where the link leads is what a write through it changes: protect that, as
                // the rest of the path names it. A link out of the writable folders leads
                // somewhere read-only already.
                let Ok(real) = std::fs::canonicalize(&next) else {
                    // Dangling: what a write would create is where it points.
                    if let Ok(target) = std::fs::read_link(&next) {
                        let target = current.join(target);
                        if let Some(target) = skillet_skills::confine::normalize(&target) {
                            let rest: PathBuf = components[index + 1..].iter().collect();
                            if target != next {
                                place(&target.join(rest), placeholder, writable, layout);
                            }
                        }
                    }
                    return;
                };
                let rest: PathBuf = components[index + 1..].iter().collect();
                if real.starts_with(&next) || next.starts_with(&real) && real != next {
                    // A loop; the kernel refuses it anyway.
                    return;
                }
                place(&real.join(rest), placeholder, writable, layout);
                return;
            }
            Ok(metadata) => {
                if index + 1 == components.len() {
                    layout.read_only.push(next);
                    return;
                }
                if !metadata.is_dir() {
                    // A file where a folder would be: nothing can be created beneath it, and
                    // the file itself is protected.
                    layout.read_only.push(next);
                    return;
                }
                current = next;
            }
            Err(_) => {
                let placeholder = if index + 1 == components.len() {
                    placeholder
                } else {
                    Placeholder::Folder
                };
                layout.missing.push((next, placeholder));
                return;
            }
        }
    }
}

/// The git paths of the repository at `root` (its `.git` a folder or a gitfile).
fn git_paths(
    root: &Path,
    writable: &[PathBuf],
    wanted: &mut Vec<(PathBuf, Placeholder)>,
    layout: &mut Layout,
) {
    let dot_git = root.join(".git");
    if std::fs::symlink_metadata(&dot_git).is_ok_and(|m| !m.is_dir()) {
        // A gitfile (or a link): where git looks is decided by it.
        wanted.push((dot_git.clone(), Placeholder::Folder));
    }
    let Some(git_dir) = resolve_git_dir(&dot_git) else {
        return;
    };
    let common_dir = common_dir(&git_dir).unwrap_or_else(|| git_dir.clone());
    for dir in [&git_dir, &common_dir] {
        // Commits from a subfolder or a linked worktree write here: writable, its protected
        // parts not. Only a folder that is a git directory, found as git finds it.
        if is_git_dir(dir) && !writable.iter().any(|root| dir.starts_with(root)) {
            layout.git_writable.push(dir.clone());
        }
    }
    layout.git_writable.sort();
    layout.git_writable.dedup();
    let mut configs: Vec<PathBuf> = Vec::new();
    for dir in [&git_dir, &common_dir] {
        for name in GIT_DIR_FILES {
            wanted.push((dir.join(name), git_placeholder(name)));
        }
        wanted.push((dir.join("hooks"), Placeholder::Folder));
        configs.push(dir.join("config"));
        configs.push(dir.join("config.worktree"));
    }
    // Submodules: their repositories under modules/ (nested), and their work trees' gitfiles.
    let mut modules = Vec::new();
    find_modules(&common_dir.join("modules"), 0, &mut modules);
    for module in modules {
        for name in GIT_DIR_FILES {
            wanted.push((module.join(name), git_placeholder(name)));
        }
        wanted.push((module.join("hooks"), Placeholder::Folder));
        configs.push(module.join("config"));
    }
    for path in submodule_paths(&root.join(".gitmodules")) {
        if let Some(path) = skillet_skills::confine::normalize(&root.join(path))
            && path.starts_with(root)
        {
            wanted.push((path.join(".git"), Placeholder::Folder));
        }
    }
    configs.sort();
    configs.dedup();
    // What the configs point at: core.hooksPath (relative to the work tree) and includes
    // (relative to the file that includes them), as git itself reads them.
    for config in configs {
        for (origin, key, value) in git_config_paths(&config) {
            let value = expand_home(&value);
            let base = if key == "core.hookspath" {
                root.to_path_buf()
            } else {
                origin
                    .parent()
                    .map_or_else(|| root.to_path_buf(), Path::to_path_buf)
            };
            if let Some(path) = skillet_skills::confine::normalize(&base.join(value)) {
                let placeholder = if key == "core.hookspath" {
                    Placeholder::Folder
                } else {
                    Placeholder::File(b"")
                };
                wanted.push((path, placeholder));
            }
        }
    }
}

/// A placeholder git reads as harmless: an empty config, and a `commondir` of `.` (the git
/// directory itself; an empty one stops git).
fn git_placeholder(name: &str) -> Placeholder {
    if name == "commondir" {
        Placeholder::File(b".\n")
    } else {
        Placeholder::File(b"")
    }
}

/// The git directory `.git` names: itself when a folder, the target of a gitfile
/// (`gitdir: PATH`, relative to the gitfile's folder).
fn resolve_git_dir(dot_git: &Path) -> Option<PathBuf> {
    let metadata = std::fs::metadata(dot_git).ok()?;
    if metadata.is_dir() {
        return std::fs::canonicalize(dot_git).ok();
    }
    let text = read_small(dot_git)?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let base = dot_git.parent()?;
    std::fs::canonicalize(base.join(target)).ok()
}

/// The common directory a linked worktree's git directory names in `commondir`.
fn common_dir(git_dir: &Path) -> Option<PathBuf> {
    let text = read_small(&git_dir.join("commondir"))?;
    let target = text.trim_end_matches(['\n', '\r']);
    std::fs::canonicalize(git_dir.join(target)).ok()
}

/// Whether `dir` looks like a git directory to git (`HEAD`, and `objects` or a `commondir`).
fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && (dir.join("objects").is_dir() || dir.join("commondir").is_file())
}

fn find_modules(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_MODULE_DEPTH || out.len() >= MAX_GIT_MODULES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        if out.len() >= MAX_GIT_MODULES {
            return;
        }
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        let path = entry.path();
        if path.join("HEAD").is_file() {
            find_modules(&path.join("modules"), depth + 1, out);
            out.push(path);
        } else {
            // Module names may hold slashes: `modules/a/b`.
            find_modules(&path, depth + 1, out);
        }
    }
}

/// The `path = …` values of a `.gitmodules` file.
fn submodule_paths(gitmodules: &Path) -> Vec<String> {
    let Some(text) = read_small(gitmodules) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.trim().split_once('=')?;
            (key.trim().eq_ignore_ascii_case("path"))
                .then(|| value.trim().trim_matches('"').to_string())
        })
        .collect()
}

/// `core.hooksPath` and include paths of one config file and what it includes, read by git
/// itself (`git config --file F --includes --show-origin`): (the file a value came from, the key
/// lowercased, the value). Nothing runs: reading config executes nothing. Without git, none.
fn git_config_paths(config: &Path) -> Vec<(PathBuf, String, String)> {
    if !config.is_file() {
        return Vec::new();
    }
    let output = std::process::Command::new("git")
        .arg("config")
        .arg("--file")
        .arg(config)
        .args([
            "--includes",
            "--show-origin",
            "-z",
            "--get-regexp",
            r"^(core\.hookspath|include\.path|includeif\..*\.path)$",
        ])
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = output else {
        return Vec::new();
    };
    // An include that names a FIFO would hold git (and every command) for ever: it gets
    // GIT_CONFIG_TIMEOUT, and its output is read beside it, capped.
    let Some(stdout) = child.stdout.take() else {
        return Vec::new();
    };
    let reader = std::thread::spawn(move || {
        use std::io::Read as _;
        let mut bytes = Vec::new();
        let _ = stdout.take(MAX_GIT_FILE_BYTES).read_to_end(&mut bytes);
        bytes
    });
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < GIT_CONFIG_TIMEOUT => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
        }
    }
    reader
        .join()
        .map(|bytes| parse_config_output(&bytes))
        .unwrap_or_default()
}

/// Parses `git config -z --show-origin --get-regexp` output: `file:ORIGIN\0KEY\nVALUE\0`.
fn parse_config_output(bytes: &[u8]) -> Vec<(PathBuf, String, String)> {
    let text = String::from_utf8_lossy(bytes);
    let mut fields = text.split('\0');
    let mut found = Vec::new();
    while let (Some(origin), Some(entry)) = (fields.next(), fields.next()) {
        let Some(origin) = origin.strip_prefix("file:") else {
            continue;
        };
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        if value.is_empty() {
            continue;
        }
        found.push((
            PathBuf::from(origin),
            key.to_ascii_lowercase(),
            value.to_string(),
        ));
    }
    found
}

fn expand_home(value: &str) -> PathBuf {
    match value.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME").map_or_else(
            || PathBuf::from(value),
            |home| PathBuf::from(home).join(rest),
        ),
        None => PathBuf::from(value),
    }
}

fn read_small(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_GIT_FILE_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout_of(cwd: &Path) -> Layout {
        layout(cwd, &[cwd.to_path_buf()], &[])
    }

    #[test]
    fn missing_names_get_placeholders_and_existing_ones_are_read_only() {
        let temp = tempfile::tempdir().unwrap();
        let cwd = temp.path().canonicalize().unwrap();
        std::fs::create_dir_all(cwd.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(cwd.join(".git/objects")).unwrap();
        std::fs::write(cwd.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(cwd.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(cwd.join("AGENTS.md"), "x").unwrap();
        let layout = layout_of(&cwd);
        assert!(layout.read_only.contains(&cwd.join("AGENTS.md")));
        assert!(layout.read_only.contains(&cwd.join(".git/config")));
        assert!(layout.read_only.contains(&cwd.join(".git/hooks")));
        assert!(
            !layout.read_only.contains(&cwd.join(".git")),
            "commits write there"
        );
        assert!(layout.pinned.contains(&cwd.join(".git")));
        assert!(
            layout
                .missing
                .contains(&(cwd.join(".git/commondir"), Placeholder::File(b".\n")))
        );
        assert!(
            layout
                .missing
                .contains(&(cwd.join(".claude"), Placeholder::Folder))
        );
        assert!(
            layout
                .missing
                .contains(&(cwd.join("CLAUDE.md"), Placeholder::File(b"")))
        );
        assert!(
            layout
                .missing
                .contains(&(cwd.join("skills"), Placeholder::Folder))
        );
    }

    #[test]
    fn without_a_repository_a_git_folder_cannot_be_made() {
        let temp = tempfile::tempdir().unwrap();
        let cwd = temp.path().canonicalize().unwrap();
        let layout = layout_of(&cwd);
        assert!(
            layout
                .missing
                .contains(&(cwd.join(".git"), Placeholder::Folder))
        );
    }

    #[test]
    fn links_protect_where_they_lead() {
        let temp = tempfile::tempdir().unwrap();
        let cwd = temp.path().canonicalize().unwrap();
        std::fs::create_dir_all(cwd.join("docs")).unwrap();
        std::fs::write(cwd.join("docs/agents.md"), "x").unwrap();
        std::os::unix::fs::symlink("docs/agents.md", cwd.join("CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink("nowhere/file", cwd.join(".envrc")).unwrap();
        let layout = layout_of(&cwd);
        assert!(layout.read_only.contains(&cwd.join("docs/agents.md")));
        assert!(layout.pinned.contains(&cwd.join("docs")));
        assert!(
            layout
                .missing
                .contains(&(cwd.join("nowhere"), Placeholder::Folder))
        );
    }

    #[test]
    fn config_output_is_parsed() {
        let parsed = parse_config_output(
            b"file:/r/.git/config\0core.hookspath\n.husky\0file:/r/.git/config\0include.path\n../x.cfg\0",
        );
        assert_eq!(
            parsed,
            vec![
                (
                    PathBuf::from("/r/.git/config"),
                    "core.hookspath".to_string(),
                    ".husky".to_string()
                ),
                (
                    PathBuf::from("/r/.git/config"),
                    "include.path".to_string(),
                    "../x.cfg".to_string()
                ),
            ]
        );
    }
}
