//! The embedding cache: vectors on disk keyed by the model and a hash of each text, so only new
//! or changed skills are embedded again. One file per model ([`EmbeddingCache::path_for`] a
//! model fingerprint), shared by every library embedded with that model.
//!
//! # File format `SKEMB002` (little endian)
//!
//! Magic `SKEMB002`, vector width `u32`, entry count `u64`, then `count` records of: the text
//! hash `u64`, when the entry was last used (seconds since the Unix epoch) `u64`, a checksum
//! `u64` (FNV-1a over the hash, the time and the vector's bytes), and `width` `f32`s.
//!
//! # Reading
//!
//! A file that cannot be used as a whole (missing magic, an older format such as `SKEMB001`,
//! another width, a length that does not match its header, over [`MAX_FILE_BYTES`]) leaves the
//! cache empty, with a [`CacheWarning::Unreadable`]. Within a sound file, an entry whose
//! checksum fails, with a value that is not finite, or whose length is not 1 (every vector the
//! encoder gives is normalised, and ranking takes dot products for cosines) is dropped, counted
//! in a [`CacheWarning::EntriesDropped`]: it is embedded again and never ranked. Either way the
//! file is rewritten at the next save.
//!
//! # Writing
//!
//! A save takes an advisory lock on `PATH.lock` (waiting up to [`LOCK_WAIT`], then going on
//! without it), merges in the entries another process saved meanwhile, prunes, writes a
//! uniquely named temporary file in the same folder, syncs it, renames it over the cache and
//! syncs the folder. Readers never take the lock: the rename makes every state they can see a
//! complete file, and concurrent savers lose nothing (without the lock, the last rename wins).
//!
//! # Pruning
//!
//! Each entry remembers when a library last used it. A save drops entries unused for
//! [`PRUNE_AFTER`], so a second library sharing the file (another `--skills-dir`) keeps its
//! vectors while it is in use, and the least recently used ones past what fits in
//! [`MAX_FILE_BYTES`]. Using an entry only marks the cache for saving once the entry's time is
//! [`TOUCH_INTERVAL`] old, so a library that did not change costs at most one write a day.
//! Sibling cache files (other models, older formats) not written for [`PRUNE_AFTER`] are
//! removed by a save, as are temporary files left by a crash.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::fnv::{FNV_OFFSET, fnv1a};

/// The current format.
const MAGIC: &[u8; 8] = b"SKEMB002";
/// What every format of the cache starts with.
const MAGIC_FAMILY: &[u8; 5] = b"SKEMB";
/// Magic, width, count.
const HEADER_BYTES: usize = 20;
/// Hash, last use and checksum before each vector.
const RECORD_PREFIX_BYTES: usize = 24;
/// What cache files are named with.
const EXTENSION: &str = "bin";
/// What temporary files end with (they start with `.NAME.`).
const TEMPORARY_SUFFIX: &str = ".tmp";

/// The largest cache file read, and written: at 384 values per vector, about 170,000 entries.
/// A larger file is a warning (and replaced), not an allocation of its size.
pub const MAX_FILE_BYTES: u64 = 256 << 20;
/// The widest vector a cache holds (the model's `hidden_size` is checked against the same
/// bound).
pub const MAX_DIMENSIONS: usize = 16_384;
/// Entries not used by any library for this long are dropped at the next save.
pub const PRUNE_AFTER: Duration = Duration::from_hours(30 * 24);
/// Using an entry marks the cache for saving only when the entry was last used this long ago.
pub const TOUCH_INTERVAL: Duration = Duration::from_hours(24);
/// How far from 1 a cached vector's length may be.
pub const NORM_TOLERANCE: f64 = 1e-3;
/// How long a save waits for another process's save before writing without the lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);
/// How often a waiting save tries the lock again.
const LOCK_RETRY: Duration = Duration::from_millis(5);
/// Temporary files older than this are left over from a crash, and removed.
const STALE_TEMPORARY: Duration = Duration::from_hours(1);
/// Folder entries looked at when removing stale files.
const MAX_SCANNED: usize = 4_096;

/// A stable 64-bit key of a text: the first 8 bytes of its SHA-256, the same on every platform
/// and Rust version. Texts come from strangers' skills and one cache serves every library, so the
/// key must not be forgeable: a text made to collide with another skill's key would have its
/// vector ranked for that skill (FNV-1a, used before, is easy to collide on purpose).
pub fn text_hash(text: &str) -> u64 {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(text.as_bytes());
    let mut first = [0_u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

/// The checksum of one record.
fn checksum(key: u64, last_used: u64, vector_bytes: &[u8]) -> u64 {
    let hash = fnv1a(FNV_OFFSET, &key.to_le_bytes());
    let hash = fnv1a(hash, &last_used.to_le_bytes());
    fnv1a(hash, vector_bytes)
}

/// Why a vector cannot be cached.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum InvalidVector {
    /// Another width than the cache's.
    #[error("{found} values where the model gives {expected}")]
    Width {
        /// The cache's width.
        expected: usize,
        /// The vector's.
        found: usize,
    },
    /// A NaN or an infinity.
    #[error("a value is not finite")]
    NonFinite,
    /// Not normalised (or zero).
    #[error("its length is {norm}, not 1")]
    NotUnit {
        /// Its length.
        norm: f64,
    },
}

/// Checks that `vector` can be cached and ranked: `width` finite values of length 1 (within
/// [`NORM_TOLERANCE`]).
pub fn check_vector(vector: &[f32], width: usize) -> Result<(), InvalidVector> {
    if vector.len() != width {
        return Err(InvalidVector::Width {
            expected: width,
            found: vector.len(),
        });
    }
    if !vector.iter().all(|x| x.is_finite()) {
        return Err(InvalidVector::NonFinite);
    }
    let norm = vector
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if (norm - 1.0).abs() > NORM_TOLERANCE {
        return Err(InvalidVector::NotUnit { norm });
    }
    Ok(())
}

/// Why a cache file could not be used at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnreadableReason {
    /// Reading failed.
    #[error("{0}")]
    Io(String),
    /// Larger than [`MAX_FILE_BYTES`].
    #[error("{bytes} bytes, over the limit of {limit}")]
    TooLarge {
        /// The file's size.
        bytes: u64,
        /// [`MAX_FILE_BYTES`].
        limit: u64,
    },
    /// Not an embedding cache.
    #[error("not an embedding cache")]
    BadMagic,
    /// An embedding cache of another format.
    #[error("an older format, {found}")]
    OldFormat {
        /// Its magic.
        found: String,
    },
    /// Shorter than a header.
    #[error("cut short at {bytes} bytes")]
    Truncated {
        /// The file's size.
        bytes: u64,
    },
    /// Vectors of another width.
    #[error("vectors of {found} values where the model gives {expected}")]
    Width {
        /// The file's width.
        found: u64,
        /// The model's.
        expected: usize,
    },
    /// Its length does not match the entry count of its header (cut short, or grown).
    #[error("{bytes} bytes, which do not hold the {count} entries its header announces")]
    Length {
        /// The file's size.
        bytes: u64,
        /// The count in its header.
        count: u64,
    },
}

/// Something wrong with the cache file, which the cache recovered from (by embedding again);
/// worth telling the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheWarning {
    /// The file could not be used; the cache started empty.
    #[error("embedding cache {} was unreadable ({reason}); rebuilding", path.display())]
    Unreadable {
        /// The cache file.
        path: PathBuf,
        /// Why.
        reason: UnreadableReason,
    },
    /// Some entries were dropped; they are embedded again.
    #[error(
        "embedding cache {}: {} unusable {} dropped ({corrupt} damaged, {non_finite} not \
         finite, {not_unit} not of length 1); they are embedded again",
        path.display(),
        corrupt + non_finite + not_unit,
        if corrupt + non_finite + not_unit == 1 { "entry" } else { "entries" }
    )]
    EntriesDropped {
        /// The cache file.
        path: PathBuf,
        /// Entries whose checksum failed.
        corrupt: usize,
        /// Entries with a NaN or an infinity.
        non_finite: usize,
        /// Entries not normalised (or zero).
        not_unit: usize,
    },
}

/// What a save did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SaveReport {
    /// Whether the file was written (nothing changed otherwise).
    pub written: bool,
    /// Entries another process had saved, taken in.
    pub merged: usize,
    /// Entries dropped as unused (see [`PRUNE_AFTER`]) or over the size limit.
    pub pruned: usize,
    /// Entries in the file written.
    pub entries: usize,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    vector: Vec<f32>,
    /// Seconds since the Unix epoch.
    last_used: u64,
}

/// Cached vectors of one model.
#[derive(Debug, Clone, Default)]
pub struct EmbeddingCache {
    path: PathBuf,
    dimensions: usize,
    entries: HashMap<u64, Entry>,
    dirty: bool,
    /// The time entries are marked used at (seconds since the Unix epoch), read at open.
    now: u64,
}

impl EmbeddingCache {
    /// The cache file for a model under `dir` (the user cache folder); `model_id` is made
    /// filesystem-safe.
    pub fn path_for(dir: &Path, model_id: &str) -> PathBuf {
        let safe: String = model_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        dir.join(format!("{safe}.{EXTENSION}"))
    }

    /// Opens the cache at `path` for vectors of `dimensions` values: empty when the file is
    /// missing; empty or without some entries when it is damaged, with warnings saying what
    /// was dropped (see the module documentation).
    pub fn open(path: &Path, dimensions: usize) -> (Self, Vec<CacheWarning>) {
        let now = unix_now();
        let mut warnings = Vec::new();
        let entries = match load(path, dimensions, now) {
            Loaded::Missing => HashMap::new(),
            Loaded::Unreadable(reason) => {
                warnings.push(CacheWarning::Unreadable {
                    path: path.to_path_buf(),
                    reason,
                });
                HashMap::new()
            }
            Loaded::Entries(entries, dropped) => {
                if dropped.total() > 0 {
                    warnings.push(CacheWarning::EntriesDropped {
                        path: path.to_path_buf(),
                        corrupt: dropped.corrupt,
                        non_finite: dropped.non_finite,
                        not_unit: dropped.not_unit,
                    });
                }
                entries
            }
        };
        let cache = Self {
            path: path.to_path_buf(),
            dimensions,
            entries,
            // A damaged file is rewritten without what was dropped.
            dirty: !warnings.is_empty(),
            now,
        };
        (cache, warnings)
    }

    /// The vectors of `hashes`, in their order (`dimensions` values each): the vectors of
    /// [`EmbeddingCache::vectors_for`], read into memory.
    pub fn read_for(path: &Path, dimensions: usize, hashes: &[u64]) -> Option<Vec<f32>> {
        Self::vectors_for(path, dimensions, hashes)?.to_vec()
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The width of the cached vectors.
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The vector of a text hash, if cached.
    pub fn get(&self, hash: u64) -> Option<&[f32]> {
        self.entries.get(&hash).map(|entry| entry.vector.as_slice())
    }

    /// Marks a cached vector as used now (so pruning keeps it); false when it is not cached.
    /// The cache needs saving only when the entry's last use was [`TOUCH_INTERVAL`] ago.
    pub fn touch(&mut self, hash: u64) -> bool {
        let Some(entry) = self.entries.get_mut(&hash) else {
            return false;
        };
        if entry.last_used.saturating_add(TOUCH_INTERVAL.as_secs()) <= self.now {
            self.dirty = true;
        }
        entry.last_used = entry.last_used.max(self.now);
        true
    }

    /// Caches a vector (used now), unless it is unusable (see [`check_vector`]).
    pub fn insert(&mut self, hash: u64, vector: Vec<f32>) -> Result<(), InvalidVector> {
        check_vector(&vector, self.dimensions)?;
        self.entries.insert(
            hash,
            Entry {
                vector,
                last_used: self.now,
            },
        );
        self.dirty = true;
        Ok(())
    }

    /// How many vectors are cached.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the cache if it changed: merges what other processes saved meanwhile, prunes,
    /// and replaces the file atomically (see the module documentation). On success the cache
    /// holds what the file holds.
    pub fn save(&mut self) -> io::Result<SaveReport> {
        if !self.dirty {
            return Ok(SaveReport::default());
        }
        let parent = parent_of(&self.path).to_path_buf();
        std::fs::create_dir_all(&parent)?;
        // Held until the file is replaced; released when dropped.
        let _lock = lock(&self.path);
        let merged = self.merge_saved();
        let pruned = self.prune(max_entries(self.dimensions));
        write_atomically(&self.path, &self.encode())?;
        remove_stale_files(&parent, &self.path);
        self.dirty = false;
        Ok(SaveReport {
            written: true,
            merged,
            pruned,
            entries: self.entries.len(),
        })
    }

    /// Takes in the entries of the file as it is now that this cache lacks, and the later
    /// last use of those both have; returns how many were taken in.
    fn merge_saved(&mut self) -> usize {
        let Loaded::Entries(saved, _) = load(&self.path, self.dimensions, self.now) else {
            return 0;
        };
        let mut merged = 0;
        for (key, entry) in saved {
            match self.entries.entry(key) {
                std::collections::hash_map::Entry::Occupied(mut mine) => {
                    let mine = mine.get_mut();
                    mine.last_used = mine.last_used.max(entry.last_used);
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(entry);
                    merged += 1;
                }
            }
        }
        merged
    }

    /// Drops entries unused for [`PRUNE_AFTER`], then the least recently used beyond
    /// `max_entries`; returns how many were dropped.
    fn prune(&mut self, max_entries: usize) -> usize {
        let before = self.entries.len();
        let cutoff = self.now.saturating_sub(PRUNE_AFTER.as_secs());
        self.entries.retain(|_, entry| entry.last_used >= cutoff);
        if self.entries.len() > max_entries {
            let mut by_use: Vec<(u64, u64)> = self
                .entries
                .iter()
                .map(|(&key, entry)| (entry.last_used, key))
                .collect();
            // Most recently used first; ties by key, so every process keeps the same ones.
            by_use.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            for &(_, key) in &by_use[max_entries..] {
                self.entries.remove(&key);
            }
        }
        before - self.entries.len()
    }

    /// The file's bytes.
    fn encode(&self) -> Vec<u8> {
        let record = RECORD_PREFIX_BYTES + 4 * self.dimensions;
        let mut out = Vec::with_capacity(HEADER_BYTES + self.entries.len() * record);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&u32::try_from(self.dimensions).unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        let mut keys: Vec<u64> = self.entries.keys().copied().collect();
        keys.sort_unstable();
        let mut vector_bytes = Vec::with_capacity(4 * self.dimensions);
        for key in keys {
            let entry = &self.entries[&key];
            vector_bytes.clear();
            for value in &entry.vector {
                vector_bytes.extend_from_slice(&value.to_le_bytes());
            }
            out.extend_from_slice(&key.to_le_bytes());
            out.extend_from_slice(&entry.last_used.to_le_bytes());
            out.extend_from_slice(&checksum(key, entry.last_used, &vector_bytes).to_le_bytes());
            out.extend_from_slice(&vector_bytes);
        }
        out
    }
}

/// How many entries of `dimensions` values fit in [`MAX_FILE_BYTES`].
fn max_entries(dimensions: usize) -> usize {
    let record = (RECORD_PREFIX_BYTES + 4 * dimensions) as u64;
    usize::try_from((MAX_FILE_BYTES - HEADER_BYTES as u64) / record).unwrap_or(usize::MAX)
}

/// Now, in seconds since the Unix epoch (0 before it).
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Entries dropped while reading, by cause.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Dropped {
    corrupt: usize,
    non_finite: usize,
    not_unit: usize,
}

impl Dropped {
    fn total(self) -> usize {
        self.corrupt + self.non_finite + self.not_unit
    }
}

/// What reading a cache file found.
#[derive(Debug)]
enum Loaded {
    Missing,
    Unreadable(UnreadableReason),
    Entries(HashMap<u64, Entry>, Dropped),
}

/// Reads the cache file at `path` (see the module documentation); last uses later than `now`
/// (a clock set back) count as `now`.
fn load(path: &Path, dimensions: usize, now: u64) -> Loaded {
    let io_reason = |error: io::Error| UnreadableReason::Io(error.to_string());
    let file = match crate::regular::open(path, OpenOptions::new().read(true), false) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Loaded::Missing,
        Err(error) => return Loaded::Unreadable(io_reason(error)),
    };
    let too_large = |bytes: u64| {
        Loaded::Unreadable(UnreadableReason::TooLarge {
            bytes,
            limit: MAX_FILE_BYTES,
        })
    };
    let size = match file.metadata() {
        Ok(metadata) => metadata.len(),
        Err(error) => return Loaded::Unreadable(io_reason(error)),
    };
    if size > MAX_FILE_BYTES {
        return too_large(size);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // Bounded even if the file grows while it is read.
    if let Err(error) = file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes) {
        return Loaded::Unreadable(io_reason(error));
    }
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return too_large(bytes.len() as u64);
    }
    match parse(&bytes, dimensions, now) {
        Ok((entries, dropped)) => Loaded::Entries(entries, dropped),
        Err(reason) => Loaded::Unreadable(reason),
    }
}

fn parse(
    bytes: &[u8],
    dimensions: usize,
    now: u64,
) -> Result<(HashMap<u64, Entry>, Dropped), UnreadableReason> {
    let size = bytes.len() as u64;
    let u64_at = |at: usize| -> u64 {
        let mut word = [0_u8; 8];
        word.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(word)
    };
    match bytes.get(..MAGIC.len()) {
        Some(magic) if magic == MAGIC => {}
        Some(magic) if magic.starts_with(MAGIC_FAMILY) => {
            return Err(UnreadableReason::OldFormat {
                found: String::from_utf8_lossy(magic).into_owned(),
            });
        }
        None if MAGIC.starts_with(bytes) => {
            return Err(UnreadableReason::Truncated { bytes: size });
        }
        _ => return Err(UnreadableReason::BadMagic),
    }
    if bytes.len() < HEADER_BYTES {
        return Err(UnreadableReason::Truncated { bytes: size });
    }
    let mut width = [0_u8; 4];
    width.copy_from_slice(&bytes[8..12]);
    let width = u32::from_le_bytes(width);
    if usize::try_from(width).ok() != Some(dimensions) {
        return Err(UnreadableReason::Width {
            found: u64::from(width),
            expected: dimensions,
        });
    }
    let count = u64_at(12);
    let record = RECORD_PREFIX_BYTES + 4 * dimensions;
    let expected = count
        .checked_mul(record as u64)
        .and_then(|body| body.checked_add(HEADER_BYTES as u64));
    if expected != Some(size) {
        return Err(UnreadableReason::Length { bytes: size, count });
    }
    let mut entries = HashMap::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut dropped = Dropped::default();
    for chunk in bytes[HEADER_BYTES..].chunks_exact(record) {
        let mut word = [0_u8; 8];
        let mut field = |at: usize| {
            word.copy_from_slice(&chunk[at..at + 8]);
            u64::from_le_bytes(word)
        };
        let (key, last_used, sum) = (field(0), field(8), field(16));
        let vector_bytes = &chunk[RECORD_PREFIX_BYTES..];
        if checksum(key, last_used, vector_bytes) != sum {
            dropped.corrupt += 1;
            continue;
        }
        let vector: Vec<f32> = vector_bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        match check_vector(&vector, dimensions) {
            Ok(()) => {}
            Err(InvalidVector::NonFinite) => {
                dropped.non_finite += 1;
                continue;
            }
            Err(InvalidVector::NotUnit { .. } | InvalidVector::Width { .. }) => {
                dropped.not_unit += 1;
                continue;
            }
        }
        entries.insert(
            key,
            Entry {
                vector,
                last_used: last_used.min(now),
            },
        );
    }
    Ok((entries, dropped))
}

/// The folder `path` is in (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The lock file of `path`, locked: waits up to [`LOCK_WAIT`] for another holder; `None` when
/// the lock cannot be had (the save goes on without it: the rename still keeps the file whole).
fn lock(path: &Path) -> Option<File> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let file = crate::regular::open(
        &PathBuf::from(name),
        OpenOptions::new().create(true).write(true).truncate(false),
        false,
    )
    .ok()?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(LOCK_RETRY);
            }
            Err(_) => return None,
        }
    }
}

/// Replaces `path` with `bytes` atomically: a uniquely named temporary file in the same folder
/// (`.NAME.RANDOM.tmp`), written and synced, renamed over `path`, then the folder synced (best
/// effort) so the rename survives a crash. Concurrent writers never share a temporary file;
/// the last rename wins, and every state of `path` is one writer's whole file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = parent_of(path);
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temporary = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(TEMPORARY_SUFFIX)
        .tempfile_in(parent)?;
    temporary.write_all(bytes)?;
    temporary.as_file().sync_all()?;
    temporary.persist(path).map_err(|error| error.error)?;
    sync_folder(parent);
    Ok(())
}

/// Syncs a folder's entries (after a rename in it); best effort, and only where a folder can be
/// opened as a file.
fn sync_folder(folder: &Path) {
    #[cfg(unix)]
    if let Ok(folder) = File::open(folder) {
        let _ = folder.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}

/// Removes, from the cache's folder, temporary files older than [`STALE_TEMPORARY`] and other
/// embedding caches (files `*.bin` starting with `SKEMB`) not written for [`PRUNE_AFTER`]: every
/// entry in them would be pruned, since a cache in use is rewritten at least every
/// [`TOUCH_INTERVAL`]. Best effort.
fn remove_stale_files(folder: &Path, current: &Path) {
    let Ok(listing) = std::fs::read_dir(folder) else {
        return;
    };
    let now = SystemTime::now();
    let age = |path: &Path| {
        std::fs::symlink_metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|metadata| metadata.modified().ok())
            .and_then(|modified| now.duration_since(modified).ok())
    };
    for entry in listing.take(MAX_SCANNED).flatten() {
        let path = entry.path();
        if path == current {
            continue;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let temporary = name.starts_with('.')
            && name.ends_with(TEMPORARY_SUFFIX)
            && name.contains(&format!(".{EXTENSION}."));
        if temporary {
            if age(&path).is_some_and(|age| age > STALE_TEMPORARY) {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        }
        let cache = path.extension().is_some_and(|ext| ext == EXTENSION)
            && age(&path).is_some_and(|age| age > PRUNE_AFTER)
            && is_cache_file(&path);
        if cache {
            let _ = std::fs::remove_file(&path);
            let mut lock = path.into_os_string();
            lock.push(".lock");
            let _ = std::fs::remove_file(PathBuf::from(lock));
        }
    }
}

/// Whether the file starts as embedding caches do.
fn is_cache_file(path: &Path) -> bool {
    let mut magic = [0_u8; MAGIC_FAMILY.len()];
    crate::regular::open(path, OpenOptions::new().read(true), false)
        .and_then(|mut file| file.read_exact(&mut magic))
        .is_ok()
        && &magic == MAGIC_FAMILY
}

mod warm;

#[cfg(test)]
mod tests;
