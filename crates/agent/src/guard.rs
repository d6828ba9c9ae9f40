//! Protected files around a command where nobody is asked: Landlock can only allow, so the
//! sandbox cannot keep a command out of `.git/` while letting it write the rest of the working
//! directory. In `skillet run --yes` (and in `chat` once commands are allowed "always"), the
//! files that run code or steer the model later (git's config, hooks and `commondir`, those of
//! submodules, `.envrc`, `skillet.toml`, the project's skill folders) are copied before each
//! command and put back after it, and the model is told it may not change them.
//!
//! Nothing is followed through a link: a watched file that became a link is put back as a file,
//! a watched folder that was replaced (by a link, a file or another folder) is reported and
//! nothing is restored or removed through it, and new files are removed only when the whole
//! set was seen before the command. A process the command detached with `setsid` can still
//! write after the check; that limit is in the README.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skillet_skills::confine::Beneath;

/// The most bytes of protected files copied before a command; past it, changes are still found
/// (by size and time) and reported, but not put back.
pub const MAX_GUARDED_BYTES: u64 = 8 * 1024 * 1024;
/// The most protected files looked at; past it, new files are reported, not removed.
pub const MAX_GUARDED_FILES: usize = 2_000;
/// How deep watched folders are looked into.
const MAX_DEPTH: usize = 6;
/// Folders of `.git` never looked into (data, not code).
const GIT_DATA: [&str; 5] = ["objects", "refs", "logs", "lfs", "rr-cache"];

/// A file as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kept {
    /// A regular file, copied.
    Bytes(Vec<u8>),
    /// A regular file over the budget: its size and time.
    Seen(u64, Option<std::time::SystemTime>),
    /// A link, and where it pointed.
    Link(PathBuf),
}

/// What a folder was: its device and inode (on Unix), or only that it was a real folder.
type Identity = Option<(u64, u64)>;

/// The protected files of a project, as they were before a command.
pub struct Guard {
    beneath: Beneath,
    /// The working directory.
    cwd: PathBuf,
    /// Watched folders and what they were (`None`: absent or not a real folder).
    folders: Vec<(PathBuf, Option<Identity>)>,
    /// The project's skill folders (relative), walked whole.
    skill_folders: Vec<PathBuf>,
    files: BTreeMap<PathBuf, Kept>,
    /// Whether every protected file was seen (under [`MAX_GUARDED_FILES`]).
    complete: bool,
}

/// What the command changed, for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file or folder, relative to the project.
    pub path: PathBuf,
    /// Whether it was put back.
    pub restored: bool,
}

impl Guard {
    /// Copies the protected files of the project `cwd` is in; `skill_roots` are absolute.
    pub fn watch(cwd: &Path, skill_roots: &[PathBuf]) -> Option<Self> {
        let root = skillet_skills::find_git_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
        let beneath = Beneath::open(&root).ok()?;
        let skill_folders: Vec<PathBuf> = skill_roots
            .iter()
            .filter_map(|dir| dir.strip_prefix(&root).ok())
            .filter(|relative| !relative.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .collect();
        let mut folders: Vec<PathBuf> = vec![PathBuf::from(".git"), PathBuf::from(".git/hooks")];
        folders.extend(skill_folders.iter().cloned());
        let mut guard = Self {
            beneath,
            cwd: cwd.to_path_buf(),
            folders: Vec::new(),
            skill_folders,
            files: BTreeMap::new(),
            complete: true,
        };
        guard.folders = folders
            .into_iter()
            .map(|folder| {
                let identity = guard.identity(&folder);
                (folder, identity)
            })
            .collect();
        let (paths, complete) = guard.protected_paths();
        guard.complete = complete;
        let mut budget = MAX_GUARDED_BYTES;
        for path in paths {
            if let Some(kept) = guard.keep(&path, &mut budget) {
                guard.files.insert(path, kept);
            }
        }
        Some(guard)
    }

    /// Puts back every protected file the command changed, created or removed, as far as it can
    /// without going through a replaced folder; what changed.
    pub fn restore(&self) -> Vec<Change> {
        let mut changes = Vec::new();
        let replaced: Vec<&Path> = self
            .folders
            .iter()
            .filter(|(folder, identity)| self.identity(folder) != *identity)
            .map(|(folder, _)| folder.as_path())
            .collect();
        for folder in &replaced {
            changes.push(Change {
                path: folder.to_path_buf(),
                restored: false,
            });
        }
        let inside_replaced = |path: &Path| replaced.iter().any(|folder| path.starts_with(folder));
        for (path, kept) in &self.files {
            if inside_replaced(path) || self.unchanged(path, kept) {
                continue;
            }
            let restored = match kept {
                Kept::Bytes(old) => self
                    .beneath
                    .replace(path, &path.display().to_string(), old)
                    .is_ok(),
                Kept::Seen(..) | Kept::Link(_) => false,
            };
            changes.push(Change {
                path: path.clone(),
                restored,
            });
        }
        let (now, _) = self.protected_paths();
        for path in now {
            if self.files.contains_key(&path) || inside_replaced(&path) {
                continue;
            }
            let Ok(metadata) = std::fs::symlink_metadata(self.beneath.root().join(&path)) else {
                continue;
            };
            if metadata.is_dir() {
                continue;
            }
            // Removed only when the whole set was seen before: else it may be an old file.
            let restored = self.complete
                && self
                    .beneath
                    .remove_file(&path, &path.display().to_string())
                    .is_ok();
            changes.push(Change { path, restored });
        }
        changes
    }

    /// Whether `path` is as it was.
    fn unchanged(&self, path: &Path, kept: &Kept) -> bool {
        let full = self.beneath.root().join(path);
        let Ok(metadata) = std::fs::symlink_metadata(&full) else {
            return false;
        };
        match kept {
            Kept::Link(target) => {
                metadata.is_symlink() && std::fs::read_link(&full).ok().as_ref() == Some(target)
            }
            Kept::Seen(size, modified) => {
                metadata.is_file()
                    && metadata.len() == *size
                    && metadata.modified().ok() == *modified
            }
            Kept::Bytes(old) => {
                metadata.is_file()
                    && metadata.len() == u64::try_from(old.len()).unwrap_or(u64::MAX)
                    && self.read(path).as_ref() == Some(old)
            }
        }
    }

    /// A file as it is now, copied within `budget`; `None` when absent or not a file or link.
    fn keep(&self, path: &Path, budget: &mut u64) -> Option<Kept> {
        let full = self.beneath.root().join(path);
        let metadata = std::fs::symlink_metadata(&full).ok()?;
        if metadata.is_symlink() {
            return std::fs::read_link(&full).ok().map(Kept::Link);
        }
        if !metadata.is_file() {
            return None;
        }
        if metadata.len() <= *budget
            && let Some(bytes) = self.read(path)
        {
            *budget -= metadata.len();
            return Some(Kept::Bytes(bytes));
        }
        Some(Kept::Seen(metadata.len(), metadata.modified().ok()))
    }

    /// Every protected path now (files and links, not followed), and whether the list is whole.
    fn protected_paths(&self) -> (Vec<PathBuf>, bool) {
        let mut paths: Vec<PathBuf> = [".git/config", ".git/commondir", ".envrc", "skillet.toml"]
            .into_iter()
            .map(PathBuf::from)
            .collect();
        if let Ok(relative) = self.cwd.strip_prefix(self.beneath.root())
            && !relative.as_os_str().is_empty()
        {
            paths.push(relative.join(".envrc"));
            paths.push(relative.join("skillet.toml"));
        }
        // The instruction files of every folder from the root down to the working directory:
        // what a new session reads into its prompt.
        if let Ok(relative) = self.cwd.strip_prefix(self.beneath.root()) {
            let mut folder = PathBuf::new();
            for name in crate::instructions::INSTRUCTION_FILE_NAMES {
                paths.push(PathBuf::from(name));
            }
            for component in relative.components() {
                folder.push(component);
                for name in crate::instructions::INSTRUCTION_FILE_NAMES {
                    paths.push(folder.join(name));
                }
            }
        }
        let mut complete = true;
        // Git: the hooks, and the config and hooks of submodules' repositories.
        self.walk(
            Path::new(".git/hooks"),
            0,
            &mut paths,
            &mut complete,
            &|_| true,
        );
        self.walk(
            Path::new(".git/modules"),
            0,
            &mut paths,
            &mut complete,
            &|path| {
                path.file_name()
                    .is_some_and(|name| name == "config" || name == "commondir")
                    || path
                        .parent()
                        .and_then(Path::file_name)
                        .is_some_and(|name| name == "hooks")
            },
        );
        for folder in &self.skill_folders {
            self.walk(folder, 0, &mut paths, &mut complete, &|_| true);
        }
        paths.sort();
        paths.dedup();
        (paths, complete)
    }

    /// The files and links beneath `folder` that `keep` accepts, never through a link.
    fn walk(
        &self,
        folder: &Path,
        depth: usize,
        out: &mut Vec<PathBuf>,
        complete: &mut bool,
        keep: &dyn Fn(&Path) -> bool,
    ) {
        let full = self.beneath.root().join(folder);
        if depth > MAX_DEPTH
            || !std::fs::symlink_metadata(&full).is_ok_and(|metadata| metadata.is_dir())
        {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&full) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            if out.len() >= MAX_GUARDED_FILES {
                *complete = false;
                return;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = folder.join(entry.file_name());
            if kind.is_dir() {
                if !GIT_DATA.iter().any(|data| entry.file_name() == *data) {
                    self.walk(&path, depth + 1, out, complete, keep);
                }
            } else if keep(&path) {
                out.push(path);
            }
        }
    }

    /// What a folder is now: `None` unless a real folder (not a link).
    fn identity(&self, folder: &Path) -> Option<Identity> {
        let metadata = std::fs::symlink_metadata(self.beneath.root().join(folder)).ok()?;
        if !metadata.is_dir() {
            return None;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            Some(Some((metadata.dev(), metadata.ino())))
        }
        #[cfg(not(unix))]
        Some(None)
    }

    fn read(&self, path: &Path) -> Option<Vec<u8>> {
        self.beneath
            .read(path, &path.display().to_string(), MAX_GUARDED_BYTES)
            .ok()
    }
}
