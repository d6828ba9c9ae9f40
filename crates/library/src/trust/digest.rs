//! Digests trust pins: a skill's folder (every entry, hidden ones included), a command's file, a
//! folder of scripts, a file's bytes.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use skillet_skills::Skill;

use super::{MAX_PINNED_BYTES, MAX_PINNED_DEPTH, MAX_PINNED_FILES};

/// The digest of a skill's folder: every entry beneath it (hidden ones included), in name
/// order, each by its raw name bytes and kind; a file's bytes, a link's target. `None` when the
/// folder has a link leading out of it, more than [`MAX_PINNED_FILES`] entries, more than
/// [`MAX_PINNED_BYTES`] bytes, a folder deeper than [`MAX_PINNED_DEPTH`], or cannot be read.
pub fn skill_digest(skill: &Skill) -> Option<String> {
    digest_reading(skill).map(|(digest, _)| digest)
}

/// [`skill_digest`], and the bytes of the skill's `SKILL.md` as the digest read them.
pub(super) fn digest_reading(skill: &Skill) -> Option<(String, Option<Vec<u8>>)> {
    if skill.is_command() {
        // A command is its file alone (its folder holds other commands): one read, digested
        // as a file entry is.
        // A link leading out of the commands folder cannot be pinned, as in a skill's folder.
        let real = std::fs::canonicalize(&skill.file).ok()?;
        if !real.starts_with(std::fs::canonicalize(&skill.root).ok()?) {
            return None;
        }
        let mut file = skillet_skills::open_regular(&real).ok()?;
        let mut bytes = Vec::new();
        if skillet_skills::read_capped(&mut file, &mut bytes, MAX_PINNED_BYTES).ok()? {
            return None;
        }
        let mut hasher = Sha256::new();
        hasher.update(b"command");
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
        return Some((hex(&hasher.finalize()), Some(bytes)));
    }
    let root = std::fs::canonicalize(&skill.dir).ok()?;
    let mut walk = PinWalk {
        root: root.clone(),
        hasher: Sha256::new(),
        entries: 0,
        budget: MAX_PINNED_BYTES,
        skill_md: std::fs::canonicalize(&skill.file).ok(),
        read: None,
    };
    walk.folder(&root, 0)?;
    Some((hex(&walk.hasher.finalize()), walk.read))
}

/// The digest of a folder as a skill's folder is pinned (every entry, hidden ones included,
/// with a link's target); `None` when it cannot be pinned: a link leading out of it, more than
/// [`MAX_PINNED_FILES`] entries, [`MAX_PINNED_BYTES`] bytes or [`MAX_PINNED_DEPTH`] levels, or
/// unreadable.
pub fn folder_digest(dir: &Path) -> Option<String> {
    let root = std::fs::canonicalize(dir).ok()?;
    let mut walk = PinWalk {
        root: root.clone(),
        hasher: Sha256::new(),
        entries: 0,
        budget: MAX_PINNED_BYTES,
        skill_md: None,
        read: None,
    };
    walk.folder(&root, 0)?;
    Some(hex(&walk.hasher.finalize()))
}

/// One digest being taken.
struct PinWalk {
    root: PathBuf,
    hasher: Sha256,
    entries: usize,
    budget: u64,
    /// The skill's `SKILL.md` (canonical), whose bytes are kept as read.
    skill_md: Option<PathBuf>,
    read: Option<Vec<u8>>,
}

impl PinWalk {
    fn folder(&mut self, dir: &Path, depth: usize) -> Option<()> {
        if depth > MAX_PINNED_DEPTH {
            return None;
        }
        // No more entries are read than may be pinned: a folder of millions ends here.
        let room = MAX_PINNED_FILES.saturating_sub(self.entries) + 1;
        let mut entries: Vec<(std::ffi::OsString, std::fs::FileType)> = std::fs::read_dir(dir)
            .ok()?
            .take(room)
            .map(|entry| {
                entry
                    .ok()
                    .and_then(|e| Some((e.file_name(), e.file_type().ok()?)))
            })
            .collect::<Option<Vec<_>>>()?;
        entries.sort_by(|a, b| a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes()));
        for (name, kind) in entries {
            self.entries += 1;
            if self.entries > MAX_PINNED_FILES {
                return None;
            }
            let path = dir.join(&name);
            let relative = path
                .strip_prefix(&self.root)
                .ok()?
                .as_os_str()
                .as_encoded_bytes();
            let tag: &[u8] = if kind.is_symlink() {
                b"l"
            } else if kind.is_dir() {
                b"d"
            } else if kind.is_file() {
                b"f"
            } else {
                b"o"
            };
            self.hasher.update(tag);
            self.hasher.update((relative.len() as u64).to_le_bytes());
            self.hasher.update(relative);
            if kind.is_symlink() {
                // A link is pinned by its target; one leading out cannot be pinned at all.
                let real = std::fs::canonicalize(&path).ok()?;
                if !real.starts_with(&self.root) {
                    return None;
                }
                let target = std::fs::read_link(&path).ok()?;
                let target = target.as_os_str().as_encoded_bytes();
                self.hasher.update((target.len() as u64).to_le_bytes());
                self.hasher.update(target);
            } else if kind.is_dir() {
                self.folder(&path, depth + 1)?;
            } else if kind.is_file() {
                let mut file = skillet_skills::open_regular(&path).ok()?;
                let mut bytes = Vec::new();
                if skillet_skills::read_capped(&mut file, &mut bytes, self.budget).ok()? {
                    return None;
                }
                self.budget -= bytes.len() as u64;
                self.hasher.update((bytes.len() as u64).to_le_bytes());
                self.hasher.update(&bytes);
                if self.skill_md.as_deref() == Some(path.as_path()) {
                    self.read = Some(bytes);
                }
            }
        }
        Some(())
    }
}

/// The digest of one regular file.
/// The digest of bytes as a file's is pinned (SHA-256, hex).
pub fn digest_of(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub(super) fn file_digest(path: &Path) -> std::io::Result<String> {
    let mut file = skillet_skills::open_regular(path).map_err(std::io::Error::other)?;
    let mut hasher = Sha256::new();
    let mut buffer = [0u8; 8192];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(7 + bytes.len() * 2);
    text.push_str("sha256:");
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}
