//! Confinement: every path a model or a skill names is resolved beneath one root folder by the
//! kernel, not checked and then opened. [`Beneath`] holds the root open and does all its work
//! through `cap-std` (on Linux `openat2` with `RESOLVE_BENEATH`; elsewhere a walk that opens one
//! component at a time without following links out), so no `..`, no link (dangling or not) and
//! no race between a check and an open leads outside. Writes are atomic: a temporary file in the
//! same folder, renamed over the name, which also leaves other hard links to the old file as
//! they were.
//!
//! The agent's file tools and Layer 3 ([`crate::resolve_in_skill`]) both go through here, with
//! one set of rules.

use std::io::{self, Read as _, Write as _};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

/// Why a confined operation failed; every message names the path as the caller showed it.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The path leads outside the root: `..`, an absolute path elsewhere, or a link out.
    #[error("{shown} leads outside {} (through `..`, an absolute path or a link); it is refused", root.display())]
    Outside {
        /// The path as shown.
        shown: String,
        /// The root.
        root: PathBuf,
    },
    /// A link whose target is missing or outside the root is not written through.
    #[error(
        "{shown} is a link to a missing file or to something outside {}; it is not written through",
        root.display()
    )]
    Link {
        /// The path as shown.
        shown: String,
        /// The root.
        root: PathBuf,
    },
    /// Not a regular file (a folder, a FIFO, a socket, a device).
    #[error("{shown} is {kind}, not a regular file")]
    NotFile {
        /// The path as shown.
        shown: String,
        /// What it is.
        kind: &'static str,
    },
    /// Over the caller's size limit.
    #[error("{shown} is {size} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// The path as shown.
        shown: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The operating system refused.
    #[error("{shown}: {source}")]
    Io {
        /// The path as shown.
        shown: String,
        /// What it said.
        source: io::Error,
    },
}

impl ConfineError {
    /// True when the path does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file written, relative to the root (a link inside the root is written through to
    /// its target).
    pub path: PathBuf,
    /// True when the file did not exist before.
    pub created: bool,
}

/// A root folder held open; every operation resolves its path beneath it.
#[derive(Debug)]
pub struct Beneath {
    root: PathBuf,
    dir: Dir,
}

/// Makes temporary names unique within the process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Beneath {
    /// Opens `root` (it must be a folder).
    pub fn open(root: &Path) -> io::Result<Self> {
        let dir = Dir::open_ambient_dir(root, ambient_authority())?;
        Ok(Self {
            root: root.to_path_buf(),
            dir,
        })
    }

    /// Opens `dir`, a folder beneath `outer` (both absolute), through the kernel beneath
    /// `outer`: a link on the way from `outer` to `dir` that leads out of `outer` (a folder
    /// swapped for `-> /etc`) is refused ([`ConfineError::Outside`]). Paths are then resolved
    /// beneath `dir`.
    pub fn open_within(outer: &Path, dir: &Path) -> Result<Self, ConfineError> {
        let shown = dir.display().to_string();
        let Ok(relative) = dir.strip_prefix(outer) else {
            return Err(ConfineError::Outside {
                shown,
                root: outer.to_path_buf(),
            });
        };
        let top = Self::open(outer).map_err(|source| ConfineError::Io {
            shown: outer.display().to_string(),
            source,
        })?;
        if relative.as_os_str().is_empty() {
            return Ok(Self {
                root: dir.to_path_buf(),
                dir: top.dir,
            });
        }
        let opened = top
            .dir
            .open_dir(relative)
            .map_err(|source| top.error(&shown, source))?;
        Ok(Self {
            root: dir.to_path_buf(),
            dir: opened,
        })
    }

    /// The folder held open, for walking it (every path still resolved beneath it).
    pub(crate) fn handle(&self) -> &Dir {
        &self.dir
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` (absolute and normalised) relative to the root, when it lies beneath it
    /// lexically; the kernel still checks every link when it is used.
    pub fn relative(&self, path: &Path) -> Option<PathBuf> {
        path.strip_prefix(&self.root).ok().map(Path::to_path_buf)
    }

    /// The metadata of `relative`, links inside the root followed.
    pub fn metadata(
        &self,
        relative: &Path,
        shown: &str,
    ) -> Result<cap_std::fs::Metadata, ConfineError> {
        self.dir
            .metadata(dot(relative))
            .map_err(|source| self.error(shown, source))
    }

    /// Opens a regular file for reading, with its metadata. FIFOs, sockets and devices (and
    /// links to them) are refused before they are opened (a FIFO's writer is never woken); one
    /// swapped in after that check is opened without blocking and refused after the open.
    fn open_regular(
        &self,
        relative: &Path,
        shown: &str,
    ) -> Result<(cap_std::fs::File, cap_std::fs::Metadata), ConfineError> {
        let not_file = |kind| ConfineError::NotFile {
            shown: shown.to_string(),
            kind,
        };
        let before = self
            .dir
            .metadata(dot(relative))
            .map_err(|source| self.error(shown, source))?;
        if !before.is_file() {
            return Err(not_file(kind_of(before.file_type())));
        }
        let mut options = OpenOptions::new();
        options.read(true);
        nonblocking(&mut options);
        let file = self
            .dir
            .open_with(dot(relative), &options)
            .map_err(|source| self.error(shown, source))?;
        let metadata = file
            .metadata()
            .map_err(|source| self.error(shown, source))?;
        if !metadata.is_file() {
            return Err(not_file(kind_of(metadata.file_type())));
        }
        Ok((file, metadata))
    }

    /// Reads a regular file of at most `limit` bytes ([`Beneath::open_regular`]'s rules).
    pub fn read(&self, relative: &Path, shown: &str, limit: u64) -> Result<Vec<u8>, ConfineError> {
        let (file, metadata) = self.open_regular(relative, shown)?;
        let too_large = |size| ConfineError::TooLarge {
            shown: shown.to_string(),
            size,
            limit,
        };
        if metadata.len() > limit {
            return Err(too_large(metadata.len()));
        }
        let mut bytes = Vec::new();
        file.into_std()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|source| self.error(shown, source))?;
        let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if read > limit {
            return Err(too_large(read));
        }
        Ok(bytes)
    }

    /// The entries of the folder `relative` (`.` for the root), at most `limit`: each name
    /// (lossy where it is not UTF-8) and whether it is a folder. Links are not followed.
    pub fn list(
        &self,
        relative: &Path,
        shown: &str,
        limit: usize,
    ) -> Result<Vec<(String, bool)>, ConfineError> {
        let folder = if relative.as_os_str().is_empty() {
            self.dir.try_clone()
        } else {
            self.dir.open_dir(relative)
        }
        .map_err(|source| self.error(shown, source))?;
        let mut entries = Vec::new();
        for entry in folder
            .entries()
            .map_err(|source| self.error(shown, source))?
            .take(limit)
        {
            let entry = entry.map_err(|source| self.error(shown, source))?;
            let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
            entries.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
        }
        Ok(entries)
    }

    /// The first `limit` bytes of a regular file (any size), and its size, with the rules of
    /// [`Beneath::read`]: for showing the start of a file that may be large.
    pub fn read_head(
        &self,
        relative: &Path,
        shown: &str,
        limit: u64,
    ) -> Result<(Vec<u8>, u64), ConfineError> {
        let (file, metadata) = self.open_regular(relative, shown)?;
        let mut bytes = Vec::new();
        file.into_std()
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|source| self.error(shown, source))?;
        Ok((bytes, metadata.len()))
    }

    /// Reads a regular file when it exists; `None` when it does not.
    pub fn read_if_exists(
        &self,
        relative: &Path,
        shown: &str,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, ConfineError> {
        match self.read(relative, shown, limit) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(error) if error.is_not_found() => match self.dir.symlink_metadata(dot(relative)) {
                // A dangling link is not "missing": writing through it is refused.
                Ok(_) => Err(ConfineError::Link {
                    shown: shown.to_string(),
                    root: self.root.clone(),
                }),
                Err(_) => Ok(None),
            },
            Err(error) => Err(error),
        }
    }

    /// Replaces (or creates) `relative` with `bytes` atomically, creating folders beneath the
    /// root as needed. A link inside the root is written through to its target; a link to a
    /// missing file or out of the root is refused. The old file's permissions are kept.
    pub fn write_atomic(
        &self,
        relative: &Path,
        shown: &str,
        bytes: &[u8],
    ) -> Result<Written, ConfineError> {
        let target = self.write_target(relative, shown)?;
        self.replace(&target, shown, bytes)
    }

    /// Replaces (or creates) `target` with `bytes` atomically, without following a link at its
    /// last component (one there is replaced, not written through: use [`Self::write_target`]
    /// first). Folders beneath the root are created as needed.
    pub fn replace(
        &self,
        target: &Path,
        shown: &str,
        bytes: &[u8],
    ) -> Result<Written, ConfineError> {
        let target = target.to_path_buf();
        let name = target.file_name().ok_or_else(|| ConfineError::NotFile {
            shown: shown.to_string(),
            kind: "a folder",
        })?;
        let parent_path = target.parent().unwrap_or_else(|| Path::new(""));
        if !parent_path.as_os_str().is_empty() {
            self.dir
                .create_dir_all(parent_path)
                .map_err(|source| self.error(shown, source))?;
        }
        let parent = self
            .dir
            .open_dir(dot(parent_path))
            .map_err(|source| self.error(shown, source))?;
        let old = match parent.symlink_metadata(name) {
            Ok(metadata) if metadata.is_file() => Some(metadata.permissions()),
            Ok(metadata) if metadata.is_dir() => {
                return Err(ConfineError::NotFile {
                    shown: shown.to_string(),
                    kind: "a folder",
                });
            }
            Ok(metadata) if metadata.is_symlink() => None,
            Ok(metadata) => {
                return Err(ConfineError::NotFile {
                    shown: shown.to_string(),
                    kind: kind_of(metadata.file_type()),
                });
            }
            Err(_) => None,
        };
        let temp = PathBuf::from(format!(
            ".{}.skillet-{}-{}.tmp",
            name.to_string_lossy(),
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut file =
                parent.open_with(&temp, OpenOptions::new().write(true).create_new(true))?;
            file.write_all(bytes)?;
            if let Some(permissions) = &old {
                file.set_permissions(permissions.clone())?;
            }
            file.sync_all()?;
            parent.rename(&temp, &parent, name)
        })();
        if let Err(source) = written {
            let _ = parent.remove_file(&temp);
            return Err(self.error(shown, source));
        }
        Ok(Written {
            path: target,
            created: old.is_none(),
        })
    }

    /// Removes a file (or a link, not what it points to) beneath the root.
    pub fn remove_file(&self, relative: &Path, shown: &str) -> Result<(), ConfineError> {
        self.dir
            .remove_file(relative)
            .map_err(|source| self.error(shown, source))
    }

    /// Where a write to `relative` lands, as a path beneath the root with every link inside the
    /// root resolved (in its folders and at its end), so checks by name see the real file: a
    /// folder linked to `.git` is `.git`. A link to a missing file or out of the root is refused.
    pub fn write_target(&self, relative: &Path, shown: &str) -> Result<PathBuf, ConfineError> {
        let link = || ConfineError::Link {
            shown: shown.to_string(),
            root: self.root.clone(),
        };
        match self.dir.symlink_metadata(dot(relative)) {
            Ok(metadata) if metadata.is_symlink() => {
                return self.real(relative).map_err(|_| link());
            }
            Ok(_) => {}
            Err(source) if source.kind() == io::ErrorKind::NotFound => {}
            Err(source) => return Err(self.error(shown, source)),
        }
        // Resolve the deepest folder that exists; what follows it does not exist yet.
        let mut existing = relative.parent();
        let mut rest: Vec<&std::ffi::OsStr> = relative.file_name().into_iter().collect();
        while let Some(folder) = existing {
            if folder.as_os_str().is_empty() {
                break;
            }
            match self.dir.symlink_metadata(folder) {
                Ok(_) => break,
                Err(source) if source.kind() == io::ErrorKind::NotFound => {
                    rest.extend(folder.file_name());
                    existing = folder.parent();
                }
                Err(source) => return Err(self.error(shown, source)),
            }
        }
        let mut target = match existing {
            Some(folder) if !folder.as_os_str().is_empty() => self
                .real(folder)
                .map_err(|source| self.error(shown, source))?,
            _ => PathBuf::new(),
        };
        target.extend(rest.iter().rev());
        Ok(target)
    }

    /// `relative` with every link resolved, beneath the root (the root itself is empty).
    fn real(&self, relative: &Path) -> io::Result<PathBuf> {
        let real = self.dir.canonicalize(relative)?;
        Ok(if real == Path::new(".") {
            PathBuf::new()
        } else {
            real
        })
    }

    fn error(&self, shown: &str, source: io::Error) -> ConfineError {
        // cap-std reports an escape as PermissionDenied "a path led outside of the filesystem";
        // the kernel's RESOLVE_BENEATH says EXDEV.
        let escaped = source.raw_os_error() == Some(EXDEV)
            || (source.kind() == io::ErrorKind::PermissionDenied
                && source.to_string().contains("outside"));
        if escaped {
            ConfineError::Outside {
                shown: shown.to_string(),
                root: self.root.clone(),
            }
        } else {
            ConfineError::Io {
                shown: shown.to_string(),
                source,
            }
        }
    }
}

/// `EXDEV`, what `openat2` answers for a path that leaves the root.
const EXDEV: i32 = 18;

/// An empty relative path means the root itself.
fn dot(relative: &Path) -> &Path {
    if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    }
}

#[cfg(unix)]
fn nonblocking(options: &mut OpenOptions) {
    use cap_std::fs::OpenOptionsExt as _;
    use rustix::fs::OFlags;
    options.custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits().cast_signed());
}

#[cfg(not(unix))]
fn nonblocking(_options: &mut OpenOptions) {}

/// A file type in words.
pub(crate) fn kind_of(file_type: cap_std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use cap_std::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    if file_type.is_dir() {
        "a folder"
    } else if file_type.is_symlink() {
        "a link"
    } else {
        "not a regular file"
    }
}

/// Removes `.` and resolves `..` lexically; `None` when `..` climbs above the start (for an
/// absolute path, above `/`).
pub fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_refuses_climbing_above_the_start() {
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d")),
            Some(PathBuf::from("/a/c/d"))
        );
        assert_eq!(normalize(Path::new("a/../..")), None);
        assert_eq!(normalize(Path::new("/..")), None);
        assert_eq!(normalize(Path::new("a/./b")), Some(PathBuf::from("a/b")));
    }

    #[cfg(unix)]
    #[test]
    fn writes_stay_beneath_the_root_whatever_the_links() {
        use std::os::unix::fs::symlink;
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("root");
        let outside = temp.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        symlink("../outside/planted.txt", root.join("dangling.md")).unwrap();
        symlink(&outside, root.join("out")).unwrap();
        std::fs::write(root.join("real.md"), "old").unwrap();
        symlink("real.md", root.join("inside.md")).unwrap();
        let beneath = Beneath::open(&root).unwrap();
        let error = beneath
            .write_atomic(Path::new("dangling.md"), "dangling.md", b"x")
            .unwrap_err();
        assert!(matches!(error, ConfineError::Link { .. }), "{error}");
        let error = beneath
            .write_atomic(Path::new("out/planted.txt"), "out/planted.txt", b"x")
            .unwrap_err();
        assert!(matches!(error, ConfineError::Outside { .. }), "{error}");
        assert!(!outside.join("planted.txt").exists());
        let written = beneath
            .write_atomic(Path::new("inside.md"), "inside.md", b"new")
            .unwrap();
        assert_eq!(written.path, PathBuf::from("real.md"));
        assert_eq!(
            std::fs::read_to_string(root.join("real.md")).unwrap(),
            "new"
        );
        assert!(
            std::fs::symlink_metadata(root.join("inside.md"))
                .unwrap()
                .is_symlink()
        );
        let written = beneath
            .write_atomic(Path::new("a/b/c.txt"), "a/b/c.txt", b"deep")
            .unwrap();
        assert!(written.created);
        // A folder linked inside the root resolves to its target, for checks by name.
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        symlink(".git", root.join("docs")).unwrap();
        assert_eq!(
            beneath
                .write_target(Path::new("docs/hooks/pre-commit"), "x")
                .unwrap(),
            PathBuf::from(".git/hooks/pre-commit")
        );
        assert_eq!(
            beneath
                .write_target(Path::new("docs/new/deeper/f"), "x")
                .unwrap(),
            PathBuf::from(".git/new/deeper/f")
        );
        assert_eq!(
            beneath.write_target(Path::new("fresh/f.txt"), "x").unwrap(),
            PathBuf::from("fresh/f.txt")
        );
        assert!(matches!(
            beneath.read(Path::new("../outside"), "../outside", 10),
            Err(ConfineError::Outside { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_hard_link_is_not_written_through_and_permissions_are_kept() {
        use std::os::unix::fs::PermissionsExt as _;
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        let outside = temp.path().join("victim.txt");
        std::fs::write(&outside, "victim").unwrap();
        std::fs::hard_link(&outside, root.join("link.txt")).unwrap();
        std::fs::set_permissions(
            root.join("link.txt"),
            std::fs::Permissions::from_mode(0o750),
        )
        .unwrap();
        let beneath = Beneath::open(&root).unwrap();
        let written = beneath
            .write_atomic(Path::new("link.txt"), "link.txt", b"mine")
            .unwrap();
        assert!(!written.created);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "victim");
        assert_eq!(
            std::fs::read_to_string(root.join("link.txt")).unwrap(),
            "mine"
        );
        let mode = std::fs::metadata(root.join("link.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o750);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let temp = tempfile::tempdir().unwrap();
        let fifo = temp.path().join("pipe");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let beneath = Beneath::open(temp.path()).unwrap();
        let error = beneath.read(Path::new("pipe"), "pipe", 100).unwrap_err();
        assert!(
            matches!(error, ConfineError::NotFile { kind: "a FIFO", .. }),
            "{error}"
        );
    }
}
