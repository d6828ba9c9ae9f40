//! Git's loose objects that a command nobody reviewed wrote, checked against their names.
//!
//! Commits write loose objects, so `objects/XX/` stays writable; packs and `objects/info`
//! (alternates, the commit graph) are read-only ([`super::protect`]). Git names an object by
//! the hash of its content and never checks it when it reads one, so a command that rewrote a
//! loose object (`.githooks/pre-commit` on another branch, holding a payload) would plant a
//! file the user checks out later. An object is its name, though: after the command, every
//! loose object whose change time is not older than the command is inflated and hashed (SHA-1,
//! or SHA-256 where its name is that long), and one whose content is not what its name says is
//! removed, and told. What a command cannot do is make an old change time: the kernel sets it
//! on every change, and no process sets it back.

use std::io::Read as _;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The most loose objects listed after a command; past it the rest are not checked, and the
/// user is told.
pub const MAX_LOOSE_OBJECTS: usize = 200_000;
/// The most bytes of one object inflated to check it; a larger one that changed is removed
/// as unreadable, and told.
pub const MAX_OBJECT_BYTES: u64 = 1 << 30;
/// How much earlier than the command's start a change time still counts as the command's
/// (clocks of file systems round).
const SLACK: Duration = Duration::from_secs(2);

/// The fan-out folders of `store` as a command found them (each one's inode, `None` where
/// there is none): one renamed into place after holds files whose change times are old.
pub fn folders(store: &Path) -> Vec<Option<u64>> {
    use std::os::unix::fs::MetadataExt as _;
    (0..=0xff_u8)
        .map(|fan| {
            store
                .join(format!("{fan:02x}"))
                .symlink_metadata()
                .ok()
                .map(|meta| meta.ino())
        })
        .collect()
}

/// Checks the loose objects of the object store `store` changed since `since` (`before`: its
/// [`folders`] then); one finding per object removed, and one when the check could not finish.
pub fn verify_since(store: &Path, since: SystemTime, before: &[Option<u64>]) -> Vec<String> {
    use std::os::unix::fs::MetadataExt as _;
    let since = since
        .checked_sub(SLACK)
        .unwrap_or(SystemTime::UNIX_EPOCH)
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let recent = |meta: &std::fs::Metadata| {
        Duration::new(
            u64::try_from(meta.ctime()).unwrap_or(0),
            u32::try_from(meta.ctime_nsec()).unwrap_or(0),
        ) >= since
    };
    let mut findings = packs_changed(store, &recent);
    let mut listed = 0;
    for fan in 0..=0xff_u8 {
        let folder = store.join(format!("{fan:02x}"));
        let Ok(folder_meta) = folder.symlink_metadata() else {
            continue;
        };
        // A folder renamed into place keeps the change times of the files it holds: all of
        // them are checked then. One that only gained entries is not read again whole.
        let whole = before.get(usize::from(fan)).copied().flatten() != Some(folder_meta.ino());
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(error) => {
                findings.push(format!(
                    "skillet could not list {} ({error}), so it could not check the objects the command may have written there against their names: before checking out another branch here, `chmod u+rwx {}` and `git fsck`",
                    folder.display(),
                    folder.display()
                ));
                continue;
            }
        };
        for entry in entries.filter_map(Result::ok) {
            listed += 1;
            if listed > MAX_LOOSE_OBJECTS {
                findings.push(format!(
                    "{} holds more than {MAX_LOOSE_OBJECTS} loose objects, so skillet could not check all the command wrote against their names: before checking out another branch here, `git fsck` finds an object that is not what its name says",
                    store.display()
                ));
                return findings;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            // Only objects: git's temporary files and anything else are not read.
            if !(name.len() == 38 || name.len() == 62)
                || !name.bytes().all(|b| b.is_ascii_hexdigit())
            {
                continue;
            }
            let Ok(meta) = entry.path().symlink_metadata() else {
                // Listed but not looked up (a folder without its `x` bit): told, never passed.
                findings.push(format!(
                    "skillet could not look at {} (its folder cannot be searched), so it could not check it against its name: before checking out another branch here, `chmod u+rwx {}` and `git fsck`",
                    entry.path().display(),
                    folder.display()
                ));
                continue;
            };
            if !whole && !recent(&meta) {
                continue;
            }
            let id = format!("{fan:02x}{name}");
            let verdict = if meta.is_file() {
                hashes_to(&entry.path(), &id)
            } else {
                Err("it is not a file".to_string())
            };
            if let Some(finding) = judged(&entry.path(), &id, verdict) {
                findings.push(finding);
            }
        }
    }
    findings
}

/// Packs and `info` files changed since the command began: their folders are read-only to it,
/// so one changed through another name (a hard link, as a local clone makes them) — told, as
/// the objects can no longer be trusted.
fn packs_changed(store: &Path, recent: &dyn Fn(&std::fs::Metadata) -> bool) -> Vec<String> {
    ["pack", "info"]
        .iter()
        .filter_map(|folder| std::fs::read_dir(store.join(folder)).ok())
        .flatten()
        .filter_map(Result::ok)
        .filter(|entry| entry.path().symlink_metadata().is_ok_and(|meta| recent(&meta)))
        .map(|entry| {
            format!(
                "{} changed while the command ran, though its folder is read-only to commands: it has another name (a hard link, as `git clone` of a local repository makes), through which the command wrote it. Its objects cannot be trusted: before checking out anything here, `git fsck`, and `git repack -a -d` gives the repository packs of its own",
                entry.path().display()
            )
        })
        .collect()
}

/// What is said (and done) about object `id` at `path`: nothing when its content is what its
/// name says; otherwise it is removed.
fn judged(path: &Path, id: &str, verdict: Result<bool, String>) -> Option<String> {
    let why = match verdict {
        Ok(true) => return None,
        Ok(false) => "its content is not what its name says".to_string(),
        Err(why) => format!("it cannot be read as an object ({why})"),
    };
    let removal = match std::fs::remove_file(path) {
        Ok(()) => "skillet removed it: git would have used it as that object (a file checked out later, a hook among them); if the repository needs the object, `git fetch` brings it back".to_string(),
        Err(error) => format!("skillet could not remove it ({error}): remove {} before running git here", path.display()),
    };
    Some(format!(
        "the command wrote git object {id}, and {why}; {removal}"
    ))
}

/// Whether the loose object at `path` inflates to content whose hash is `id`.
fn hashes_to(path: &Path, id: &str) -> Result<bool, String> {
    use sha1::Digest as _;
    let file = std::fs::File::open(path).map_err(|error| error.to_string())?;
    let mut inflated = flate2::read::ZlibDecoder::new(file).take(MAX_OBJECT_BYTES + 1);
    let mut buffer = vec![0_u8; 64 * 1024];
    let mut sha1 = sha1::Sha1::new();
    let mut sha256 = sha2::Sha256::new();
    let mut total: u64 = 0;
    loop {
        let read = inflated
            .read(&mut buffer)
            .map_err(|error| error.to_string())?;
        if read == 0 {
            break;
        }
        total += read as u64;
        if total > MAX_OBJECT_BYTES {
            return Err(format!("larger than {MAX_OBJECT_BYTES} bytes"));
        }
        if id.len() == 40 {
            sha1.update(&buffer[..read]);
        } else {
            sha256.update(&buffer[..read]);
        }
    }
    let digest: Vec<u8> = if id.len() == 40 {
        sha1.finalize().to_vec()
    } else {
        sha256.finalize().to_vec()
    };
    let named: Option<Vec<u8>> = (0..id.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(id.get(at..at + 2)?, 16).ok())
        .collect();
    Ok(named.as_deref() == Some(digest.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn write_object(store: &Path, id: &str, content: &[u8]) {
        let folder = store.join(&id[..2]);
        std::fs::create_dir_all(&folder).unwrap();
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(content).unwrap();
        std::fs::write(folder.join(&id[2..]), encoder.finish().unwrap()).unwrap();
    }

    #[test]
    fn an_object_whose_content_is_not_its_name_is_removed_and_a_true_one_kept() {
        let temp = tempfile::tempdir().unwrap();
        let store = temp.path();
        // `git hash-object` of "hello\n": blob 6\0hello\n.
        let hello = "ce013625030ba8dba906f756967f9e9ca394464a";
        write_object(store, hello, b"blob 6\0hello\n");
        let start = SystemTime::now();
        let before = folders(store);
        assert_eq!(verify_since(store, start, &before), Vec::<String>::new());
        // The same name, other content.
        write_object(store, hello, b"blob 9\0#!/bin/sh\n");
        let findings = verify_since(store, start, &before);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0].contains("not what its name says"),
            "{}",
            findings[0]
        );
        assert!(!store.join(&hello[..2]).join(&hello[2..]).exists());
        // Garbage is removed too; git's temporary files are not looked at.
        write_object(store, hello, b"blob 6\0hello\n");
        std::fs::write(store.join("ce/tmp_obj_abc"), b"x").unwrap();
        let garbage = "0123456789012345678901234567890123456789";
        std::fs::create_dir_all(store.join("01")).unwrap();
        std::fs::write(store.join("01").join(&garbage[2..]), b"not zlib").unwrap();
        let findings = verify_since(store, start, &before);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].contains("cannot be read"), "{}", findings[0]);
        assert!(store.join(&hello[..2]).join(&hello[2..]).exists());
        assert!(store.join("ce/tmp_obj_abc").exists());
        // A folder made before the command, renamed into place during it: its files keep
        // their old change times, the folder's is new.
        let staged = store.join("staged");
        std::fs::create_dir_all(&staged).unwrap();
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(b"blob 9\0#!/bin/sh\n").unwrap();
        std::fs::write(staged.join(&hello[2..]), encoder.finish().unwrap()).unwrap();
        std::thread::sleep(Duration::from_millis(100) + SLACK);
        let start = SystemTime::now();
        let before = folders(store);
        std::fs::rename(store.join("ce"), store.join("ce.old")).unwrap();
        std::fs::rename(&staged, store.join("ce")).unwrap();
        let findings = verify_since(store, start, &before);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(!store.join("ce").join(&hello[2..]).exists());
    }
}
