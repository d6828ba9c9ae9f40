//! What each skill's body gives a session, read once and kept between sessions: the words it
//! adds to the ranking ([`skillet_retrieval::body_terms`]) and the commands its dynamic context
//! would run ([`skillet_skills::dynamic::commands`], which trust lists). Both the index and
//! trust take them from here, so a start reads each body at most once, and a warm start reads
//! none.
//!
//! One file per library (its roots) under `~/.cache/skillet/index/`. An entry is used only when
//! its `SKILL.md` is as it was read: same path, and the same length, modification and change
//! times, inode and device (a change time cannot be set by a process, so `touch -d` cannot
//! hide an edit). An entry whose file changed within [`RACY`] of its reading (an edit in the
//! same tick of the clock would leave the times as they were) is read again next time, as is
//! one that could not be read. Discovery stays the source of truth: the file holds nothing the
//! catalog shows, and an entry for a skill discovery did not find is never used. A file that is
//! torn, garbled, from another format or over [`MAX_FACTS_FILE_BYTES`] is rebuilt; writers
//! replace it whole (a temporary file renamed over it), so a reader sees one writer's file.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest as _, Sha256};
use skillet_retrieval::{Stemming, body_terms};
use skillet_skills::{Library, dynamic};

/// The folder under the cache folder (`~/.cache/skillet`) that holds the facts files.
pub const FACTS_DIR: &str = "index";
/// The largest facts file read (about 100,000 skills of long bodies); a larger one is rebuilt.
pub const MAX_FACTS_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// A file changed this close to its reading may change again within the same timestamp.
const RACY: Duration = Duration::from_secs(1);
/// Facts files of other libraries unused this long are removed when one is written.
const UNUSED_FOR: Duration = Duration::from_hours(30 * 24);
/// The length of a facts file's name: `facts-`, 32 hex digits, `.bin`.
const FILE_NAME_LEN: usize = 6 + 32 + 4;
/// The file's first bytes: the format.
const MAGIC: &[u8; 8] = b"SKFACT01";

/// What the kernel says of a `SKILL.md`: a change to its bytes changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Stamp {
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    dev: u64,
    /// The inode of the path itself when it is a link (0 when not).
    link: u64,
}

impl Stamp {
    /// The file's stamp, through links, and the link's own inode.
    #[cfg(unix)]
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let own = std::fs::symlink_metadata(path).ok()?;
        let link = if own.file_type().is_symlink() {
            own.ino()
        } else {
            0
        };
        let metadata = std::fs::metadata(path).ok()?;
        Some(Self {
            len: metadata.len(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
            ino: metadata.ino(),
            dev: metadata.dev(),
            link,
        })
    }

    /// Without a change time nothing is known to be unchanged: never reused.
    #[cfg(not(unix))]
    fn of(_path: &Path) -> Option<Self> {
        None
    }

    /// Whether the file changed within [`RACY`] of `now`.
    fn racy(&self, now: SystemTime) -> bool {
        let Some(since) = now
            .checked_sub(RACY)
            .and_then(|since| since.duration_since(SystemTime::UNIX_EPOCH).ok())
        else {
            return true;
        };
        let since = (
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
            i64::from(since.subsec_nanos()),
        );
        self.mtime >= since || self.ctime >= since
    }
}

/// One skill's facts.
#[derive(Debug, Clone, Default)]
struct Entry {
    /// Its body's words, as indexes into [`Facts::words`].
    terms: Vec<u32>,
    /// The commands its dynamic context would run.
    commands: Vec<String>,
    /// The body could be read (else it has no words and no commands, as an empty body).
    readable: bool,
    /// What its file was when read; none: not to be reused.
    stamp: Option<Stamp>,
}

/// How the facts were gathered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FactStats {
    /// Skills whose facts came from the file.
    pub reused: usize,
    /// Skills whose body was read.
    pub read: usize,
}

/// The facts of every skill of a library, in the library's order.
#[derive(Debug, Default)]
pub struct Facts {
    words: Vec<Box<str>>,
    entries: Vec<Entry>,
    stats: FactStats,
}

impl Facts {
    /// Every skill's facts: from the file for `library` under `dir` where its `SKILL.md` is as
    /// it was, read now for the rest; the file is rewritten when anything was read. Without
    /// `dir` (no cache folder of the user's own), all are read and nothing is kept.
    pub fn gather(library: &Library, dir: Option<&Path>) -> Self {
        let now = SystemTime::now();
        let file = dir.map(|dir| dir.join(file_name(library)));
        let mut stored = file
            .as_deref()
            .and_then(take_remembered)
            .unwrap_or_default();
        // Handed over by a gathering before in this process: its entries are moved, not copied.
        let handed_over = stored.handed_over;
        let mut facts = Self {
            words: std::mem::take(&mut stored.words),
            ..Self::default()
        };
        let mut interned: Option<HashMap<Box<str>, u32>> = None;
        for skill in library.skills() {
            let stamp = Stamp::of(&skill.file);
            if let Some(stamp) = stamp
                && let Some(entry) = stored.entries.get(&skill.file)
                && entry.stamp == Some(stamp)
            {
                let entry = if handed_over {
                    stored.entries.remove(&skill.file).unwrap_or_default()
                } else {
                    entry.clone()
                };
                facts.entries.push(entry);
                facts.stats.reused += 1;
                continue;
            }
            facts.stats.read += 1;
            let body = skill.read_body();
            let after = Stamp::of(&skill.file);
            let mut entry = Entry {
                readable: body.is_ok(),
                // Kept only when the file was the same before and after the reading, and not
                // changed just before it.
                stamp: stamp.filter(|stamp| Some(*stamp) == after && !stamp.racy(now)),
                ..Entry::default()
            };
            if let Ok(body) = &body {
                let interned = interned.get_or_insert_with(|| {
                    facts
                        .words
                        .iter()
                        .enumerate()
                        .map(|(index, word)| (word.clone(), index_u32(index)))
                        .collect()
                });
                entry.terms = body_terms(body, Stemming::Light)
                    .into_iter()
                    .map(|term| {
                        let term = term.into_boxed_str();
                        if let Some(&id) = interned.get(&term) {
                            return id;
                        }
                        let id = index_u32(facts.words.len());
                        facts.words.push(term.clone());
                        interned.insert(term, id);
                        id
                    })
                    .collect();
                entry.commands = dynamic::commands(body)
                    .into_iter()
                    .map(str::to_string)
                    .collect();
            }
            facts.entries.push(entry);
        }
        let changed = facts.stats.read > 0 || stored.count != facts.entries.len();
        if let Some(file) = &file {
            if changed {
                // Best effort: a cache that cannot be written costs the next start its reading.
                if facts.save(library, file).is_ok() {
                    remember(file, facts.as_stored(library));
                }
            } else if !handed_over {
                // Read from the file: handed to the next gathering of this process (the index
                // after trust), which takes it.
                stored.words.clone_from(&facts.words);
                remember(file, stored);
            }
        }
        facts
    }

    /// These facts as a file would give them back (the ones worth keeping).
    fn as_stored(&self, library: &Library) -> Stored {
        Stored {
            words: self.words.clone(),
            entries: library
                .skills()
                .iter()
                .zip(&self.entries)
                .filter(|(_, entry)| entry.readable && entry.stamp.is_some())
                .map(|(skill, entry)| (skill.file.clone(), entry.clone()))
                .collect(),
            count: self.entries.len(),
            handed_over: false,
        }
    }

    /// How the facts were gathered.
    pub fn stats(&self) -> FactStats {
        self.stats
    }

    /// The words skill `index`'s body adds to the ranking, sorted.
    pub fn body_terms(&self, index: usize) -> impl Iterator<Item = &str> {
        self.entries
            .get(index)
            .into_iter()
            .flat_map(|entry| entry.terms.iter())
            .filter_map(|&id| self.words.get(id as usize).map(|word| &**word))
    }

    /// The words of every body, which [`Facts::body_ids`] index.
    pub fn words(&self) -> &[Box<str>] {
        &self.words
    }

    /// The words skill `index`'s body adds to the ranking, as indexes into [`Facts::words`].
    pub fn body_ids(&self, index: usize) -> &[u32] {
        self.entries
            .get(index)
            .map_or(&[], |entry| entry.terms.as_slice())
    }

    /// The commands skill `index`'s dynamic context would run (none when its body could not be
    /// read).
    pub fn commands(&self, index: usize) -> &[String] {
        self.entries
            .get(index)
            .map_or(&[], |entry| entry.commands.as_slice())
    }

    /// Writes the facts worth keeping to `file`, whole, then removes other libraries' files
    /// unused for [`UNUSED_FOR`].
    fn save(&self, library: &Library, file: &Path) -> std::io::Result<()> {
        let dir = file.parent().unwrap_or(Path::new("."));
        make_private_dir(dir)?;
        let mut used: Vec<Option<u32>> = vec![None; self.words.len()];
        let mut words: Vec<&str> = Vec::new();
        let mut body = Vec::new();
        let kept: Vec<(&Path, &Entry, Stamp)> = library
            .skills()
            .iter()
            .zip(&self.entries)
            .filter_map(|(skill, entry)| {
                let stamp = entry.stamp.filter(|_| entry.readable)?;
                Some((skill.file.as_path(), entry, stamp))
            })
            .collect();
        put_u64(&mut body, self.entries.len() as u64);
        put_u64(&mut body, kept.len() as u64);
        for (path, entry, stamp) in &kept {
            put_bytes(&mut body, path.as_os_str().as_encoded_bytes());
            for value in [stamp.len, stamp.ino, stamp.dev, stamp.link] {
                put_u64(&mut body, value);
            }
            for (seconds, nanos) in [stamp.mtime, stamp.ctime] {
                put_u64(&mut body, seconds.cast_unsigned());
                put_u64(&mut body, nanos.cast_unsigned());
            }
            put_u64(&mut body, entry.terms.len() as u64);
            for &id in &entry.terms {
                let slot = &mut used[id as usize];
                let new = *slot.get_or_insert_with(|| {
                    words.push(&self.words[id as usize]);
                    index_u32(words.len() - 1)
                });
                body.extend_from_slice(&new.to_le_bytes());
            }
            put_u64(&mut body, entry.commands.len() as u64);
            for command in &entry.commands {
                put_bytes(&mut body, command.as_bytes());
            }
        }
        let mut payload = Vec::with_capacity(body.len() + words.len() * 12);
        put_u64(&mut payload, words.len() as u64);
        for word in &words {
            put_bytes(&mut payload, word.as_bytes());
        }
        payload.extend_from_slice(&body);
        let mut bytes = Vec::with_capacity(payload.len() + 48);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&Sha256::digest(&payload));
        put_u64(&mut bytes, payload.len() as u64);
        bytes.extend_from_slice(&payload);
        skillet_retrieval::write_atomically(file, &bytes)?;
        remove_unused(dir, file);
        Ok(())
    }
}

/// The facts a file held: entries by path.
#[derive(Debug, Default)]
struct Stored {
    words: Vec<Box<str>>,
    entries: HashMap<PathBuf, Entry>,
    /// How many skills the library had when the file was written.
    count: usize,
    /// It was handed over from a gathering before (the memo taken): its entries may be moved.
    handed_over: bool,
}

/// The facts file this process read or wrote last, with what the kernel said of it then, until
/// the next gathering takes it: trust and the index both gather facts at a start, and the
/// second need not read the file again (nor is a copy kept once it has).
static REMEMBERED: std::sync::Mutex<Option<(PathBuf, FileId, Stored)>> =
    std::sync::Mutex::new(None);

/// What identifies one writing of a facts file (each writer renames a new file over it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    len: u64,
    ino: u64,
    dev: u64,
    mtime: (i64, i64),
    /// Moved by a change of its mode or owner too.
    ctime: (i64, i64),
}

impl FileId {
    #[cfg(unix)]
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let metadata = std::fs::symlink_metadata(path).ok()?;
        Some(Self {
            len: metadata.len(),
            ino: metadata.ino(),
            dev: metadata.dev(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn of(_path: &Path) -> Option<Self> {
        None
    }
}

/// The facts of `file`: as the gathering before handed them over when the file is still that
/// one (taken: no copy stays), else read now.
fn take_remembered(file: &Path) -> Option<Stored> {
    let id = FileId::of(file)?;
    let remembered = REMEMBERED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some((path, known, mut stored)) = remembered
        && path == file
        && known == id
    {
        stored.handed_over = true;
        return Some(stored);
    }
    load(file).filter(|_| FileId::of(file) == Some(id))
}

/// Hands `stored` (what `file` holds now) to the next gathering.
fn remember(file: &Path, stored: Stored) {
    if let Some(id) = FileId::of(file) {
        *REMEMBERED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((file.to_path_buf(), id, stored));
    }
}

/// Reads a facts file; none when it is missing, not the user's own regular file, or not whole.
fn load(file: &Path) -> Option<Stored> {
    let bytes = read_own(file)?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (digest, rest) = rest.split_at_checked(32)?;
    let mut header = Reader(rest);
    let length = usize::try_from(header.u64()?).ok()?;
    let payload = header.0;
    if payload.len() != length || Sha256::digest(payload).as_slice() != digest {
        return None;
    }
    let mut reader = Reader(payload);
    let word_count = reader.count(4)?;
    let mut words = Vec::with_capacity(word_count);
    for _ in 0..word_count {
        words.push(Box::from(std::str::from_utf8(reader.bytes()?).ok()?));
    }
    let count = usize::try_from(reader.u64()?).ok()?;
    let kept = reader.count(8 * 10)?;
    let mut entries = HashMap::with_capacity(kept);
    for _ in 0..kept {
        let path = PathBuf::from(path_from(reader.bytes()?)?);
        let [len, ino, dev, link] = [reader.u64()?, reader.u64()?, reader.u64()?, reader.u64()?];
        let mut times = [(0_i64, 0_i64); 2];
        for time in &mut times {
            *time = (reader.u64()?.cast_signed(), reader.u64()?.cast_signed());
        }
        let terms_count = reader.count(4)?;
        let mut terms = Vec::with_capacity(terms_count);
        for _ in 0..terms_count {
            let id = reader.u32()?;
            if id as usize >= words.len() {
                return None;
            }
            terms.push(id);
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
            link,
        };
        entries.insert(
            path,
            Entry {
                terms,
                commands,
                readable: true,
                stamp: Some(stamp),
            },
        );
    }
    reader.0.is_empty().then_some(Stored {
        words,
        entries,
        count,
        handed_over: false,
    })
}

/// The bytes of `file` when it is a regular file of this user's that no one else may write,
/// at most [`MAX_FACTS_FILE_BYTES`].
fn read_own(file: &Path) -> Option<Vec<u8>> {
    use std::io::Read as _;
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
    if metadata.len() > MAX_FACTS_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).ok()?);
    opened
        .take(MAX_FACTS_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// Makes the facts folder (only the user may enter it) when missing.
fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Removes other facts files not changed for [`UNUSED_FOR`].
fn remove_unused(dir: &Path, keep: &Path) {
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
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with("facts-") && name.len() == FILE_NAME_LEN);
        if ours && old && path != keep {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The facts file's name for `library`: its roots, and a probe of how words and commands are
/// derived, so a skillet that derives them differently never reads another's facts.
fn file_name(library: &Library) -> String {
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
    format!("facts-{hex}.bin")
}

fn index_u32(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
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

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
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

#[cfg(test)]
mod tests;
