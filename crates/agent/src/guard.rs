//! Protected files around a command in `skillet run`: Landlock can only allow, so the sandbox
//! cannot keep a command out of `.git/` while letting it write the rest of the working directory.
//! Where nobody is asked (`run --yes`), the files that run code or steer the model later (git's
//! config and hooks, `.envrc`, `skillet.toml`, the project's skill folders) are copied before each
//! command and put back after it, and the model is told it may not change them. In `chat` the
//! user approved the command itself, so nothing is put back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skillet_skills::confine::Beneath;

/// The most bytes of protected files copied before a command; past it, changes are still found
/// (by size and time) and reported, but not put back.
pub const MAX_GUARDED_BYTES: u64 = 8 * 1024 * 1024;
/// The most protected files looked at.
pub const MAX_GUARDED_FILES: usize = 2_000;
/// How deep skill folders are looked into.
const MAX_DEPTH: usize = 6;

/// A file as it was: its bytes when copied, else its size and time.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kept {
    Bytes(Vec<u8>),
    Seen(u64, Option<std::time::SystemTime>),
}

/// The protected files of a project, as they were before a command.
pub struct Guard {
    beneath: Beneath,
    watched_dirs: Vec<PathBuf>,
    files: BTreeMap<PathBuf, Kept>,
    /// Single files watched even when absent (their creation is a change).
    single: Vec<PathBuf>,
}

impl Guard {
    /// Copies the protected files of the project `cwd` is in; `skill_roots` are absolute.
    pub fn watch(cwd: &Path, skill_roots: &[PathBuf]) -> Option<Self> {
        let root = skillet_skills::find_git_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
        let beneath = Beneath::open(&root).ok()?;
        let mut single = vec![
            PathBuf::from(".git/config"),
            PathBuf::from(".envrc"),
            PathBuf::from("skillet.toml"),
        ];
        if let Ok(relative) = cwd.strip_prefix(&root)
            && !relative.as_os_str().is_empty()
        {
            single.push(relative.join(".envrc"));
            single.push(relative.join("skillet.toml"));
        }
        let mut watched_dirs = vec![PathBuf::from(".git/hooks")];
        watched_dirs.extend(
            skill_roots
                .iter()
                .filter_map(|dir| dir.strip_prefix(&root).ok())
                .filter(|relative| !relative.as_os_str().is_empty())
                .map(Path::to_path_buf),
        );
        let mut guard = Self {
            beneath,
            watched_dirs,
            files: BTreeMap::new(),
            single,
        };
        guard.files = guard.scan(true);
        Some(guard)
    }

    /// Puts back every protected file the command changed, created or removed; the files (relative
    /// to the project) that changed, and whether each could be put back.
    pub fn restore(&self) -> Vec<(PathBuf, bool)> {
        let now = self.scan(false);
        let mut changed = Vec::new();
        for (path, kept) in &self.files {
            let same = match (kept, now.get(path)) {
                (Kept::Bytes(old), _) => self.read(path).as_ref() == Some(old),
                (seen, Some(current)) => seen == current,
                (_, None) => false,
            };
            if same {
                continue;
            }
            let restored = match kept {
                Kept::Bytes(old) => self
                    .beneath
                    .replace(path, &path.display().to_string(), old)
                    .is_ok(),
                Kept::Seen(..) => false,
            };
            changed.push((path.clone(), restored));
        }
        for path in now.keys().filter(|path| !self.files.contains_key(*path)) {
            let removed = self
                .beneath
                .remove_file(path, &path.display().to_string())
                .is_ok();
            changed.push((path.clone(), removed));
        }
        changed
    }

    /// The protected files now: copied (`copy`) within the byte budget, else seen.
    fn scan(&self, copy: bool) -> BTreeMap<PathBuf, Kept> {
        let mut found = BTreeMap::new();
        let mut budget = MAX_GUARDED_BYTES;
        let mut paths: Vec<PathBuf> = self.single.clone();
        for dir in &self.watched_dirs {
            walk(&self.beneath.root().join(dir), dir, 0, &mut paths);
        }
        paths.truncate(MAX_GUARDED_FILES);
        for path in paths {
            let Ok(metadata) = std::fs::symlink_metadata(self.beneath.root().join(&path)) else {
                continue;
            };
            if !metadata.is_file() && !metadata.is_symlink() {
                continue;
            }
            let kept = if copy && metadata.is_file() && metadata.len() <= budget {
                match self.read(&path) {
                    Some(bytes) => {
                        budget -= metadata.len();
                        Kept::Bytes(bytes)
                    }
                    None => Kept::Seen(metadata.len(), metadata.modified().ok()),
                }
            } else {
                Kept::Seen(metadata.len(), metadata.modified().ok())
            };
            found.insert(path, kept);
        }
        found
    }

    fn read(&self, path: &Path) -> Option<Vec<u8>> {
        self.beneath
            .read(path, &path.display().to_string(), MAX_GUARDED_BYTES)
            .ok()
    }
}

/// The files beneath `dir` (not following links), as paths starting with `relative`.
fn walk(dir: &Path, relative: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH || out.len() >= MAX_GUARDED_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = relative.join(entry.file_name());
        if kind.is_dir() {
            walk(&entry.path(), &path, depth + 1, out);
        } else {
            out.push(path);
        }
    }
}
