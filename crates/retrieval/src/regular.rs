//! Opening the cache's and the model's files without ever blocking on a FIFO or a device, and
//! (for the files skillet itself writes) without following a link planted in their place.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Opens `path` with `options`, then checks that what was opened is a regular file. On unix the
/// open does not block (`O_NONBLOCK`: a FIFO would wait for a writer) and, unless `follow`, does
/// not follow a link at the end of the path (`O_NOFOLLOW`).
pub(crate) fn open(path: &Path, options: &mut OpenOptions, follow: bool) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        let mut flags = rustix::fs::OFlags::NONBLOCK;
        if !follow {
            flags |= rustix::fs::OFlags::NOFOLLOW;
        }
        options.custom_flags(i32::try_from(flags.bits()).unwrap_or(0));
    }
    #[cfg(not(unix))]
    let _ = follow;
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    // Reads are blocking again from here (a regular file never waits anyway).
    #[cfg(unix)]
    rustix::fs::fcntl_setfl(&file, rustix::fs::OFlags::empty())?;
    Ok(file)
}

/// Opens a regular file to read, following links (the model's files are links into the hub's
/// blob store).
#[cfg(feature = "embeddings")]
pub(crate) fn open_read(path: &Path) -> io::Result<File> {
    open(path, OpenOptions::new().read(true), true)
}

#[cfg(all(test, unix, feature = "embeddings"))]
mod tests {
    use super::*;

    #[test]
    fn fifos_are_refused_without_blocking_and_links_only_when_asked() {
        let temp = tempfile::tempdir().unwrap();
        let fifo = temp.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let error = open_read(&fifo).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        let file = temp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(open_read(&link).is_ok());
        assert!(open(&link, OpenOptions::new().read(true), false).is_err());
    }
}

/// Fills `bytes` from `file` at `offset`, leaving the file's position as it was (the kept
/// index's files are read this way, here and in `skillet-library`).
pub fn read_at(file: &File, bytes: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt as _;
        file.read_exact_at(bytes, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt as _;
        let mut done = 0;
        while done < bytes.len() {
            let read = file.seek_read(&mut bytes[done..], offset + done as u64)?;
            if read == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            done += read;
        }
        Ok(())
    }
}
