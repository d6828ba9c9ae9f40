//! Layer 3: a skill's own files, listed and read through the kernel beneath the root the skill
//! was found under, like its body. The skill's folder is opened beneath that root
//! ([`SkillFolder::open`]), never by its path alone: a folder swapped for a link out of the
//! root while it is served (`victim -> /etc`) is refused, not followed, whether a file is read
//! or the folder listed. Inside the folder, every path is resolved beneath it
//! ([`crate::confine`]).

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use crate::confine::{Beneath, ConfineError, kind_of, normalize};
use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::skill::{SKILL_FILE_NAMES, Skill};

/// How many of a skill's own files are listed when it loads.
pub const MAX_LISTED_FILES: usize = 50;
/// How many folder entries listing a skill's files reads at most, in all its folders; past it
/// the listing stops, and the count of files is a lower bound ("at least N more").
pub const MAX_LISTING_ENTRIES: usize = 2_000;
/// The largest skill file [`read_in_skill`] reads.
pub const MAX_SKILL_FILE_BYTES: u64 = 20 * 1024 * 1024;

/// Where a skill's files are: its folder, and the root it was found under, beneath which the
/// folder is opened.
#[derive(Debug, Clone, Copy)]
pub struct SkillFolder<'a> {
    root: &'a Path,
    dir: &'a Path,
    /// A command's folder: shared with other commands, so none of it is the command's own.
    command: bool,
}

impl<'a> SkillFolder<'a> {
    /// A found skill's folder, opened beneath its root. A command ([`crate::Form::Command`])
    /// has none of its own: it lists no files and reads none.
    pub fn of(skill: &'a Skill) -> Self {
        Self {
            root: &skill.root,
            dir: &skill.dir,
            command: skill.is_command(),
        }
    }

    /// A folder that is its own root (one the caller made, or a test's): opened by its path.
    pub fn alone(dir: &'a Path) -> Self {
        Self {
            root: dir,
            dir,
            command: false,
        }
    }

    /// The folder, as found.
    pub fn dir(&self) -> &'a Path {
        self.dir
    }

    /// The folder held open, opened beneath the root: a link on the way that leads out of the
    /// root is refused.
    pub fn open(&self) -> Result<Beneath, Error> {
        Beneath::open_within(self.root, self.dir).map_err(|error| match error {
            ConfineError::Outside { .. } | ConfineError::Link { .. } => Error::LeftRoot {
                path: self.dir.to_path_buf(),
                root: self.root.to_path_buf(),
            },
            ConfineError::Io { source, .. } => Error::io(self.dir, source),
            ConfineError::NotFile { .. } | ConfineError::TooLarge { .. } => Error::io(
                self.dir,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, error.to_string()),
            ),
        })
    }
}

impl<'a> From<&'a Skill> for SkillFolder<'a> {
    fn from(skill: &'a Skill) -> Self {
        Self::of(skill)
    }
}

impl<'a> From<&'a Path> for SkillFolder<'a> {
    fn from(dir: &'a Path) -> Self {
        Self::alone(dir)
    }
}

impl<'a> From<&'a PathBuf> for SkillFolder<'a> {
    fn from(dir: &'a PathBuf) -> Self {
        Self::alone(dir)
    }
}

/// A skill's own files, as listed when it loads ([`skill_files`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillFiles {
    /// Paths relative to the skill's folder, `/`-separated, sorted: at most
    /// [`MAX_LISTED_FILES`], the first met in a walk in name order.
    pub files: Vec<String>,
    /// How many files were counted in all (`files` included).
    pub total: usize,
    /// False when the walk stopped at [`MAX_LISTING_ENTRIES`]: `total` is then a lower bound.
    pub complete: bool,
    /// Entries left out that are worth a word: FIFOs, sockets, devices and links to them,
    /// folders that could not be read, a folder that left its root.
    pub diagnostics: Vec<Diagnostic>,
}

/// The skill's own files, relative to its folder, sorted, at most [`MAX_LISTED_FILES`], and how
/// many there are in all (a lower bound when the listing stopped at [`MAX_LISTING_ENTRIES`]).
/// See [`skill_files`].
pub fn list_skill_files<'a>(folder: impl Into<SkillFolder<'a>>) -> (Vec<String>, usize) {
    let listing = skill_files(folder);
    (listing.files, listing.total)
}

/// One folder being listed: its path relative to the skill, and its entries not yet visited, in
/// reverse name order (so the next is popped from the end).
struct Frame {
    relative: PathBuf,
    entries: Vec<(OsString, cap_std::fs::FileType)>,
}

/// Lists a skill's own files without reading any. The skill file, hidden entries, links that
/// leave the folder, and anything but regular files (FIFOs, sockets, devices, and links to them)
/// are left out. The walk goes depth first in name order, through the folder held open beneath
/// its root; it reads at most [`MAX_LISTING_ENTRIES`] entries, keeps the first
/// [`MAX_LISTED_FILES`] files and only counts the rest. Links inside the folder are followed,
/// but each real folder is walked once, so a link loop ends.
pub fn skill_files<'a>(folder: impl Into<SkillFolder<'a>>) -> SkillFiles {
    skill_files_up_to(folder, MAX_LISTED_FILES)
}

/// [`skill_files`], keeping up to `max_files` paths instead of [`MAX_LISTED_FILES`] (a manifest
/// of every file needs them all; the walk still reads at most [`MAX_LISTING_ENTRIES`] entries).
pub fn skill_files_up_to<'a>(folder: impl Into<SkillFolder<'a>>, max_files: usize) -> SkillFiles {
    let folder = folder.into();
    let dir = folder.dir();
    let mut listing = SkillFiles {
        complete: true,
        ..SkillFiles::default()
    };
    if folder.command {
        return listing;
    }
    let top = match folder.open() {
        Ok(top) => top,
        Err(error) => {
            listing.diagnostics.push(error.to_diagnostic());
            return listing;
        }
    };
    let top = top.handle();
    let mut visited = HashSet::new();
    let mut budget = MAX_LISTING_ENTRIES;
    let mut stack = Vec::new();
    if let Ok(metadata) = top.dir_metadata() {
        visited.insert(folder_id(&metadata));
    }
    if let Some(frame) = read_folder(top, PathBuf::new(), dir, &mut budget, &mut listing) {
        stack.push(frame);
    }
    while let Some(frame) = stack.last_mut() {
        let Some((name, file_type)) = frame.entries.pop() else {
            stack.pop();
            continue;
        };
        let relative = frame.relative.join(&name);
        let at_top = frame.relative.as_os_str().is_empty();
        if not_the_skills(&name) {
            continue;
        }
        let (real, kind, through_link) = if file_type.is_symlink() {
            // Resolved beneath the folder: a link out of it fails here.
            let real = match top.canonicalize(&relative) {
                Ok(real) => real,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => {
                    listing.diagnostics.push(Diagnostic::warning(
                        dir.join(&relative),
                        "a link that leads out of the skill's folder; not listed, never read through",
                    ));
                    continue;
                }
            };
            // A link to a hidden file or folder inside the skill (`docs -> .git`) is that
            // hidden entry under another name: left out like it.
            if real
                .components()
                .any(|part| part.as_os_str().as_encoded_bytes().first() == Some(&b'.'))
                && real != Path::new(".")
            {
                continue;
            }
            let Ok(metadata) = top.metadata(&real) else {
                continue;
            };
            (real, metadata.file_type(), true)
        } else {
            (relative.clone(), file_type, false)
        };
        if kind.is_dir() {
            let Ok(metadata) = top.metadata(dot(&real)) else {
                continue;
            };
            if !visited.insert(folder_id(&metadata)) {
                continue; // walked already: a link loop, or a second link to it
            }
            if budget == 0 {
                // Not read: the entries already read are still counted.
                listing.complete = false;
                continue;
            }
            if let Some(frame) = read_folder(top, relative, dir, &mut budget, &mut listing) {
                stack.push(frame);
            }
        } else if kind.is_file() {
            let name_text = name.to_string_lossy();
            if at_top && SKILL_FILE_NAMES.contains(&name_text.as_ref()) {
                continue;
            }
            listing.total += 1;
            if listing.files.len() < max_files {
                listing
                    .files
                    .push(relative.to_string_lossy().replace('\\', "/"));
            }
        } else {
            listing.diagnostics.push(Diagnostic::warning(
                dir.join(&relative),
                format!(
                    "{}{}, not a regular file; not listed",
                    if through_link { "a link to " } else { "" },
                    kind_of(kind)
                ),
            ));
        }
    }
    listing.files.sort();
    listing
}

/// Hidden entries, and what discovery never enters (`node_modules`): not the skill's files.
fn not_the_skills(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
        || crate::discover::ALWAYS_SKIPPED
            .iter()
            .any(|skipped| name == *skipped)
}

/// Reads a folder's entries (through `top`, beneath it), at most `budget` of them (spent), in
/// reverse name order. Marks the listing incomplete when the budget ran out before the folder
/// did.
fn read_folder(
    top: &Dir,
    relative: PathBuf,
    dir: &Path,
    budget: &mut usize,
    listing: &mut SkillFiles,
) -> Option<Frame> {
    let reader = match top.read_dir(dot(&relative)) {
        Ok(reader) => reader,
        Err(error) => {
            listing.diagnostics.push(Diagnostic::warning(
                dir.join(&relative),
                format!("cannot read folder: {error}"),
            ));
            return None;
        }
    };
    let mut entries = Vec::new();
    for entry in reader {
        if *budget == 0 {
            listing.complete = false;
            break;
        }
        *budget -= 1;
        let Ok(entry) = entry else {
            continue;
        };
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        entries.push((entry.file_name(), file_type));
    }
    entries.sort_unstable_by(|a, b| b.0.cmp(&a.0));
    Some(Frame { relative, entries })
}

/// What identifies a folder, however it is reached: its device and inode.
#[cfg(unix)]
fn folder_id(metadata: &cap_std::fs::Metadata) -> (u64, u64) {
    use cap_std::fs::MetadataExt as _;
    (metadata.dev(), metadata.ino())
}

#[cfg(not(unix))]
fn folder_id(metadata: &cap_std::fs::Metadata) -> (u64, u64) {
    // Without inodes, a loop is still cut by the entry budget.
    let _ = metadata;
    (0, 0)
}

/// An empty relative path means the folder itself.
fn dot(relative: &Path) -> &Path {
    if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    }
}

/// Layer 3: resolves `requested` (relative to the skill's folder, or absolute) to a path inside
/// the skill's folder that exists there. Anything that leaves it (`..`, an absolute path
/// elsewhere, a link out) is refused; the kernel resolves the links ([`crate::confine`]). The
/// path returned is for showing: read through [`read_in_skill`], which resolves it again
/// beneath the folder, so a link swapped in between cannot lead out.
pub fn resolve_in_skill<'a>(
    folder: impl Into<SkillFolder<'a>>,
    requested: &Path,
) -> Result<PathBuf, Error> {
    let folder = folder.into();
    let (beneath, relative) = beneath_skill(folder, requested)?;
    beneath
        .metadata(&relative, &requested.display().to_string())
        .map_err(|error| confine_error(folder.dir(), requested, error))?;
    Ok(folder.dir().join(relative))
}

/// Layer 3: reads a regular file inside the skill's folder (at most
/// [`MAX_SKILL_FILE_BYTES`]), with the rules of [`resolve_in_skill`].
pub fn read_in_skill<'a>(
    folder: impl Into<SkillFolder<'a>>,
    requested: &Path,
) -> Result<Vec<u8>, Error> {
    let folder = folder.into();
    let (beneath, relative) = beneath_skill(folder, requested)?;
    beneath
        .read(
            &relative,
            &requested.display().to_string(),
            MAX_SKILL_FILE_BYTES,
        )
        .map_err(|error| confine_error(folder.dir(), requested, error))
}

/// Layer 3 for a file that may be large: its first `limit` bytes and its size, with the rules of
/// [`resolve_in_skill`].
pub fn read_head_in_skill<'a>(
    folder: impl Into<SkillFolder<'a>>,
    requested: &Path,
    limit: u64,
) -> Result<(Vec<u8>, u64), Error> {
    let folder = folder.into();
    let (beneath, relative) = beneath_skill(folder, requested)?;
    beneath
        .read_head(&relative, &requested.display().to_string(), limit)
        .map_err(|error| confine_error(folder.dir(), requested, error))
}

fn beneath_skill(folder: SkillFolder<'_>, requested: &Path) -> Result<(Beneath, PathBuf), Error> {
    let skill_dir = folder.dir();
    let outside = || Error::OutsideSkill {
        path: requested.to_path_buf(),
        dir: skill_dir.to_path_buf(),
    };
    if folder.command {
        return Err(Error::CommandHasNoFiles {
            path: requested.to_path_buf(),
        });
    }
    let joined = skill_dir.join(requested);
    let normalized = normalize(&joined).ok_or_else(outside)?;
    let beneath = folder.open()?;
    let relative = if let Some(relative) = beneath.relative(&normalized) {
        relative
    } else {
        // An absolute path through the folder's real location (its links resolved).
        let real =
            std::fs::canonicalize(skill_dir).map_err(|source| Error::io(skill_dir, source))?;
        normalized
            .strip_prefix(&real)
            .map(Path::to_path_buf)
            .map_err(|_| outside())?
    };
    Ok((beneath, relative))
}

fn confine_error(skill_dir: &Path, requested: &Path, error: ConfineError) -> Error {
    match error {
        ConfineError::Outside { .. } | ConfineError::Link { .. } => Error::OutsideSkill {
            path: requested.to_path_buf(),
            dir: skill_dir.to_path_buf(),
        },
        ConfineError::Io { source, .. } => Error::io(&skill_dir.join(requested), source),
        ConfineError::NotFile { kind, .. } => Error::NotRegular {
            path: skill_dir.join(requested),
            kind,
            through_link: false,
        },
        ConfineError::TooLarge { size, limit, .. } => Error::FileTooLarge {
            path: skill_dir.join(requested),
            size,
            limit,
        },
    }
}
