//! A library's two word indexes (BM25 over the skills' own texts, and over their texts with
//! their bodies' words: [`skillet_retrieval::Matcher`]) kept between starts, beside its facts
//! ([`crate::facts`]), so a warm start neither builds them nor holds their postings: it reads
//! the documents' lengths and the dictionaries, and a query reads the postings of its own
//! terms from the file.
//!
//! The file is keyed by what the indexes were built from: [`Facts::identity`] (every
//! `SKILL.md`'s path and stamp, in the library's order) and every skill's own text. A start
//! whose key differs builds the indexes from the facts (each changed body read again, the rest
//! from the facts file) and writes the file anew; a start whose facts are not all known to be
//! current (a file changed while it was read) neither uses nor writes it. A file that is not
//! the user's own, torn, garbled, or over [`MAX_WORDS_FILE_BYTES`] is not used: its digest
//! (SHA-256 of everything after the header) is checked before any of it is.
//!
//! # Format (little endian)
//!
//! Magic `SKWORD02`, the key (32 bytes), the digest (32 bytes), the own-text section's length
//! (u64), the blend section's length (u64, 0: none), then the two sections
//! ([`Bm25::write_section`]).

use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest as _, Sha256};
use skillet_retrieval::{Bm25, Matcher};

use crate::facts::{Facts, make_private_dir, open_own, remove_unused};

/// The largest word index file used (about 100,000 skills' bodies' words); a larger one is
/// built again, in memory.
pub const MAX_WORDS_FILE_BYTES: u64 = 1024 * 1024 * 1024;
/// The file's first bytes: the format.
const MAGIC: &[u8; 8] = b"SKWORD02";
/// Magic, key, digest, two section lengths.
const HEADER_BYTES: usize = 8 + 32 + 32 + 8 + 8;
/// How much of the file is read at a time to check its digest.
const CHUNK_BYTES: usize = 256 * 1024;

/// Where and under which key a library's word indexes are kept.
pub(crate) struct Stored<'a> {
    file: &'a Path,
    key: [u8; 32],
    /// How many skills the library has: the indexes kept must have as many documents.
    documents: usize,
}

impl<'a> Stored<'a> {
    /// The place of `library`'s indexes of `own` texts with the bodies of `facts`: none when
    /// there is no cache folder, or the facts are not all known to be current.
    pub(crate) fn of(
        facts: &'a Facts,
        library: &skillet_skills::Library,
        own: &[String],
    ) -> Option<Self> {
        let file = facts.words_file()?;
        let identity = facts.identity(library)?;
        let mut hasher = Sha256::new();
        hasher.update(MAGIC);
        hasher.update(identity);
        hasher.update((own.len() as u64).to_le_bytes());
        for text in own {
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        }
        Some(Self {
            file,
            key: hasher.finalize().into(),
            documents: own.len(),
        })
    }

    /// The indexes kept under this key, when the file is whole and the user's own.
    pub(crate) fn load(&self) -> Option<Matcher> {
        let (mut file, len) = open_own(self.file, MAX_WORDS_FILE_BYTES)?;
        // What the digest is checked on is what is read after: the file as it was before.
        let before = stamp(&file)?;
        let mut header = [0_u8; HEADER_BYTES];
        file.read_exact(&mut header).ok()?;
        let (magic, rest) = header.split_at(8);
        let (key, rest) = rest.split_at(32);
        let (digest, rest) = rest.split_at(32);
        let own_len = u64::from_le_bytes(rest[..8].try_into().ok()?);
        let blend_len = u64::from_le_bytes(rest[8..].try_into().ok()?);
        let whole = own_len
            .checked_add(blend_len)
            .and_then(|sections| sections.checked_add(HEADER_BYTES as u64));
        if magic != MAGIC || key != self.key || whole != Some(len) {
            return None;
        }
        // Checked whole before any of it is used; read a chunk at a time, not held.
        let mut hasher = Sha256::new();
        let mut chunk = vec![0_u8; CHUNK_BYTES];
        loop {
            let read = file.read(&mut chunk).ok()?;
            if read == 0 {
                break;
            }
            hasher.update(&chunk[..read]);
        }
        if hasher.finalize().as_slice() != digest {
            return None;
        }
        let file = Arc::new(file);
        let start = HEADER_BYTES as u64;
        let own = Bm25::read_section(Arc::clone(&file), start, own_len).ok()?;
        // A file under this key holds this library's documents, in both indexes (every index
        // kept has a blend); one that does not (made to look as if it did) is not used. Nor is
        // one written over in place while it was checked and read.
        if blend_len == 0 {
            return None;
        }
        let blend = Bm25::read_section(Arc::clone(&file), start + own_len, blend_len).ok()?;
        if own.len() != self.documents || blend.len() != self.documents || stamp(&file)? != before {
            return None;
        }
        Some(Matcher::from_indexes(own, Some(blend)))
    }

    /// Keeps `matcher`'s word indexes under this key (replacing the file whole), then removes
    /// other libraries' files unused for a month.
    pub(crate) fn save(&self, matcher: &Matcher) -> std::io::Result<()> {
        let (own, blend) = matcher.word_indexes();
        let mut sections = Vec::new();
        own.write_section(&mut sections);
        let own_len = sections.len() as u64;
        if let Some(blend) = blend {
            blend.write_section(&mut sections);
        }
        let blend_len = sections.len() as u64 - own_len;
        let mut bytes = Vec::with_capacity(HEADER_BYTES + sections.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&self.key);
        bytes.extend_from_slice(&Sha256::digest(&sections));
        bytes.extend_from_slice(&own_len.to_le_bytes());
        bytes.extend_from_slice(&blend_len.to_le_bytes());
        bytes.extend_from_slice(&sections);
        drop(sections);
        let dir = self.file.parent().unwrap_or(Path::new("."));
        make_private_dir(dir)?;
        skillet_retrieval::write_atomically(self.file, &bytes)?;
        remove_unused(dir, self.file);
        Ok(())
    }
}

#[cfg(test)]
mod tests;

/// What the kernel says of an open file: its length, modification and change times (a write
/// moves them).
type FileStamp = (u64, std::time::SystemTime, Option<(i64, i64)>);

/// The stamp of an open file.
fn stamp(file: &std::fs::File) -> Option<FileStamp> {
    let metadata = file.metadata().ok()?;
    #[cfg(unix)]
    let changed = {
        use std::os::unix::fs::MetadataExt as _;
        Some((metadata.ctime(), metadata.ctime_nsec()))
    };
    #[cfg(not(unix))]
    let changed = None;
    Some((metadata.len(), metadata.modified().ok()?, changed))
}
