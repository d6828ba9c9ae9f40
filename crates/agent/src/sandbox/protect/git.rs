//! Git's paths as git resolves them: the git directory (a `.git` folder, or the one a gitfile
//! names, when that directory names this work tree back), its common directory, linked
//! worktrees' and submodules' git directories, and what their configs point at
//! (`core.hooksPath`, includes), read by the user's own git found outside the writable folders.

use std::path::{Path, PathBuf};

use super::{Layout, Placeholder};

/// Files of a git directory that decide what git runs or where it looks.
const GIT_DIR_FILES: [&str; 3] = ["config", "config.worktree", "commondir"];
/// Entries of a git directory that are protected; when one is a link it cannot be pinned in
/// place, so the git directory is read-only whole.
const GIT_DIR_PROTECTED: [&str; 4] = ["config", "config.worktree", "commondir", "hooks"];
/// The most submodule repositories looked into (under `modules/`, nested), and the most
/// linked worktrees (under `worktrees/`).
pub const MAX_GIT_MODULES: usize = 256;
/// How deep `modules/` folders nest before the search stops.
const MAX_MODULE_DEPTH: usize = 4;
/// How long the `git config` calls for one command may take together (for its workspaces and
/// the repositories nested in them) to list the configs' hooks paths and includes; past it,
/// the git directories not read yet are read-only whole.
pub const GIT_CONFIG_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);
/// The most bytes of a gitfile, `.gitmodules` or config read here.
const MAX_GIT_FILE_BYTES: u64 = 256 * 1024;

/// How a repository is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Met {
    /// A workspace's own: a git directory outside it that names it back is opened for commits,
    /// and the gitlinks its index holds are listed.
    Workspace,
    /// Nested in a workspace ([`super::nested`]): nothing outside the writable folders is
    /// opened (a `.git` a command made there could name any repository on the machine), and
    /// its index is not listed (the walk finds what is nested in it).
    Nested,
}

/// The git paths of the repository at `root` (its `.git` a folder or a gitfile). `writable`
/// are the folders commands may write, `untrusted` those and the temp dir (where no `git` is
/// taken from); the calls to git end by `deadline` (one for every repository of a command).
pub(super) fn git_paths(
    root: &Path,
    (writable, untrusted): (&[PathBuf], &[PathBuf]),
    (deadline, met): (std::time::Instant, Met),
    wanted: &mut Vec<(PathBuf, Placeholder)>,
    layout: &mut Layout,
) {
    let dot_git = root.join(".git");
    let gitfile = std::fs::symlink_metadata(&dot_git).is_ok_and(|m| !m.is_dir());
    if gitfile {
        // A gitfile (or a link): where git looks is decided by it.
        wanted.push((dot_git.clone(), Placeholder::Folder));
    }
    let Some(git_dir) = resolve_git_dir(&dot_git) else {
        return;
    };
    let common_dir = common_dir(&git_dir).unwrap_or_else(|| git_dir.clone());
    // A git directory elsewhere is writable only when it names this work tree back (a linked
    // worktree's `gitdir`, a submodule's `core.worktree`): a `.git` file that merely points
    // at another repository does not open that one to commands.
    let belongs = !gitfile || names_back(&git_dir, &dot_git, root);
    let mut dirs = vec![git_dir.clone()];
    if common_dir != git_dir {
        dirs.push(common_dir.clone());
    }
    // The common directory names this git directory back by holding it among its worktrees
    // (`COMMON/worktrees/NAME`); one a `commondir` merely names (through a link the command
    // may change, or a guessed path) is not opened.
    let common_belongs =
        common_dir == git_dir || git_dir.parent() == Some(common_dir.join("worktrees").as_path());
    for dir in &dirs {
        let belongs = belongs && (*dir == git_dir || common_belongs);
        let linked = GIT_DIR_PROTECTED
            .iter()
            .any(|name| std::fs::symlink_metadata(dir.join(name)).is_ok_and(|m| m.is_symlink()));
        let inside = writable.iter().any(|root| dir.starts_with(root));
        if linked {
            // A link can be renamed away and replaced, and no mount pins a link: the whole
            // git directory is read-only (commits from the command fail; nothing is planted).
            if inside {
                wanted.push((dir.clone(), Placeholder::Folder));
            }
        } else if belongs && !inside && met == Met::Workspace && is_git_dir(dir) {
            // Commits from a subfolder or a linked worktree write here: writable, its
            // protected parts not.
            layout.git_writable.push(dir.clone());
        }
    }
    layout.git_writable.sort();
    layout.git_writable.dedup();
    let mut configs: Vec<PathBuf> = Vec::new();
    for dir in &dirs {
        wanted.extend(protected_entries(dir));
        configs.push(dir.join("config"));
        configs.push(dir.join("config.worktree"));
    }
    // Read in one call as git reads them for this repository, with the user's and the system's.
    let own = configs.len();
    // Other linked worktrees of the same repository: what their git directories name and
    // their own config.
    for worktree in subfolders(&common_dir.join("worktrees")) {
        for name in ["commondir", "config.worktree"] {
            wanted.push((worktree.join(name), git_placeholder(name)));
        }
        configs.push(worktree.join("config.worktree"));
    }
    other_indexes(&git_dir, &common_dir, wanted);
    // Submodules: their repositories under modules/ (nested), and their work trees' gitfiles.
    let mut modules = Vec::new();
    find_modules(&common_dir.join("modules"), 0, &mut modules);
    for module in &modules {
        wanted.extend(protected_entries(module));
        configs.push(module.join("config"));
    }
    let git = super::super::host::find("git", untrusted);
    // A gitlink's work tree (listed in `.gitmodules` or only in the index) gets a `.git` of the
    // command's making at no path: a repository planted there would run at the user's next
    // `git status`.
    let submodules = submodules(git.as_deref(), root, deadline);
    let indexed = match met {
        Met::Workspace => super::super::gitlinks::listed(
            git.as_deref(),
            root,
            &git_dir,
            &super::super::gitlinks::Indexes::of(&git_dir, &common_dir),
        ),
        Met::Nested => Ok(std::sync::Arc::default()),
    };
    let work_trees = submodules
        .iter()
        .map(|(_, path)| PathBuf::from(path))
        .chain(indexed.iter().flat_map(|listed| listed.iter().cloned()));
    for path in work_trees {
        if let Some(path) = skillet_skills::confine::normalize(&root.join(path))
            && path.starts_with(root)
        {
            wanted.push((path.join(".git"), Placeholder::Folder));
        }
    }
    // A submodule not initialised yet has no repository under `modules/`: one the command made
    // there would be the one `git submodule update --init` takes.
    let modules_dir = common_dir.join("modules");
    for (name, _) in &submodules {
        if let Some(module) = skillet_skills::confine::normalize(&modules_dir.join(name))
            && module.starts_with(&modules_dir)
            && module != modules_dir
            && !module.exists()
        {
            wanted.push((module, Placeholder::Folder));
        }
    }
    let mut others = configs.split_off(own);
    others.sort();
    others.dedup();
    others.retain(|config| config.is_file());
    // Where git cannot say, every git directory is read-only whole.
    if !read_config_paths(root, &git_dir, &others, (untrusted, deadline), wanted) {
        wanted.extend(
            dirs.iter()
                .chain(&modules)
                .map(|dir| (dir.clone(), Placeholder::Folder)),
        );
        layout.git_writable.retain(|dir| !dirs.contains(dir));
    }
}

/// Adds the other worktrees' indexes (the main one's in the common directory) to `wanted`:
/// what they stage is written into their work trees at a checkout there, and no command here
/// needs them. Only existing ones: an empty placeholder is no index git reads.
fn other_indexes(git_dir: &Path, common_dir: &Path, wanted: &mut Vec<(PathBuf, Placeholder)>) {
    let others = std::iter::once(common_dir.to_path_buf())
        .chain(subfolders(&common_dir.join("worktrees")))
        .filter(|dir| dir != git_dir);
    for dir in others {
        let index = dir.join("index");
        if std::fs::symlink_metadata(&index).is_ok_and(|m| m.is_file()) {
            wanted.push((index, Placeholder::File(b"")));
        }
    }
}

/// Adds what the configs point at to `wanted`: core.hooksPath (relative to the work tree) and
/// includes (relative to the file that includes them), as the user's own git reads them for
/// the repository at `root` (with the user's and the system's config: their hooks path may be
/// relative) and in each of `others`. False when git could not say.
pub(super) fn read_config_paths(
    root: &Path,
    git_dir: &Path,
    others: &[PathBuf],
    (untrusted, deadline): (&[PathBuf], std::time::Instant),
    wanted: &mut Vec<(PathBuf, Placeholder)>,
) -> bool {
    let git = super::super::host::find("git", untrusted);
    let mut sources = vec![ConfigSource::Repository(git_dir, root)];
    sources.extend(others.iter().map(|c| ConfigSource::File(c)));
    let mut unknown = false;
    // One budget for every call: configs made to hang cannot add up.
    for source in sources {
        let Some(found) = git
            .as_deref()
            .and_then(|git| git_config_paths(git, source, deadline))
        else {
            // Read-only whole anyway: nothing more to learn.
            unknown = true;
            break;
        };
        for (origin, key, value) in found {
            let value = expand_home(&value);
            let base = if key == "core.hookspath" {
                root.to_path_buf()
            } else {
                origin
                    .parent()
                    .map_or_else(|| root.to_path_buf(), Path::to_path_buf)
            };
            let placeholder = if key == "core.hookspath" {
                Placeholder::Folder
            } else {
                Placeholder::File(b"")
            };
            // As git opens it, not cleaned up: the layout resolves a `..` after a link where
            // the link leads, as the kernel does.
            wanted.push((base.join(value), placeholder));
        }
    }
    !unknown
}

/// Whether the git directory a gitfile names says it belongs to this work tree: a linked
/// worktree's `gitdir` file names the `.git` file back, or a submodule's config names the work
/// tree as `core.worktree`. Both are written by git in the repository pointed at, which the
/// gitfile's author does not control.
fn names_back(git_dir: &Path, dot_git: &Path, root: &Path) -> bool {
    let real = |path: &Path| std::fs::canonicalize(path).ok();
    if let Some(text) = read_small(&git_dir.join("gitdir"))
        && let Some(named) = real(&git_dir.join(text.trim_end_matches(['\n', '\r'])))
        && Some(named) == real(dot_git)
    {
        return true;
    }
    let Some(config) = read_small(&git_dir.join("config")) else {
        return false;
    };
    config.lines().any(|line| {
        line.trim()
            .split_once('=')
            .filter(|(key, _)| key.trim().eq_ignore_ascii_case("worktree"))
            .and_then(|(_, value)| real(&git_dir.join(value.trim().trim_matches('"'))))
            .is_some_and(|worktree| Some(worktree) == real(root))
    })
}

/// The folders in `dir`, at most [`MAX_GIT_MODULES`].
fn subfolders(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .take(MAX_GIT_MODULES)
        .collect()
}

/// The protected entries of the git directory `dir`: its config files and hooks, and where it
/// holds an object store, the store's packs and `info` (alternates, the commit graph). Loose
/// objects stay writable, so commits work; what a command writes there is checked against
/// the names git gives them ([`crate::sandbox::objects`]).
pub(super) fn protected_entries(dir: &Path) -> impl Iterator<Item = (PathBuf, Placeholder)> + '_ {
    let store = dir.join("objects");
    let packs = store
        .is_dir()
        .then(|| OBJECT_STORE_PROTECTED.map(|name| (store.join(name), Placeholder::Folder)));
    // lefthook's clones of the configs `remotes:` names, which its hooks run from (in the
    // folder `git rev-parse --git-path info` gives: the common directory's for a worktree).
    // Where `info` is missing, its placeholder keeps one from being made.
    let remotes = std::iter::once((dir.join("info/lefthook-remotes"), Placeholder::Folder));
    GIT_DIR_FILES
        .iter()
        .map(move |name| (dir.join(name), git_placeholder(name)))
        .chain(std::iter::once((dir.join("hooks"), Placeholder::Folder)))
        .chain(packs.into_iter().flatten())
        .chain(remotes)
}

/// The folders of an object store that no command nobody reviewed writes: packs (a pack with
/// other content for an object's name, or one removed to bring out a loose copy), and `info`
/// (`alternates`, which would take objects from elsewhere). Git commits write loose objects.
pub const OBJECT_STORE_PROTECTED: [&str; 2] = ["pack", "info"];

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
pub(in crate::sandbox) fn resolve_git_dir(dot_git: &Path) -> Option<PathBuf> {
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
pub(in crate::sandbox) fn common_dir(git_dir: &Path) -> Option<PathBuf> {
    let text = read_small(&git_dir.join("commondir"))?;
    let target = text.trim_end_matches(['\n', '\r']);
    std::fs::canonicalize(git_dir.join(target)).ok()
}

/// Whether `dir` looks like a git directory to git (`HEAD`, and `objects` or a `commondir`).
fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && (dir.join("objects").is_dir() || dir.join("commondir").is_file())
}

pub(in crate::sandbox) fn find_modules(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
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
        // Any kind of HEAD, or what else a git directory holds: a command that renamed HEAD
        // away (a deinitialised submodule's) does not hide the repository.
        let is_repository = ["HEAD", "config", "objects"]
            .iter()
            .any(|name| std::fs::symlink_metadata(path.join(name)).is_ok());
        if is_repository {
            find_modules(&path.join("modules"), depth + 1, out);
            out.push(path);
        } else {
            // Module names may hold slashes: `modules/a/b`.
            find_modules(&path, depth + 1, out);
        }
    }
}

/// The `path = …` values of a `.gitmodules` file.
/// The submodules `.gitmodules` at `root` names, (name, path), as git reads the file (`git
/// config --file`); where git cannot say, by a plain reading of its `path` lines (names
/// unknown then: the path stands for the name, as git's default).
fn submodules(
    git: Option<&Path>,
    root: &Path,
    deadline: std::time::Instant,
) -> Vec<(String, String)> {
    let gitmodules = root.join(".gitmodules");
    if !gitmodules.is_file() {
        return Vec::new();
    }
    let read = git.and_then(|git| {
        let mut command = std::process::Command::new(git);
        command
            .args(["config", "--file"])
            .arg(&gitmodules)
            .args(["-z", "--get-regexp", r"^submodule\..*\.path$"])
            .current_dir("/");
        let (_, bytes) = super::super::host::run_until(command, deadline, |stdout| {
            use std::io::Read as _;
            let mut bytes = Vec::new();
            let _ = stdout.take(MAX_GIT_FILE_BYTES).read_to_end(&mut bytes);
            bytes
        })?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Some(
            text.split('\0')
                .filter_map(|record| {
                    let (key, path) = record.split_once('\n')?;
                    let name = key.strip_prefix("submodule.")?.strip_suffix(".path")?;
                    Some((name.to_string(), path.to_string()))
                })
                .collect::<Vec<_>>(),
        )
    });
    read.unwrap_or_else(|| {
        submodule_paths(&gitmodules)
            .into_iter()
            .map(|path| (path.clone(), path))
            .collect()
    })
}

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

/// Which config `git config` reads.
#[derive(Debug, Clone, Copy)]
enum ConfigSource<'a> {
    /// One file (and what it includes).
    File(&'a Path),
    /// What git reads for the repository with this git directory and work tree: the system's,
    /// the user's, the repository's and the worktree's config (and what they include).
    Repository(&'a Path, &'a Path),
}

/// `core.hooksPath` and include paths of one config and what it includes, read by `git`
/// itself (`git config --includes --show-origin`): (the file a value came from, the key
/// lowercased, the value). Nothing runs: reading config executes nothing. None when git could
/// not say (it did not start, or took longer than [`GIT_CONFIG_TIMEOUT`]).
fn git_config_paths(
    git: &Path,
    source: ConfigSource<'_>,
    deadline: std::time::Instant,
) -> Option<Vec<(PathBuf, String, String)>> {
    let mut command = std::process::Command::new(git);
    match source {
        ConfigSource::File(config) => {
            command
                .arg("config")
                .arg("--file")
                .arg(config)
                .current_dir("/");
        }
        ConfigSource::Repository(git_dir, root) => {
            // Named, not found: no discovery, no ownership question, nothing of the command's
            // environment (GIT_DIR…) in the way.
            command
                .arg("--git-dir")
                .arg(git_dir)
                .arg("config")
                .current_dir(root)
                .env_remove("GIT_DIR")
                .env_remove("GIT_WORK_TREE")
                .env_remove("GIT_COMMON_DIR");
        }
    }
    command.args([
        "--includes",
        "--show-origin",
        "-z",
        "--get-regexp",
        r"^(core\.hookspath|include\.path|includeif\..*\.path)$",
    ]);
    // An include that names a FIFO would hold git (and every command) for ever: it gets
    // GIT_CONFIG_TIMEOUT, and its output is read beside it, capped.
    let (_, bytes) = super::super::host::run_until(command, deadline, |stdout| {
        use std::io::Read as _;
        let mut bytes = Vec::new();
        let _ = stdout.take(MAX_GIT_FILE_BYTES).read_to_end(&mut bytes);
        bytes
    })?;
    Some(parse_config_output(&bytes))
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

/// The first [`MAX_GIT_FILE_BYTES`] of a regular file as text, opened as the engine opens
/// what a repository controls (`skillet_skills::open_regular`: no FIFO, socket or device, no
/// blocking open); none when it is no such file or not UTF-8.
fn read_small(path: &Path) -> Option<String> {
    let mut file = skillet_skills::open_regular(path).ok()?;
    let mut bytes = Vec::new();
    skillet_skills::read_capped(&mut file, &mut bytes, MAX_GIT_FILE_BYTES).ok()?;
    bytes.truncate(usize::try_from(MAX_GIT_FILE_BYTES).unwrap_or(usize::MAX));
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
