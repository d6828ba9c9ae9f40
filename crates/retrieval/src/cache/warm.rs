//! A warm library's vectors, checked in the cache file and left there.

use std::fs::OpenOptions;
use std::io::{self, Read as _};
use std::path::Path;

use super::{
    EmbeddingCache, HEADER_BYTES, MAGIC, MAX_FILE_BYTES, RECORD_PREFIX_BYTES, TOUCH_INTERVAL,
    check_vector, checksum, unix_now,
};
use crate::vectors::{FileStamp, InFile, Vectors};

impl EmbeddingCache {
    /// The vectors of `hashes`, in their order, checked in the cache file at `path` without
    /// loading the rest, and left there (a query reads them through, [`Vectors`]): the warm
    /// start of a library whose every skill is cached, sound and used within
    /// [`TOUCH_INTERVAL`]. `None` when any is not (or the file cannot be read as a whole):
    /// then [`EmbeddingCache::open`] takes over, embeds, drops, touches and saves as ever, so
    /// both ways give the same vectors. The file stays open: a save renaming a new cache over
    /// it leaves these vectors as they were checked.
    pub fn vectors_for(path: &Path, dimensions: usize, hashes: &[u64]) -> Option<Vectors> {
        let now = unix_now();
        let file = crate::regular::open(path, OpenOptions::new().read(true), false).ok()?;
        // Taken before the records are checked: a change while they are changes it.
        let checked = FileStamp::of(&file);
        let size = file.metadata().ok()?.len();
        if size > MAX_FILE_BYTES || size < HEADER_BYTES as u64 {
            return None;
        }
        let mut reader = io::BufReader::with_capacity(1 << 16, (&file).take(size));
        let mut header = [0_u8; HEADER_BYTES];
        reader.read_exact(&mut header).ok()?;
        let width = u32::from_le_bytes(header[8..12].try_into().ok()?);
        let count = u64::from_le_bytes(header[12..20].try_into().ok()?);
        let record = RECORD_PREFIX_BYTES + 4 * dimensions;
        let expected = count
            .checked_mul(record as u64)
            .and_then(|body| body.checked_add(HEADER_BYTES as u64));
        if &header[..8] != MAGIC
            || usize::try_from(width).ok() != Some(dimensions)
            || expected != Some(size)
        {
            return None;
        }
        let mut wanted: std::collections::HashMap<u64, Vec<u32>> =
            std::collections::HashMap::with_capacity(hashes.len());
        for (index, hash) in hashes.iter().enumerate() {
            wanted
                .entry(*hash)
                .or_default()
                .push(u32::try_from(index).ok()?);
        }
        let mut places = Vec::with_capacity(hashes.len());
        let mut taken: std::collections::HashSet<u64> = std::collections::HashSet::new();
        let mut chunk = vec![0_u8; record];
        let mut vector = Vec::with_capacity(dimensions);
        for at in 0..count {
            reader.read_exact(&mut chunk).ok()?;
            let field =
                |at: usize| u64::from_le_bytes(chunk[at..at + 8].try_into().unwrap_or_default());
            let (key, last_used, sum) = (field(0), field(8), field(16));
            // Another library's entry is not looked into; a key met twice (no save writes
            // one) is left to the whole path.
            let Some(documents) = wanted.remove(&key) else {
                if !taken.insert(key) {
                    return None;
                }
                continue;
            };
            taken.insert(key);
            let vector_bytes = &chunk[RECORD_PREFIX_BYTES..];
            // A damaged, unusable or stale entry: the whole path decides.
            if checksum(key, last_used, vector_bytes) != sum
                || last_used.min(now).saturating_add(TOUCH_INTERVAL.as_secs()) <= now
            {
                return None;
            }
            vector.clear();
            vector.extend(
                vector_bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            check_vector(&vector, dimensions).ok()?;
            places.extend(documents.into_iter().map(|document| (at, document)));
        }
        drop(reader);
        (places.len() == hashes.len()).then(|| {
            Vectors::in_file(
                dimensions,
                hashes.len(),
                InFile {
                    file,
                    start: HEADER_BYTES as u64,
                    record,
                    prefix: RECORD_PREFIX_BYTES,
                    places,
                    keys: hashes.to_vec(),
                    sound: record_sound,
                    checked,
                },
            )
        })
    }
}

/// Whether a record is as a save wrote it for the text of hash `key`: its key is that one, its
/// checksum holds and its vector is a finite unit vector (of the width the record's length
/// gives). A sound record of another text (a whole other cache copied over the file) is not.
fn record_sound(record: &[u8], key: u64) -> bool {
    let Some((prefix, vector_bytes)) = record.split_at_checked(RECORD_PREFIX_BYTES) else {
        return false;
    };
    let field = |at: usize| u64::from_le_bytes(prefix[at..at + 8].try_into().unwrap_or_default());
    let vector: Vec<f32> = vector_bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    field(0) == key
        && checksum(field(0), field(8), vector_bytes) == field(16)
        && check_vector(&vector, vector_bytes.len() / 4).is_ok()
}
