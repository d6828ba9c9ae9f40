//! What a command can plant in git's directories that git writes through later: a link
//! (`COMMIT_EDITMSG -> config`, `logs/HEAD -> ~/.bashrc`: the user's own `git commit` writes or
//! appends through it) or a FIFO (the user's `git commit` hangs on it). Git makes neither
//! there. The git directory and its common directory are walked whole but for their object
//! stores, before and after a command nobody reviewed; what is new or retargeted is removed,
//! and a walk that could not finish is told, never passed over.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most entries of git's directories (objects left out) looked at; past it the check says
/// it could not finish.
pub const MAX_GIT_DIR_ENTRIES: usize = 100_000;

/// A link (with where it leads) or another entry that is neither a file nor a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planted {
    /// A link and its target.
    Link(PathBuf),
    /// A FIFO, socket or device.
    Special,
}

/// What git's directories hold that git never makes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Entries {
    found: BTreeMap<PathBuf, Planted>,
    complete: bool,
}

/// Walks `git_dir` and `common_dir` (their own `objects` left out, nothing else: a folder a
/// command names `objects` elsewhere is walked).
pub fn walk(git_dir: &Path, common_dir: &Path) -> Entries {
    use std::os::unix::fs::FileTypeExt as _;
    let skipped = [git_dir.join("objects"), common_dir.join("objects")];
    let mut found = BTreeMap::new();
    let mut queue: std::collections::VecDeque<PathBuf> =
        [git_dir.to_path_buf(), common_dir.to_path_buf()].into();
    let mut seen = std::collections::BTreeSet::new();
    let mut entries = 0;
    while let Some(dir) = queue.pop_front() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let Ok(listing) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in listing.filter_map(Result::ok) {
            entries += 1;
            if entries > MAX_GIT_DIR_ENTRIES {
                return Entries {
                    found,
                    complete: false,
                };
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_default();
                found.insert(path, Planted::Link(target));
            } else if kind.is_dir() {
                if skipped.contains(&path) {
                    // The object store: its own entries, `info/` and `pack/` are looked at
                    // (a link there sends git's writes elsewhere; a FIFO hangs it), not the
                    // objects in its fan-out folders.
                    for store in [path.clone(), path.join("info"), path.join("pack")] {
                        if let Ok(listing) = std::fs::read_dir(&store) {
                            for entry in listing.filter_map(Result::ok) {
                                entries += 1;
                                if let Some(planted) = planted(&entry) {
                                    found.insert(entry.path(), planted);
                                }
                            }
                        }
                    }
                } else {
                    queue.push_back(path);
                }
            } else if kind.is_fifo()
                || kind.is_socket()
                || kind.is_block_device()
                || kind.is_char_device()
            {
                found.insert(path, Planted::Special);
            }
        }
    }
    Entries {
        found,
        complete: true,
    }
}

fn planted(entry: &std::fs::DirEntry) -> Option<Planted> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = entry.file_type().ok()?;
    if kind.is_symlink() {
        Some(Planted::Link(
            std::fs::read_link(entry.path()).unwrap_or_default(),
        ))
    } else if kind.is_fifo() || kind.is_socket() || kind.is_block_device() || kind.is_char_device()
    {
        Some(Planted::Special)
    } else {
        None
    }
}

/// Removes what is in `after` and was not in `before` the same way (new, or a link that leads
/// elsewhere now); one finding each, and one when the walk could not finish.
pub fn remove_new(before: &Entries, after: &Entries) -> Vec<String> {
    let mut findings = Vec::new();
    if !after.complete || !before.complete {
        findings.push(format!(
            "git's directory holds more than {MAX_GIT_DIR_ENTRIES} entries, so skillet could not check it for links or FIFOs the command planted (git writes through a link into any file of yours): before running git here, look with `find .git -path .git/objects -prune -o -type l -print -o -type p -print`"
        ));
    }
    for (path, planted) in &after.found {
        if before.found.get(path) == Some(planted) {
            continue;
        }
        let what = match planted {
            Planted::Link(target) => format!("a link to {}", target.display()),
            Planted::Special => "a FIFO or device".to_string(),
        };
        // A linked HEAD is one git reads (and replaces, never writes through): removing it
        // would leave no repository, so it is told.
        let top_of_a_git_dir = path.parent().is_some_and(|dir| {
            ["config", "commondir", "gitdir"]
                .iter()
                .any(|name| dir.join(name).is_file())
        });
        if path.file_name().is_some_and(|name| name == "HEAD")
            && top_of_a_git_dir
            && matches!(planted, Planted::Link(_))
        {
            findings.push(format!(
                "the command made {} {what}: git reads the current branch through it; look at it before running git here",
                path.display()
            ));
            continue;
        }
        findings.push(match std::fs::remove_file(path) {
            Ok(()) => format!(
                "the command made {} {what}; git writes through such entries (the user's own `git commit` would write into what it leads to, or hang), and git makes none there, so skillet removed it",
                path.display()
            ),
            Err(error) => format!(
                "the command made {} {what}, and skillet could not remove it ({error}): remove it before running git here",
                path.display()
            ),
        });
    }
    findings
}
