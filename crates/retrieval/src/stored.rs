//! A word index ([`crate::Bm25`]) written to a file once and read back with its postings left
//! in the file: a start loads the documents' lengths and the sorted dictionary, and reads a
//! term's postings only when a query has the term. The file is the caller's to check (its
//! owner, a digest of it): this module checks only that the section's parts fit together, so
//! a damaged section is refused, never read past its end.
//!
//! # Section format (little endian)
//!
//! `stemming` u8 (0 none, 1 light), document count u32, term count u32, posting count u64,
//! then each document's length (u32), each term's end in the dictionary (u32, cumulative),
//! each term's end in the postings (u32, cumulative), each term's postings' checksum (u64,
//! FNV-1a of their bytes), the dictionary (the terms' UTF-8 bytes in ascending byte order, each
//! once), and the postings (document u32, count u16) term by term.
//!
//! The caller checks the file whole when it opens it; a term's postings are checked again
//! against their checksum when a query reads them, so a file changed in place under a running
//! session (by another program, or the disk) is noticed: the postings are not used and the
//! index says it is damaged ([`StoredPostings::damaged`]).

use std::fs::File;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::fnv::{FNV_OFFSET, fnv1a};

use crate::regular::read_at;
use crate::tokenize::Stemming;

/// One posting's bytes: the document (u32) and how often the term occurs in it (u16).
const POSTING_BYTES: usize = 6;
/// Stemming, document count, term count, posting count.
const HEADER_BYTES: usize = 1 + 4 + 4 + 8;

/// The postings of a stored index, left in its file.
#[derive(Debug)]
pub(crate) struct StoredPostings {
    file: Arc<File>,
    /// The dictionary: every term's bytes, in ascending order.
    dictionary: Vec<u8>,
    /// Where each term ends in `dictionary`.
    term_ends: Vec<u32>,
    /// Where each term's postings end (in postings, not bytes).
    posting_ends: Vec<u32>,
    /// Each term's postings' checksum.
    checksums: Vec<u64>,
    /// A term's postings read did not match their checksum (or could not be read).
    damaged: AtomicBool,
    /// Where the postings begin in the file.
    start: u64,
    documents: u32,
}

impl StoredPostings {
    /// The position of `term` in the dictionary.
    fn find(&self, term: &str) -> Option<usize> {
        let term = term.as_bytes();
        let (mut low, mut high) = (0, self.term_ends.len());
        while low < high {
            let middle = low + (high - low) / 2;
            match self.term(middle).cmp(term) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(middle),
            }
        }
        None
    }

    fn term(&self, index: usize) -> &[u8] {
        let start = index
            .checked_sub(1)
            .map_or(0, |before| self.term_ends[before] as usize);
        &self.dictionary[start..self.term_ends[index] as usize]
    }

    /// The range of term `index`'s postings.
    fn range(&self, index: usize) -> (usize, usize) {
        let start = index
            .checked_sub(1)
            .map_or(0, |before| self.posting_ends[before] as usize);
        (start, self.posting_ends[index] as usize)
    }

    /// How many documents have `term`, without reading its postings.
    pub(crate) fn frequency(&self, term: &str) -> usize {
        self.find(term).map_or(0, |index| {
            let (start, end) = self.range(index);
            end - start
        })
    }

    /// Every term with its postings, read from the file (a term whose read fails is left out,
    /// as [`StoredPostings::get`] leaves it).
    pub(crate) fn all(&self) -> Vec<(String, Vec<(u32, u16)>)> {
        (0..self.term_ends.len())
            .filter_map(|index| {
                let term = String::from_utf8_lossy(self.term(index)).into_owned();
                let list = self.get(&term)?;
                Some((term, list))
            })
            .collect()
    }

    /// Whether postings read did not match the file as it was checked: the index's scores
    /// are not to be used.
    pub(crate) fn damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    /// `term`'s postings, read from the file (none when no document has it, or they are not
    /// as written: then [`StoredPostings::damaged`]).
    pub(crate) fn get(&self, term: &str) -> Option<Vec<(u32, u16)>> {
        let index = self.find(term)?;
        let (start, end) = self.range(index);
        let mut bytes = vec![0_u8; (end - start) * POSTING_BYTES];
        let read = read_at(
            &self.file,
            &mut bytes,
            self.start + (start * POSTING_BYTES) as u64,
        );
        if read.is_err() || fnv1a(FNV_OFFSET, &bytes) != self.checksums[index] {
            self.damaged.store(true, Ordering::Relaxed);
            return None;
        }
        Some(
            bytes
                .chunks_exact(POSTING_BYTES)
                .map(|b| {
                    (
                        u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                        u16::from_le_bytes([b[4], b[5]]),
                    )
                })
                // Checked whole when opened; a document past the count is still never indexed.
                .filter(|&(document, _)| document < self.documents)
                .collect(),
        )
    }
}

/// Appends the section of an index to `out`: its stemming, lengths and postings (in any
/// order; the section sorts them).
pub(crate) fn write<'a>(
    out: &mut Vec<u8>,
    stemming: Stemming,
    lengths: &[u32],
    postings: impl IntoIterator<Item = (&'a str, &'a [(u32, u16)])>,
) {
    let mut terms: Vec<(&str, &[(u32, u16)])> = postings.into_iter().collect();
    terms.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let count: usize = terms.iter().map(|(_, list)| list.len()).sum();
    out.push(match stemming {
        Stemming::None => 0,
        Stemming::Light => 1,
    });
    out.extend_from_slice(&u32_of(lengths.len()).to_le_bytes());
    out.extend_from_slice(&u32_of(terms.len()).to_le_bytes());
    out.extend_from_slice(&(count as u64).to_le_bytes());
    for length in lengths {
        out.extend_from_slice(&length.to_le_bytes());
    }
    let mut end = 0;
    for (term, _) in &terms {
        end += term.len();
        out.extend_from_slice(&u32_of(end).to_le_bytes());
    }
    let mut end = 0;
    for (_, list) in &terms {
        end += list.len();
        out.extend_from_slice(&u32_of(end).to_le_bytes());
    }
    let mut bytes = Vec::new();
    for (_, list) in &terms {
        bytes.clear();
        for (document, count) in *list {
            bytes.extend_from_slice(&document.to_le_bytes());
            bytes.extend_from_slice(&count.to_le_bytes());
        }
        out.extend_from_slice(&fnv1a(FNV_OFFSET, &bytes).to_le_bytes());
    }
    for (term, _) in &terms {
        out.extend_from_slice(term.as_bytes());
    }
    for (_, list) in &terms {
        for (document, count) in *list {
            out.extend_from_slice(&document.to_le_bytes());
            out.extend_from_slice(&count.to_le_bytes());
        }
    }
}

fn u32_of(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// What [`read`] gives back: the section's stemming, documents' lengths and postings.
pub(crate) type Section = (Stemming, Vec<u32>, StoredPostings);

/// Reads the section of `len` bytes at `offset` in `file`, all but its postings; an error when
/// its parts do not fit together (lengths that do not add up to `len`, a dictionary out of
/// order or not UTF-8, ends that go back).
pub(crate) fn read(file: Arc<File>, offset: u64, len: u64) -> io::Result<Section> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    let mut header = [0_u8; HEADER_BYTES];
    if len < HEADER_BYTES as u64 {
        return Err(bad("a word index section shorter than its header"));
    }
    // The postings are read later: the file must hold the whole section now.
    if offset
        .checked_add(len)
        .is_none_or(|end| end > file.metadata().map_or(0, |metadata| metadata.len()))
    {
        return Err(bad("a word index section past the end of its file"));
    }
    read_at(&file, &mut header, offset)?;
    let stemming = match header[0] {
        0 => Stemming::None,
        1 => Stemming::Light,
        _ => return Err(bad("an unknown stemming")),
    };
    let documents = u32::from_le_bytes([header[1], header[2], header[3], header[4]]);
    let terms = u32::from_le_bytes([header[5], header[6], header[7], header[8]]) as usize;
    let postings = u64::from_le_bytes(header[9..17].try_into().unwrap_or_default());
    // Everything but the dictionary's bytes is sized by the counts: checked against the
    // section's length before anything of that size is allocated.
    let fixed = (u64::from(documents) + 2 * terms as u64) * 4 + terms as u64 * 8;
    let posting_bytes = postings.checked_mul(POSTING_BYTES as u64);
    let Some(dictionary_len) = posting_bytes
        .and_then(|bytes| bytes.checked_add(fixed + HEADER_BYTES as u64))
        .and_then(|used| len.checked_sub(used))
    else {
        return Err(bad("word index counts larger than the section"));
    };
    let mut numbers = vec![0_u8; usize::try_from(fixed).map_err(|_| bad("too large"))?];
    read_at(&file, &mut numbers, offset + HEADER_BYTES as u64)?;
    let mut values = numbers
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let lengths: Vec<u32> = values.by_ref().take(documents as usize).collect();
    let term_ends: Vec<u32> = values.by_ref().take(terms).collect();
    let posting_ends: Vec<u32> = values.take(terms).collect();
    let checksums: Vec<u64> = numbers[(documents as usize + 2 * terms) * 4..]
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect();
    drop(numbers);
    let ascending = |ends: &[u32], last: u64| {
        ends.windows(2).all(|pair| pair[0] <= pair[1])
            && ends.last().map_or(0, |&end| u64::from(end)) == last
    };
    if !ascending(&term_ends, dictionary_len) || !ascending(&posting_ends, postings) {
        return Err(bad("word index ends out of order"));
    }
    let mut dictionary = vec![0_u8; usize::try_from(dictionary_len).map_err(|_| bad("too large"))?];
    let dictionary_at = offset + HEADER_BYTES as u64 + fixed;
    read_at(&file, &mut dictionary, dictionary_at)?;
    let stored = StoredPostings {
        file,
        dictionary,
        term_ends,
        posting_ends,
        checksums,
        damaged: AtomicBool::new(false),
        start: dictionary_at + dictionary_len,
        documents,
    };
    let sorted = (1..terms).all(|index| stored.term(index - 1) < stored.term(index));
    if !sorted || std::str::from_utf8(&stored.dictionary).is_err() {
        return Err(bad("a word index dictionary out of order or not UTF-8"));
    }
    Ok((stemming, lengths, stored))
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;
    use crate::Bm25;

    /// A file in the temp folder holding `bytes`, removed when dropped.
    struct Temporary(std::path::PathBuf);

    impl Temporary {
        fn new(name: &str, bytes: &[u8]) -> Self {
            let path =
                std::env::temp_dir().join(format!("skillet-stored-{}-{name}", std::process::id()));
            File::create(&path).unwrap().write_all(bytes).unwrap();
            Self(path)
        }

        fn open(&self) -> Arc<File> {
            Arc::new(File::open(&self.0).unwrap())
        }
    }

    impl Drop for Temporary {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn index() -> Bm25 {
        Bm25::build_with_bodies(
            [
                ("deploy services deploy", "Deploy the services with argocd."),
                (
                    "review contracts",
                    "Redline a contract; review clauses. Café naïve.",
                ),
                ("plain", ""),
                ("charts", "Plot a chart of monthly sales, then deploy it."),
            ],
            Stemming::Light,
        )
    }

    const QUERIES: [&str; 5] = [
        "deploy services",
        "redline contract clauses",
        "argo cd",
        "café chart",
        "nothing at all here",
    ];

    #[test]
    fn an_index_read_back_scores_bit_for_bit_as_the_one_written() {
        let built = index();
        let mut bytes = b"prefix".to_vec();
        built.write_section(&mut bytes);
        let file = Temporary::new("roundtrip", &bytes);
        let read = Bm25::read_section(file.open(), 6, (bytes.len() - 6) as u64).unwrap();
        assert_eq!(read.len(), built.len());
        let bits = |scores: Vec<f32>| -> Vec<u32> { scores.iter().map(|s| s.to_bits()).collect() };
        for query in QUERIES {
            assert_eq!(
                bits(read.scores(query)),
                bits(built.scores(query)),
                "{query}"
            );
            assert_eq!(
                read.query_weight(query).to_bits(),
                built.query_weight(query).to_bits()
            );
            for document in 0..built.len() {
                assert_eq!(
                    read.term_scores(query, document),
                    built.term_scores(query, document)
                );
            }
        }
        // Written again from the file, it is the same section.
        let mut again = b"prefix".to_vec();
        read.write_section(&mut again);
        assert_eq!(again, bytes);
    }

    #[test]
    fn a_section_whose_parts_do_not_fit_is_refused_never_read_past() {
        let mut bytes = Vec::new();
        index().write_section(&mut bytes);
        let len = bytes.len() as u64;
        // Cut short anywhere, or read as longer than it is.
        for cut in [0, 5, HEADER_BYTES, bytes.len() / 2, bytes.len() - 1] {
            let file = Temporary::new(&format!("cut-{cut}"), &bytes[..cut]);
            assert!(read(file.open(), 0, cut as u64).is_err(), "cut at {cut}");
            assert!(
                read(file.open(), 0, len).is_err(),
                "cut at {cut}, full length"
            );
        }
        // Counts past the section (a garbled header).
        let mut garbled = bytes.clone();
        garbled[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
        let file = Temporary::new("counts", &garbled);
        assert!(read(file.open(), 0, len).is_err());
        // A dictionary out of order.
        let mut swapped = bytes.clone();
        let (_, _, stored) = read(Temporary::new("whole", &bytes).open(), 0, len).unwrap();
        let at = HEADER_BYTES + 4 * (4 + 2 * stored.term_ends.len()) + 8 * stored.term_ends.len();
        let first = stored.term(0).len();
        swapped[at..at + first].fill(b'z');
        let file = Temporary::new("order", &swapped);
        assert!(read(file.open(), 0, len).is_err());
    }

    #[test]
    fn postings_changed_in_place_after_opening_are_noticed_not_used() {
        let built = index();
        let mut bytes = Vec::new();
        built.write_section(&mut bytes);
        let file = Temporary::new("in-place", &bytes);
        let read = Bm25::read_section(file.open(), 0, bytes.len() as u64).unwrap();
        assert!(!read.damaged());
        assert_eq!(read.scores("deploy"), built.scores("deploy"));
        // The same file (its inode) written over: the postings no longer match.
        let mut garbled = bytes.clone();
        let last = garbled.len() - 1;
        garbled[last - 8..].fill(0xff);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file.0)
            .unwrap()
            .write_all(&garbled)
            .unwrap();
        for query in QUERIES {
            let _ = read.scores(query);
        }
        assert!(read.damaged());
        // A matcher over it ranks by meaning alone, or not at all.
        let matcher = crate::Matcher::from_indexes(read.clone(), None);
        let (mode, ranked) = matcher.rank("deploy services", None, crate::Mode::Hybrid, 3);
        assert_eq!((mode, ranked.len()), (crate::Mode::Lexical, 0));
        let with_vectors = crate::Matcher::from_indexes(read, None)
            .with_vectors(2, vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8, 1.0, 0.0]);
        let (mode, ranked) =
            with_vectors.rank("deploy services", Some(&[1.0, 0.0]), crate::Mode::Hybrid, 2);
        assert_eq!(mode, crate::Mode::Semantic);
        assert_eq!(ranked.len(), 2);
    }
}
