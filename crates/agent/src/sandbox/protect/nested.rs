//! Repositories nested inside a workspace: a vendored clone (`vendor/lib/.git`), a folder of
//! projects used as the working directory, a bare repository in a subfolder. Git runs their
//! hooks and `core.fsmonitor` when the user next works in them, so their git directories are
//! protected as the workspace's own is ([`super::git::git_paths`]).
//!
//! They are found by a walk of the workspace's folders (never through a link, never into a
//! `.git` folder), bounded by [`MAX_NESTED_FOLDERS`], and remembered per folder by what the
//! kernel says of it (device, inode, change time, modification time): a later command re-reads
//! only the folders whose entries changed, the rest costs one `lstat` each. A change time
//! cannot be set by a process (`touch -d` moves the modification time and the change time with
//! it), so a folder whose entries changed is always re-read; one whose last change came within
//! [`RACY`] of the walk (a change in the same tick of the kernel's coarse clock would leave its
//! times as they were) is read again next time.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// The most folders of one workspace walked for nested repositories; past it the rest is not
/// looked into, and the user is told once.
pub const MAX_NESTED_FOLDERS: usize = 100_000;
/// The most nested repositories of one workspace protected as the workspace's own is (their
/// configs read by git); past it, each further one's git directory is read-only whole.
pub const MAX_NESTED_REPOSITORIES: usize = 64;
/// The most nested repositories of one workspace protected at all; past it the working
/// directory is read-only whole to commands nobody reviewed (a command that made that many
/// cannot push a real one out of reach), and the user is told once.
pub const MAX_NESTED_READ_ONLY: usize = 1024;
/// A folder changed this close before the walk may change again within the same timestamp
/// (the kernel stamps with a clock of a few milliseconds' grain): its listing is not trusted
/// next time.
const RACY: Duration = Duration::from_millis(50);

/// What the kernel says of a folder: a change to its entries changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
}

impl Stamp {
    fn of(metadata: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        Self {
            dev: metadata.dev(),
            ino: metadata.ino(),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
        }
    }

    /// Whether the folder changed within [`RACY`] of `now`.
    fn racy(&self, now: SystemTime) -> bool {
        let Some(since) = now.checked_sub(RACY) else {
            return true;
        };
        let Ok(since) = since.duration_since(SystemTime::UNIX_EPOCH) else {
            return true;
        };
        let since = (
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
            i64::from(since.subsec_nanos()),
        );
        self.ctime >= since || self.mtime >= since
    }
}

/// A folder's listing as last read.
#[expect(
    clippy::struct_excessive_bools,
    reason = "what one reading of a folder says"
)]
#[derive(Debug, Clone)]
struct Listing {
    stamp: Stamp,
    /// It changed too close to the read to be trusted again.
    racy: bool,
    /// Its subfolders (real folders, not links; not `.git`).
    folders: Vec<OsString>,
    /// It holds a `.git` entry (a folder, a gitfile or a link).
    dot_git: bool,
    /// It holds `HEAD`, `objects` and `refs` (a bare repository, as git's discovery takes it).
    bare: bool,
    /// It could not be read.
    unreadable: bool,
}

/// Every folder's listing as last read, by path.
static LISTINGS: Mutex<Option<HashMap<PathBuf, Listing>>> = Mutex::new(None);

/// The repositories found in each workspace by earlier walks, in the order they were first
/// found, kept in the sandbox's state folder between processes: protected before any found
/// later, so a command cannot push one out of the caps by making many others (in this session
/// or one before), or hide one by making a folder above it unreadable or renaming its `HEAD`.
static KNOWN: Mutex<Option<HashMap<PathBuf, Vec<PathBuf>>>> = Mutex::new(None);

/// What the walk of one workspace found.
#[derive(Debug, Default)]
pub struct Found {
    /// Work trees holding a `.git` (its git directory as the gitfile names it), and bare
    /// repositories, inside the workspace but not the workspace itself.
    pub repositories: Vec<PathBuf>,
    /// Folders that could not be read: kept read-only, since a repository may be in them.
    pub unreadable: Vec<PathBuf>,
    /// Why the walk could not see everything: said to the user.
    pub incomplete: Option<String>,
    /// More than [`MAX_NESTED_READ_ONLY`] repositories: the workspace is to be read-only.
    pub overflow: bool,
}

/// The repositories nested in `workspace` (a real path), shallowest first, the walk not
/// entering the folders `skip` names (read-only already). Repositories earlier walks found
/// come first, and stay while their folder is there.
pub fn find(workspace: &Path, skip: &dyn Fn(&Path) -> bool, state: Option<&Path>) -> Found {
    let now = SystemTime::now();
    let mut known = KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let known = known
        .get_or_insert_with(HashMap::new)
        .entry(workspace.to_path_buf())
        .or_insert_with(|| {
            state
                .map(|state| load_known(state, workspace))
                .unwrap_or_default()
        });
    let before = known.clone();
    // Gone only when the kernel says so: one that cannot be looked at now is still protected.
    // A command cannot make one stop looking like a repository: its `.git` is a mount point, a
    // bare one's config, hooks and HEAD are read-only.
    let there = |path: &Path| {
        std::fs::symlink_metadata(path).map_or_else(
            |error| error.kind() != std::io::ErrorKind::NotFound,
            |_| true,
        )
    };
    known.retain(|repository| {
        [".git", "HEAD", "config", "objects", "refs"]
            .iter()
            .any(|name| there(&repository.join(name)))
    });
    let mut found = Found {
        repositories: known.clone(),
        ..Found::default()
    };
    let mut cache = LISTINGS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    let mut queue = std::collections::VecDeque::from([workspace.to_path_buf()]);
    let mut walked = 0_usize;
    while let Some(folder) = queue.pop_front() {
        walked += 1;
        if walked > MAX_NESTED_FOLDERS {
            found.incomplete = Some(format!(
                "{} has more than {MAX_NESTED_FOLDERS} folders: repositories nested past them are not protected from commands nobody reviewed",
                workspace.display()
            ));
            break;
        }
        let Some(listing) = listing(cache, &folder, now) else {
            continue;
        };
        if listing.unreadable {
            found.unreadable.push(folder.clone());
        }
        if folder != workspace
            && (listing.dot_git || listing.bare)
            && !found.repositories.contains(&folder)
        {
            if found.repositories.len() >= MAX_NESTED_READ_ONLY {
                found.incomplete = Some(format!(
                    "{} holds more than {MAX_NESTED_READ_ONLY} nested repositories: it is read-only to commands nobody reviewed",
                    workspace.display()
                ));
                found.overflow = true;
                break;
            }
            found.repositories.push(folder.clone());
            known.push(folder.clone());
        }
        queue.extend(
            listing
                .folders
                .iter()
                .map(|name| folder.join(name))
                .filter(|child| !skip(child)),
        );
    }
    if *known != before
        && let Some(state) = state
    {
        save_known(state, workspace, known);
    }
    // Folders no longer met (removed, or beyond the walk) are forgotten with the workspace's
    // others only when the cache grows past what one walk can hold.
    if cache.len() > 4 * MAX_NESTED_FOLDERS {
        cache.clear();
    }
    found
}

/// The file of `workspace`'s known repositories in the state folder.
fn known_file(state: &Path, workspace: &Path) -> PathBuf {
    state.join(format!("nested-{}", super::super::path_name(workspace)))
}

/// The repositories known in `workspace` from earlier processes: paths beneath it, one per
/// NUL-ended record, at most [`MAX_NESTED_READ_ONLY`].
fn load_known(state: &Path, workspace: &Path) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(mut file) = skillet_skills::open_regular(&known_file(state, workspace)) else {
        return Vec::new();
    };
    let mut bytes = Vec::new();
    if skillet_skills::read_capped(&mut file, &mut bytes, 4 * 1024 * 1024).is_err() {
        return Vec::new();
    }
    bytes
        .split(|byte| *byte == 0)
        .filter(|record| !record.is_empty())
        .map(|record| PathBuf::from(std::ffi::OsStr::from_bytes(record)))
        .filter(|path| path.starts_with(workspace) && path != workspace)
        .take(MAX_NESTED_READ_ONLY)
        .collect()
}

/// Keeps `known` for later processes (best effort: a state folder that cannot be written
/// costs only what this protects across sessions).
fn save_known(state: &Path, workspace: &Path, known: &[PathBuf]) {
    use std::os::unix::ffi::OsStrExt as _;
    use std::os::unix::fs::DirBuilderExt as _;
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(state);
    let mut bytes = Vec::new();
    for path in known {
        bytes.extend_from_slice(path.as_os_str().as_bytes());
        bytes.push(0);
    }
    let file = known_file(state, workspace);
    let partial = file.with_extension(format!("{}", std::process::id()));
    if std::fs::write(&partial, bytes).is_ok() && std::fs::rename(&partial, &file).is_err() {
        let _ = std::fs::remove_file(&partial);
    }
}

/// `folder`'s listing: the remembered one when the folder is as it was, else read again.
fn listing(
    cache: &mut HashMap<PathBuf, Listing>,
    folder: &Path,
    now: SystemTime,
) -> Option<Listing> {
    let metadata = std::fs::symlink_metadata(folder).ok()?;
    if !metadata.is_dir() {
        cache.remove(folder);
        return None;
    }
    let stamp = Stamp::of(&metadata);
    if let Some(known) = cache.get(folder)
        && known.stamp == stamp
        && !known.racy
    {
        return Some(known.clone());
    }
    let read = read(folder, stamp, now);
    cache.insert(folder.to_path_buf(), read.clone());
    Some(read)
}

/// Reads `folder`'s entries.
fn read(folder: &Path, stamp: Stamp, now: SystemTime) -> Listing {
    let mut listing = Listing {
        stamp,
        racy: stamp.racy(now),
        folders: Vec::new(),
        dot_git: false,
        bare: false,
        unreadable: false,
    };
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) => {
            // What cannot be looked into may hold a repository: kept read-only (a command that
            // made it unreadable cannot make it readable again).
            listing.unreadable = error.kind() != std::io::ErrorKind::NotFound;
            listing.racy = true;
            return listing;
        }
    };
    let (mut head, mut objects, mut refs) = (false, false, false);
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        match name.to_str() {
            Some(".git") => {
                listing.dot_git = true;
                continue;
            }
            // Any kind: git takes a link there too.
            Some("HEAD") => head = true,
            Some("objects") => objects = true,
            Some("refs") => refs = true,
            _ => {}
        }
        if kind.is_dir() {
            listing.folders.push(name);
        }
    }
    listing.bare = head && objects && refs;
    listing.folders.sort();
    listing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(root: &Path) -> Vec<PathBuf> {
        let mut found = find(root, &|_| false, None).repositories;
        found.sort();
        found
    }

    #[test]
    fn finds_work_trees_bare_repositories_and_gitfiles_but_not_the_top() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        for dir in [
            ".git/hooks",
            "vendor/lib/.git/hooks",
            "deep/a/b/c/.git",
            "bare/objects",
            "bare/refs",
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("bare/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        std::os::unix::fs::symlink(root.join("vendor"), root.join("link")).unwrap();
        assert_eq!(
            nested(&root),
            vec![
                root.join("bare"),
                root.join("deep/a/b/c"),
                root.join("sub"),
                root.join("vendor/lib"),
            ],
            "not the top, not through the link, not twice"
        );
    }

    #[test]
    fn a_repository_made_later_is_found_and_one_removed_is_forgotten() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        assert!(nested(&root).is_empty());
        std::fs::create_dir_all(root.join("a/b/.git")).unwrap();
        assert_eq!(nested(&root), vec![root.join("a/b")]);
        // Its folder gone: forgotten.
        std::fs::remove_dir_all(root.join("a/b")).unwrap();
        assert!(nested(&root).is_empty());
    }

    #[test]
    fn an_unchanged_folder_is_not_read_again_and_a_set_back_mtime_does_not_fool_it() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        let old = std::fs::FileTimes::new()
            .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000));
        std::fs::File::open(root.join("a"))
            .unwrap()
            .set_times(old)
            .unwrap();
        // Past RACY, so the listing is trusted next time.
        std::thread::sleep(RACY * 2);
        assert!(nested(&root).is_empty());
        // The listing of `a` is remembered (its times are old)...
        {
            let cache = LISTINGS.lock().unwrap();
            assert!(!cache.as_ref().unwrap()[&root.join("a")].racy);
        }
        // ...and a repository made in it, its modification time set back as it was, is still
        // seen: the change time moved.
        std::fs::create_dir_all(root.join("a/.git")).unwrap();
        std::fs::File::open(root.join("a"))
            .unwrap()
            .set_times(old)
            .unwrap();
        assert_eq!(nested(&root), vec![root.join("a")]);
    }

    #[test]
    fn past_the_caps_the_walk_says_so() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        for index in 0..=MAX_NESTED_READ_ONLY {
            std::fs::create_dir_all(root.join(format!("r{index}/.git"))).unwrap();
        }
        let found = find(&root, &|_| false, None);
        assert_eq!(found.repositories.len(), MAX_NESTED_READ_ONLY);
        assert!(found.overflow);
        assert!(found.incomplete.unwrap().contains("read-only"));
    }

    #[test]
    fn repositories_found_before_are_known_to_a_later_process_first() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap().join("work");
        let state = temp.path().canonicalize().unwrap().join("state");
        std::fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
        assert_eq!(
            find(&root, &|_| false, Some(&state)).repositories,
            vec![root.join("vendor/lib")]
        );
        // A later process: what this one remembers is gone, the file is not.
        KNOWN.lock().unwrap().as_mut().unwrap().remove(&root);
        for index in 0..10 {
            std::fs::create_dir_all(root.join(format!("a{index}/.git"))).unwrap();
        }
        let found = find(&root, &|_| false, Some(&state));
        assert_eq!(
            found.repositories[0],
            root.join("vendor/lib"),
            "known first"
        );
        assert_eq!(found.repositories.len(), 11);
    }
}
