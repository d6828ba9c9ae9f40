//! A skill's folder as the registry stores it: its files by relative path, and the content hash
//! that names a version.
//!
//! The hash takes every field length-prefixed and the paths sorted by their bytes, so no two
//! different folders share one (unlike a plain concatenation of path and content) and the order
//! never depends on a locale. Hidden entries (`.git`, `.env`, editor files) are left out of what
//! is published, and said so; a link or a special file refuses the publish, since the registry
//! cannot give it back the same.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The most files a published skill may have.
pub const MAX_BUNDLE_FILES: usize = 512;
/// The most bytes a published skill's files may hold together.
pub const MAX_BUNDLE_BYTES: u64 = 32 * 1024 * 1024;
/// The deepest folder in a published skill (the skill's own folder is 0).
pub const MAX_BUNDLE_DEPTH: usize = 16;
/// The longest relative path in a published skill, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;

/// What the content hash starts with: the encoding's version.
const HASH_DOMAIN: &[u8] = b"skillet-skill-v1\n";

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFile {
    /// The path below the skill's folder, `/`-separated.
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Whether it is executable (a script).
    pub executable: bool,
}

impl BundleFile {
    /// The SHA-256 of its bytes.
    pub fn sha256(&self) -> [u8; 32] {
        Sha256::digest(&self.bytes).into()
    }
}

/// A skill's files, sorted by path bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    files: Vec<BundleFile>,
    /// Hidden entries left out, relative paths.
    pub skipped: Vec<String>,
}

/// Why a folder cannot be published or a fetched skill cannot be installed.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// A file or folder could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The system's words.
        source: std::io::Error,
    },
    /// A link, a FIFO, a socket or a device.
    #[error("{} is {kind}: a published skill holds only files and folders", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// A name that is not UTF-8.
    #[error("{}: the name is not UTF-8, which the registry cannot store", path.display())]
    NotUtf8 {
        /// The path.
        path: PathBuf,
    },
    /// Over one of the limits.
    #[error("{}: {what} (the limit is {limit})", path.display())]
    TooLarge {
        /// The skill's folder or the file.
        path: PathBuf,
        /// What went over.
        what: String,
        /// The limit, in words.
        limit: String,
    },
    /// A path a registry gave that may not be written (absolute, `..`, hidden, too long).
    #[error("the registry gave the path {path:?}, which a skill may not have: {why}")]
    BadPath {
        /// The path as given.
        path: String,
        /// Why not.
        why: &'static str,
    },
    /// No skill file.
    #[error("{}: no SKILL.md in this folder", path.display())]
    NoSkillFile {
        /// The folder.
        path: PathBuf,
    },
}

impl Bundle {
    /// The files of the skill in `dir` (hidden entries skipped, listed in `skipped`).
    pub fn read(dir: &Path) -> Result<Self, BundleError> {
        let mut walk = Walk {
            root: dir.to_path_buf(),
            files: Vec::new(),
            skipped: Vec::new(),
            bytes: 0,
        };
        walk.folder(dir, 0)?;
        check_collisions(&walk.files).map_err(|(path, why)| BundleError::TooLarge {
            path: dir.join(path),
            what: why.into(),
            limit: "one file per name, whatever the case".into(),
        })?;
        let bundle = Self::new(walk.files, walk.skipped);
        if bundle.skill_file().is_none() {
            return Err(BundleError::NoSkillFile {
                path: dir.to_path_buf(),
            });
        }
        Ok(bundle)
    }

    /// A bundle of files given (a fetched version): every path checked, sorted.
    pub fn from_files(files: Vec<BundleFile>) -> Result<Self, BundleError> {
        for file in &files {
            check_path(&file.path).map_err(|why| BundleError::BadPath {
                path: file.path.clone(),
                why,
            })?;
        }
        check_collisions(&files).map_err(|(path, why)| BundleError::BadPath { path, why })?;
        Ok(Self::new(files, Vec::new()))
    }

    fn new(mut files: Vec<BundleFile>, skipped: Vec<String>) -> Self {
        files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        Self { files, skipped }
    }

    /// The files, sorted by path bytes.
    pub fn files(&self) -> &[BundleFile] {
        &self.files
    }

    /// `SKILL.md` (or `skill.md`).
    pub fn skill_file(&self) -> Option<&BundleFile> {
        ["SKILL.md", "skill.md"]
            .iter()
            .find_map(|name| self.files.iter().find(|file| file.path == *name))
    }

    /// The bytes of all files.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|file| file.bytes.len() as u64).sum()
    }

    /// The content hash: SHA-256 over a version tag, the file count, and for each file in path
    /// byte order its path (length-prefixed), whether it is executable, and its bytes' SHA-256.
    pub fn content_hash(&self) -> [u8; 32] {
        let entries: Vec<(&str, bool, [u8; 32])> = self
            .files
            .iter()
            .map(|file| (file.path.as_str(), file.executable, file.sha256()))
            .collect();
        content_hash(&entries)
    }

    /// Writes the files into `dir` (open, and empty), beneath it by the kernel: no path of
    /// theirs, and no link made meanwhile, leads out. Executable ones get mode 755.
    pub fn write_into(&self, dir: &cap_std::fs::Dir) -> std::io::Result<()> {
        for file in &self.files {
            let path = Path::new(&file.path);
            if let Some(parent) = path.parent()
                && !parent.as_os_str().is_empty()
            {
                dir.create_dir_all(parent)?;
            }
            // Never over a file written before: a collision is an error, not a silent swap.
            let mut options = cap_std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            let mut out = dir.open_with(path, &options)?;
            std::io::Write::write_all(&mut out, &file.bytes)?;
            #[cfg(unix)]
            if file.executable {
                use std::os::unix::fs::PermissionsExt;
                out.set_permissions(cap_std::fs::Permissions::from_std(
                    std::fs::Permissions::from_mode(0o755),
                ))?;
            }
        }
        Ok(())
    }

    /// Writes the files under `dir` (which exists and is empty), executable ones with mode 755.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<()> {
        for file in &self.files {
            let path = dir.join(&file.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            // Never over a file written before: a collision is an error, not a silent swap.
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)?;
            std::io::Write::write_all(&mut out, &file.bytes)?;
            if file.executable {
                set_executable(&path)?;
            }
        }
        Ok(())
    }
}

/// The content hash of files given as (path, executable, SHA-256 of the bytes), sorted by
/// path bytes here whatever order they come in.
pub fn content_hash(entries: &[(&str, bool, [u8; 32])]) -> [u8; 32] {
    let mut sorted: Vec<&(&str, bool, [u8; 32])> = entries.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hasher = Sha256::new();
    hasher.update(HASH_DOMAIN);
    hasher.update((sorted.len() as u64).to_le_bytes());
    for (path, executable, digest) in sorted {
        hasher.update((path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update([u8::from(*executable)]);
        hasher.update(digest);
    }
    hasher.finalize().into()
}

/// Whether a relative path may be part of a skill: `/`-separated, no empty, `.`, `..` or
/// hidden component, no backslash or control character, not too long.
pub fn check_path(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("it is empty");
    }
    if path.len() > MAX_PATH_BYTES {
        return Err("it is too long");
    }
    if path.starts_with('/') {
        return Err("it is absolute");
    }
    if path.chars().any(|c| c == '\\' || c.is_control()) {
        return Err("it has a backslash or a control character");
    }
    for component in path.split('/') {
        if component.is_empty() {
            return Err("it has an empty component");
        }
        if component == ".." || component == "." {
            return Err("it leaves or names its folder");
        }
        if component.starts_with('.') {
            return Err("it has a hidden component");
        }
    }
    if path.split('/').count() > MAX_BUNDLE_DEPTH + 1 {
        return Err("it is too deep");
    }
    Ok(())
}

/// Fails on two paths that one file system could take for the same file (they differ only in
/// case: `SKILL.md` and `skill.md` on macOS or Windows), or on a path that is also a folder:
/// the second would overwrite the first, and what was verified would not be what is there.
fn check_collisions(files: &[BundleFile]) -> Result<(), (String, &'static str)> {
    let mut seen = std::collections::HashSet::new();
    let folders: std::collections::HashSet<String> = files
        .iter()
        .flat_map(|file| {
            let lower = file.path.to_lowercase();
            let parts: Vec<&str> = lower.split('/').collect();
            (1..parts.len())
                .map(|n| parts[..n].join("/"))
                .collect::<Vec<_>>()
        })
        .collect();
    for file in files {
        let lower = file.path.to_lowercase();
        if folders.contains(&lower) {
            return Err((file.path.clone(), "it is both a file and a folder"));
        }
        if !seen.insert(lower) {
            return Err((
                file.path.clone(),
                "another file has the same name but for case",
            ));
        }
    }
    Ok(())
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// Bytes from lower-case or upper-case hex; `None` when it is not.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

struct Walk {
    root: PathBuf,
    files: Vec<BundleFile>,
    skipped: Vec<String>,
    bytes: u64,
}

impl Walk {
    fn folder(&mut self, dir: &Path, depth: usize) -> Result<(), BundleError> {
        let read = |source| BundleError::Read {
            path: dir.to_path_buf(),
            source,
        };
        if depth > MAX_BUNDLE_DEPTH {
            return Err(BundleError::TooLarge {
                path: dir.to_path_buf(),
                what: "folders nested too deep".into(),
                limit: format!("{MAX_BUNDLE_DEPTH} levels"),
            });
        }
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(read)? {
            let entry = entry.map_err(read)?;
            entries.push((entry.file_name(), entry.file_type().map_err(read)?));
            if entries.len() > MAX_BUNDLE_FILES {
                return Err(BundleError::TooLarge {
                    path: dir.to_path_buf(),
                    what: "too many entries in one folder".into(),
                    limit: format!("{MAX_BUNDLE_FILES} entries"),
                });
            }
        }
        entries.sort_by(|a, b| a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes()));
        for (name, kind) in entries {
            let path = dir.join(&name);
            let Some(name) = name.to_str() else {
                return Err(BundleError::NotUtf8 { path });
            };
            let relative = relative(&self.root, &path);
            if name.starts_with('.') {
                self.skipped.push(relative);
                continue;
            }
            if kind.is_dir() {
                self.folder(&path, depth + 1)?;
            } else if kind.is_file() {
                self.file(&path, relative)?;
            } else {
                let kind = if kind.is_symlink() {
                    "a symbolic link"
                } else {
                    "not a regular file"
                };
                return Err(BundleError::NotRegular { path, kind });
            }
        }
        Ok(())
    }

    fn file(&mut self, path: &Path, relative: String) -> Result<(), BundleError> {
        if self.files.len() >= MAX_BUNDLE_FILES {
            return Err(BundleError::TooLarge {
                path: self.root.clone(),
                what: "too many files".into(),
                limit: format!("{MAX_BUNDLE_FILES} files"),
            });
        }
        if let Err(why) = check_path(&relative) {
            return Err(BundleError::TooLarge {
                path: path.to_path_buf(),
                what: format!("a path the registry cannot hold ({why})"),
                limit: format!("{MAX_PATH_BYTES} bytes, {MAX_BUNDLE_DEPTH} levels"),
            });
        }
        let read = |source| BundleError::Read {
            path: path.to_path_buf(),
            source,
        };
        let file = skillet_skills::open_regular(path).map_err(|error| BundleError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::other(error.to_string()),
        })?;
        let executable = is_executable(&file.metadata().map_err(read)?);
        let room = MAX_BUNDLE_BYTES - self.bytes;
        let mut bytes = Vec::new();
        file.take(room + 1).read_to_end(&mut bytes).map_err(read)?;
        if bytes.len() as u64 > room {
            return Err(BundleError::TooLarge {
                path: self.root.clone(),
                what: "its files hold too many bytes".into(),
                limit: format!("{} MiB", MAX_BUNDLE_BYTES / (1024 * 1024)),
            });
        }
        self.bytes += bytes.len() as u64;
        self.files.push(BundleFile {
            path: relative,
            bytes,
            executable,
        });
        Ok(())
    }
}

fn relative(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    false
}

#[cfg(unix)]
fn set_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, bytes: &[u8]) -> BundleFile {
        BundleFile {
            path: path.into(),
            bytes: bytes.to_vec(),
            executable: false,
        }
    }

    #[test]
    fn the_hash_separates_path_from_content_and_ignores_order() {
        let a = Bundle::from_files(vec![file("a", b"bc")]).unwrap();
        let b = Bundle::from_files(vec![file("ab", b"c")]).unwrap();
        assert_ne!(a.content_hash(), b.content_hash());
        let one = Bundle::from_files(vec![file("x/b", b"1"), file("x/a", b"2")]).unwrap();
        let two = Bundle::from_files(vec![file("x/a", b"2"), file("x/b", b"1")]).unwrap();
        assert_eq!(one.content_hash(), two.content_hash());
        let mut exec = file("x/a", b"2");
        exec.executable = true;
        let three = Bundle::from_files(vec![exec, file("x/b", b"1")]).unwrap();
        assert_ne!(one.content_hash(), three.content_hash(), "the mode counts");
    }

    #[test]
    fn paths_a_registry_gives_are_checked() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a//b",
            ".git/config",
            "a/.env",
            "a\\b",
            "a\nb",
            "./a",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
            assert!(Bundle::from_files(vec![file(bad, b"")]).is_err(), "{bad:?}");
        }
        for twins in [["SKILL.md", "skill.md"], ["a/b", "A/B"], ["a", "a/b"]] {
            let files = twins.iter().map(|path| file(path, b"")).collect();
            assert!(Bundle::from_files(files).is_err(), "{twins:?}");
        }
        for good in ["SKILL.md", "scripts/run.sh", "references/a b.md", "ü/ß.md"] {
            assert_eq!(check_path(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn a_folder_is_read_without_hidden_entries_and_links_refuse() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "---\nname: x\n---\n").unwrap();
        std::fs::create_dir(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/run.sh"), "echo").unwrap();
        set_executable(&dir.path().join("scripts/run.sh")).unwrap();
        std::fs::write(dir.path().join(".env"), "SECRET=1").unwrap();
        let bundle = Bundle::read(dir.path()).unwrap();
        let paths: Vec<&str> = bundle.files().iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["SKILL.md", "scripts/run.sh"]);
        assert!(bundle.files()[1].executable || cfg!(not(unix)));
        assert_eq!(bundle.skipped, [".env"]);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
            let error = Bundle::read(dir.path()).unwrap_err();
            assert!(error.to_string().contains("symbolic link"), "{error}");
        }
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(from_hex(&hex(&[0, 15, 255])), Some(vec![0, 15, 255]));
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
    }
}
