//! Installing a fetched (verified) version into a skills root, and the lock file that records
//! where each installed skill came from.
//!
//! Nothing is half-installed: the files are written into a hidden folder beside the target and
//! renamed into place only when all are written. A skill of the same name that did not come
//! from the same owner, or whose files were edited since it was installed, is not replaced
//! unless the caller forces it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bundle::{Bundle, from_hex, hex};
use crate::error::RegistryError;
use crate::versions::Fetched;

/// The lock file's name at a project's root.
pub const LOCK_FILE: &str = "skillet.lock";
/// The lock file format this skillet writes.
pub const LOCK_VERSION: u32 = 1;
/// The largest lock file read.
pub const MAX_LOCK_BYTES: u64 = 4 * 1024 * 1024;

/// Skills installed from a registry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    /// The format.
    pub version: u32,
    /// One entry per installed skill, by folder.
    #[serde(default, rename = "skill")]
    pub skills: Vec<Locked>,
}

/// One installed skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Locked {
    /// The skill's name.
    pub name: String,
    /// Its owner in the registry.
    pub owner: String,
    /// The version installed.
    pub seq: i32,
    /// Its content hash, `sha256:` and hex.
    pub hash: String,
    /// Its folder, relative to the lock file's folder when below it, else absolute.
    pub dir: String,
}

impl Lock {
    /// Reads a lock file (an absent one is empty).
    pub fn read(path: &Path) -> Result<Self, RegistryError> {
        let bad = |why: String| {
            RegistryError::Refused(format!(
                "{}: {why}\n  hint: it is written by `skillet registry install`; fix or remove \
                 the entry named",
                path.display()
            ))
        };
        let text = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_symlink() => {
                return Err(bad(
                    "it is a link; a lock file is read only as the project's own file".into(),
                ));
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    version: LOCK_VERSION,
                    skills: Vec::new(),
                });
            }
            Err(error) => return Err(bad(error.to_string())),
            Ok(meta) if meta.len() > MAX_LOCK_BYTES => {
                return Err(bad(format!("larger than {MAX_LOCK_BYTES} bytes")));
            }
            Ok(_) => std::fs::read_to_string(path).map_err(|error| bad(error.to_string()))?,
        };
        let lock: Self = toml::from_str(&text).map_err(|error| bad(error.to_string()))?;
        if lock.version != LOCK_VERSION {
            return Err(bad(format!(
                "format version {}, this skillet reads {LOCK_VERSION}",
                lock.version
            )));
        }
        Ok(lock)
    }

    /// Writes it atomically (a temporary file renamed over the old).
    pub fn write(&self, path: &Path) -> Result<(), RegistryError> {
        let write = |source| RegistryError::Write {
            path: path.display().to_string(),
            source,
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(write)?;
        let mut text = String::from(
            "# Skills installed from a skillet registry: owner, version and content hash of each.\n\
             # Written by `skillet registry install` and `update`; commit it with the project.\n\n",
        );
        text.push_str(
            &toml::to_string_pretty(self)
                .map_err(|error| write(std::io::Error::other(error.to_string())))?,
        );
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(write)?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(write)?;
        // Readable like any file of the project (a temporary file starts as 0600).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(write)?;
        }
        file.persist(path).map_err(|error| write(error.error))?;
        Ok(())
    }

    /// The entry for a folder.
    pub fn entry(&self, base: &Path, dir: &Path) -> Option<&Locked> {
        let shown = shown_dir(base, dir);
        self.skills.iter().find(|entry| entry.dir == shown)
    }
}

impl Locked {
    /// Where this entry installs: its folder's parent as the root, beneath the lock file's folder
    /// (an absolute entry, which only the user's own lock file may have, beneath that root).
    pub fn target(&self, lock: &Path, absolute_allowed: bool) -> Result<Target, RegistryError> {
        let base = lock.parent().unwrap_or(Path::new("."));
        let dir = self.folder(base, absolute_allowed)?;
        let root = dir.parent().unwrap_or(base).to_path_buf();
        let within = if Path::new(&self.dir).is_absolute() {
            root.clone()
        } else {
            base.to_path_buf()
        };
        Ok(Target {
            root,
            lock: lock.to_path_buf(),
            within,
        })
    }

    /// Fails when `fetched` is this entry's version with other content than it records: a
    /// registry changed a published version.
    pub fn check(&self, fetched: &Fetched, lock: &Path) -> Result<(), RegistryError> {
        let hash = format!("sha256:{}", hex(&fetched.content_hash));
        if self.owner == fetched.owner && self.seq == fetched.seq && self.hash != hash {
            return Err(RegistryError::Tampered {
                skill: fetched.reference(),
                what: format!(
                    "the registry now serves other content for it than {} records ({})",
                    lock.display(),
                    self.hash
                ),
            });
        }
        Ok(())
    }

    /// The folder this entry names, for a lock file in `base`: the entry's own skill folder
    /// (its last part is the skill's name), never `..` or (unless `absolute_allowed`, for the
    /// user's own lock file) outside `base`. A project's lock file is the repository's: it
    /// must not send an update anywhere else.
    pub fn folder(&self, base: &Path, absolute_allowed: bool) -> Result<PathBuf, RegistryError> {
        let refuse = |why: &str| {
            RegistryError::Refused(format!(
                "the lock file entry for {}/{} names the folder {:?}, which {why}\n  hint: fix \
                 or remove that entry in {}",
                self.owner,
                self.name,
                self.dir,
                base.join(LOCK_FILE).display()
            ))
        };
        let path = Path::new(&self.dir);
        if path.is_absolute() && !absolute_allowed {
            return Err(refuse("is outside the project"));
        }
        if path.components().any(|c| {
            !matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::RootDir
            )
        }) {
            return Err(refuse("leaves its folder (`..` or `.`)"));
        }
        // A repository cannot write its own `.git` (hooks there run outside any sandbox): neither
        // may its lock file, through an install.
        if path
            .components()
            .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
        {
            return Err(refuse("is inside a .git folder"));
        }
        if path.file_name().and_then(|n| n.to_str()) != Some(self.name.as_str()) {
            return Err(refuse("is not a folder named after the skill"));
        }
        Ok(base.join(path))
    }
}

/// How `dir` is written in a lock file in `base`.
pub fn shown_dir(base: &Path, dir: &Path) -> String {
    match dir.strip_prefix(base) {
        Ok(relative) => relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => dir.display().to_string(),
    }
}

/// Where an install goes.
#[derive(Debug, Clone)]
pub struct Target {
    /// The skills root (the skill goes in `root/NAME`); at or below `within`.
    pub root: PathBuf,
    /// The lock file.
    pub lock: PathBuf,
    /// The folder the install may not leave: the root is opened beneath it by the kernel, so a
    /// link on the way (a repository's `vendor -> ~/.agents/skills`) is refused, never followed.
    /// A project's install stays in the project; the user's own folders are their own.
    pub within: PathBuf,
}

/// What an install did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Installed {
    /// `owner/name@seq`.
    pub skill: String,
    /// The folder written.
    pub dir: String,
    /// The version it replaced, when it replaced one from the registry.
    pub replaced: Option<i32>,
    /// False when that very version was there already (nothing written).
    pub changed: bool,
}

/// Installs `fetched` under `target`.
pub fn install(
    fetched: &Fetched,
    target: &Target,
    force: bool,
) -> Result<Installed, RegistryError> {
    check_skill_name(fetched)?;
    let root = open_root(target)?;
    let dest = target.root.join(&fetched.name);
    let base = target.lock.parent().unwrap_or(Path::new("."));
    let mut lock = Lock::read(&target.lock)?;
    let entry = lock.entry(base, &dest).cloned();
    let hash = format!("sha256:{}", hex(&fetched.content_hash));
    if let Some(entry) = &entry {
        entry.check(fetched, &target.lock)?;
    }
    let mut replaced = None;
    let present = match root.symlink_metadata(&fetched.name) {
        Ok(meta) => Some(meta.is_symlink()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(write_error(&dest, error)),
    };
    if present == Some(true) && !force {
        return Err(RegistryError::Refused(format!(
            "{} is a link; nothing is installed through a link\n  hint: --force replaces the \
             link itself (never what it points to); --dir installs elsewhere",
            dest.display()
        )));
    }
    if present == Some(false) {
        let on_disk = Bundle::read(&dest).ok().map(|b| b.content_hash());
        match &entry {
            None if !force => {
                return Err(RegistryError::Refused(format!(
                    "{} already holds a skill named {} that was not installed from a registry\n  \
                     hint: --force replaces it; --dir installs elsewhere",
                    dest.display(),
                    fetched.name
                )));
            }
            Some(entry) if entry.owner != fetched.owner && !force => {
                return Err(RegistryError::Refused(format!(
                    "{} holds {}/{} (from the registry); {} is another owner's skill of the same \
                     name\n  hint: --force replaces it; --dir installs elsewhere",
                    dest.display(),
                    entry.owner,
                    entry.name,
                    fetched.reference()
                )));
            }
            Some(entry) => {
                let recorded = entry.hash.strip_prefix("sha256:").and_then(from_hex);
                let edited = on_disk.map(|h| h.to_vec()) != recorded;
                if entry.hash == hash && !edited {
                    return Ok(Installed {
                        skill: fetched.reference(),
                        dir: dest.display().to_string(),
                        replaced: None,
                        changed: false,
                    });
                }
                if edited && !force {
                    return Err(RegistryError::Refused(format!(
                        "{}: its files changed since {}/{}@{} was installed (or were never what \
                         {} records)\n  hint: look at them first; --force replaces them, and \
                         publishing them first keeps your changes",
                        dest.display(),
                        entry.owner,
                        entry.name,
                        entry.seq,
                        target.lock.display()
                    )));
                }
                replaced = Some(entry.seq);
            }
            None => {}
        }
    }
    place(fetched, &root, &dest)?;
    let shown = shown_dir(base, &dest);
    lock.skills.retain(|entry| entry.dir != shown);
    lock.skills.push(Locked {
        name: fetched.name.clone(),
        owner: fetched.owner.clone(),
        seq: fetched.seq,
        hash,
        dir: shown,
    });
    lock.skills
        .sort_by(|a, b| (&a.dir, &a.owner).cmp(&(&b.dir, &b.owner)));
    lock.write(&target.lock)?;
    Ok(Installed {
        skill: fetched.reference(),
        dir: dest.display().to_string(),
        replaced,
        changed: true,
    })
}

fn write_error(path: &Path, source: std::io::Error) -> RegistryError {
    RegistryError::Write {
        path: path.display().to_string(),
        source,
    }
}

impl Target {
    /// Fails when the way to the root leads out of `within` (a link on the way): said before
    /// anything is fetched or written. Folders not made yet are not made here.
    pub fn check(&self) -> Result<(), RegistryError> {
        walk_to_root(self, false).map(|_| ())
    }
}

/// The target's root, created as needed and opened beneath `within` by the kernel.
fn open_root(target: &Target) -> Result<cap_std::fs::Dir, RegistryError> {
    walk_to_root(target, true)?
        .ok_or_else(|| write_error(&target.root, std::io::ErrorKind::NotFound.into()))
}

/// Opens `within`, then each folder on the way to the root beneath the one before, by the
/// kernel (a link that stays inside is followed, one that leads out refused); a missing one is
/// made when `create`, else the walk stops there (`None`).
fn walk_to_root(target: &Target, create: bool) -> Result<Option<cap_std::fs::Dir>, RegistryError> {
    let Ok(relative) = target.root.strip_prefix(&target.within) else {
        return Err(RegistryError::Refused(format!(
            "{} is not inside {}, so nothing is installed there",
            target.root.display(),
            target.within.display()
        )));
    };
    if create {
        std::fs::create_dir_all(&target.within).map_err(|e| write_error(&target.within, e))?;
    }
    let mut dir =
        match cap_std::fs::Dir::open_ambient_dir(&target.within, cap_std::ambient_authority()) {
            Ok(dir) => dir,
            Err(error) if !create && error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(error) => return Err(write_error(&target.within, error)),
        };
    let leads_out = || {
        RegistryError::Refused(format!(
            "{} leads outside {} (a link on the way), so nothing is installed there\n  \
             hint: remove the link, or --dir DIR installs into a folder you name",
            target.root.display(),
            target.within.display()
        ))
    };
    for component in relative.components() {
        let std::path::Component::Normal(part) = component else {
            return Err(leads_out());
        };
        if part.eq_ignore_ascii_case(".git") {
            return Err(RegistryError::Refused(format!(
                "{} is inside a .git folder, so nothing is installed there",
                target.root.display()
            )));
        }
        let next = match dir.open_dir(part) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                // A dangling link is not a missing folder: it would be made outside.
                if dir.symlink_metadata(part).is_ok() {
                    return Err(leads_out());
                }
                if !create {
                    return Ok(None);
                }
                dir.create_dir(part)
                    .and_then(|()| dir.open_dir(part))
                    .map_err(|e| write_error(&target.root, e))?
            }
            Err(error)
                if error.kind() == std::io::ErrorKind::PermissionDenied
                    || error.to_string().contains("outside") =>
            {
                return Err(leads_out());
            }
            Err(error) => return Err(write_error(&target.root, error)),
            Ok(next) => next,
        };
        dir = next;
    }
    // Where the walk really ended (links inside the project followed): never in a `.git`.
    if let (Some(start), Some(end)) = (real_path(&target.within), real_dir(&dir))
        && end.strip_prefix(&start).is_ok_and(|inside| {
            inside
                .components()
                .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
        })
    {
        return Err(RegistryError::Refused(format!(
            "{} leads into a .git folder ({}), so nothing is installed there",
            target.root.display(),
            end.display()
        )));
    }
    Ok(Some(dir))
}

fn real_path(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// The path an open folder really is at (Linux: its descriptor's link in /proc).
#[cfg(target_os = "linux")]
fn real_dir(dir: &cap_std::fs::Dir) -> Option<PathBuf> {
    use std::os::fd::{AsFd as _, AsRawFd as _};
    std::fs::read_link(format!("/proc/self/fd/{}", dir.as_fd().as_raw_fd())).ok()
}

#[cfg(not(target_os = "linux"))]
fn real_dir(_dir: &cap_std::fs::Dir) -> Option<PathBuf> {
    None
}

/// A staging folder's name in the root: hidden (no discovery picks it up half-written).
fn staging_name(attempt: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(".skillet-install-{}-{nanos}-{attempt}", std::process::id())
}

/// Removes the staging folder however `place` ends.
struct Staging<'a> {
    root: &'a cap_std::fs::Dir,
    name: String,
}

impl Drop for Staging<'_> {
    fn drop(&mut self) {
        let _ = self.root.remove_dir_all(&self.name);
    }
}

/// Writes the files into a hidden staging folder in `root` and renames them into place as
/// `NAME`, all beneath `root` by the kernel (an old folder or link of that name is moved aside
/// first, never written through, and put back if the rename fails).
fn place(fetched: &Fetched, root: &cap_std::fs::Dir, dest: &Path) -> Result<(), RegistryError> {
    let write = |source| write_error(dest, source);
    let mut attempt = 0;
    let staging = loop {
        let name = staging_name(attempt);
        match root.create_dir(&name) {
            Ok(()) => break Staging { root, name },
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => {
                attempt += 1;
            }
            Err(error) => return Err(write(error)),
        }
    };
    let staged = format!("{}/skill", staging.name);
    root.create_dir(&staged).map_err(write)?;
    fetched
        .bundle
        .write_into(&root.open_dir(&staged).map_err(write)?)
        .map_err(write)?;
    let name = fetched.name.as_str();
    match root.symlink_metadata(name) {
        Ok(_) => {
            let old = format!("{}/old", staging.name);
            root.rename(name, root, &old).map_err(write)?;
            if let Err(error) = root.rename(&staged, root, name) {
                let _ = root.rename(&old, root, name);
                return Err(write(error));
            }
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            root.rename(&staged, root, name).map_err(write)?;
        }
        Err(error) => return Err(write(error)),
    }
    Ok(())
}

/// The fetched SKILL.md must name the skill it is installed as.
fn check_skill_name(fetched: &Fetched) -> Result<(), RegistryError> {
    let text = fetched
        .bundle
        .skill_file()
        .map(|file| String::from_utf8_lossy(&file.bytes).into_owned())
        .unwrap_or_default();
    let named = skillet_skills::strict_frontmatter(&text).and_then(|mapping| {
        mapping
            .get("name")
            .and_then(|v| v.as_str().map(str::to_string))
    });
    if named.as_deref() == Some(fetched.name.as_str()) {
        Ok(())
    } else {
        Err(RegistryError::Tampered {
            skill: fetched.reference(),
            what: format!(
                "its SKILL.md names {:?}, not the skill it was published as",
                named.unwrap_or_default()
            ),
        })
    }
}

/// A fetched version in a content-addressed cache: `cache/HASH/NAME`, written once (beside it,
/// then renamed into place) and checked against its hash again whenever it is reused, so a
/// cached copy edited since is replaced, never trusted. Keyed by content, never by a version
/// label: a registry that served other content for the same version gets another folder.
/// For reading a skill that is not installed: nothing in the cache is a skill root.
pub fn cache(fetched: &Fetched, cache_dir: &Path) -> Result<PathBuf, RegistryError> {
    check_skill_name(fetched)?;
    let write = |path: &Path| {
        let path = path.display().to_string();
        move |source| RegistryError::Write { path, source }
    };
    let entry = cache_dir.join(hex(&fetched.content_hash));
    let dir = entry.join(&fetched.name);
    if let Ok(bundle) = Bundle::read(&dir)
        && bundle.content_hash() == fetched.content_hash
        && bundle.skipped.is_empty()
    {
        return Ok(dir);
    }
    std::fs::create_dir_all(&entry).map_err(write(&entry))?;
    let staging = tempfile::Builder::new()
        .prefix(".skillet-cache-")
        .tempdir_in(&entry)
        .map_err(write(&entry))?;
    let staged = staging.path().join("skill");
    std::fs::create_dir(&staged).map_err(write(&staged))?;
    fetched.bundle.write_to(&staged).map_err(write(&staged))?;
    if dir.exists() {
        // A copy that no longer matches: moved aside and dropped with the staging folder.
        std::fs::rename(&dir, staging.path().join("old")).map_err(write(&dir))?;
    }
    if let Err(error) = std::fs::rename(&staged, &dir) {
        // Another process put a copy there first: it is used if it matches.
        let theirs = Bundle::read(&dir).map(|b| b.content_hash());
        if theirs.ok() != Some(fetched.content_hash) {
            return Err(write(&dir)(error));
        }
    }
    Ok(dir)
}
