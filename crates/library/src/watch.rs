//! Watching skill roots for changes (the MCP server, and later the agent's live reload): each
//! root that exists is watched recursively; a root that does not exist yet is watched through
//! its nearest existing parent, so creating it is seen. Events are debounced: `on_change` runs
//! once a burst of changes has been quiet for [`DEBOUNCE`], on a thread of the watcher's own,
//! and the watches are set again after it (a root created or removed meanwhile is picked up).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use skillet_skills::Root;

/// How long changes must be quiet before `on_change` runs.
pub const DEBOUNCE: Duration = Duration::from_millis(300);
/// The longest a burst is waited out: changes that never stop (a log written inside a root)
/// still get `on_change` this often.
pub const MAX_SETTLE: Duration = Duration::from_secs(3);

/// Why watching could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch the skill folders: {0}")]
pub struct WatchError(String);

/// Watches until dropped.
pub struct RootWatcher {
    /// Dropping the sender ends the debounce thread.
    _stop: std::sync::mpsc::Sender<()>,
    /// Folders that could not be watched at the start (too many watches, no permission): their
    /// changes are not seen.
    pub failures: Vec<String>,
}

/// What is watched for a root: the root itself (recursively) when it exists, else its nearest
/// existing parent (not recursively: only the root's creation matters there).
fn watch_target(root: &Path) -> Option<(PathBuf, RecursiveMode)> {
    if root.is_dir() {
        return Some((root.to_path_buf(), RecursiveMode::Recursive));
    }
    root.ancestors()
        .skip(1)
        .find(|dir| dir.is_dir())
        .map(|dir| (dir.to_path_buf(), RecursiveMode::NonRecursive))
}

/// Whether an event at `path` concerns a root: inside one, or on the way to one that does not
/// exist yet (its parent folder was watched for it). Anything else in a watched parent (a
/// shell's history in the home folder, an editor's file at the project's top) is not.
fn concerns(path: &Path, roots: &[PathBuf]) -> bool {
    roots
        .iter()
        .any(|root| path.starts_with(root) || root.starts_with(path))
}

/// A watcher sending a unit for every event that concerns a root on `events`, and the folders
/// it could not watch.
fn arm(
    roots: &[PathBuf],
    events: std::sync::mpsc::Sender<()>,
) -> Result<(RecommendedWatcher, Vec<String>), WatchError> {
    // Each root as given and with its links resolved: some backends (FSEvents) report the
    // real path.
    let mut concerned = roots.to_vec();
    concerned.extend(
        roots
            .iter()
            .filter_map(|root| std::fs::canonicalize(root).ok()),
    );
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // Reading a file is an event too (inotify's open and close): discovery reads every
        // skill, so counting those would rediscover for ever.
        let Ok(event) = event else { return };
        if !event.kind.is_access()
            && (event.paths.is_empty() || event.paths.iter().any(|path| concerns(path, &concerned)))
        {
            let _ = events.send(());
        }
    })
    .map_err(|error| WatchError(error.to_string()))?;
    let mut failures = Vec::new();
    for root in roots {
        if let Some((path, mode)) = watch_target(root) {
            // A folder that vanished between the check and the watch is seen at the next arming.
            if let Err(error) = watcher.watch(&path, mode) {
                failures.push(format!("{}: {error}", path.display()));
            }
        }
    }
    Ok((watcher, failures))
}

/// Watches `roots`; `on_change` runs after each quiet burst of changes.
pub fn watch(
    roots: &[Root],
    on_change: impl Fn() + Send + 'static,
) -> Result<RootWatcher, WatchError> {
    let paths: Vec<PathBuf> = roots.iter().map(|root| root.path.clone()).collect();
    let (events, received) = channel();
    let (watcher, failures) = arm(&paths, events.clone())?;
    let (stop, stopped) = channel::<()>();
    std::thread::Builder::new()
        .name("skillet-watch".into())
        .spawn(move || debounce(&paths, watcher, &events, &received, &stopped, &on_change))
        .map_err(|error| WatchError(error.to_string()))?;
    Ok(RootWatcher {
        _stop: stop,
        failures,
    })
}

fn debounce(
    paths: &[PathBuf],
    // Held for its watches: dropping it would end them.
    mut _watcher: RecommendedWatcher,
    events: &std::sync::mpsc::Sender<()>,
    received: &Receiver<()>,
    stopped: &Receiver<()>,
    on_change: &impl Fn(),
) {
    loop {
        // Wait for the first event of a burst, checking now and then whether to stop.
        match received.recv_timeout(DEBOUNCE) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => {
                if matches!(
                    stopped.try_recv(),
                    Err(std::sync::mpsc::TryRecvError::Disconnected)
                ) {
                    return;
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
        // Then for quiet, or at most MAX_SETTLE.
        let burst = std::time::Instant::now();
        while burst.elapsed() < MAX_SETTLE {
            match received.recv_timeout(DEBOUNCE) {
                Ok(()) => {}
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        if matches!(
            stopped.try_recv(),
            Err(std::sync::mpsc::TryRecvError::Disconnected)
        ) {
            return;
        }
        on_change();
        // Roots created or removed meanwhile: watch what is there now.
        if let Ok((rearmed, _)) = arm(paths, events.clone()) {
            _watcher = rearmed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_skills::RootKind;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
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

    #[test]
    fn a_burst_of_changes_is_one_call_and_a_root_created_later_is_seen() {
        let temp = tempfile::tempdir().unwrap();
        let existing = temp.path().join("skills");
        std::fs::create_dir_all(&existing).unwrap();
        let later = temp.path().join("project/.agents/skills");
        std::fs::create_dir_all(temp.path().join("project")).unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let _watcher = watch(
            &[
                Root::new(&existing, RootKind::User),
                Root::new(&later, RootKind::Project),
            ],
            move || {
                counted.fetch_add(1, Ordering::SeqCst);
            },
        )
        .unwrap();
        for index in 0..5 {
            let dir = existing.join(format!("s{index}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("SKILL.md"), "---\nname: s\n---\n").unwrap();
        }
        assert!(wait_for(&calls, 1), "no call for the burst");
        std::thread::sleep(DEBOUNCE * 3);
        // One call for the burst (two if the machine stalled between the writes), not five.
        let burst_calls = calls.load(Ordering::SeqCst);
        assert!(
            (1..=2).contains(&burst_calls),
            "{burst_calls} calls for one burst"
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
        // A root that did not exist: its creation is seen through the parent, and after the
        // rearming a change inside it too.
        std::fs::create_dir_all(temp.path().join("project/.agents")).unwrap();
        assert!(
            wait_for(&calls, before_unrelated + 1),
            "the root's parent being made was not seen"
        );
        std::fs::create_dir_all(&later).unwrap();
        std::thread::sleep(DEBOUNCE * 3);
        let before = calls.load(Ordering::SeqCst);
        std::fs::create_dir_all(later.join("new-skill")).unwrap();
        std::fs::write(later.join("new-skill/SKILL.md"), "x").unwrap();
        assert!(
            wait_for(&calls, before + 1),
            "a change in a root created later was not seen"
        );
    }
}
