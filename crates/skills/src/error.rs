//! The one error type of this crate; every variant names the file concerned.

use std::io;
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;

/// An error from the skills engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// A file is not UTF-8.
    #[error("{}: not valid UTF-8 (first bad byte at offset {offset})", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// A skill body is over [`crate::MAX_BODY_BYTES`].
    #[error(
        "{}: the skill file is {size} bytes, over the {limit}-byte limit for loading a skill; read parts of it with a file tool instead",
        path.display()
    )]
    BodyTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A file to read is not a regular file (a FIFO, a socket, a device, a folder), or is a link
    /// to one; it is never opened for reading, so it cannot block or stream without end.
    #[error(
        "{}: {}{kind}, not a regular file",
        path.display(),
        if *through_link { "a link to " } else { "" }
    )]
    NotRegular {
        /// The file, as it was named.
        path: PathBuf,
        /// What it is, in words ("a FIFO").
        kind: &'static str,
        /// True when `path` is a link and `kind` describes its target.
        through_link: bool,
    },
    /// A file is over a reading limit; only the limit (plus one byte) was read.
    #[error("{}: the file is over the {limit}-byte limit ({size} bytes); not read", path.display())]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, or a lower bound of it.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A path asked for inside a skill leaves the skill's folder.
    #[error(
        "{} is outside the skill folder {}; only files inside a skill's folder may be read through it",
        path.display(),
        dir.display()
    )]
    OutsideSkill {
        /// The path asked for.
        path: PathBuf,
        /// The skill's folder.
        dir: PathBuf,
    },
    /// A file asked for through a command (`.claude/commands/NAME.md`), which is one file with
    /// no folder of its own.
    #[error(
        "{} cannot be read through a command: a command is one file, with no files of its own",
        path.display()
    )]
    CommandHasNoFiles {
        /// The path asked for.
        path: PathBuf,
    },
    /// A skill file that now leads outside the root it was found under (a link swapped in
    /// since discovery); it is not read.
    #[error(
        "{} now leads outside the skills root {} (moved, or a link put in its place, since it was found); it is not read",
        path.display(),
        root.display()
    )]
    LeftRoot {
        /// The skill file.
        path: PathBuf,
        /// The root it was found under.
        root: PathBuf,
    },
    /// A scaffold target exists already.
    #[error("{} already exists; not overwriting it", path.display())]
    AlreadyExists {
        /// The path.
        path: PathBuf,
    },
    /// A skill name that breaks the naming rules.
    #[error("invalid skill name '{name}': {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// Which rule it breaks.
        reason: String,
    },
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The file or folder this error is about.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::Io { path, .. }
            | Self::NotUtf8 { path, .. }
            | Self::BodyTooLarge { path, .. }
            | Self::NotRegular { path, .. }
            | Self::FileTooLarge { path, .. }
            | Self::OutsideSkill { path, .. }
            | Self::CommandHasNoFiles { path }
            | Self::LeftRoot { path, .. }
            | Self::AlreadyExists { path } => Some(path),
            Self::InvalidName { .. } => None,
        }
    }

    /// This error as a diagnostic attached to its file.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let path = self.path().map(Path::to_path_buf).unwrap_or_default();
        let message = match self {
            Self::Io { source, .. } => source.to_string(),
            Self::NotUtf8 { offset, .. } => {
                format!("not valid UTF-8 (first bad byte at offset {offset}); skipped")
            }
            Self::NotRegular {
                kind, through_link, ..
            } => {
                let link = if *through_link { "a link to " } else { "" };
                format!("{link}{kind}, not a regular file; skipped")
            }
            Self::FileTooLarge { size, limit, .. } => {
                format!("the file is over the {limit}-byte limit ({size} bytes); skipped")
            }
            other => other.to_string(),
        };
        let diagnostic = Diagnostic::error(path, message);
        match self {
            Self::NotUtf8 { .. } => diagnostic.with_hint("save the file as UTF-8"),
            Self::NotRegular { .. } => diagnostic.with_hint(
                "skill files are read only from regular files; replace it with one, or remove it",
            ),
            _ => diagnostic,
        }
    }
}
