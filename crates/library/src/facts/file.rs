//! The facts file: its format, reading and writing.
//!
//! # Format `SKFACT02` (little endian)
//!
//! Magic, the head's length (u64) and SHA-256, the terms' length (u64) and SHA-256, then the
//! head and the terms. The head: the library's skill count, the id count of the terms, the
//! kept entries' count, and each kept entry: its path, stamp (length, inode, device,
//! modification and change times as seconds and nanoseconds), where its ids start in the terms
//! and how many, and its commands. The terms: the words table (count, then each word), then
//! every kept entry's ids (u32 indexes into the table), one entry after another.
//!
//! A start reads the head alone (about a tenth of the file); the terms are read, and checked
//! against their digest, only when a body's words are needed: a body read now (its words join
//! the table) or word indexes that were not kept. Both parts are read from the one file opened
//! for the head, so a writer renaming a new file over it meanwhile changes neither.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use skillet_retrieval::{Stemming, body_terms, read_at};
use skillet_skills::{Library, dynamic};

use super::{BodyIds, Entry, Facts, MAX_FACTS_FILE_BYTES, Stamp, Terms, UNUSED_FOR, index_u32};

/// The file's first bytes: the format.
pub(super) const MAGIC: &[u8; 8] = b"SKFACT02";
/// Magic, then each part's length and digest.
const HEADER_BYTES: usize = 8 + 2 * (8 + 32);
/// What the facts files' names start with.
pub(super) const FACTS_PREFIX: &str = "facts-";
/// What the word index files' names start with ([`crate::words`]).
pub(super) const WORDS_PREFIX: &str = "words-";

/// The facts a file held: entries by path, their words left in the file.
#[derive(Debug, Default)]
pub(super) struct Stored {
    pub(super) entries: HashMap<PathBuf, Entry>,
    /// How many skills the library had when the file was written.
    pub(super) count: usize,
    /// Where the entries' words are.
    pub(super) source: Option<TermsSource>,
}

/// The terms part of a facts file, read when first needed.
#[derive(Debug)]
pub(super) struct TermsSource {
    file: File,
    offset: u64,
    len: u64,
    digest: [u8; 32],
    /// How many ids the head's entries index.
    ids: usize,
}

impl TermsSource {
    /// The words table and ids, when the part is whole and fits the head.
    pub(super) fn load(&self) -> Option<Terms> {
        let mut bytes = vec![0_u8; usize::try_from(self.len).ok()?];
        read_at(&self.file, &mut bytes, self.offset).ok()?;
        if Sha256::digest(&bytes).as_slice() != self.digest {
            return None;
        }
        let mut reader = Reader(&bytes);
        let word_count = reader.count(8)?;
        let mut words = Vec::with_capacity(word_count);
        for _ in 0..word_count {
            words.push(Box::from(std::str::from_utf8(reader.bytes()?).ok()?));
        }
        let id_count = reader.count(4)?;
        if id_count != self.ids || reader.0.len() != id_count * 4 {
            return None;
        }
        let ids: Vec<u32> = reader
            .0
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        ids.iter()
            .all(|&id| (id as usize) < words.len())
            .then_some(Terms { words, ids })
    }
}

/// Reads a facts file's head; none when it is missing, not the user's own regular file, or not
/// whole.
pub(super) fn load(path: &Path) -> Option<Stored> {
    let (mut file, len) = open_own(path, MAX_FACTS_FILE_BYTES)?;
    let mut header = [0_u8; HEADER_BYTES];
    file.read_exact(&mut header).ok()?;
    let mut reader = Reader(&header);
    if reader.take(8)? != MAGIC {
        return None;
    }
    let head_len = reader.u64()?;
    let head_digest: [u8; 32] = reader.take(32)?.try_into().ok()?;
    let terms_len = reader.u64()?;
    let terms_digest: [u8; 32] = reader.take(32)?.try_into().ok()?;
    let whole = head_len
        .checked_add(terms_len)
        .and_then(|parts| parts.checked_add(HEADER_BYTES as u64));
    if whole != Some(len) {
        return None;
    }
    let mut head = vec![0_u8; usize::try_from(head_len).ok()?];
    file.read_exact(&mut head).ok()?;
    if Sha256::digest(&head).as_slice() != head_digest {
        return None;
    }
    let mut reader = Reader(&head);
    let count = usize::try_from(reader.u64()?).ok()?;
    let ids = usize::try_from(reader.u64()?).ok()?;
    let kept = reader.count(8 * 11)?;
    let mut entries = HashMap::with_capacity(kept);
    for _ in 0..kept {
        let path = PathBuf::from(path_from(reader.bytes()?)?);
        let [len, ino, dev] = [reader.u64()?, reader.u64()?, reader.u64()?];
        let mut times = [(0_i64, 0_i64); 2];
        for time in &mut times {
            *time = (reader.u64()?.cast_signed(), reader.u64()?.cast_signed());
        }
        let start = usize::try_from(reader.u64()?).ok()?;
        let terms = usize::try_from(reader.u64()?).ok()?;
        if start.checked_add(terms).is_none_or(|end| end > ids) {
            return None;
        }
        let commands_count = reader.count(8)?;
        let mut commands = Vec::with_capacity(commands_count);
        for _ in 0..commands_count {
            commands.push(std::str::from_utf8(reader.bytes()?).ok()?.to_string());
        }
        let stamp = Stamp {
            len,
            mtime: times[0],
            ctime: times[1],
            ino,
            dev,
        };
        entries.insert(
            path,
            Entry {
                terms: BodyIds::Kept {
                    start,
                    count: terms,
                },
                commands,
                readable: true,
                stamp: Some(stamp),
            },
        );
    }
    reader.0.is_empty().then_some(Stored {
        entries,
        count,
        source: Some(TermsSource {
            file,
            offset: HEADER_BYTES as u64 + head_len,
            len: terms_len,
            digest: terms_digest,
            ids,
        }),
    })
}

/// Writes the facts worth keeping (read whole, not changed while read) to `file`, whole, then
/// removes other libraries' files unused for [`UNUSED_FOR`]. Nothing is written when the kept
/// words cannot be read.
pub(super) fn save(facts: &Facts, library: &Library, file: &Path) -> std::io::Result<()> {
    let Some(bodies) = facts.body_words() else {
        return Ok(());
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    make_private_dir(dir)?;
    let mut used: Vec<Option<u32>> = vec![None; bodies.words().len()];
    let mut words: Vec<&str> = Vec::new();
    let mut ids: Vec<u32> = Vec::new();
    let mut entries = Vec::new();
    let kept = library
        .skills()
        .iter()
        .zip(&facts.entries)
        .enumerate()
        .filter_map(|(index, (skill, entry))| {
            let stamp = entry.stamp.filter(|_| entry.readable)?;
            Some((index, skill.file.as_path(), entry, stamp))
        });
    let mut kept_count = 0_u64;
    for (index, path, entry, stamp) in kept {
        kept_count += 1;
        put_bytes(&mut entries, path.as_os_str().as_encoded_bytes());
        for value in [stamp.len, stamp.ino, stamp.dev] {
            put_u64(&mut entries, value);
        }
        for (seconds, nanos) in [stamp.mtime, stamp.ctime] {
            put_u64(&mut entries, seconds.cast_unsigned());
            put_u64(&mut entries, nanos.cast_unsigned());
        }
        let own = bodies.ids(index);
        put_u64(&mut entries, ids.len() as u64);
        put_u64(&mut entries, own.len() as u64);
        for &id in own {
            let slot = &mut used[id as usize];
            ids.push(*slot.get_or_insert_with(|| {
                words.push(&bodies.words()[id as usize]);
                index_u32(words.len() - 1)
            }));
        }
        put_u64(&mut entries, entry.commands.len() as u64);
        for command in &entry.commands {
            put_bytes(&mut entries, command.as_bytes());
        }
    }
    let mut head = Vec::with_capacity(entries.len() + 24);
    put_u64(&mut head, facts.entries.len() as u64);
    put_u64(&mut head, ids.len() as u64);
    put_u64(&mut head, kept_count);
    head.extend_from_slice(&entries);
    drop(entries);
    let mut terms = Vec::with_capacity(words.len() * 12 + ids.len() * 4 + 16);
    put_u64(&mut terms, words.len() as u64);
    for word in &words {
        put_bytes(&mut terms, word.as_bytes());
    }
    put_u64(&mut terms, ids.len() as u64);
    for id in &ids {
        terms.extend_from_slice(&id.to_le_bytes());
    }
    let mut bytes = Vec::with_capacity(HEADER_BYTES + head.len() + terms.len());
    bytes.extend_from_slice(MAGIC);
    put_u64(&mut bytes, head.len() as u64);
    bytes.extend_from_slice(&Sha256::digest(&head));
    put_u64(&mut bytes, terms.len() as u64);
    bytes.extend_from_slice(&Sha256::digest(&terms));
    bytes.extend_from_slice(&head);
    bytes.extend_from_slice(&terms);
    skillet_retrieval::write_atomically(file, &bytes)?;
    remove_unused(dir, file);
    Ok(())
}

/// `file` opened, with its length, when it is a regular file of this user's that no one else
/// may write, at most `limit` bytes long.
pub(crate) fn open_own(file: &Path, limit: u64) -> Option<(File, u64)> {
    let opened = skillet_skills::open_regular(file).ok()?;
    let metadata = opened.metadata().ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if metadata.mode() & 0o022 != 0 {
            return None;
        }
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt as _;
        // `/proc/self` belongs to the process's effective user: the owner of what it writes.
        let user = std::fs::metadata("/proc/self").map_or(u32::MAX, |own| own.uid());
        if metadata.uid() != user {
            return None;
        }
    }
    let len = metadata.len();
    (len <= limit).then_some((opened, len))
}

/// Makes the facts folder (only the user may enter it) when missing.
pub(crate) fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Removes other libraries' facts and word index files not changed for [`UNUSED_FOR`].
pub(crate) fn remove_unused(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let old = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > UNUSED_FOR);
        let ours = entry.file_name().to_str().is_some_and(|name| {
            [FACTS_PREFIX, WORDS_PREFIX]
                .iter()
                .any(|prefix| name.starts_with(prefix) && name.len() == prefix.len() + 32 + 4)
        });
        if ours && old && path != keep {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The name of `library`'s file starting with `prefix` (facts, word indexes): its roots, and a
/// probe of how words and commands are derived, so a skillet that derives them differently
/// never reads another's files.
pub(super) fn library_file_name(library: &Library, prefix: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(MAGIC);
    let probe = "Run `git status` then: deploying the Services, quickly! !`date +%F` naïve café";
    for term in body_terms(probe, Stemming::Light) {
        hasher.update(term.as_bytes());
        hasher.update([0]);
    }
    for command in dynamic::commands(probe) {
        hasher.update(command.as_bytes());
        hasher.update([1]);
    }
    hasher.update(skillet_retrieval::MAX_RANKED_BODY_BYTES.to_le_bytes());
    hasher.update(skillet_skills::MAX_BODY_BYTES.to_le_bytes());
    let mut roots: Vec<&Path> = library
        .skills()
        .iter()
        .map(|skill| skill.root.as_path())
        .collect();
    roots.sort();
    roots.dedup();
    for root in roots {
        hasher.update(root.as_os_str().as_encoded_bytes());
        hasher.update([2]);
    }
    let digest = hasher.finalize();
    let hex: String = digest[..16].iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    });
    format!("{prefix}{hex}.bin")
}

fn put_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(unix)]
#[expect(
    clippy::unnecessary_wraps,
    reason = "other systems' paths may not convert"
)]
fn path_from(bytes: &[u8]) -> Option<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt as _;
    Some(std::ffi::OsStr::from_bytes(bytes).to_os_string())
}

#[cfg(not(unix))]
fn path_from(bytes: &[u8]) -> Option<std::ffi::OsString> {
    std::str::from_utf8(bytes)
        .ok()
        .map(std::ffi::OsString::from)
}

/// Reads little-endian values off a byte slice, never past its end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Option<&'a [u8]> {
        let (taken, rest) = self.0.split_at_checked(count)?;
        self.0 = rest;
        Some(taken)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let length = usize::try_from(self.u64()?).ok()?;
        self.take(length)
    }

    /// A count of items of at least `each` bytes: no more than what is left could hold, so a
    /// garbled count cannot reserve memory the file does not back.
    fn count(&mut self, each: usize) -> Option<usize> {
        let count = usize::try_from(self.u64()?).ok()?;
        (count <= self.0.len() / each.max(1)).then_some(count)
    }
}
