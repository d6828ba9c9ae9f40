//! Documents' vectors for ranking by meaning: held in memory, or left in the embedding cache
//! file they were checked in ([`crate::EmbeddingCache::vectors_for`]), which a query reads
//! through a chunk at a time: a warm start of a large library holds none of them. While the
//! file's stamp (length, times, inode) is as it was when its records were checked, they are
//! read as they are; once it is not (the file changed in place under a running session, by
//! another program or the disk), each record is checked again as it is read (its checksum, a
//! finite unit vector), and vectors that fail are not used.

use std::borrow::Cow;
use std::fs::File;
use std::sync::Arc;

use crate::regular::read_at;

/// How many bytes of the cache file a query reads at a time.
const CHUNK_BYTES: usize = 1 << 20;

/// Normalised vectors, one per document, in document order.
#[derive(Debug, Clone)]
pub struct Vectors {
    dimensions: usize,
    documents: usize,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Memory(Vec<f32>),
    File(Arc<InFile>),
}

/// Vectors left in a cache file: fixed-size records from `start`, each holding a vector at
/// `prefix` bytes into it.
#[derive(Debug)]
pub(crate) struct InFile {
    pub(crate) file: File,
    pub(crate) start: u64,
    pub(crate) record: usize,
    pub(crate) prefix: usize,
    /// Which record holds each document's vector, by record (a text two documents share is
    /// one record).
    pub(crate) places: Vec<(u64, u32)>,
    /// Each document's text hash: the key its record must have.
    pub(crate) keys: Vec<u64>,
    /// Whether a whole record read is as the cache wrote it, for this key.
    pub(crate) sound: fn(&[u8], u64) -> bool,
    /// The file's stamp when its records were checked (none: check every record read).
    pub(crate) checked: Option<FileStamp>,
}

/// What the kernel says of an open file: a write to it changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    dev: u64,
}

/// A stamp whose change time is this close to when it was taken may not tell a write in the
/// same tick of the clock.
const RACY_SECONDS: i64 = 1;

impl FileStamp {
    /// `file`'s stamp now; none when it cannot be told, or the file changed within
    /// [`RACY_SECONDS`] of now.
    #[cfg(unix)]
    pub(crate) fn of(file: &File) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let metadata = file.metadata().ok()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        let now = i64::try_from(now.as_secs()).ok()?;
        if metadata.ctime() >= now - RACY_SECONDS {
            return None;
        }
        Some(Self {
            len: metadata.len(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
            ino: metadata.ino(),
            dev: metadata.dev(),
        })
    }

    #[cfg(not(unix))]
    pub(crate) fn of(_file: &File) -> Option<Self> {
        None
    }
}

impl InFile {
    /// Whether the file is still as it was when its records were checked.
    fn unchanged(&self) -> bool {
        self.checked.is_some() && FileStamp::of(&self.file) == self.checked
    }
}

impl Vectors {
    /// `values` (`dimensions` per document) held in memory; none when they are not a whole
    /// number of vectors.
    pub fn in_memory(dimensions: usize, values: Vec<f32>) -> Option<Self> {
        if dimensions == 0 || !values.len().is_multiple_of(dimensions) {
            return None;
        }
        Some(Self {
            dimensions,
            documents: values.len() / dimensions,
            kind: Kind::Memory(values),
        })
    }

    /// Vectors of `documents` documents left in a cache file (its records checked before).
    pub(crate) fn in_file(dimensions: usize, documents: usize, mut file: InFile) -> Self {
        file.places.sort_unstable();
        Self {
            dimensions,
            documents,
            kind: Kind::File(Arc::new(file)),
        }
    }

    /// How many documents.
    pub fn len(&self) -> usize {
        self.documents
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.documents == 0
    }

    /// The width of each vector.
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// Every vector, in document order (read from the file when left there; `None` when that
    /// read fails).
    pub fn to_vec(&self) -> Option<Vec<f32>> {
        match &self.kind {
            Kind::Memory(values) => Some(values.clone()),
            Kind::File(file) => {
                let mut values = vec![0.0_f32; self.documents * self.dimensions];
                let ok = self.each_in_file(file, |document, vector| {
                    let at = document * self.dimensions;
                    values[at..at + self.dimensions].copy_from_slice(vector);
                });
                ok.then_some(values)
            }
        }
    }

    /// Document `document`'s vector.
    pub fn vector(&self, document: usize) -> Option<Cow<'_, [f32]>> {
        match &self.kind {
            Kind::Memory(values) => values
                .chunks_exact(self.dimensions)
                .nth(document)
                .map(Cow::Borrowed),
            Kind::File(file) => {
                let &(record, _) = file
                    .places
                    .iter()
                    .find(|(_, place)| *place as usize == document)?;
                let mut bytes = vec![0_u8; file.record];
                let unchanged = file.unchanged();
                read_at(
                    &file.file,
                    &mut bytes,
                    file.start + record * file.record as u64,
                )
                .ok()?;
                let trusted = unchanged && file.unchanged();
                (trusted || (file.sound)(&bytes, *file.keys.get(document)?))
                    .then(|| Cow::Owned(decode(&bytes[file.prefix..])))
            }
        }
    }

    /// The dot product of `query` with every document's vector (their cosine: both are
    /// normalised); `None` when the query has another width or the file cannot be read.
    pub fn similarities(&self, query: &[f32]) -> Option<Vec<f32>> {
        if query.len() != self.dimensions {
            return None;
        }
        let dot = |row: &[f32]| -> f32 { row.iter().zip(query).map(|(a, b)| a * b).sum() };
        match &self.kind {
            Kind::Memory(values) => Some(values.chunks_exact(self.dimensions).map(dot).collect()),
            Kind::File(file) => {
                let mut cosines = vec![0.0_f32; self.documents];
                let ok = self.each_in_file(file, |document, vector| {
                    cosines[document] = dot(vector);
                });
                ok.then_some(cosines)
            }
        }
    }

    /// Calls `each` with every document's vector from the file, reading the records a chunk
    /// at a time in file order; false when a read fails.
    fn each_in_file(&self, file: &InFile, mut each: impl FnMut(usize, &[f32])) -> bool {
        let per_chunk = (CHUNK_BYTES / file.record.max(1)).max(1) as u64;
        let unchanged = file.unchanged();
        let mut bytes = Vec::new();
        let mut vector = vec![0.0_f32; self.dimensions];
        let mut places = file.places.iter().peekable();
        while let Some(&&(first, _)) = places.peek() {
            // The chunk starting at the next record needed.
            let last = places
                .clone()
                .take_while(|(record, _)| *record < first + per_chunk)
                .last()
                .map_or(first, |(record, _)| *record);
            // Within one chunk: well under `usize` anywhere.
            let Ok(span) = usize::try_from(last - first + 1) else {
                return false;
            };
            bytes.resize(span * file.record, 0);
            if read_at(
                &file.file,
                &mut bytes,
                file.start + first * file.record as u64,
            )
            .is_err()
            {
                return false;
            }
            while let Some(&&(record, document)) = places.peek() {
                if record > last {
                    break;
                }
                places.next();
                let at = usize::try_from(record - first).unwrap_or(span) * file.record;
                let Some(whole) = bytes.get(at..at + file.record) else {
                    return false;
                };
                let key = file
                    .keys
                    .get(document as usize)
                    .copied()
                    .unwrap_or_default();
                if !unchanged && !(file.sound)(whole, key) {
                    return false;
                }
                let at = at + file.prefix;
                for (value, b) in vector
                    .iter_mut()
                    .zip(bytes[at..at + self.dimensions * 4].chunks_exact(4))
                {
                    *value = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
                if (document as usize) < self.documents {
                    each(document as usize, &vector);
                }
            }
        }
        // Read as they were, unchecked: only if the file did not move meanwhile either.
        !unchanged || file.unchanged()
    }
}

/// Little-endian f32s.
fn decode(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}
