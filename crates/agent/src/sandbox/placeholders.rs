//! Placeholders for protected paths that do not exist yet: a mount needs something to mount
//! on, so an empty folder or file is made where the path would be (its first missing
//! component), the sandbox mounts a read-only one over it, and it is removed after the command.
//!
//! Made and removed without following a link (the parent is opened with
//! `RESOLVE_NO_SYMLINKS`, the entry made with `O_EXCL`), and removed only when it is still the
//! one made and still empty. Other sandboxed commands of the same user may be mounted on the
//! same placeholder: each command holds a shared lock on every workspace it protects (the
//! working directory and each added folder, which another session may share) while it runs, and
//! a placeholder is removed only by a command that can then take all of them alone; otherwise it
//! stays (an empty `.claude` folder, say), harmless to git and the agents that read these paths.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags, ResolveFlags};

use super::protect::Placeholder;

/// The placeholders one command made.
pub struct Made {
    made: Vec<(PathBuf, Placeholder, u64)>,
    locks: Vec<File>,
}

impl Made {
    /// Makes each missing path's placeholder (`missing` from [`super::protect::layout`]).
    /// `locks` names one lock file per workspace the command protects.
    pub fn create(locks: &[PathBuf], missing: &[(PathBuf, Placeholder)]) -> std::io::Result<Self> {
        let mut held = Vec::new();
        for lock in locks {
            if let Ok(lock) = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(lock)
            {
                rustix::fs::flock(&lock, FlockOperation::LockShared)?;
                held.push(lock);
            }
        }
        let mut made = Self {
            made: Vec::new(),
            locks: held,
        };
        for (path, placeholder) in missing {
            match make(path, placeholder) {
                Ok(inode) => made.made.push((path.clone(), placeholder.clone(), inode)),
                // Made meanwhile (another command's placeholder, or the user): mounted over all
                // the same.
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(error) => {
                    return Err(std::io::Error::new(
                        error.kind(),
                        format!(
                            "cannot make a placeholder at {} for the sandbox: {error}",
                            path.display()
                        ),
                    ));
                }
            }
        }
        Ok(made)
    }
}

impl Drop for Made {
    fn drop(&mut self) {
        // Another command still mounted on a workspace's placeholders: they stay.
        if self
            .locks
            .iter()
            .any(|lock| rustix::fs::flock(lock, FlockOperation::NonBlockingLockExclusive).is_err())
        {
            return;
        }
        for (path, placeholder, inode) in self.made.iter().rev() {
            let _ = remove(path, placeholder, *inode);
        }
    }
}

fn parent_of(path: &Path) -> std::io::Result<(OwnedFd, &std::ffi::OsStr)> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other("no parent"));
    };
    let fd = rustix::fs::openat2(
        rustix::fs::CWD,
        parent,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )?;
    Ok((fd, name))
}

/// Makes the placeholder; its inode.
fn make(path: &Path, placeholder: &Placeholder) -> std::io::Result<u64> {
    let (parent, name) = parent_of(path)?;
    match placeholder {
        Placeholder::Folder => {
            rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o755))?;
        }
        Placeholder::File(bytes) => {
            let fd = rustix::fs::openat(
                &parent,
                name,
                OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            )?;
            let mut written = 0;
            while written < bytes.len() {
                written += rustix::io::write(&fd, &bytes[written..])?;
            }
        }
    }
    let stat = rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(stat.st_ino)
}

/// Removes the placeholder if it is still the one made, unchanged.
fn remove(path: &Path, placeholder: &Placeholder, inode: u64) -> std::io::Result<()> {
    let (parent, name) = parent_of(path)?;
    let stat = rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if stat.st_ino != inode {
        return Ok(());
    }
    match placeholder {
        // Fails unless still empty.
        Placeholder::Folder => rustix::fs::unlinkat(&parent, name, AtFlags::REMOVEDIR)?,
        Placeholder::File(bytes) => {
            let kind = rustix::fs::FileType::from_raw_mode(stat.st_mode);
            if kind == rustix::fs::FileType::RegularFile
                && u64::try_from(stat.st_size).ok() == u64::try_from(bytes.len()).ok()
            {
                rustix::fs::unlinkat(&parent, name, AtFlags::empty())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_stays_while_another_session_shares_a_workspace() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        let (project_a, project_b, shared) = (
            root.join("a.lock"),
            root.join("b.lock"),
            root.join("lib.lock"),
        );
        let first = root.join(".envrc");
        let second = root.join(".claude");
        // Session A (its project and the shared added folder) made `.envrc`; session B (its
        // own project and the same folder) makes `.claude`, then ends first.
        let a = Made::create(
            &[project_a, shared.clone()],
            &[(first.clone(), Placeholder::Folder)],
        )
        .unwrap();
        let b = Made::create(
            &[project_b, shared],
            &[(second.clone(), Placeholder::Folder)],
        )
        .unwrap();
        drop(b);
        assert!(
            first.is_dir() && second.is_dir(),
            "A still runs: nothing removed"
        );
        drop(a);
        assert!(!first.exists(), "the last one out removes its own");
    }
}
