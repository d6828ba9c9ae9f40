//! What a command left in git's refs and index that would bring in what the mounts keep it
//! from writing: refs, objects and the index stay writable so commits work, so a command can
//! point a branch, `HEAD` or the stash at a commit whose tree adds `.husky/pre-commit`, stage
//! such a file, or rewrite history with replace refs, without ever touching the work tree.
//!
//! Refs are read from the files (no process) before and after a command; for each that moved,
//! the host's git lists what the move adds or changes at protected paths (pathspecs, so the
//! answer stays small), replacements off. The check fails closed: whatever it cannot look at
//! (too many refs, a ref it cannot resolve, git failing or slow) is told as not checked.

use std::collections::BTreeMap;
use std::path::Path;

/// The most refs read (loose and packed, `HEAD`s); past it the check says it could not look.
pub const MAX_REFS: usize = 20_000;
/// The most distinct moves whose changes are listed after one command; past it, the rest are
/// named as not checked.
pub const MAX_MOVED_CHECKED: usize = 64;
/// How long listing what one move changes may take.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);
/// The most refs named in one finding.
const NAMED: usize = 5;

/// The refs of a repository as a command found or left them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Refs {
    /// Each ref (and `HEAD`, each linked worktree's `HEAD`, `info/grafts`) with what it holds:
    /// an object, `ref: NAME`, or a digest for the grafts file.
    refs: BTreeMap<String, String>,
    /// All of them were read (not past [`MAX_REFS`]).
    complete: bool,
}

/// The largest `packed-refs` parsed; a larger one is compared whole, by digest (a change is
/// told as not checked).
const MAX_PACKED_REFS_BYTES: u64 = 64 * 1024 * 1024;
/// The largest loose ref read as a value; a larger one is compared by digest.
const MAX_REF_BYTES: u64 = 4096;

/// Reads the refs of the repository with git directory `git_dir` and common directory
/// `common_dir`: packed, loose (per worktree too), `HEAD` and the root pseudo-refs
/// (`ORIG_HEAD`, `FETCH_HEAD`, `MERGE_HEAD`, …) of each worktree. A file that cannot be read as
/// a ref (too large, not a regular file) is kept as a digest of its size, time and first
/// bytes, so a change to it is told rather than missed.
pub fn read(git_dir: &Path, common_dir: &Path) -> Refs {
    let mut refs = BTreeMap::new();
    let mut complete = true;
    let mut add = |refs: &mut BTreeMap<String, String>, name: String, value: String| {
        if refs.len() >= MAX_REFS {
            complete = false;
        } else {
            refs.insert(name, value);
        }
    };
    let packed = common_dir.join("packed-refs");
    match small_text(&packed, MAX_PACKED_REFS_BYTES) {
        Some(text) => {
            for line in text.lines() {
                if let Some((oid, name)) = line.split_once(' ')
                    && !line.starts_with(['#', '^'])
                {
                    add(&mut refs, name.to_string(), oid.to_string());
                }
            }
        }
        None if std::fs::symlink_metadata(&packed).is_ok() => {
            add(&mut refs, "packed-refs".to_string(), opaque(&packed));
        }
        None => {}
    }
    let mut folders = vec![(common_dir.join("refs"), "refs".to_string())];
    if git_dir != common_dir {
        folders.push((git_dir.join("refs"), format!("{}:refs", git_dir.display())));
    }
    let mut roots = vec![(git_dir.to_path_buf(), String::new())];
    if let Ok(worktrees) = std::fs::read_dir(common_dir.join("worktrees")) {
        for entry in worktrees.filter_map(Result::ok) {
            let prefix = format!("worktrees/{}/", entry.file_name().to_string_lossy());
            folders.push((entry.path().join("refs"), format!("{prefix}refs")));
            roots.push((entry.path(), prefix));
        }
    }
    while let Some((dir, prefix)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let full = format!("{prefix}/{}", entry.file_name().to_string_lossy());
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => folders.push((entry.path(), full)),
                _ => add(&mut refs, full, ref_value(&entry.path())),
            }
        }
    }
    // HEAD and the pseudo-refs at the top of each git directory (what `git reset --hard
    // ORIG_HEAD` or a merge of FETCH_HEAD reads).
    for (dir, prefix) in roots {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pseudo = name == "HEAD"
                || name == "AUTO_MERGE"
                || (name.ends_with("_HEAD")
                    && name.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
            if pseudo {
                add(
                    &mut refs,
                    format!("{prefix}{name}"),
                    ref_value(&entry.path()),
                );
            }
        }
    }
    let grafts = common_dir.join("info/grafts");
    if std::fs::symlink_metadata(&grafts).is_ok() {
        add(&mut refs, "info/grafts".to_string(), opaque(&grafts));
    }
    Refs { refs, complete }
}

/// A ref file's value: its first object (`FETCH_HEAD` holds several lines) or `ref: NAME`;
/// what cannot be read so, [`opaque`].
fn ref_value(path: &Path) -> String {
    match small_text(path, MAX_REF_BYTES) {
        Some(text) => {
            let first = text.lines().next().unwrap_or("").trim();
            if first.starts_with("ref:") {
                first.to_string()
            } else {
                first.split_whitespace().next().unwrap_or("").to_string()
            }
        }
        None => opaque(path),
    }
}

/// A file compared without being read as a ref: its size, modification time and a digest of
/// its first 64 KiB (it never names a commit, so a change to it is told as not checked).
fn opaque(path: &Path) -> String {
    use std::io::Read as _;
    let metadata = std::fs::symlink_metadata(path).ok();
    let mut head = Vec::new();
    if let Ok(file) = skillet_skills::open_regular(path) {
        let _ = file.take(64 * 1024).read_to_end(&mut head);
    }
    format!(
        "(unreadable: {} bytes, {:?}, {:x})",
        metadata.as_ref().map_or(0, std::fs::Metadata::len),
        metadata.and_then(|m| m.modified().ok()),
        super::fnv1a(&head)
    )
}

/// A regular file's text, at most `limit` bytes (none: not there, not regular, or larger).
fn small_text(path: &Path, limit: u64) -> Option<String> {
    let mut file = skillet_skills::open_regular(path).ok()?;
    let mut bytes = Vec::new();
    let cut = skillet_skills::read_capped(&mut file, &mut bytes, limit).ok()?;
    (!cut).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// The pathspecs of what the mounts protect: the protected top names at the repository's
/// top, the protected file names at any depth, without regard to case, and `extra` (paths
/// relative to the top: what the `.envrc` reads, what `.yarnrc.yml` runs).
pub fn protected_pathspecs(extra: &[String]) -> Vec<String> {
    super::protect::PROTECTED_TOP_NAMES
        .iter()
        .map(|name| format!(":(top,icase){name}"))
        .chain(
            crate::paths::PROTECTED_NAMES
                .iter()
                .map(|(name, _)| format!(":(top,icase,glob)**/{name}")),
        )
        .chain(extra.iter().map(|path| format!(":(top,literal){path}")))
        .collect()
}

/// The object a ref's value names, following symbolic refs through `refs` (none: it names
/// none, or a ref not there).
fn resolve(value: &str, refs: &BTreeMap<String, String>) -> Option<String> {
    let mut value = value.to_string();
    for _ in 0..5 {
        match value.strip_prefix("ref:") {
            Some(target) => value.clone_from(refs.get(target.trim())?),
            None => return valid(&value).then_some(value),
        }
    }
    None
}

fn valid(oid: &str) -> bool {
    (40..=64).contains(&oid.len()) && oid.chars().all(|c| c.is_ascii_hexdigit())
}

/// What the command did to the refs from `before` to `after`, one finding each (none when
/// nothing it did brings in a protected path).
pub fn findings(
    (git, root, git_dir): (Option<&Path>, &Path, &Path),
    extra: &[String],
    before: &Refs,
    after: &Refs,
) -> Vec<String> {
    if before == after {
        return Vec::new();
    }
    if !before.complete || !after.complete {
        return vec![format!(
            "the repository has more than {MAX_REFS} refs, so skillet could not check whether the command moved one to a commit that adds what runs code (hooks, .envrc); before checking out, merging, resetting or applying a stash, look with `git log --all --no-walk --since=1.hour -- .husky .envrc`"
        )];
    }
    let mut findings = Vec::new();
    let rewritten: Vec<&String> = after
        .refs
        .keys()
        .chain(before.refs.keys())
        .filter(|name| name.starts_with("refs/replace/") || *name == "info/grafts")
        .filter(|name| before.refs.get(*name) != after.refs.get(*name))
        .collect();
    if !rewritten.is_empty() {
        findings.push(format!(
            "the command changed {} (they change what git shows of history, so a branch can hide what it brings in): `git replace -d` drops a replacement, and `.git/info/grafts` can be removed",
            named(&rewritten)
        ));
    }
    let (moves, unresolved) = moves(before, after);
    if !unresolved.is_empty() {
        findings.push(format!(
            "the command left {} holding what is not a commit skillet can read, so it could not check what they bring in: look before using them",
            named(&unresolved)
        ));
    }
    let Some(git) = git else {
        if !moves.is_empty() {
            findings.push("the command moved refs, and no git outside the folders commands write was found to check what they bring in: look before checking them out".to_string());
        }
        return findings;
    };
    let total = moves.len();
    let mut not_checked = Vec::new();
    for (index, ((old, new), names)) in moves.into_iter().enumerate() {
        if index >= MAX_MOVED_CHECKED {
            not_checked.extend(names);
            continue;
        }
        let changes = protected_changes((git, root, git_dir), extra, old.as_deref(), &new)
            // What the work tree already holds (the user's own `.envrc`, committed) brings
            // nothing in.
            .and_then(|paths| differing((git, root, git_dir), Some(&new), paths));
        match changes {
            Some(paths) if paths.is_empty() => {}
            Some(paths) => {
                let undo: Vec<String> = names
                    .iter()
                    .map(|name| match (before.refs.get(*name), old.as_deref()) {
                        (Some(_), Some(old)) if *name == "HEAD" => {
                            format!("`git checkout --detach {old}`")
                        }
                        (Some(_), Some(old)) => format!("`git update-ref {name} {old}`"),
                        _ => format!("`git update-ref -d {name}`"),
                    })
                    .collect();
                findings.push(format!(
                    "the command moved {} to a commit that adds or changes {} (what runs code or steers an agent; the sandbox keeps the files themselves read-only): checking it out, resetting to it, merging it or applying it would bring that in outside any sandbox. {} puts it back",
                    named(&names),
                    paths.iter().take(NAMED).cloned().collect::<Vec<_>>().join(", "),
                    undo.join(", ")
                ));
            }
            None => not_checked.extend(names),
        }
    }
    if !not_checked.is_empty() {
        findings.push(format!(
            "the command moved {} ({total} moves in all), and skillet could not check what {} (git failed, was slow, or there were more than {MAX_MOVED_CHECKED}): look with `git diff --stat OLD NEW -- .husky .envrc` before checking them out",
            named(&not_checked),
            if not_checked.len() == 1 { "it brings in" } else { "they bring in" }
        ));
    }
    findings
}

/// Each moved ref (a removed one brings nothing in) by the object it held and holds now
/// (a new ref: where `HEAD` was), and the changed refs whose value names no commit.
type Moves<'a> = BTreeMap<(Option<String>, String), Vec<&'a String>>;

fn moves<'a>(before: &Refs, after: &'a Refs) -> (Moves<'a>, Vec<&'a String>) {
    let head_before = before
        .refs
        .get("HEAD")
        .and_then(|head| resolve(head, &before.refs));
    let mut moves: BTreeMap<(Option<String>, String), Vec<&String>> = BTreeMap::new();
    let mut unresolved = Vec::new();
    for (name, value) in &after.refs {
        let unchanged_text = before.refs.get(name) == Some(value);
        if name == "info/grafts"
            || name.starts_with("refs/replace/")
            // A symbolic ref that still names the same ref moved only with it: told there.
            || (unchanged_text && value.starts_with("ref:"))
        {
            continue;
        }
        let Some(new) = resolve(value, &after.refs) else {
            if !unchanged_text {
                unresolved.push(name);
            }
            continue;
        };
        let old = before
            .refs
            .get(name)
            .and_then(|old| resolve(old, &before.refs));
        if old.as_ref() == Some(&new) {
            continue;
        }
        // A new ref is compared with where HEAD was.
        let old = old.or_else(|| {
            (!before.refs.contains_key(name))
                .then(|| head_before.clone())
                .flatten()
        });
        moves.entry((old, new)).or_default().push(name);
    }
    (moves, unresolved)
}

fn named(names: &[&String]) -> String {
    let mut shown: Vec<String> = names
        .iter()
        .take(NAMED)
        .map(|name| (*name).clone())
        .collect();
    if names.len() > NAMED {
        shown.push(format!("and {} more", names.len() - NAMED));
    }
    shown.join(", ")
}

/// The protected paths the move from `old` (none: from nothing) to `new` adds or changes;
/// `None` when git cannot say (it failed, took longer than [`DIFF_TIMEOUT`], or said more than
/// a protected listing would).
fn protected_changes(
    (git, root, git_dir): (&Path, &Path, &Path),
    extra: &[String],
    old: Option<&str>,
    new: &str,
) -> Option<Vec<String>> {
    let mut command = std::process::Command::new(git);
    command
        .arg("--no-replace-objects")
        .arg("--git-dir")
        .arg(git_dir)
        .current_dir(root);
    match old {
        Some(old) => command.args([
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--name-only",
            "--diff-filter=ACMT",
            "-z",
            old,
            new,
            "--",
        ]),
        // From nothing: what the commit holds there.
        None => command.args([
            "diff-tree",
            "-r",
            "--root",
            "--no-commit-id",
            "--name-only",
            "--diff-filter=ACMT",
            "-z",
            new,
            "--",
        ]),
    };
    command.args(protected_pathspecs(extra));
    listed_paths(command)
}

/// Of `paths`, those whose content at `rev` (none: in the index) differs from the work
/// tree's file (or the file is not there); `None` when git cannot say.
pub fn differing(
    (git, root, git_dir): (&Path, &Path, &Path),
    rev: Option<&str>,
    paths: Vec<String>,
) -> Option<Vec<String>> {
    if paths.is_empty() {
        return Some(paths);
    }
    let mut command = std::process::Command::new(git);
    command
        .arg("--no-optional-locks")
        .arg("--no-replace-objects")
        .arg("--git-dir")
        .arg(git_dir)
        .arg("--work-tree")
        .arg(root)
        .args([
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--name-only",
            "-z",
        ])
        .args(rev)
        .arg("--")
        .args(paths.iter().map(|path| format!(":(top,literal){path}")))
        .current_dir(root);
    let listed = listed_paths(command)?;
    Some(
        paths
            .into_iter()
            .filter(|path| listed.contains(path))
            .collect(),
    )
}

/// What `command` (a host git listing paths with `-z`) printed, or `None` when it failed, took
/// longer than [`DIFF_TIMEOUT`] or printed more than 1 MiB.
pub fn listed_paths(command: std::process::Command) -> Option<Vec<String>> {
    const MAX_LISTING: u64 = 1024 * 1024;
    let deadline = std::time::Instant::now() + DIFF_TIMEOUT;
    let (success, bytes) = super::host::run_until(command, deadline, |stdout| {
        use std::io::Read as _;
        let mut bytes = Vec::new();
        let _ = stdout.take(MAX_LISTING + 1).read_to_end(&mut bytes);
        bytes
    })?;
    if !success || bytes.len() as u64 > MAX_LISTING {
        return None;
    }
    Some(
        String::from_utf8_lossy(&bytes)
            .split('\0')
            .filter(|path| !path.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// The index's entries at protected paths, as `git ls-files -s -v` gives them (mode, object,
/// stage, the skip-worktree and assume-unchanged tags, path); `None` when git cannot say.
/// Compared before and after a command: the work tree's files there are read-only to it, so
/// a change is its doing.
pub fn protected_index(
    git: &Path,
    root: &Path,
    git_dir: &Path,
    extra: &[String],
) -> Option<Vec<String>> {
    let mut command = std::process::Command::new(git);
    command
        .arg("--no-optional-locks")
        .arg("--git-dir")
        .arg(git_dir)
        .arg("--work-tree")
        .arg(root)
        .args(["ls-files", "-s", "-v", "-z", "--"])
        .args(protected_pathspecs(extra))
        .current_dir(root);
    listed_paths(command)
}
