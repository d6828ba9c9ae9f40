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
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use sha2::{Digest as _, Sha256};
use skillet_retrieval::{Stemming, body_terms};
use skillet_skills::{Library, dynamic};

mod file;

use file::{FACTS_PREFIX, MAGIC, Stored, TermsSource, WORDS_PREFIX, library_file_name};
pub(crate) use file::{make_private_dir, open_own, remove_unused};

/// The folder under the cache folder (`~/.cache/skillet`) that holds the facts files.
pub const FACTS_DIR: &str = "index";
/// The largest facts file read (about 100,000 skills of long bodies); a larger one is rebuilt.
pub const MAX_FACTS_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// A file changed this close to its reading may change again within the same timestamp.
const RACY: Duration = Duration::from_secs(1);
/// Facts files of other libraries unused this long are removed when one is written.
const UNUSED_FOR: Duration = Duration::from_hours(30 * 24);

/// What the kernel says of a `SKILL.md` (through links): a change to its bytes changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Stamp {
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    dev: u64,
}

impl Stamp {
    /// The file's stamp, through links: one `stat` (a link swapped to another file changes the
    /// inode or device the path reaches).
    #[cfg(unix)]
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let metadata = std::fs::metadata(path).ok()?;
        Some(Self {
            len: metadata.len(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
            ino: metadata.ino(),
            dev: metadata.dev(),
        })
    }

    /// Without a change time nothing is known to be unchanged: never reused.
    #[cfg(not(unix))]
    fn of(_path: &Path) -> Option<Self> {
        None
    }

    /// Whether the file changed within [`RACY`] of `now`, as its change time says: the kernel
    /// sets it at every change, and no process can set it (a modification time set ahead, by
    /// `touch -d` or an archive from a clock ahead, would otherwise keep the file "just
    /// changed" for good).
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
        self.ctime >= since
    }
}

/// A body's words, as indexes into the words table.
#[derive(Debug, Clone)]
enum BodyIds {
    /// Worked out now.
    Own(Vec<u32>),
    /// Kept in the facts file: `count` ids from `start` of its id array, read when first
    /// needed.
    Kept { start: usize, count: usize },
}

impl Default for BodyIds {
    fn default() -> Self {
        Self::Own(Vec::new())
    }
}

/// One skill's facts.
#[derive(Debug, Clone, Default)]
struct Entry {
    /// Its body's words.
    terms: BodyIds,
    /// The commands its dynamic context would run.
    commands: Vec<String>,
    /// The body could be read (else it has no words and no commands, as an empty body).
    readable: bool,
    /// What its file was when read; none: not to be reused.
    stamp: Option<Stamp>,
}

/// Every body's words as a facts file keeps them: the table of distinct words, and the kept
/// entries' ids, one after another.
#[derive(Debug, Default)]
struct Terms {
    words: Vec<Box<str>>,
    ids: Vec<u32>,
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
    entries: Vec<Entry>,
    /// The words table and kept ids: set when bodies were read, else read from the facts file
    /// when first asked for (a start whose word indexes are kept never needs them).
    terms: OnceLock<Option<Terms>>,
    /// Where the facts file keeps them.
    source: Option<TermsSource>,
    stats: FactStats,
    /// Where the library's word indexes are kept ([`crate::words`]), beside its facts.
    words_file: Option<PathBuf>,
}

/// Every body's words: [`Facts::body_words`].
pub struct BodyWords<'a> {
    words: &'a [Box<str>],
    ids: &'a [u32],
    entries: &'a [Entry],
}

impl BodyWords<'_> {
    /// The words of every body, which [`BodyWords::ids`] index.
    pub fn words(&self) -> &[Box<str>] {
        self.words
    }

    /// The words skill `index`'s body adds to the ranking, as indexes into
    /// [`BodyWords::words`] (none for a body that could not be read).
    pub fn ids(&self, index: usize) -> &[u32] {
        match self.entries.get(index).map(|entry| &entry.terms) {
            Some(BodyIds::Own(ids)) => ids,
            Some(&BodyIds::Kept { start, count }) => self
                .ids
                .get(start..start.saturating_add(count))
                .unwrap_or_default(),
            None => &[],
        }
    }

    /// The words skill `index`'s body adds to the ranking, sorted.
    pub fn terms(&self, index: usize) -> impl Iterator<Item = &str> {
        self.ids(index)
            .iter()
            .filter_map(|&id| self.words.get(id as usize).map(|word| &**word))
    }
}

impl Facts {
    /// Every skill's facts: from the file for `library` under `dir` where its `SKILL.md` is as
    /// it was, read now for the rest; the file is rewritten when anything was read. Without
    /// `dir` (no cache folder of the user's own), all are read and nothing is kept. The kept
    /// bodies' words are read from the file only when asked for ([`Facts::body_words`]), or
    /// when a body is read now (its words join the same table).
    pub fn gather(library: &Library, dir: Option<&Path>) -> Self {
        let now = SystemTime::now();
        let file = dir.map(|dir| dir.join(library_file_name(library, FACTS_PREFIX)));
        let mut stored = file.as_deref().and_then(file::load).unwrap_or_default();
        let stamps: Vec<Option<Stamp>> = library
            .skills()
            .iter()
            .map(|skill| Stamp::of(&skill.file))
            .collect();
        let kept = |stored: &Stored, index: usize| {
            let skill = &library.skills()[index];
            stamps[index].is_some_and(|stamp| {
                stored
                    .entries
                    .get(&skill.file)
                    .is_some_and(|entry| entry.stamp == Some(stamp))
            })
        };
        let mut terms = None;
        if (0..stamps.len()).any(|index| !kept(&stored, index)) {
            // Bodies are read: their words join the kept table, read now (when it cannot be
            // read, nothing kept is used).
            terms = match stored.source.take() {
                Some(source) => source.load(),
                None => Some(Terms::default()),
            };
            if terms.is_none() {
                stored.entries.clear();
                terms = Some(Terms::default());
            }
        }
        let mut facts = Self {
            words_file: dir.map(|dir| dir.join(library_file_name(library, WORDS_PREFIX))),
            source: stored.source.take(),
            ..Self::default()
        };
        let mut interned: Option<HashMap<Box<str>, u32>> = None;
        for (index, skill) in library.skills().iter().enumerate() {
            let stamp = stamps[index];
            if kept(&stored, index)
                && let Some(entry) = stored.entries.remove(&skill.file)
            {
                facts.entries.push(entry);
                facts.stats.reused += 1;
                continue;
            }
            facts.stats.read += 1;
            let terms = terms.get_or_insert_with(Terms::default);
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
                    terms
                        .words
                        .iter()
                        .enumerate()
                        .map(|(index, word)| (word.clone(), index_u32(index)))
                        .collect()
                });
                entry.terms = BodyIds::Own(
                    body_terms(body, Stemming::Light)
                        .into_iter()
                        .map(|term| {
                            let term = term.into_boxed_str();
                            if let Some(&id) = interned.get(&term) {
                                return id;
                            }
                            let id = index_u32(terms.words.len());
                            terms.words.push(term.clone());
                            interned.insert(term, id);
                            id
                        })
                        .collect(),
                );
                entry.commands = dynamic::commands(body)
                    .into_iter()
                    .map(str::to_string)
                    .collect();
            }
            facts.entries.push(entry);
        }
        if let Some(terms) = terms {
            facts.terms = OnceLock::from(Some(terms));
        }
        let changed = facts.stats.read > 0 || stored.count != facts.entries.len();
        if let Some(file) = &file
            && changed
        {
            // Best effort: a cache that cannot be written costs the next start its reading.
            let _ = file::save(&facts, library, file);
        }
        facts
    }

    /// How the facts were gathered.
    pub fn stats(&self) -> FactStats {
        self.stats
    }

    /// Every body's words; read from the facts file when first asked for. `None` when that
    /// file no longer gives them whole (replaced by another writer, damaged): gather the
    /// facts again.
    pub fn body_words(&self) -> Option<BodyWords<'_>> {
        let terms = self
            .terms
            .get_or_init(|| match &self.source {
                Some(source) => source.load(),
                None => Some(Terms::default()),
            })
            .as_ref()?;
        Some(BodyWords {
            words: &terms.words,
            ids: &terms.ids,
            entries: &self.entries,
        })
    }

    /// The commands skill `index`'s dynamic context would run (none when its body could not be
    /// read).
    pub fn commands(&self, index: usize) -> &[String] {
        self.entries
            .get(index)
            .map_or(&[], |entry| entry.commands.as_slice())
    }

    /// Where the library's word indexes are kept (none without a cache folder).
    pub(crate) fn words_file(&self) -> Option<&Path> {
        self.words_file.as_deref()
    }

    /// What every skill's `SKILL.md` was when its facts were taken, as one digest: its path,
    /// its stamp and whether its body could be read, in the library's order. `None` when any
    /// skill's file is not known to be as it was read (changed just before, or during, the
    /// reading): nothing derived from these facts is to be kept then.
    pub(crate) fn identity(&self, library: &Library) -> Option<[u8; 32]> {
        let mut hasher = Sha256::new();
        hasher.update(MAGIC);
        hasher.update((self.entries.len() as u64).to_le_bytes());
        for (skill, entry) in library.skills().iter().zip(&self.entries) {
            let stamp = entry.stamp?;
            let path = skill.file.as_os_str().as_encoded_bytes();
            hasher.update((path.len() as u64).to_le_bytes());
            hasher.update(path);
            for value in [stamp.len, stamp.ino, stamp.dev] {
                hasher.update(value.to_le_bytes());
            }
            for (seconds, nanos) in [stamp.mtime, stamp.ctime] {
                hasher.update(seconds.to_le_bytes());
                hasher.update(nanos.to_le_bytes());
            }
            hasher.update([u8::from(entry.readable)]);
        }
        (library.skills().len() == self.entries.len()).then(|| hasher.finalize().into())
    }
}

fn index_u32(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests;
