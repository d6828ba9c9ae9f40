//! The gitlinks (nested repositories, submodules) git's indexes record, as the host's git lists
//! them (`ls-files --stage --recurse-submodules`, which runs nothing), remembered by what the
//! index files were so that a command that leaves them alone costs a `stat` each. The sandbox
//! protects each gitlink's `.git` ([`super::protect`]), and tells the user of one a command
//! added ([`super::aftermath`]).

use std::collections::{BTreeSet, HashMap};
use std::io::BufRead as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::host::run_until;

/// How long listing the indexes' gitlinks may take (once before the first command, and after a
/// command that changed an index); past it, the user is told it could not be checked.
pub const GIT_INDEX_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// The most gitlinks remembered of one repository (one with more submodules is not checked,
/// and the user told).
pub const MAX_GITLINKS: usize = 4_096;
/// The longest record of `ls-files` read (an index can name a path of any length); a longer
/// one makes the listing fail, which is told, rather than be held whole.
const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// A file as it was: a command that rewrote it changed one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl FileId {
    /// The file at `path` as git would read it (through a link); none when there is none.
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let metadata = std::fs::metadata(path).ok()?;
        Some(Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        })
    }
}

/// A repository's indexes as they are: its own and every submodule's under `modules/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexes(Vec<(PathBuf, Option<FileId>)>);

impl Indexes {
    /// The indexes of the repository whose git directory is `git_dir` (common directory
    /// `common_dir`).
    pub fn of(git_dir: &Path, common_dir: &Path) -> Self {
        let mut paths = vec![git_dir.join("index")];
        let mut modules = Vec::new();
        super::protect::git::find_modules(&common_dir.join("modules"), 0, &mut modules);
        paths.extend(modules.iter().map(|module| module.join("index")));
        Self(
            paths
                .into_iter()
                .map(|path| {
                    let id = FileId::of(&path);
                    (path, id)
                })
                .collect(),
        )
    }
}

/// The gitlinks of a repository (paths from its top), or why they could not be listed.
pub type Listing = Result<Arc<BTreeSet<PathBuf>>, String>;

/// The last listing of each repository, with the indexes it was made of.
static LISTED: Mutex<Option<HashMap<PathBuf, (Indexes, Listing)>>> = Mutex::new(None);

/// The gitlinks of the repository at `root` (git directory `git_dir`) whose indexes are
/// `indexes`, from the last listing when they are as it found them. `git`: the host's.
pub fn listed(git: Option<&Path>, root: &Path, git_dir: &Path, indexes: &Indexes) -> Listing {
    if indexes.0.first().is_none_or(|(_, id)| id.is_none()) {
        return Ok(Arc::default());
    }
    // Git writes its indexes as regular files; anything else (a FIFO that would hold git, a
    // link that keeps its identity while what it leads to changes) is not listed.
    if indexes.0.iter().any(|(path, id)| {
        id.is_some() && !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
    }) {
        return Err("one of git's index files is not a regular file".to_string());
    }
    let key = git_dir.to_path_buf();
    if let Ok(cache) = LISTED.lock()
        && let Some((known, listing)) = cache.as_ref().and_then(|cache| cache.get(&key))
        && known == indexes
    {
        return listing.clone();
    }
    let listing = list(git, root, git_dir);
    if let Ok(mut cache) = LISTED.lock() {
        cache
            .get_or_insert_with(HashMap::new)
            .insert(key, (indexes.clone(), listing.clone()));
    }
    listing
}

/// `git ls-files --stage --recurse-submodules` read as it streams, gitlinks kept.
fn list(git: Option<&Path>, root: &Path, git_dir: &Path) -> Listing {
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
        // Submodules' indexes too: `git status` at the top looks into populated ones.
        .args(["ls-files", "--stage", "-z", "--recurse-submodules"])
        .current_dir(root)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_COMMON_DIR")
        .env_remove("GIT_INDEX_FILE");
    let deadline = std::time::Instant::now() + GIT_INDEX_TIMEOUT;
    match run_until(command, deadline, read_gitlinks) {
        Some((true, Ok(found))) => Ok(Arc::new(found)),
        Some((true, Err(why))) => Err(why),
        Some((false, _)) => Err("git could not read the index".to_string()),
        None => Err(format!(
            "git took longer than {} s",
            GIT_INDEX_TIMEOUT.as_secs()
        )),
    }
}

/// The gitlinks in `ls-files --stage -z` output; an error past [`MAX_GITLINKS`] of them or a
/// record over [`MAX_RECORD_BYTES`].
fn read_gitlinks(stdout: impl std::io::Read) -> Result<BTreeSet<PathBuf>, String> {
    use std::io::Read as _;
    let mut reader = std::io::BufReader::new(stdout);
    let mut found = BTreeSet::new();
    let mut record = Vec::new();
    loop {
        record.clear();
        let read = (&mut reader)
            .take(MAX_RECORD_BYTES + 1)
            .read_until(0, &mut record)
            .map_err(|error| format!("cannot read git's listing: {error}"))?;
        if read == 0 {
            return Ok(found);
        }
        if record.last() == Some(&0) {
            record.pop();
        } else if u64::try_from(record.len()).unwrap_or(u64::MAX) > MAX_RECORD_BYTES {
            return Err(format!(
                "a path in the index is over {MAX_RECORD_BYTES} bytes"
            ));
        }
        // `MODE OBJECT STAGE\tPATH`; git takes any mode whose type bits are 0o160000 for a
        // gitlink (`160755` too).
        let Some((mode, path)) = record.split_first_chunk::<6>().and_then(|(mode, rest)| {
            let tab = rest.iter().position(|b| *b == b'\t')?;
            Some((mode, &rest[tab + 1..]))
        }) else {
            continue;
        };
        let mode = std::str::from_utf8(mode)
            .ok()
            .and_then(|mode| u32::from_str_radix(mode, 8).ok());
        if mode.is_none_or(|mode| mode & 0o170_000 != 0o160_000) {
            continue;
        }
        if found.len() == MAX_GITLINKS {
            return Err(format!("more than {MAX_GITLINKS} submodules"));
        }
        found.insert(PathBuf::from(std::ffi::OsStr::from_bytes(path)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitlinks_are_read_by_their_type_bits_and_kept_as_bytes() {
        let output = [
            &b"100644 aa 0\tREADME.md"[..],
            b"160000 bb 0\tsub",
            b"160755 cc 0\todd",
            b"120000 dd 0\tlink",
            b"160000 ee 0\tname\xff",
        ]
        .join(&0_u8);
        let found = read_gitlinks(&output[..]).unwrap();
        let expected: BTreeSet<PathBuf> = [
            PathBuf::from("sub"),
            PathBuf::from("odd"),
            PathBuf::from(std::ffi::OsStr::from_bytes(b"name\xff")),
        ]
        .into_iter()
        .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn a_record_past_the_cap_fails_the_listing_rather_than_being_held() {
        let mut output = b"160000 bb 0\t".to_vec();
        output.extend(std::iter::repeat_n(b'a', 70 * 1024));
        assert!(read_gitlinks(&output[..]).is_err());
    }
}
