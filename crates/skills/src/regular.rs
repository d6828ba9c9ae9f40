//! Opening and reading files that a repository controls, so that none can hang or slow skillet.
//!
//! - Only regular files are opened. The type is checked without following the last link
//!   first (a link is resolved to its real path and that is checked), so FIFOs, sockets and
//!   devices, and links to them, are refused before any `open`.
//! - The open itself does not follow a link at the last component (the link, if any, was
//!   resolved and checked already), does not block (`O_NONBLOCK`: a FIFO swapped in between the
//!   check and the open cannot hang it) and never takes a terminal as controlling terminal.
//! - After the open, the type is checked again on the open file (`fstat`).
//! - Every read has a cap: at most the limit plus one byte is read, so "over the limit" is known
//!   without reading the rest.

use std::fs::{self, File, FileType};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use crate::error::Error;

/// A file type in words, for messages: "a FIFO", "a socket", "a device", "a folder".
pub(crate) fn describe(file_type: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
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
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "a file of unknown type"
    }
}

/// Opens `path` for reading when it is a regular file, or a link to one. Anything else is
/// [`Error::NotRegular`], found without opening it.
pub fn open_regular(path: &Path) -> Result<File, Error> {
    let io_error = |source| Error::io(path, source);
    let metadata = fs::symlink_metadata(path).map_err(io_error)?;
    let through_link = metadata.file_type().is_symlink();
    let (target, metadata): (PathBuf, _) = if through_link {
        let real = fs::canonicalize(path).map_err(io_error)?;
        let metadata = fs::symlink_metadata(&real).map_err(io_error)?;
        (real, metadata)
    } else {
        (path.to_path_buf(), metadata)
    };
    if !metadata.is_file() {
        return Err(Error::NotRegular {
            path: path.to_path_buf(),
            kind: describe(metadata.file_type()),
            through_link,
        });
    }
    let file = open_no_follow(&target).map_err(io_error)?;
    check_opened(file, path, through_link)
}

/// Opens `path` for reading without following a link at its last component, without blocking
/// and without taking a terminal. The caller checks the type (see [`check_opened`]).
pub(crate) fn open_no_follow(path: &Path) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(safe_open_flags().bits().cast_signed());
    }
    options.open(path)
}

/// The flags every read of a repository's file adds on Unix (`O_CLOEXEC` comes with `std`).
#[cfg(unix)]
pub(crate) fn safe_open_flags() -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY
}

/// `file` when it is a regular file (checked on the open file, so a swap after an earlier check
/// is seen); else [`Error::NotRegular`] naming `path`.
pub(crate) fn check_opened(file: File, path: &Path, through_link: bool) -> Result<File, Error> {
    let metadata = file.metadata().map_err(|source| Error::io(path, source))?;
    if metadata.is_file() {
        Ok(file)
    } else {
        Err(Error::NotRegular {
            path: path.to_path_buf(),
            kind: describe(metadata.file_type()),
            through_link,
        })
    }
}

/// Appends the file's bytes to `buffer` until it holds at most `limit` bytes. Returns true when
/// the file goes on past them (one byte more was read to know it, then dropped).
pub fn read_capped(file: &mut File, buffer: &mut Vec<u8>, limit: u64) -> io::Result<bool> {
    let held = u64::try_from(buffer.len()).unwrap_or(u64::MAX);
    let wanted = limit.saturating_sub(held).saturating_add(1);
    file.take(wanted).read_to_end(buffer)?;
    let keep = usize::try_from(limit).unwrap_or(usize::MAX);
    if buffer.len() > keep {
        buffer.truncate(keep);
        Ok(true)
    } else {
        Ok(false)
    }
}

/// The size the open file reports, for messages.
pub(crate) fn reported_size(file: &File) -> u64 {
    file.metadata().map_or(0, |metadata| metadata.len())
}

/// Reads a whole regular file of at most `limit` bytes as UTF-8, naming the file in every error.
pub(crate) fn read_text_capped(path: &Path, limit: u64) -> Result<String, Error> {
    let mut file = open_regular(path)?;
    let mut bytes = Vec::new();
    let over =
        read_capped(&mut file, &mut bytes, limit).map_err(|source| Error::io(path, source))?;
    if over {
        return Err(Error::FileTooLarge {
            path: path.to_path_buf(),
            size: reported_size(&file).max(limit.saturating_add(1)),
            limit,
        });
    }
    String::from_utf8(bytes).map_err(|error| Error::NotUtf8 {
        path: path.to_path_buf(),
        offset: error.utf8_error().valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_cap() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("f");
        std::fs::write(&path, "0123456789").unwrap();
        let mut file = open_regular(&path).unwrap();
        let mut bytes = b"ab".to_vec();
        assert!(read_capped(&mut file, &mut bytes, 5).unwrap());
        assert_eq!(bytes, b"ab012");
        let mut file = open_regular(&path).unwrap();
        let mut bytes = Vec::new();
        assert!(!read_capped(&mut file, &mut bytes, 10).unwrap());
        assert_eq!(bytes, b"0123456789");
        let error = read_text_capped(&path, 4).unwrap_err();
        assert!(
            matches!(
                error,
                Error::FileTooLarge {
                    size: 10,
                    limit: 4,
                    ..
                }
            ),
            "{error}"
        );
        assert_eq!(read_text_capped(&path, 10).unwrap(), "0123456789");
    }

    #[test]
    fn folders_are_not_regular_files() {
        let temp = tempfile::tempdir().unwrap();
        let error = open_regular(temp.path()).unwrap_err();
        assert!(
            matches!(
                error,
                Error::NotRegular {
                    kind: "a folder",
                    through_link: false,
                    ..
                }
            ),
            "{error}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn fifos_and_links_to_them_are_refused_without_opening() {
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
        std::os::unix::fs::symlink(&fifo, temp.path().join("link")).unwrap();
        let error = open_regular(&fifo).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{}: a FIFO, not a regular file", fifo.display())
        );
        let error = open_regular(&temp.path().join("link")).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("link: a link to a FIFO, not a regular file")
        );
        // Opened anyway (a swap after the check), it does not block and is refused after.
        let file = open_no_follow(&fifo).unwrap();
        assert!(check_opened(file, &fifo, false).is_err());
        // A link at the last component is not followed by the open itself.
        assert!(open_no_follow(&temp.path().join("link")).is_err());
    }
}
