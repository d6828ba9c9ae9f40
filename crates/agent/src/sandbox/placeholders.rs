//! Placeholders for protected paths that do not exist yet: a mount needs something to mount
//! on, so an empty folder or file is made where the path would be (its first missing
//! component), the sandbox mounts a read-only one over it, and it is removed after the command.
//!
//! Made and removed without following a link (the parent is opened with
//! `RESOLVE_NO_SYMLINKS`, the entry made with `O_EXCL`), and removed only when it is still the
//! one made and still empty. Other sandboxed commands of the same user may be mounted on the
//! same placeholder (another session in the same folder, in a folder it added, or in a worktree
//! sharing its git directory): each command holds a shared lock **per placeholder path** while
//! it runs, takes up the placeholders others made for the paths it protects too, and removes
//! each only when it can then take that path's lock alone. So the last command mounted on a
//! placeholder removes it, whoever made it, and none is removed under another.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags, ResolveFlags};

use super::protect::Placeholder;

/// One placeholder a command is mounted on: where, what, its inode, and the path's lock.
struct Held {
    path: PathBuf,
    placeholder: Placeholder,
    inode: u64,
    lock: Option<File>,
}

/// The placeholders one command is mounted on, made by it or by another.
pub struct Made {
    held: Vec<Held>,
}

impl Made {
    /// Makes each missing path's placeholder (`missing` from [`super::protect::layout`]), or
    /// takes up the one another command made; `lock_of` names each path's lock file.
    pub fn create(
        lock_of: impl Fn(&Path) -> PathBuf,
        missing: &[(PathBuf, Placeholder)],
    ) -> std::io::Result<Self> {
        let mut made = Self { held: Vec::new() };
        for (path, placeholder) in missing {
            let lock = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(lock_of(path))
                .ok();
            if let Some(lock) = &lock {
                rustix::fs::flock(lock, FlockOperation::LockShared)?;
            }
            let inode = match make(path, placeholder) {
                Ok(inode) => Some(inode),
                // Made meanwhile (another command's placeholder, or the user): mounted over all
                // the same, and taken up when it is one (empty, as a placeholder is).
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    existing_placeholder(path, placeholder)
                }
                Err(error) => {
                    return Err(std::io::Error::new(
                        error.kind(),
                        format!(
                            "cannot make a placeholder at {} for the sandbox: {error}",
                            path.display()
                        ),
                    ));
                }
            };
            made.held.push(Held {
                path: path.clone(),
                placeholder: *placeholder,
                inode: inode.unwrap_or(0),
                lock,
            });
        }
        Ok(made)
    }
}

impl Drop for Made {
    fn drop(&mut self) {
        for held in self.held.iter().rev() {
            // Another command still mounted on it: it stays for that one to remove.
            let alone = held.lock.as_ref().is_none_or(|lock| {
                rustix::fs::flock(lock, FlockOperation::NonBlockingLockExclusive).is_ok()
            });
            if alone && held.inode != 0 {
                let _ = remove(&held.path, &held.placeholder, held.inode);
            }
        }
    }
}

/// The inode of what is at `path` when it looks like `placeholder` (an empty folder, a file of
/// its bytes' length): one another command made.
fn existing_placeholder(path: &Path, placeholder: &Placeholder) -> Option<u64> {
    let (parent, name) = parent_of(path).ok()?;
    let stat = rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    let kind = rustix::fs::FileType::from_raw_mode(stat.st_mode);
    let fits = match placeholder {
        Placeholder::Folder => {
            kind == rustix::fs::FileType::Directory
                && std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none())
        }
        Placeholder::File(bytes) => {
            kind == rustix::fs::FileType::RegularFile
                && u64::try_from(stat.st_size).ok() == u64::try_from(bytes.len()).ok()
        }
    };
    fits.then_some(stat.st_ino)
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

    /// One lock file per path, in `dir`.
    fn locks(dir: &Path) -> impl Fn(&Path) -> PathBuf + '_ {
        move |path: &Path| {
            dir.join(format!(
                "{}.lock",
                path.display().to_string().replace('/', "_")
            ))
        }
    }

    #[test]
    fn a_placeholder_stays_while_another_command_is_mounted_on_it_and_the_last_removes_it() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        let lock_dir = root.join("locks");
        std::fs::create_dir(&lock_dir).unwrap();
        let shared = root.join(".envrc");
        let own = root.join(".claude");
        // A makes `.envrc`; B (another session: a worktree, a shared added folder) is mounted
        // on the same path and makes `.claude`, then ends first.
        let a = Made::create(locks(&lock_dir), &[(shared.clone(), Placeholder::Folder)]).unwrap();
        let b = Made::create(
            locks(&lock_dir),
            &[
                (shared.clone(), Placeholder::Folder),
                (own.clone(), Placeholder::Folder),
            ],
        )
        .unwrap();
        drop(a);
        assert!(shared.is_dir(), "B is still mounted on it");
        drop(b);
        assert!(
            !shared.exists() && !own.exists(),
            "the last one out removes both"
        );
    }
}
