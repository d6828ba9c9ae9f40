//! The embedding cache: vectors on disk keyed by the model and a hash of each text, so only new
//! or changed skills are embedded again.
//!
//! File format (little endian): magic `SKEMB001`, dimensions `u32`, count `u64`, then `count`
//! records of a `u64` text hash followed by `dimensions` `f32`s. A file that does not parse is
//! ignored (and rewritten on save).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"SKEMB001";

/// A stable 64-bit hash of a text (FNV-1a), the same on every platform and Rust version.
pub fn text_hash(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Cached vectors of one model.
#[derive(Debug, Clone, Default)]
pub struct EmbeddingCache {
    path: PathBuf,
    dimensions: usize,
    vectors: HashMap<u64, Vec<f32>>,
    dirty: bool,
}

impl EmbeddingCache {
    /// The cache file for a model under `dir` (the user cache folder).
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
        dir.join(format!("{safe}.bin"))
    }

    /// Opens the cache at `path` (empty when the file is missing or unreadable).
    pub fn open(path: &Path, dimensions: usize) -> Self {
        let vectors = read(path, dimensions).unwrap_or_default();
        Self {
            path: path.to_path_buf(),
            dimensions,
            vectors,
            dirty: false,
        }
    }

    /// The vector of a text hash, if cached.
    pub fn get(&self, hash: u64) -> Option<&[f32]> {
        self.vectors.get(&hash).map(Vec::as_slice)
    }

    /// Caches a vector.
    pub fn insert(&mut self, hash: u64, vector: Vec<f32>) {
        if vector.len() == self.dimensions {
            self.vectors.insert(hash, vector);
            self.dirty = true;
        }
    }

    /// How many vectors are cached.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// Writes the cache if it changed (to a temporary file renamed into place, so a crash
    /// never leaves a half-written cache).
    pub fn save(&mut self) -> std::io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let temporary = self.path.with_extension("tmp");
        let mut out = Vec::with_capacity(20 + self.vectors.len() * (8 + 4 * self.dimensions));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&u32::try_from(self.dimensions).unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&(self.vectors.len() as u64).to_le_bytes());
        let mut keys: Vec<&u64> = self.vectors.keys().collect();
        keys.sort();
        for key in keys {
            out.extend_from_slice(&key.to_le_bytes());
            for value in &self.vectors[key] {
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
        std::fs::File::create(&temporary)?.write_all(&out)?;
        std::fs::rename(&temporary, &self.path)?;
        self.dirty = false;
        Ok(())
    }
}

fn read(path: &Path, dimensions: usize) -> Option<HashMap<u64, Vec<f32>>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .read_to_end(&mut bytes)
        .ok()?;
    let header = bytes.get(..20)?;
    if &header[..8] != MAGIC
        || u32::from_le_bytes(header[8..12].try_into().ok()?) as usize != dimensions
    {
        return None;
    }
    let count = usize::try_from(u64::from_le_bytes(header[12..20].try_into().ok()?)).ok()?;
    let record = 8 + 4 * dimensions;
    let body = bytes.get(20..)?;
    if body.len() != count.checked_mul(record)? {
        return None;
    }
    let mut vectors = HashMap::with_capacity(count);
    for chunk in body.chunks_exact(record) {
        let hash = u64::from_le_bytes(chunk[..8].try_into().ok()?);
        let vector = chunk[8..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        vectors.insert(hash, vector);
    }
    Some(vectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_ignores_a_corrupt_file() {
        let temp = std::env::temp_dir().join(format!("skillet-cache-test-{}", std::process::id()));
        let path = EmbeddingCache::path_for(&temp, "all-MiniLM-L6-v2/90868376");
        assert!(path.ends_with("all-MiniLM-L6-v2_90868376.bin"));
        let mut cache = EmbeddingCache::open(&path, 3);
        assert!(cache.is_empty());
        cache.insert(text_hash("a"), vec![1.0, 0.0, 0.5]);
        cache.insert(text_hash("b"), vec![0.0, 1.0]); // wrong size: ignored
        cache.save().unwrap();
        let reopened = EmbeddingCache::open(&path, 3);
        assert_eq!(reopened.len(), 1);
        assert_eq!(reopened.get(text_hash("a")), Some(&[1.0, 0.0, 0.5][..]));
        assert!(
            EmbeddingCache::open(&path, 4).is_empty(),
            "another size is another cache"
        );
        std::fs::write(&path, b"SKEMB001 broken").unwrap();
        assert!(EmbeddingCache::open(&path, 3).is_empty());
        let _ = std::fs::remove_dir_all(&temp);
    }

    #[test]
    fn hashes_are_stable() {
        assert_eq!(text_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(text_hash("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
