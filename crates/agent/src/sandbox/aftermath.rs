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
//! Nothing is undone: what the command left is the user's to look at, with the command that
//! shows it and the one that drops it.

use std::collections::{BTreeSet, HashMap};
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::protect::git::{read_small, resolve_git_dir, run_until};

/// How long listing the index's gitlinks may take (once before the first command, and after a
/// command that changed the index); past it, the user is told it could not be checked.
pub const GIT_INDEX_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// The most gitlinks remembered of one index (a repository with more submodules is checked
/// for the first ones only, and the user told).
pub const MAX_GITLINKS: usize = 4_096;
/// The most gitlinks named in one finding.
const NAMED: usize = 5;

/// An index file as it was: a command that rewrote it changed one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Identity {
    #[cfg(unix)]
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let metadata = std::fs::symlink_metadata(path).ok()?;
        Some(Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn of(_path: &Path) -> Option<Self> {
        None
    }
}

/// The gitlinks of one index, or why they could not be listed.
type Listing = Result<Arc<BTreeSet<PathBuf>>, String>;

/// The last listing of each index, with the identity it was made of, so a command that leaves
/// the index alone costs a `stat`.
static LISTED: Mutex<Option<HashMap<PathBuf, (Identity, Listing)>>> = Mutex::new(None);

/// A repository as a command found it.
struct Repository {
    root: PathBuf,
    git_dir: PathBuf,
    git: Option<PathBuf>,
    index: Option<Identity>,
    gitlinks: Listing,
    rebase_exec: Vec<String>,
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
            let index = Identity::of(&git_dir.join("index"));
            let gitlinks = gitlinks(git.as_deref(), &root, &git_dir, index);
            let rebase_exec = rebase_exec(&git_dir);
            Some(Repository {
                root,
                git_dir,
                git,
                index,
                gitlinks,
                rebase_exec,
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
        let index = Identity::of(&repository.git_dir.join("index"));
        if index != repository.index {
            let after = gitlinks(
                repository.git.as_deref(),
                &repository.root,
                &repository.git_dir,
                index,
            );
            match (&repository.gitlinks, &after) {
                (Ok(before), Ok(after)) => {
                    let added: Vec<&PathBuf> = after.difference(before).collect();
                    if !added.is_empty() {
                        findings.push(gitlinks_added(&repository.root, &added));
                    }
                }
                (Err(why), _) | (_, Err(why)) => findings.push(format!(
                    "the command changed git's index, and skillet could not check it for nested repositories ({why}): look at `git diff --cached --submodule` before running git here"
                )),
            }
        }
        let exec = rebase_exec(&repository.git_dir);
        if !exec.is_empty() && exec != repository.rebase_exec {
            findings.push(format!(
                "the command left a rebase in progress that runs commands ({}); `git rebase --continue` would run them outside any sandbox, `git rebase --abort` drops it",
                exec.first().map_or("", String::as_str)
            ));
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
        "the command added {} to git's index as nested repositories (gitlinks) in {}: git commands here that look into submodules, `git status` among them, would run their config and hooks outside any sandbox. Look with `git diff --cached --submodule`; `git rm --cached {}` drops one",
        names.join(", "),
        root.display(),
        first.unwrap_or_default()
    )
}

/// The gitlinks of the index at `git_dir`, from the cache when `index` is what was listed.
fn gitlinks(git: Option<&Path>, root: &Path, git_dir: &Path, index: Option<Identity>) -> Listing {
    let Some(index) = index else {
        return Ok(Arc::default());
    };
    let key = git_dir.join("index");
    if let Ok(cache) = LISTED.lock()
        && let Some((identity, listing)) = cache.as_ref().and_then(|cache| cache.get(&key))
        && *identity == index
    {
        return listing.clone();
    }
    let listing = list_gitlinks(git, root, git_dir);
    if let Ok(mut cache) = LISTED.lock() {
        cache
            .get_or_insert_with(HashMap::new)
            .insert(key, (index, listing.clone()));
    }
    listing
}

/// `git ls-files --stage` read as it streams, gitlinks (mode 160000) kept.
fn list_gitlinks(git: Option<&Path>, root: &Path, git_dir: &Path) -> Listing {
    let Some(git) = git else {
        return Err("no git outside the folders commands write".to_string());
    };
    let mut command = std::process::Command::new(git);
    command
        .args([
            "--no-optional-locks",
            "-c",
            "core.fsmonitor=false",
            "--git-dir",
        ])
        .arg(git_dir)
        .arg("--work-tree")
        .arg(root)
        .args(["ls-files", "--stage", "-z"])
        .current_dir(root)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_COMMON_DIR")
        .env_remove("GIT_INDEX_FILE");
    let deadline = std::time::Instant::now() + GIT_INDEX_TIMEOUT;
    let read = |stdout: std::process::ChildStdout| {
        let mut found = BTreeSet::new();
        let mut more = false;
        for record in std::io::BufReader::new(stdout).split(0) {
            let Ok(record) = record else { break };
            // `MODE OBJECT STAGE\tPATH`
            let Some(path) = record.strip_prefix(b"160000 ").and_then(|rest| {
                rest.iter()
                    .position(|b| *b == b'\t')
                    .map(|at| &rest[at + 1..])
            }) else {
                continue;
            };
            if found.len() == MAX_GITLINKS {
                more = true;
                continue;
            }
            found.insert(PathBuf::from(String::from_utf8_lossy(path).into_owned()));
        }
        (found, more)
    };
    match run_until(command, deadline, read) {
        Some((true, (found, false))) => Ok(Arc::new(found)),
        Some((true, (_, true))) => Err(format!("more than {MAX_GITLINKS} submodules")),
        Some((false, _)) => Err("git could not read the index".to_string()),
        None => Err(format!(
            "git took longer than {} s",
            GIT_INDEX_TIMEOUT.as_secs()
        )),
    }
}

/// The `exec` lines of a rebase in progress (none when there is none).
fn rebase_exec(git_dir: &Path) -> Vec<String> {
    read_small(&git_dir.join("rebase-merge").join("git-rebase-todo"))
        .map(|todo| {
            todo.lines()
                .map(str::trim)
                .filter(|line| matches!(line.split_whitespace().next(), Some("exec" | "x")))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
