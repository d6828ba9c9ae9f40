//! What a command nobody reviewed can leave behind that no mount keeps it from, said after it.
//!
//! The namespace sandbox makes protected paths read-only, so most changes that would run code
//! later are impossible. Three are not, because commits and ordinary work need what they go
//! through, and they are told to the user (and the model) once the command has ended:
//!
//! - **A nested repository in git's index.** The index stays writable so commits work, and a
//!   command can add `sub/` (a repository it made, with its own `core.fsmonitor` or hooks) as a
//!   gitlink: git commands at the top that look into submodules (`git status` among them) then
//!   run that repository's config outside any sandbox. The gitlinks are listed before and after
//!   (by the host's git, `ls-files`, which runs nothing), and a new one is told.
//! - **A rebase left in progress with `exec` lines**, which `git rebase --continue` runs.
//! - **A link on the way to a protected path replaced** (`.githooks -> tools/hooks`, the hooks
//!   path, by a folder of the command's own): the mount protects where the link led, and no
//!   mount pins the link itself.
//!
//! - **A ref moved to a commit that changes a protected path** (a branch, a stash: checking it
//!   out brings `.husky/pre-commit` back outside any sandbox): refs and objects stay writable
//!   for commits ([`super::moved_refs`]).
//! - **A link or FIFO planted in git's directory** ([`super::planted`]): removed, and said.
//! - **Protected paths staged in the index** (the work tree's files there are read-only to the
//!   command, so the index differing from them is the command's doing): told.
//! - **A loose object whose content is not what its name says** ([`super::objects`]): removed,
//!   and said.
//!
//! Otherwise nothing is undone: what the command left is the user's to look at, with the
//! command that shows it and the one that drops it.

use std::path::{Path, PathBuf};

use super::gitlinks::{Indexes, Listing, listed};
use super::protect::git::{common_dir, resolve_git_dir};

/// The most entries of an operation's folder looked at.
const MAX_PENDING_ENTRIES: usize = 1_024;
/// The most gitlinks named in one finding.
const NAMED: usize = 5;

/// A repository as a command found it.
struct Repository {
    root: PathBuf,
    git_dir: PathBuf,
    git: Option<PathBuf>,
    common_dir: PathBuf,
    indexes: Indexes,
    gitlinks: Listing,
    pending: Pendings,
    /// The links and FIFOs in its git directories before the command (a user's own stay).
    planted: super::planted::Entries,
    /// Its refs before the command ([`super::moved_refs`]).
    refs: super::moved_refs::Refs,
    /// What the `.envrc` reads and `.yarnrc.yml` runs, relative to the root: protected too.
    extra: Vec<String>,
    /// The index's entries at protected paths before the command (none: git could not say).
    index_entries: Option<Vec<String>>,
    /// When the command was about to start: loose objects changed since are checked
    /// ([`super::objects`]).
    started: std::time::SystemTime,
    /// The object store's fan-out folders then ([`super::objects::folders`]).
    #[cfg(target_os = "linux")]
    object_folders: Vec<Option<u64>>,
}

/// What was there before a command, to compare with after it.
pub struct Aftermath {
    links: Vec<(PathBuf, PathBuf)>,
    repository: Option<Repository>,
}

impl Aftermath {
    /// Takes note of the repository at or above `cwd` (if any) and of `links` (protected paths'
    /// links and what they read). `untrusted` are the folders no `git` is taken from.
    pub fn before(cwd: &Path, links: Vec<(PathBuf, PathBuf)>, untrusted: &[PathBuf]) -> Self {
        let repository = skillet_skills::find_git_root(cwd).and_then(|root| {
            let git_dir = resolve_git_dir(&root.join(".git"))?;
            let git = super::host::find("git", untrusted);
            let common_dir = common_dir(&git_dir).unwrap_or_else(|| git_dir.clone());
            let indexes = Indexes::of(&git_dir, &common_dir);
            let gitlinks = listed(git.as_deref(), &root, &git_dir, &indexes);
            let pending = pending(&git_dir, &common_dir);
            let planted = super::planted::walk(&git_dir, &common_dir);
            let refs = super::moved_refs::read(&git_dir, &common_dir);
            #[cfg(target_os = "linux")]
            let object_folders = super::objects::folders(&common_dir.join("objects"));
            let extra: Vec<String> = super::protect::envrc_sources(&root)
                .into_iter()
                .chain(super::protect::tool_programs(&root))
                .filter_map(|path| {
                    // A pathspec names what the tree holds, where git follows no link.
                    let path = skillet_skills::confine::normalize(&path)?;
                    // Git's own folder is no path of the tree.
                    if path.starts_with(root.join(".git")) {
                        return None;
                    }
                    path.strip_prefix(&root)
                        .ok()
                        .map(|relative| relative.display().to_string())
                })
                .collect();
            let index_entries = git
                .as_deref()
                .and_then(|git| super::moved_refs::protected_index(git, &root, &git_dir, &extra));
            Some(Repository {
                root,
                git_dir,
                git,
                common_dir,
                indexes,
                gitlinks,
                pending,
                planted,
                refs,
                extra,
                index_entries,
                started: std::time::SystemTime::now(),
                #[cfg(target_os = "linux")]
                object_folders,
            })
        });
        Self { links, repository }
    }

    /// What the command left that runs code later, one sentence each (none: nothing).
    pub fn after(&self) -> Vec<String> {
        let mut findings = Vec::new();
        for (link, target) in &self.links {
            if std::fs::read_link(link).ok().as_ref() != Some(target) {
                findings.push(format!(
                    "{} was a link to {} (protected); the command replaced it, and what is there now is read or run outside any sandbox later: look at it before running git or an agent here",
                    link.display(),
                    target.display()
                ));
            }
        }
        let Some(repository) = &self.repository else {
            return findings;
        };
        findings.extend(super::planted::remove_new(
            &repository.planted,
            &super::planted::walk(&repository.git_dir, &repository.common_dir),
        ));
        #[cfg(target_os = "linux")]
        findings.extend(super::objects::verify_since(
            &repository.common_dir.join("objects"),
            repository.started,
            &repository.object_folders,
        ));
        findings.extend(super::moved_refs::findings(
            (
                repository.git.as_deref(),
                &repository.root,
                &repository.git_dir,
            ),
            &repository.extra,
            &repository.refs,
            &super::moved_refs::read(&repository.git_dir, &repository.common_dir),
        ));
        let indexes = Indexes::of(&repository.git_dir, &repository.common_dir);
        if indexes != repository.indexes {
            let after = listed(
                repository.git.as_deref(),
                &repository.root,
                &repository.git_dir,
                &indexes,
            );
            match (&repository.gitlinks, &after) {
                (Ok(before), Ok(after)) => {
                    let added: Vec<&PathBuf> = after.difference(before).collect();
                    if !added.is_empty() {
                        findings.push(gitlinks_added(&repository.root, &added));
                    }
                }
                (Err(why), _) | (_, Err(why)) => findings.push(format!(
                    "the command changed git's index, and skillet could not check it for nested repositories ({why}): before running git here, look for them with `git ls-files --stage | grep ^160` (it looks into none)"
                )),
            }
            findings.extend(staged(repository));
        }
        let now = pending(&repository.git_dir, &repository.common_dir);
        if now.overflow {
            findings.push(format!(
                "the repository has more than {MAX_OPERATION_DIRS} worktrees and submodules, too many to check for an operation a command left in progress: before `git rebase --continue` or `git cherry-pick --continue` anywhere in it, read what it will run (`git status` names the operation)"
            ));
        }
        for after in now.list {
            let before = repository
                .pending
                .list
                .iter()
                .find(|before| before.dir == after.dir && before.folder == after.folder);
            if after.digest.is_some() && before.is_none_or(|before| before.digest != after.digest) {
                // The main worktree's or another linked one's: named by its path.
                let place = if after.dir == repository.git_dir {
                    format!(".git/{}", after.folder)
                } else {
                    after.dir.join(after.folder).display().to_string()
                };
                findings.push(format!(
                    "the command left a {operation} in progress ({place}): `git {operation} --continue` would run what it wrote there (`exec` lines, a merge strategy) outside any sandbox; `git {operation} --abort` drops it",
                    operation = after.operation,
                ));
            }
        }
        findings
    }
}

fn gitlinks_added(root: &Path, added: &[&PathBuf]) -> String {
    let mut names: Vec<String> = added
        .iter()
        .take(NAMED)
        .map(|path| path.display().to_string())
        .collect();
    if added.len() > NAMED {
        names.push(format!("and {} more", added.len() - NAMED));
    }
    let first = added.first().map(|path| path.display().to_string());
    format!(
        "the command added {} to git's index as nested repositories (gitlinks) in {}: git commands here that look into submodules, `git status` among them, would run their config and hooks outside any sandbox. Before any other git command here, `git update-index --force-remove -- {}` drops one (it looks into none; for one inside a submodule, run it there)",
        names.join(", "),
        root.display(),
        first.unwrap_or_default()
    )
}

/// The git directory's folders that hold an operation in progress, which `--continue` carries
/// on: a rebase (merge or apply backend) and a cherry-pick or revert sequence.
const PENDING: [(&str, &str); 3] = [
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase"),
    ("sequencer", "cherry-pick"),
];

/// An operation in progress, as a command found or left it.
struct Pending {
    /// The git directory it is in.
    dir: PathBuf,
    folder: &'static str,
    operation: &'static str,
    /// A digest of its folder (the folder's and each entry's name, size, inode, modification
    /// and change times); none when there is none. Not parsed: whatever a command changed there
    /// is told, whatever it holds. A change time cannot be set back, so a rewrite of the same
    /// size with its old modification time put back changes it too.
    digest: Option<u64>,
}

/// The most git directories (linked worktrees', submodules') whose operations are looked at;
/// past it the user is told they could not be checked.
pub const MAX_OPERATION_DIRS: usize = 4_096;

/// The operations in progress of a repository, and whether it had more git directories than
/// were looked at.
struct Pendings {
    list: Vec<Pending>,
    overflow: bool,
}

/// The operations in progress in every git directory a command could write: its own, and
/// (the common directory being writable for commits) the main worktree's, every linked
/// worktree's and every submodule's, whose `--continue` the user may run there.
fn pending(git_dir: &Path, common_dir: &Path) -> Pendings {
    let mut dirs = vec![git_dir.to_path_buf()];
    if common_dir != git_dir {
        dirs.push(common_dir.to_path_buf());
    }
    let mut overflow = false;
    for entry in std::fs::read_dir(common_dir.join("worktrees"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
    {
        if dirs.len() > MAX_OPERATION_DIRS {
            overflow = true;
            break;
        }
        let dir = entry.path();
        if dir != git_dir {
            dirs.push(dir);
        }
    }
    let mut modules = Vec::new();
    super::protect::git::find_modules(&common_dir.join("modules"), 0, &mut modules);
    // The walk stops at its own cap: a full one may have left some out.
    overflow |= modules.len() >= super::protect::MAX_GIT_MODULES;
    dirs.extend(modules.into_iter().filter(|dir| dir != git_dir));
    let list = dirs
        .into_iter()
        .flat_map(|dir| {
            PENDING.iter().map(move |(folder, operation)| Pending {
                digest: folder_digest(&dir.join(folder)),
                dir: dir.clone(),
                folder,
                operation,
            })
        })
        .collect();
    Pendings { list, overflow }
}

/// What [`Pending::digest`] says of `folder` (none when it is not there).
fn folder_digest(folder: &Path) -> Option<u64> {
    use std::hash::{Hash as _, Hasher as _};
    let stamp = |metadata: Option<std::fs::Metadata>| {
        metadata.map(|metadata| {
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt as _;
                (
                    metadata.len(),
                    metadata.ino(),
                    (metadata.mtime(), metadata.mtime_nsec()),
                    (metadata.ctime(), metadata.ctime_nsec()),
                )
            }
            #[cfg(not(unix))]
            {
                (metadata.len(), 0, (0, 0), (0, 0))
            }
        })
    };
    let own = std::fs::symlink_metadata(folder).ok()?;
    let entries = std::fs::read_dir(folder).ok();
    let mut seen: Vec<_> = entries
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .take(MAX_PENDING_ENTRIES)
        .map(|entry| (entry.file_name(), stamp(entry.metadata().ok())))
        .collect();
    seen.sort();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    stamp(Some(own)).hash(&mut hasher);
    seen.hash(&mut hasher);
    Some(hasher.finish())
}

/// What a command changed in the index at protected paths (entries, or their skip-worktree
/// and assume-unchanged tags), one finding; or that it could not be checked.
fn staged(repository: &Repository) -> Option<String> {
    let not_checked = "the command changed git's index, and skillet could not check what it staged at protected paths: before `git checkout -- .` or a commit, look with `git ls-files -s -v -- .husky .envrc`".to_string();
    let Some(git) = repository.git.as_deref() else {
        return Some(not_checked);
    };
    let after = super::moved_refs::protected_index(
        git,
        &repository.root,
        &repository.git_dir,
        &repository.extra,
    );
    let (Some(before), Some(after)) = (&repository.index_entries, after) else {
        return Some(not_checked);
    };
    // A changed entry counts when git would hide it from `git status` (any tag but `H`) or
    // it differs from the work tree's file (`git add .envrc` of the user's own file does not).
    let mut hidden = Vec::new();
    let mut staged = Vec::new();
    for entry in after.iter().filter(|entry| !before.contains(entry)) {
        let Some((head, path)) = entry.split_once('\t') else {
            continue;
        };
        if head.starts_with('H') {
            staged.push(path.to_string());
        } else {
            hidden.push(path.to_string());
        }
    }
    let Some(differing) =
        super::moved_refs::differing((git, &repository.root, &repository.git_dir), None, staged)
    else {
        return Some(not_checked);
    };
    let changed: Vec<String> = hidden.into_iter().chain(differing).collect();
    (!changed.is_empty()).then(|| {
        let shown = changed.iter().take(NAMED).cloned().collect::<Vec<_>>();
        format!(
            "the command staged {} in git's index (what runs code or steers an agent; the files themselves are read-only to it), or hid it from `git status` (skip-worktree, assume-unchanged): `git checkout -- .` or a commit would bring that in outside any sandbox; `git update-index --no-skip-worktree --no-assume-unchanged -- {paths}` then `git restore --staged -- {paths}` drops it",
            shown.join(", "),
            paths = shown.join(" ")
        )
    })
}
