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
//!   git reads; the object store's packs and `info`. Loose objects, refs, the index and logs
//!   stay writable, so commits work.
//! - The skill roots the session protects, where they lie inside a writable folder.
//!
//! A protected path that does not exist yet gets a placeholder at its first missing component
//! (an empty folder, or a file git reads as harmless), mounted over read-only so nothing can be
//! created there, and removed after the command. Every folder between a writable root and a
//! read-only path is a mount point too, so it cannot be renamed away with the protected path
//! inside it.

use std::path::{Component, Path, PathBuf};

/// The most entries of the home folder's hidden folders looked at for links whose targets to
/// protect ([`home_link_targets`]).
pub const MAX_HOME_ENTRIES: usize = 10_000;

pub(in crate::sandbox) mod git;
mod hardlinks;
mod names;
mod nested;
mod programs;

pub use git::{GIT_CONFIG_TIMEOUT, MAX_GIT_MODULES};
pub use hardlinks::MAX_PROTECTED_ENTRIES;
pub use names::PROTECTED_TOP_NAMES;
pub use nested::{MAX_NESTED_FOLDERS, MAX_NESTED_READ_ONLY, MAX_NESTED_REPOSITORIES};
pub(in crate::sandbox) use programs::{envrc_sources, tool_programs};

/// What a placeholder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// Links met on the way to protected paths inside a writable folder, and what each read:
    /// no mount pins a link, so a command can replace one (`.githooks -> tools/hooks` by a
    /// folder of its own); [`crate::sandbox::aftermath`] says so after the command.
    pub links: Vec<(PathBuf, PathBuf)>,
    /// Folders bound writable again inside a read-only one: the visible folders of the home
    /// folder when a writable folder holds it ([`Guarded::home`]).
    pub reopened: Vec<PathBuf>,
    /// The home folder, when it is read-only but for [`Layout::reopened`].
    pub home: Option<PathBuf>,
    /// What could not be looked into (a workspace past [`MAX_NESTED_FOLDERS`]): said to the
    /// user.
    pub incomplete: Vec<String>,
    /// Real folders a protected path passes through and leaves again with `..`
    /// (`tools/bin/../hook.sh`): pinned too, since one swapped for a link would send the
    /// `..` elsewhere.
    pub passed: Vec<PathBuf>,
    /// A protected path is a writable folder itself ([`protect_existing`]): nothing is
    /// writable.
    pub whole: bool,
}

impl Layout {
    /// Whether `path` (absolute) is read-only under this layout: at or beneath a read-only
    /// path or a placeholder, and not in a folder bound writable again inside it.
    pub fn covers(&self, path: &Path) -> bool {
        self.read_only
            .iter()
            .chain(self.missing.iter().map(|(missing, _)| missing))
            .any(|protected| covered(path, protected, &self.reopened))
    }

    /// The home folder, when this layout keeps it read-only but for its visible folders.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }
}

/// Whether `path` lies at or beneath the read-only `protected`, and not inside one of
/// `reopened` beneath it.
fn covered(path: &Path, protected: &Path, reopened: &[PathBuf]) -> bool {
    path.starts_with(protected)
        && !reopened
            .iter()
            .any(|open| open != protected && open.starts_with(protected) && path.starts_with(open))
}

/// What a command's layout protects besides its workspaces' own protected paths.
#[derive(Debug, Clone, Copy, Default)]
pub struct Guarded<'a> {
    /// The skill roots.
    pub roots: &'a [PathBuf],
    /// The program's own folders (config, data, cache).
    pub own: &'a [PathBuf],
    /// The user's home folder: read-only but for its visible folders when a writable folder
    /// holds it.
    pub home: Option<&'a Path>,
    /// Where the sandbox keeps what it learnt between processes (the repositories nested in
    /// each workspace); a folder of the program's own, read-only to commands.
    pub state: Option<&'a Path>,
}

/// Works out the layout for a command in `cwd` (a real path) whose writable folders are
/// `writable` (real paths, `cwd` among them); `skill_roots` are the protected skill folders.
pub fn layout(cwd: &Path, writable: &[PathBuf], skill_roots: &[PathBuf]) -> Layout {
    layout_for(
        std::slice::from_ref(&cwd.to_path_buf()),
        writable,
        &Guarded {
            roots: skill_roots,
            ..Guarded::default()
        },
    )
}

/// [`layout`] for a command whose workspaces are `workspaces` (real paths: the working
/// directory first, then the folders added for the session, each protected as the working
/// directory is, its git repository included), writable folders `writable`, and what else
/// `guarded` names.
pub fn layout_for(workspaces: &[PathBuf], writable: &[PathBuf], guarded: &Guarded<'_>) -> Layout {
    let mut wanted: Vec<(PathBuf, Placeholder)> = Vec::new();
    let mut layout = Layout::default();
    home_top(guarded.home, writable, &mut layout);
    if let Some(cwd) = workspaces.first() {
        let untrusted = super::host::untrusted_roots(cwd, writable);
        // One budget for git's answers about every repository of this command.
        let deadline = std::time::Instant::now() + GIT_CONFIG_TIMEOUT;
        for workspace in workspaces {
            workspace_paths(
                workspace,
                (writable, &untrusted),
                deadline,
                &mut wanted,
                &mut layout,
            );
            // The home folder's hidden folders are read-only whole already ([`home_top`]).
            let home = layout.home.clone();
            let skip = |folder: &Path| {
                home.as_deref().is_some_and(|home| {
                    folder.parent() == Some(home)
                        && folder
                            .file_name()
                            .is_some_and(|name| name.to_string_lossy().starts_with('.'))
                })
            };
            let nested = nested::find(workspace, &skip, guarded.state);
            layout.incomplete.extend(nested.incomplete);
            if nested.overflow {
                // Fail closed: a workspace with more repositories than can be protected.
                layout.read_only.push(workspace.clone());
            }
            wanted.extend(
                nested
                    .unreadable
                    .into_iter()
                    .filter(|folder| folder != workspace)
                    .map(|folder| (folder, Placeholder::Folder)),
            );
            let (read, beyond) = nested
                .repositories
                .split_at(nested.repositories.len().min(MAX_NESTED_REPOSITORIES));
            for repository in read {
                nested_paths(
                    repository,
                    (writable, &untrusted),
                    deadline,
                    &mut wanted,
                    &mut layout,
                );
            }
            // Past the repositories whose configs git reads: each git directory read-only
            // whole (commits there fail for commands nobody reviewed; nothing is planted).
            for repository in beyond {
                let dot_git = repository.join(".git");
                if std::fs::symlink_metadata(&dot_git).is_ok() {
                    wanted.push((dot_git.clone(), Placeholder::Folder));
                    wanted.extend(
                        git::resolve_git_dir(&dot_git).map(|dir| (dir, Placeholder::Folder)),
                    );
                } else {
                    wanted.push((repository.clone(), Placeholder::Folder));
                }
            }
        }
    }
    // skillet's own folders and the user's configuration (`XDG_CONFIG_HOME` as the working
    // directory): all read-only, so a working directory that is one of them, or inside one,
    // gets nothing writable.
    for own in guarded.own {
        wanted.push((own.clone(), Placeholder::Folder));
        wanted.push((crate::paths::real_path(own), Placeholder::Folder));
    }
    // What the project names: one that is a writable folder itself fails closed. The user's
    // own skill roots and dotfiles' links may be the working directory itself (a skill's
    // author at work in it): then they protect nothing.
    let fails_closed = wanted.len();
    for root in guarded.roots {
        wanted.push((root.clone(), Placeholder::Folder));
    }
    for target in home_link_targets(guarded.home) {
        wanted.push((target, Placeholder::Folder));
    }
    let mut all_writable: Vec<PathBuf> = writable.to_vec();
    all_writable.extend(layout.git_writable.iter().cloned());
    for (index, (path, placeholder)) in wanted.into_iter().enumerate() {
        let whole = if index < fails_closed {
            Whole::FailsClosed
        } else {
            Whole::Skipped
        };
        place(&path, placeholder, (&all_writable, whole), &mut layout);
    }
    links_and_other_names(&mut layout, &all_writable);
    settle(&mut layout, &all_writable);
    layout
}

/// What links inside protected folders lead to, protected too (one level: a link in what they
/// lead to is not followed again); then, where a protected file has another name in a
/// writable folder or a protected folder cannot be read, no writable folder at all
/// ([`hardlinks`]).
fn links_and_other_names(layout: &mut Layout, all_writable: &[PathBuf]) {
    // Not looked into: the home folder's caches and data (package managers' stores hold hard
    // links by the thousand: docs/sandbox.md's limits), nor the folders bound writable again.
    let skipped: Vec<PathBuf> = layout
        .home
        .iter()
        .flat_map(|home| [home.join(".cache"), home.join(".local/share")])
        .chain(layout.reopened.iter().cloned())
        .collect();
    let mut shared = hardlinks::shared(&layout.read_only, all_writable, &skipped);
    let looked = layout.read_only.len();
    for (link, target) in std::mem::take(&mut shared.link_targets) {
        // A link in the home folder's hidden folders is the user's own (Wine's `z: -> /`).
        let in_hidden = |home: &PathBuf| {
            link.strip_prefix(home).is_ok_and(|inside| {
                inside
                    .components()
                    .next()
                    .is_some_and(|first| first.as_os_str().to_string_lossy().starts_with('.'))
            })
        };
        let whole = if layout.home.as_ref().is_some_and(in_hidden) {
            Whole::Skipped
        } else {
            Whole::FailsClosed
        };
        place_walking(
            &link,
            &target,
            Placeholder::Folder,
            (all_writable, whole),
            layout,
            0,
        );
    }
    // Only what the links added is looked at again (place appends).
    let added = hardlinks::shared(&layout.read_only[looked..], all_writable, &skipped);
    shared.files.extend(added.files);
    shared.unreadable.extend(added.unreadable);
    shared.overflow |= added.overflow;
    layout.incomplete.extend(hardlinks::told(&shared));
    if shared.fail_closed() || layout.whole {
        // Nothing writable: not the writable folders, nor the home folder's visible ones.
        layout.read_only.extend(all_writable.iter().cloned());
        layout.reopened.clear();
    }
}

/// Leaves out what another mount covers already, and pins the folders between each writable
/// root and the protected paths inside it.
fn settle(layout: &mut Layout, all_writable: &[PathBuf]) {
    layout.read_only.sort();
    layout.read_only.dedup();
    layout.missing.sort_by(|a, b| a.0.cmp(&b.0));
    layout.missing.dedup_by(|a, b| a.0 == b.0);
    layout.links.sort();
    layout.links.dedup();
    // A visible folder of the home folder that is protected itself (or lies in a protected
    // path) is not bound writable again.
    let home = layout.home.clone();
    let protected: Vec<PathBuf> = layout
        .read_only
        .iter()
        .chain(layout.missing.iter().map(|(path, _)| path))
        .filter(|path| Some(*path) != home.as_ref())
        .cloned()
        .collect();
    layout
        .reopened
        .retain(|open| !protected.iter().any(|path| open.starts_with(path)));
    // A placeholder inside a read-only path or another placeholder is covered already.
    let covering: Vec<PathBuf> = layout
        .read_only
        .iter()
        .cloned()
        .chain(layout.missing.iter().map(|(path, _)| path.clone()))
        .collect();
    let reopened = layout.reopened.clone();
    layout.missing.retain(|(path, _)| {
        !covering
            .iter()
            .any(|other| other != path && covered(path, other, &reopened))
    });
    let read_only = layout.read_only.clone();
    layout.read_only.retain(|path| {
        !read_only
            .iter()
            .any(|other| other != path && covered(path, other, &reopened))
    });
    // Every folder between a writable root and a protected path is pinned (a mount point
    // cannot be renamed or removed), outermost first so the inner mounts land on top.
    let mut pinned: Vec<PathBuf> = Vec::new();
    // From each protected path's folder up to its writable root; a folder passed through and
    // left with `..` is pinned itself too.
    let starts = layout
        .read_only
        .iter()
        .chain(layout.missing.iter().map(|(path, _)| path))
        .filter_map(|path| path.parent())
        .chain(layout.passed.iter().map(PathBuf::as_path));
    for start in starts {
        let Some(root) = all_writable.iter().find(|root| start.starts_with(root)) else {
            continue;
        };
        let mut folder = Some(start);
        while let Some(inside) = folder.filter(|folder| folder != root && folder.starts_with(root))
        {
            pinned.push(inside.to_path_buf());
            folder = inside.parent();
        }
    }
    pinned.retain(|folder| {
        !layout
            .read_only
            .iter()
            .any(|ro| covered(folder, ro, &layout.reopened))
    });
    pinned.sort_by_key(|path| path.components().count());
    pinned.dedup();
    // Each is a mount: past the cap of folders passed and left with `..`, nothing is
    // writable rather than some.
    let passed = pinned
        .iter()
        .filter(|folder| layout.passed.contains(folder))
        .count();
    if passed > MAX_PASSED_FOLDERS {
        layout.incomplete.push(format!(
            "protected links pass through {passed} folders that would each have to be pinned (more than {MAX_PASSED_FOLDERS}): commands nobody reviewed write nowhere here"
        ));
        layout.whole = true;
        layout.read_only.extend(all_writable.iter().cloned());
        layout.read_only.sort();
        layout.read_only.dedup();
        layout.reopened.clear();
        pinned.clear();
    }
    layout.pinned = pinned;
}

/// When a writable folder is the home folder or holds it: the home folder read-only, its
/// visible folders (real ones, not links) writable again. Shells' startup files, `~/.ssh`,
/// `~/.config` and every dotfile not made yet stay out of reach; so does anything new at the
/// top of the home folder.
fn home_top(home: Option<&Path>, writable: &[PathBuf], layout: &mut Layout) {
    let Some(home) = home.and_then(|home| std::fs::canonicalize(home).ok()) else {
        return;
    };
    if !writable.iter().any(|root| home.starts_with(root)) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(&home) else {
        return;
    };
    layout.reopened = entries
        .filter_map(Result::ok)
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect();
    // Folders the user's own config makes writable stay so (`~/.cargo`).
    layout.reopened.extend(
        writable
            .iter()
            .filter(|folder| folder.starts_with(&home) && **folder != home)
            .cloned(),
    );
    layout.reopened.sort();
    layout.reopened.dedup();
    layout.read_only.push(home.clone());
    layout.home = Some(home);
}

/// Where the links among the home folder's hidden entries lead (`~/.config -> dotfiles/config`,
/// `~/.gitconfig -> dotfiles/gitconfig`, and as GNU stow lays them out one or two folders down:
/// `~/.config/git -> ../../dotfiles/git/.config/git`, `~/.local/bin/tool`): the user's own
/// configuration, kept read-only wherever it lies inside a writable folder (a dotfiles
/// repository used as the working directory). Each link's own target, as written: where it
/// does not exist yet it gets a placeholder, and where it is a link again, that link is noted
/// and followed ([`place`]). At most [`MAX_HOME_ENTRIES`] entries are looked at, shallowest
/// first, three folders deep.
fn home_link_targets(home: Option<&Path>) -> Vec<PathBuf> {
    let Some(home) = home else {
        return Vec::new();
    };
    let mut targets = Vec::new();
    let mut queue: std::collections::VecDeque<(PathBuf, usize)> = std::fs::read_dir(home)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with('.'))
        .map(|entry| (entry.path(), 1))
        .collect();
    let mut seen = 0_usize;
    while let Some((path, depth)) = queue.pop_front() {
        seen += 1;
        if seen > MAX_HOME_ENTRIES {
            break;
        }
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if metadata.file_type().is_symlink() {
            if let (Ok(target), Some(parent)) = (std::fs::read_link(&path), path.parent()) {
                targets.push(parent.join(target));
            }
        } else if metadata.is_dir() && depth < 3 {
            queue.extend(
                std::fs::read_dir(&path)
                    .into_iter()
                    .flatten()
                    .filter_map(Result::ok)
                    .map(|entry| (entry.path(), depth + 1)),
            );
        }
    }
    targets
}

/// The protected paths of a repository nested in a workspace ([`nested`]): its git directory
/// as the workspace's own (config, hooks, what its config points at), and what of the names
/// protected at a workspace's top it holds already (no placeholders: a missing one matters
/// only to a tool started in that folder, see docs/sandbox.md's limits).
fn nested_paths(
    root: &Path,
    (writable, untrusted): (&[PathBuf], &[PathBuf]),
    deadline: std::time::Instant,
    wanted: &mut Vec<(PathBuf, Placeholder)>,
    layout: &mut Layout,
) {
    wanted.extend(
        PROTECTED_TOP_NAMES
            .iter()
            .map(|name| root.join(name))
            .filter(|path| std::fs::symlink_metadata(path).is_ok())
            .filter(|path| !path.ends_with(".git") || !path.is_dir())
            .map(|path| (path, Placeholder::Folder)),
    );
    if std::fs::symlink_metadata(root.join(".git")).is_ok() {
        git::git_paths(
            root,
            (writable, untrusted),
            (deadline, git::Met::Nested),
            wanted,
            layout,
        );
    } else {
        // A bare repository: the folder is its git directory, and its config may point
        // elsewhere too; where git cannot say, it is read-only whole. Its HEAD too: renamed
        // away, git would not take the folder for a repository until it came back.
        wanted.extend(git::protected_entries(root));
        wanted.push((root.join("HEAD"), Placeholder::File(b"")));
        if !git::read_config_paths(root, root, &[], (untrusted, deadline), wanted) {
            wanted.push((root.to_path_buf(), Placeholder::Folder));
        }
    }
}

/// The protected paths of one workspace (a working directory, or a folder added for the
/// session), and of the git repository it is in.
fn workspace_paths(
    cwd: &Path,
    (writable, untrusted): (&[PathBuf], &[PathBuf]),
    deadline: std::time::Instant,
    wanted: &mut Vec<(PathBuf, Placeholder)>,
    layout: &mut Layout,
) {
    // A `.git` folder is a git directory: commits write there, so its parts are protected
    // (below), not the whole of it.
    let git_folder = std::fs::symlink_metadata(cwd.join(".git")).is_ok_and(|m| m.is_dir());
    wanted.extend(
        PROTECTED_TOP_NAMES
            .iter()
            .filter(|name| !(git_folder && **name == ".git"))
            // Missing ones get an empty folder, files too: a command can neither create the
            // file nor see an empty one git would list as untracked (and `git add -A` commit).
            .map(|name| (cwd.join(name), Placeholder::Folder)),
    );
    let (programs, unread) = programs::tool_settings(cwd);
    if let Some(first) = unread.first() {
        // What it names is unknown: nothing is writable rather than some of it.
        layout.incomplete.push(format!(
            "in {}, {first}, so what lefthook would run is unknown: commands nobody reviewed write nowhere here",
            cwd.display()
        ));
        layout.whole = true;
    }
    wanted.extend(
        envrc_sources(cwd)
            .into_iter()
            .chain(programs)
            .map(|path| (path, Placeholder::Folder)),
    );
    if std::fs::symlink_metadata(cwd.join(".git")).is_err() {
        // No `.git` here: git would take the working directory itself for a bare repository
        // if a command made one (`HEAD`, `objects`, `refs`); a folder named `HEAD` is no
        // valid HEAD.
        wanted.push((cwd.join("HEAD"), Placeholder::Folder));
    }
    let git_root = skillet_skills::find_git_root(cwd);
    if git_root.as_deref().is_none_or(|root| root == cwd) {
        wanted.push((
            cwd.join(skillet_skills::PROJECT_TOP_DIR),
            Placeholder::Folder,
        ));
    }
    if let Some(root) = &git_root {
        git::git_paths(
            root,
            (writable, untrusted),
            (deadline, git::Met::Workspace),
            wanted,
            layout,
        );
    }
}

/// The most links followed on the way to one protected path (the kernel's own limit).
const MAX_LINK_HOPS: usize = 40;
/// The most folders protected paths pass through and leave with `..` (each pinned by a
/// mount); past it commands nobody reviewed get no writable folder.
pub const MAX_PASSED_FOLDERS: usize = 256;

/// Adds `path` to the layout: read-only where it exists (through a link, the real file), a
/// placeholder at its first missing component where it does not; nothing where it lies outside
/// every writable folder (read-only already). The path is walked as the kernel walks it: a
/// link is followed where it stands, so a `..` after it leaves the folder it leads to, not the
/// folder it is in (`tools/current/../hook.sh` with `current -> v2/bin` is `tools/v2/hook.sh`);
/// no lexical clean-up is done first.
fn place(
    path: &Path,
    placeholder: Placeholder,
    writable: (&[PathBuf], Whole),
    layout: &mut Layout,
) {
    place_walking(path, path, placeholder, writable, layout, 0);
}

/// What a protected path that is a writable folder itself, or holds one, does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Whole {
    /// Nothing is writable, and the user is told (`.claude -> .` in a repository).
    FailsClosed,
    /// It protects nothing (the user's own skill root as the working directory).
    Skipped,
}

/// [`place`] from `/`, `hops` links followed so far, for the protected path `named`.
fn place_walking(
    named: &Path,
    path: &Path,
    placeholder: Placeholder,
    (writable, whole): (&[PathBuf], Whole),
    layout: &mut Layout,
    hops: usize,
) {
    if hops > MAX_LINK_HOPS || !path.is_absolute() {
        // A loop, or nothing the kernel resolves either.
        return;
    }
    let root_of = |path: &Path| writable.iter().find(|root| path.starts_with(root)).cloned();
    let mut current = PathBuf::from("/");
    let components: Vec<Component<'_>> = path.components().collect();
    for (index, component) in components.iter().enumerate() {
        let name = match component {
            Component::Prefix(_) | Component::RootDir => {
                current = PathBuf::from("/");
                continue;
            }
            Component::CurDir => continue,
            // `current` is a real path (every link before it was followed), so its parent is
            // the `..` the kernel takes; the folder left is pinned, so it stays the one it is.
            Component::ParentDir => {
                // A placeholder (`build` in `build/..` with no `build`) is a mount already.
                if root_of(&current).is_some()
                    && current.is_dir()
                    && !layout.passed.contains(&current)
                {
                    layout.passed.push(current.clone());
                }
                current.pop();
                continue;
            }
            Component::Normal(name) => name,
        };
        let next = current.join(name);
        if next.starts_with("/proc") {
            // `/proc/self/cwd/…`, `/proc/PID/root/…` are a different place for each process
            // that reads them (and one reached by `..` is no different): where they lead
            // cannot be known, so it is as bad as the whole.
            let root = writable.first().cloned().unwrap_or_default();
            protect_existing(named, root, (writable, whole), layout);
            return;
        }
        let root = root_of(&next);
        let last = index + 1 == components.len();
        match std::fs::symlink_metadata(&next) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let Ok(target) = std::fs::read_link(&next) else {
                    return;
                };
                if root.is_some() {
                    layout.links.push((next.clone(), target.clone()));
                }
                // Where the link leads is what a write through it changes (or, dangling,
                // creates): the rest of the path walked on from there.
                let rest: PathBuf = components[index + 1..].iter().collect();
                let onward = current.join(target);
                let onward = if rest.as_os_str().is_empty() {
                    onward
                } else {
                    onward.join(rest)
                };
                place_walking(
                    named,
                    &onward,
                    placeholder,
                    (writable, whole),
                    layout,
                    hops + 1,
                );
                return;
            }
            Ok(metadata) => {
                if last || !metadata.is_dir() {
                    // The path itself, or a file where a folder would be: nothing can be
                    // created beneath it, and the file itself is protected.
                    protect_existing(named, next, (writable, whole), layout);
                    return;
                }
                current = next;
            }
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                // What cannot be looked into (a folder made unsearchable) cannot get a
                // placeholder: the folder that hides it is read-only whole, so a command cannot
                // open it again either.
                if let Some(root) = root {
                    let whole = current != root && current.starts_with(&root);
                    layout.read_only.push(if whole { current } else { next });
                }
                return;
            }
            Err(_) => {
                if root.is_some() {
                    let placeholder = if last {
                        placeholder
                    } else {
                        Placeholder::Folder
                    };
                    layout.missing.push((next.clone(), placeholder));
                }
                if last || !components[index + 1..].contains(&Component::ParentDir) {
                    return;
                }
                // `build/../notes/instr.md` with no `build`: the placeholder makes `build` a
                // folder, so the `..` after it leads back out, to what is protected.
                current = next;
            }
        }
    }
    // The path ends in `..` or `.` (`.husky -> hooks/x/..`): the folder reached is it.
    protect_existing(named, current, (writable, whole), layout);
}

/// Protects `real`, an existing path that the protected path `named` is, when a writable
/// folder holds it. One that is a writable folder itself, or holds one (`.claude -> .`,
/// `core.hooksPath = ..`), cannot be read-only alone: then, as `whole` says, commands nobody
/// reviewed get no writable folder at all and the user is told why, or (the user's own setup)
/// it protects nothing.
fn protect_existing(
    named: &Path,
    real: PathBuf,
    (writable, whole): (&[PathBuf], Whole),
    layout: &mut Layout,
) {
    if let Some(root) = writable.iter().find(|root| root.starts_with(&real)) {
        if whole == Whole::Skipped {
            return;
        }
        let said = format!(
            "{} is protected, and it leads to {} or holds it (or it cannot be told where it leads), a folder commands may write as a whole: commands nobody reviewed write nowhere here\n  hint: point it at a folder of its own",
            named.display(),
            root.display()
        );
        if !layout.incomplete.contains(&said) {
            layout.incomplete.push(said);
        }
        layout.whole = true;
        return;
    }
    if writable.iter().any(|root| real.starts_with(root)) {
        layout.read_only.push(real);
    }
}

#[cfg(test)]
mod tests;
