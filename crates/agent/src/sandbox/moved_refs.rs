//! Refs a command moved so that checking them out (or applying a stash) would bring back
//! what the mounts keep it from writing: refs and objects stay writable so commits work, and a
//! command can write a commit whose tree changes `.husky/pre-commit` or `.envrc` without ever
//! touching the work tree. Refs are read from the files (no process) before and after a
//! command; for those that moved, the host's git lists what the move changes, and a change to
//! a protected path is told, with the command that puts the ref back.

use std::collections::BTreeMap;
use std::path::Path;

/// The most refs read (loose and packed); past it the rest are not compared.
pub const MAX_REFS: usize = 20_000;
/// The most moved refs whose changes are listed after one command.
const MAX_MOVED_CHECKED: usize = 16;
/// How long listing what one moved ref changes may take.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Each ref of the repository whose common directory is `common_dir` (and `HEAD` of
/// `git_dir`), with the object it names: packed refs, then loose ones over them.
pub fn read(git_dir: &Path, common_dir: &Path) -> BTreeMap<String, String> {
    let mut refs = BTreeMap::new();
    if let Ok(packed) = std::fs::read_to_string(common_dir.join("packed-refs")) {
        for line in packed.lines().take(MAX_REFS) {
            if let Some((oid, name)) = line.split_once(' ')
                && !line.starts_with(['#', '^'])
            {
                refs.insert(name.to_string(), oid.to_string());
            }
        }
    }
    let mut queue = vec![(common_dir.join("refs"), "refs".to_string())];
    while let Some((dir, prefix)) = queue.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            if refs.len() >= MAX_REFS {
                return refs;
            }
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let full = format!("{prefix}/{name}");
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => queue.push((entry.path(), full)),
                Ok(kind) if kind.is_file() => {
                    if let Some(oid) = loose(&entry.path()) {
                        refs.insert(full, oid);
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(head) = loose(&git_dir.join("HEAD")) {
        refs.insert("HEAD".to_string(), head);
    }
    refs
}

/// A loose ref's object (or, for a symbolic one, `ref: NAME`).
fn loose(path: &Path) -> Option<String> {
    let mut file = skillet_skills::open_regular(path).ok()?;
    let mut bytes = Vec::new();
    skillet_skills::read_capped(&mut file, &mut bytes, 4096).ok()?;
    Some(String::from_utf8_lossy(&bytes).trim().to_string())
}

/// Whether `path` (relative to the repository's top) is one the mounts protect: a protected
/// top name, or a protected file name at any depth.
fn protected(path: &str) -> bool {
    let first = path.split('/').next().unwrap_or(path);
    let name = path.rsplit('/').next().unwrap_or(path);
    super::protect::PROTECTED_TOP_NAMES
        .iter()
        .any(|top| top.eq_ignore_ascii_case(first))
        || crate::paths::PROTECTED_NAMES
            .iter()
            .any(|(protected, _)| protected.eq_ignore_ascii_case(name))
}

/// What the move of each ref from `before` to `after` changes in protected paths, one finding
/// each (at most [`MAX_MOVED_CHECKED`] refs listed with `git`).
pub fn findings(
    git: Option<&Path>,
    root: &Path,
    git_dir: &Path,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let Some(git) = git else {
        return Vec::new();
    };
    let head_before = before.get("HEAD").and_then(|head| resolve(head, before));
    let moved: Vec<(&String, Option<String>, String)> = after
        .iter()
        .filter(|(name, oid)| *name != "HEAD" && before.get(*name) != Some(*oid))
        .filter(|(_, oid)| !oid.starts_with("ref:"))
        .map(|(name, oid)| {
            let old = before.get(name).cloned().or_else(|| head_before.clone());
            (name, old, oid.clone())
        })
        .take(MAX_MOVED_CHECKED)
        .collect();
    let mut findings = Vec::new();
    for (name, old, new) in moved {
        let Some(old) = old else {
            continue;
        };
        let changed = changed_paths(git, root, git_dir, &old, &new);
        let touched: Vec<&String> = changed.iter().filter(|path| protected(path)).collect();
        if touched.is_empty() {
            continue;
        }
        let shown: Vec<String> = touched.iter().take(5).map(|path| (*path).clone()).collect();
        let undo = if before.contains_key(name) {
            format!("`git update-ref {name} {old}` puts it back")
        } else {
            format!("`git update-ref -d {name}` removes it")
        };
        findings.push(format!(
            "the command moved {name} to a commit that changes {} (what runs code or steers an agent; the sandbox keeps the files themselves read-only): checking it out, merging it or applying it would bring that in outside any sandbox. {undo}",
            shown.join(", ")
        ));
    }
    findings
}

/// The object `value` names, following one symbolic ref.
fn resolve(value: &str, refs: &BTreeMap<String, String>) -> Option<String> {
    match value.strip_prefix("ref: ") {
        Some(target) => refs.get(target.trim()).cloned(),
        None => Some(value.to_string()),
    }
}

/// The paths `git diff --name-only -z OLD NEW` lists as added or changed (a removal brings
/// nothing in; none when git cannot say).
fn changed_paths(git: &Path, root: &Path, git_dir: &Path, old: &str, new: &str) -> Vec<String> {
    let valid = |oid: &str| !oid.is_empty() && oid.chars().all(|c| c.is_ascii_hexdigit());
    if !valid(old) || !valid(new) {
        return Vec::new();
    }
    let mut command = std::process::Command::new(git);
    command
        .arg("--git-dir")
        .arg(git_dir)
        .args([
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--name-only",
            "--diff-filter=ACMRT",
            "-z",
            old,
            new,
            "--",
        ])
        .current_dir(root);
    let deadline = std::time::Instant::now() + DIFF_TIMEOUT;
    super::host::run_until(command, deadline, |stdout| {
        use std::io::Read as _;
        let mut bytes = Vec::new();
        let _ = stdout.take(1024 * 1024).read_to_end(&mut bytes);
        bytes
    })
    .map(|(_, bytes)| {
        String::from_utf8_lossy(&bytes)
            .split('\0')
            .filter(|path| !path.is_empty())
            .map(str::to_string)
            .collect()
    })
    .unwrap_or_default()
}
