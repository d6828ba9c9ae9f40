//! Watching skill roots for changes (the MCP server, and the chat's live reload).
//!
//! What is watched is what discovery read, and no more: each folder of the last walk
//! ([`Library::folders`]), each on its own (not recursively), at most [`MAX_WATCHED_FOLDERS`].
//! So links out of a root, `.git`, `node_modules`, hidden folders where discovery skips them and
//! folders past its depth and count bounds are never watched, and a change there is never
//! announced. A root that does not exist yet is watched through its nearest existing parent,
//! and a root that is a link through its parent too, so creating or re-pointing it is seen.
//!
//! A burst of changes is waited out ([`DEBOUNCE`], at most [`MAX_SETTLE`]); then the roots are
//! discovered again, once, on the watcher's own thread. A queue overflow (the kernel dropped
//! events) is one more reason for that one rescan, never a change by itself. `on_change` gets
//! the new library only when what discovery reads changed: the [`fingerprint`] of the folders
//! (each entry's name, type, size, modification and change times, and inode) differs from the
//! last one. Reading files, or an overflow on a tree at rest, announce nothing. The watches then
//! follow the new walk: folders gone are dropped, new ones added.
//!
//! Changes made between the walk given to [`watch`] and the watches being set are not seen
//! until the next change.

use std::collections::HashSet;
use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{
    Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError, channel, sync_channel,
};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use skillet_skills::{Library, MAX_ENTRIES_PER_FOLDER, Root, discover};

/// How long changes must be quiet before the roots are discovered again.
pub const DEBOUNCE: Duration = Duration::from_millis(300);
/// The longest a burst is waited out: changes that never stop (a log written inside a root)
/// still get a rescan this often.
pub const MAX_SETTLE: Duration = Duration::from_secs(3);
/// The most folders watched at once (each is one inotify watch, a kernel resource the user's
/// other tools share); folders past it are listed in [`RootWatcher::failures`] and their
/// changes seen at the next rescan another change causes.
pub const MAX_WATCHED_FOLDERS: usize = 10_000;

/// Why watching could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch the skill folders: {0}")]
pub struct WatchError(String);

/// Watches until dropped.
pub struct RootWatcher {
    /// Dropping the sender ends the watcher's thread.
    _stop: Sender<()>,
    /// How many folders are watched now.
    watched: Arc<AtomicUsize>,
    /// Folders that could not be watched at the start (too many watches, no permission): their
    /// changes are not seen.
    pub failures: Vec<String>,
}

/// Watches `roots`, whose last walk is `library`; `on_change` gets the library discovered
/// again after each quiet burst of changes that changed what discovery reads.
pub fn watch(
    roots: &[Root],
    library: &Library,
    mut on_change: impl FnMut(Library) + Send + 'static,
) -> Result<RootWatcher, WatchError> {
    let roots = roots.to_vec();
    let paths: Vec<PathBuf> = roots.iter().map(|root| root.path.clone()).collect();
    // One pending unit says "something changed" as well as a million: events from a log
    // written without pause never queue up while a rescan runs.
    let (events, received) = sync_channel::<()>(1);
    let count = Arc::new(AtomicUsize::new(0));
    let concerned = Arc::new(RwLock::new(Vec::new()));
    let mut watches = Watches {
        watcher: notify::recommended_watcher(forward(Arc::clone(&concerned), events))
            .map_err(|error| WatchError(error.to_string()))?,
        watched: HashSet::new(),
        count: Arc::clone(&count),
        concerned,
    };
    let failures = watches.follow(&paths, library.folders());
    let folders = library.folders().to_vec();
    let (stop, stopped) = channel::<()>();
    std::thread::Builder::new()
        .name("skillet-watch".into())
        .spawn(move || {
            let mut rescans = Rescans {
                roots,
                paths,
                watches,
                last: Some(fingerprint(&folders)),
                folders,
            };
            while wait_for_burst(&received, &stopped) {
                if let Some(library) = rescans.rescan() {
                    on_change(library);
                }
            }
        })
        .map_err(|error| WatchError(error.to_string()))?;
    Ok(RootWatcher {
        _stop: stop,
        watched: count,
        failures,
    })
}

impl RootWatcher {
    /// How many folders are watched now (each one inotify watch).
    pub fn watched(&self) -> usize {
        self.watched.load(Ordering::Relaxed)
    }
}

/// How many walks one rescan makes at most while the folders keep changing under it.
const MAX_WALKS: usize = 3;

/// The state between rescans.
struct Rescans {
    roots: Vec<Root>,
    paths: Vec<PathBuf>,
    watches: Watches,
    /// The folders of the last walk.
    folders: Vec<PathBuf>,
    /// Their fingerprint taken before that walk began (`None`: unknown, the folders kept
    /// changing): whatever changed after it was taken changes the next one.
    last: Option<u64>,
}

impl Rescans {
    /// Discovers the roots again; the library when what discovery reads changed since the last
    /// library given out.
    ///
    /// The fingerprint is taken before each walk, over the last walk's folders, so a change
    /// made during a walk is never taken for one the library holds: it changes the next
    /// fingerprint. When the walk reads other folders than the last one (a skill added or
    /// removed), that is a change, and the roots are walked again over the new folders to take
    /// a fingerprint that belongs to them.
    fn rescan(&mut self) -> Option<Library> {
        let mut changed = false;
        let mut library = None;
        for _ in 0..MAX_WALKS {
            let before = fingerprint(&self.folders);
            let walked = discover(&self.roots);
            let same_folders = walked.folders() == self.folders.as_slice();
            changed |= !same_folders || self.last != Some(before);
            if same_folders {
                self.last = Some(before);
                library = Some(walked);
                break;
            }
            self.folders = walked.folders().to_vec();
            self.last = None;
            library = Some(walked);
        }
        // Set every time, changed or not: a folder removed and made again at the same path is a
        // new folder whose watch went with the old one.
        let _ = self.watches.follow(&self.paths, &self.folders);
        library.filter(|_| changed)
    }
}

/// The notify callback: a unit on `events` for every event that may change what discovery
/// reads. Reading a file is an event too (inotify's open): discovery and the fingerprint read
/// every folder, so counting those would rescan for ever. An overflow (no paths, or the rescan
/// flag) counts: events were lost.
fn forward(
    concerned: Arc<RwLock<Vec<PathBuf>>>,
    events: SyncSender<()>,
) -> impl FnMut(notify::Result<notify::Event>) + Send + 'static {
    move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else {
            // An error from the backend (the queue, a watch gone): rescan to be sure.
            let _ = events.try_send(());
            return;
        };
        let relevant = event.need_rescan()
            || event.paths.is_empty()
            || (!event.kind.is_access() && {
                let concerned = concerned
                    .read()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                event.paths.iter().any(|path| concerns(path, &concerned))
            });
        if relevant {
            let _ = events.try_send(());
        }
    }
}

/// Whether an event at `path` concerns a root: inside one, or on the way to one (its parent
/// folder was watched for it). Anything else in a watched parent (a shell's history in the home
/// folder, an editor's file at the project's top) is not.
fn concerns(path: &Path, roots: &[PathBuf]) -> bool {
    roots
        .iter()
        .any(|root| path.starts_with(root) || root.starts_with(path))
}

/// Waits for a burst of events and for it to be quiet (or [`MAX_SETTLE`]); `false` when the
/// watcher was dropped.
fn wait_for_burst(received: &Receiver<()>, stopped: &Receiver<()>) -> bool {
    let dropped = || matches!(stopped.try_recv(), Err(TryRecvError::Disconnected));
    loop {
        match received.recv_timeout(DEBOUNCE) {
            Ok(()) => break,
            Err(RecvTimeoutError::Timeout) if dropped() => return false,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return false,
        }
    }
    let burst = std::time::Instant::now();
    while burst.elapsed() < MAX_SETTLE {
        match received.recv_timeout(DEBOUNCE) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => return false,
        }
    }
    !dropped()
}

/// The watches set, by folder.
struct Watches {
    watcher: RecommendedWatcher,
    watched: HashSet<PathBuf>,
    /// `watched`'s size, for [`RootWatcher::watched`].
    count: Arc<AtomicUsize>,
    /// The roots as given and where their links lead now (a root that is a link may be
    /// pointed elsewhere, one that did not exist may appear): events are filtered by these.
    concerned: Arc<RwLock<Vec<PathBuf>>>,
}

impl Watches {
    /// Watches `folders` (a walk's, at most [`MAX_WATCHED_FOLDERS`]) and, for each root that
    /// does not exist or is a link, its nearest existing parent; drops the watches of folders
    /// no longer among them. Returns what could not be watched.
    fn follow(&mut self, roots: &[PathBuf], folders: &[PathBuf]) -> Vec<String> {
        // Where each root leads: as given, resolved, and, for a link to a folder not made yet,
        // where the link points (its creation is waited for there).
        let targets: Vec<PathBuf> = roots.iter().filter_map(|root| link_target(root)).collect();
        let mut concerned = roots.to_vec();
        concerned.extend(
            roots
                .iter()
                .filter_map(|root| std::fs::canonicalize(root).ok()),
        );
        concerned.extend(targets.iter().cloned());
        *self
            .concerned
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = concerned;
        let mut wanted: Vec<&Path> = Vec::new();
        let mut seen = HashSet::new();
        for folder in folders {
            if seen.insert(folder.as_path()) {
                wanted.push(folder);
            }
        }
        let mut failures = Vec::new();
        if wanted.len() > MAX_WATCHED_FOLDERS {
            failures.push(format!(
                "{} folders past the first {MAX_WATCHED_FOLDERS} (the most watched at once)",
                wanted.len() - MAX_WATCHED_FOLDERS
            ));
            wanted.truncate(MAX_WATCHED_FOLDERS);
        }
        for root in roots {
            let is_link = std::fs::symlink_metadata(root).is_ok_and(|meta| meta.is_symlink());
            if (is_link || !root.is_dir())
                && let Some(parent) = root.ancestors().skip(1).find(|dir| dir.is_dir())
                && seen.insert(parent)
            {
                wanted.push(parent);
            }
        }
        for target in &targets {
            if !target.is_dir()
                && let Some(parent) = target.ancestors().skip(1).find(|dir| dir.is_dir())
                && seen.insert(parent)
            {
                wanted.push(parent);
            }
        }
        let wanted_set: HashSet<&Path> = wanted.iter().copied().collect();
        let gone: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|folder| !wanted_set.contains(folder.as_path()))
            .cloned()
            .collect();
        for folder in gone {
            // A folder deleted has lost its watch already.
            let _ = self.watcher.unwatch(&folder);
            self.watched.remove(&folder);
        }
        let mut refused = 0;
        for folder in wanted {
            // Set again even when set: a folder removed and made again at the same path is a
            // new folder, whose watch went with the old one.
            match self.watcher.watch(folder, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(folder.to_path_buf());
                }
                // A folder that vanished since the walk is seen at the next rescan.
                Err(error) if matches!(error.kind, notify::ErrorKind::PathNotFound) => {}
                Err(error) => {
                    refused += 1;
                    if refused == 1 {
                        failures.push(format!("{}: {error}", folder.display()));
                    }
                }
            }
        }
        if refused > 1 {
            failures.push(format!("{} more folders, for the same reason", refused - 1));
        }
        self.count.store(self.watched.len(), Ordering::Relaxed);
        failures
    }
}

/// Where `root` leads when it is a link (links followed up to [`MAX_LINK_HOPS`] times, each read
/// as written, relative ones against their folder), whether the target exists or not.
fn link_target(root: &Path) -> Option<PathBuf> {
    let mut path = root.to_path_buf();
    let mut followed = false;
    for _ in 0..MAX_LINK_HOPS {
        let Ok(target) = std::fs::read_link(&path) else {
            break;
        };
        let joined = path
            .parent()
            .map_or(target.clone(), |parent| parent.join(&target));
        path = skillet_skills::confine::normalize(&joined)?;
        followed = true;
    }
    followed.then_some(path)
}

/// How many links [`link_target`] follows.
const MAX_LINK_HOPS: usize = 8;

/// When the entry's inode last changed, and which inode it is: an edit that keeps the size and
/// puts the modification time back (`cp -p`, `rsync -t`, `tar x`) still changes these.
#[cfg(unix)]
fn changed(meta: &std::fs::Metadata) -> (i64, i64, u64) {
    use std::os::unix::fs::MetadataExt as _;
    (meta.ctime(), meta.ctime_nsec(), meta.ino())
}

#[cfg(not(unix))]
fn changed(_meta: &std::fs::Metadata) -> (i64, i64, u64) {
    (0, 0, 0)
}

/// What discovery reads of `folders`, as one number: each folder's entries (at most
/// [`MAX_ENTRIES_PER_FOLDER`]) by name, type, size and modification time, not following links.
/// Equal fingerprints mean nothing discovery or the skills' listings see has changed.
pub fn fingerprint(folders: &[PathBuf]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    for folder in folders {
        folder.hash(&mut hasher);
        let Ok(entries) = std::fs::read_dir(folder) else {
            hasher.write_u8(0);
            continue;
        };
        let mut listed: Vec<_> = entries
            .take(MAX_ENTRIES_PER_FOLDER)
            .filter_map(Result::ok)
            .map(|entry| {
                let meta = entry.metadata().ok().map(|meta| {
                    let kind = meta.file_type();
                    (
                        (kind.is_dir(), kind.is_file(), kind.is_symlink()),
                        meta.len(),
                        meta.modified().ok(),
                        changed(&meta),
                    )
                });
                (entry.file_name(), meta)
            })
            .collect();
        listed.sort_unstable();
        listed.hash(&mut hasher);
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_skills::RootKind;
    use std::sync::atomic::AtomicUsize;
    use std::time::Instant;

    fn wait_for(count: &AtomicUsize, at_least: usize) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if count.load(Ordering::SeqCst) >= at_least {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn write_skill(dir: &Path, name: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n---\nbody\n"),
        )
        .unwrap();
    }

    /// Watches `roots` as discovered now, counting calls (and the names of the skills each
    /// call's library holds, last call last).
    fn counted(
        roots: &[Root],
    ) -> (
        RootWatcher,
        Arc<AtomicUsize>,
        Arc<std::sync::Mutex<Vec<String>>>,
    ) {
        let calls = Arc::new(AtomicUsize::new(0));
        let names = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (counted, recorded) = (Arc::clone(&calls), Arc::clone(&names));
        let watcher = watch(roots, &discover(roots), move |library| {
            *recorded.lock().unwrap() = library.skills().iter().map(|s| s.name.clone()).collect();
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        (watcher, calls, names)
    }

    #[test]
    fn a_burst_of_changes_is_one_call_and_a_root_created_later_is_seen() {
        let temp = tempfile::tempdir().unwrap();
        let existing = temp.path().join("skills");
        std::fs::create_dir_all(&existing).unwrap();
        let later = temp.path().join("project/.agents/skills");
        std::fs::create_dir_all(temp.path().join("project")).unwrap();
        let (_watcher, calls, names) = counted(&[
            Root::new(&existing, RootKind::User),
            Root::new(&later, RootKind::Project),
        ]);
        for index in 0..5 {
            write_skill(&existing.join(format!("s{index}")), &format!("s{index}"));
        }
        assert!(wait_for(&calls, 1), "no call for the burst");
        std::thread::sleep(DEBOUNCE * 3);
        // One call for the burst (two if the machine stalled between the writes), not five.
        let burst_calls = calls.load(Ordering::SeqCst);
        assert!(
            (1..=2).contains(&burst_calls),
            "{burst_calls} calls for one burst"
        );
        assert_eq!(
            names.lock().unwrap().len(),
            5,
            "the last library lacks skills"
        );
        // Files beside a missing root, in its watched parent, are no change.
        let before_unrelated = calls.load(Ordering::SeqCst);
        std::fs::write(temp.path().join("project/notes.txt"), "unrelated").unwrap();
        std::thread::sleep(DEBOUNCE * 4);
        assert_eq!(
            calls.load(Ordering::SeqCst),
            before_unrelated,
            "an unrelated file counted"
        );
        // A root that did not exist: a skill made in it is seen (its parents' creation through
        // the nearest existing parent, then the root itself once it is walked).
        std::fs::create_dir_all(&later).unwrap();
        std::thread::sleep(DEBOUNCE * 4);
        write_skill(&later.join("new-skill"), "new-skill");
        let start = Instant::now();
        while !names.lock().unwrap().contains(&"new-skill".to_string()) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "a skill in a root created later was not seen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn what_discovery_does_not_read_is_not_watched_and_no_change_is_not_announced() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("skills");
        let outside = temp.path().join("outside");
        write_skill(&root.join("kept"), "kept");
        write_skill(&outside.join("elsewhere"), "elsewhere");
        std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
        for index in 0..50 {
            std::fs::create_dir_all(root.join(format!("node_modules/p{index}"))).unwrap();
        }
        std::fs::create_dir_all(root.join(".cache/deep")).unwrap();
        let (watcher, calls, _) = counted(&[Root::new(&root, RootKind::User)]);
        // The root and the skill's folder: not the link out, node_modules or the hidden cache.
        assert_eq!(watcher.watched(), 2, "{:?}", watcher.failures);
        // Changes there: nothing.
        std::fs::write(outside.join("elsewhere/SKILL.md"), "changed").unwrap();
        std::fs::write(root.join("node_modules/p1/x.js"), "x").unwrap();
        std::fs::write(root.join(".cache/deep/x"), "x").unwrap();
        // Events that change nothing discovery reads: files read, a file opened for writing and
        // closed unwritten.
        let _ = std::fs::read(root.join("kept/SKILL.md")).unwrap();
        drop(
            std::fs::OpenOptions::new()
                .append(true)
                .open(root.join("kept/SKILL.md"))
                .unwrap(),
        );
        std::thread::sleep(DEBOUNCE * 5);
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "a change nobody reads was announced"
        );
        // A real change still is, once.
        std::fs::write(root.join("kept/notes.md"), "new file").unwrap();
        assert!(wait_for(&calls, 1), "a new file in a skill was not seen");
        std::thread::sleep(DEBOUNCE * 3);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_root_that_is_a_link_pointed_elsewhere_is_followed() {
        let temp = tempfile::tempdir().unwrap();
        let first = temp.path().join("first");
        let second = temp.path().join("second");
        write_skill(&first.join("beta"), "beta");
        write_skill(&second.join("beta"), "beta");
        let root = temp.path().join("root");
        std::os::unix::fs::symlink(&first, &root).unwrap();
        let (_watcher, calls, names) = counted(&[Root::new(&root, RootKind::User)]);
        // Pointed elsewhere at once (a new link renamed over the old one).
        std::os::unix::fs::symlink(&second, temp.path().join("root.new")).unwrap();
        std::fs::rename(temp.path().join("root.new"), &root).unwrap();
        assert!(wait_for(&calls, 1), "the new target was not seen");
        std::thread::sleep(DEBOUNCE * 3);
        // Changes in the new target are seen.
        write_skill(&second.join("gamma"), "gamma");
        let start = Instant::now();
        while !names.lock().unwrap().contains(&"gamma".to_string()) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "a skill added in the new target was missed: {:?}",
                names.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_root_that_is_a_link_to_a_folder_not_made_yet_is_seen_when_made() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("root");
        std::os::unix::fs::symlink(temp.path().join("later"), &root).unwrap();
        let (_watcher, _calls, names) = counted(&[Root::new(&root, RootKind::User)]);
        write_skill(&temp.path().join("later/x"), "x");
        let start = Instant::now();
        while !names.lock().unwrap().contains(&"x".to_string()) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the link's target being made was missed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn an_edit_that_keeps_the_size_and_the_time_is_seen() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("skills");
        write_skill(&root.join("a"), "a");
        let file = root.join("a/SKILL.md");
        let before = std::fs::metadata(&file).unwrap().modified().unwrap();
        let (_watcher, calls, _) = counted(&[Root::new(&root, RootKind::User)]);
        // The watcher takes its first fingerprint on its own thread (see the module's note).
        std::thread::sleep(DEBOUNCE);
        // Same length, modification time put back (as `cp -p` or `rsync -t` leave it).
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace("body", "BODY");
        std::fs::write(&file, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(before)
            .unwrap();
        assert!(wait_for(&calls, 1), "the edit was missed");
    }

    #[test]
    fn a_folder_removed_and_made_again_is_watched_again() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("skills");
        write_skill(&root.join("a"), "a");
        let (watcher, calls, names) = counted(&[Root::new(&root, RootKind::User)]);
        std::fs::remove_dir_all(root.join("a")).unwrap();
        assert!(wait_for(&calls, 1));
        std::thread::sleep(DEBOUNCE * 3);
        assert!(names.lock().unwrap().is_empty());
        assert_eq!(watcher.watched(), 1);
        write_skill(&root.join("a"), "a");
        assert!(wait_for(&calls, 2));
        std::thread::sleep(DEBOUNCE * 3);
        assert_eq!(watcher.watched(), 2);
        // The new folder's own changes are seen.
        let seen = calls.load(Ordering::SeqCst);
        std::fs::write(
            root.join("a/SKILL.md"),
            "---\nname: b\ndescription: d\n---\n",
        )
        .unwrap();
        assert!(
            wait_for(&calls, seen + 1),
            "a change in the made-again folder was missed"
        );
        let start = Instant::now();
        while names.lock().unwrap().as_slice() != ["b"] {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{:?}",
                names.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
