//! Okapi BM25 over skill documents.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::sync::Arc;

use crate::stored::StoredPostings;

/// The index's maps: keyed by skills' words, hashed with a per-process seed.
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

use crate::tokenize::{Stemming, tokens};

/// BM25's term-frequency saturation.
pub const K1: f32 = 1.2;
/// BM25's length normalisation.
pub const B: f32 = 0.75;

/// The terms a query is scored by, each once, in query order: its words, then adjacent words
/// joined ("argo cd" finds "argocd", "type script" "typescript"; a join no document has costs
/// nothing).
pub fn query_terms(query: &str, stemming: Stemming) -> Vec<String> {
    let words = tokens(query, stemming);
    let joined = words
        .windows(2)
        .map(|pair| format!("{}{}", pair[0], pair[1]));
    let mut seen = std::collections::HashSet::new();
    words
        .iter()
        .cloned()
        .chain(joined)
        .filter(|term| seen.insert(term.clone()))
        .collect()
}

/// The words a query is weighed by ([`Bm25::query_weight`]): its words, each once, in query
/// order (no joined pairs).
pub fn query_words(query: &str, stemming: Stemming) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    tokens(query, stemming)
        .into_iter()
        .filter(|word| seen.insert(word.clone()))
        .collect()
}

/// The terms a body adds to its document ([`Bm25::build_with_bodies`]): the words of its
/// first [`crate::MAX_RANKED_BODY_BYTES`], each once, sorted. A registry stores these so that
/// its ranking counts a body as a local library does.
pub fn body_terms(body: &str, stemming: Stemming) -> Vec<String> {
    // Each distinct word is lowercased and stemmed once: a body repeats most of its words, and
    // this runs over every body whenever a library is indexed.
    let mut seen = std::collections::HashSet::new();
    let mut terms = Vec::new();
    for word in crate::ranked_body(body).split(|c: char| !c.is_alphanumeric()) {
        if !word.is_empty() && seen.insert(word) {
            terms.extend(tokens(word, stemming));
        }
    }
    terms.sort_unstable();
    terms.dedup();
    terms
}

/// An inverted index of documents' tokens.
#[derive(Debug, Clone, Default)]
pub struct Bm25 {
    stemming: Stemming,
    postings: Postings,
    lengths: Vec<u32>,
    average_length: f32,
}

/// Where an index's postings are: built in memory, or left in the file it was stored in
/// ([`Bm25::write_section`], [`Bm25::read_section`]).
#[derive(Debug, Clone)]
enum Postings {
    Built(Map<String, Vec<(u32, u16)>>),
    Stored(Arc<StoredPostings>),
}

impl Default for Postings {
    fn default() -> Self {
        Self::Built(Map::default())
    }
}

impl Postings {
    /// The documents that have `term`, and how often.
    fn get(&self, term: &str) -> Option<Cow<'_, [(u32, u16)]>> {
        match self {
            Self::Built(map) => map.get(term).map(|list| Cow::Borrowed(list.as_slice())),
            Self::Stored(stored) => stored.get(term).map(Cow::Owned),
        }
    }

    /// How many documents have `term`.
    fn frequency(&self, term: &str) -> usize {
        match self {
            Self::Built(map) => map.get(term).map_or(0, Vec::len),
            Self::Stored(stored) => stored.frequency(term),
        }
    }
}

impl Bm25 {
    /// Indexes documents (each a bag of text).
    pub fn build<'a>(documents: impl IntoIterator<Item = &'a str>, stemming: Stemming) -> Self {
        Self::build_with_bodies(documents.into_iter().map(|text| (text, "")), stemming)
    }

    /// Indexes documents of two parts: a text counted word by word, and a body (its first
    /// [`crate::MAX_RANKED_BODY_BYTES`]) whose words count once each, however often they
    /// occur. A body is nobody's to read in a catalog: repeating a word in it buys nothing, and
    /// a list of many words only lengthens the document, which BM25 weighs against.
    pub fn build_with_bodies<'a, Body: AsRef<str>>(
        documents: impl IntoIterator<Item = (&'a str, Body)>,
        stemming: Stemming,
    ) -> Self {
        let documents = documents
            .into_iter()
            .map(|(text, body)| (text, body_terms(body.as_ref(), stemming)));
        Self::build_with_body_terms(documents, stemming)
    }

    /// [`Bm25::build_with_bodies`] with each body's words worked out before
    /// ([`body_terms`], each once): the same index, without reading or tokenising a body.
    pub fn build_with_body_terms<'a, Terms, Term>(
        documents: impl IntoIterator<Item = (&'a str, Terms)>,
        stemming: Stemming,
    ) -> Self
    where
        Terms: IntoIterator<Item = Term>,
        Term: AsRef<str>,
    {
        let mut postings: Map<String, Vec<(u32, u16)>> = Map::default();
        let mut lengths = Vec::new();
        // Reused for every document; a word is allocated once, when the index first meets it.
        let mut body: Vec<Term> = Vec::new();
        for (index, (text, body_words)) in documents.into_iter().enumerate() {
            let id = u32::try_from(index).unwrap_or(u32::MAX);
            let words = tokens(text, stemming);
            body.clear();
            body.extend(body_words);
            let length = words.len() + body.len();
            let mut counts: Map<&str, u16> = Map::default();
            for word in words
                .iter()
                .map(String::as_str)
                .chain(body.iter().map(AsRef::as_ref))
            {
                let count = counts.entry(word).or_default();
                *count = count.saturating_add(1);
            }
            lengths.push(u32::try_from(length).unwrap_or(u32::MAX));
            for (word, count) in counts {
                if let Some(list) = postings.get_mut(word) {
                    list.push((id, count));
                } else {
                    postings.insert(word.to_string(), vec![(id, count)]);
                }
            }
        }
        Self::from_parts(stemming, postings, lengths)
    }

    /// [`Bm25::build_with_body_terms`] with each body's words given as indexes into `words`,
    /// a table of distinct words (as [`body_terms`] gives them, kept interned between starts):
    /// the same index, without hashing a body's word or allocating it per document. A body
    /// index outside `words` is ignored.
    pub fn build_with_body_ids<'a, Ids>(
        documents: impl IntoIterator<Item = (&'a str, Ids)>,
        words: &[Box<str>],
        stemming: Stemming,
    ) -> Self
    where
        Ids: IntoIterator<Item = u32>,
    {
        // Every word's index: the table's, then the documents' own words it lacks.
        let mut index: Map<&str, u32> = Map::default();
        index.reserve(words.len());
        for (id, word) in words.iter().enumerate() {
            index
                .entry(word)
                .or_insert(u32::try_from(id).unwrap_or(u32::MAX));
        }
        let mut extra: Vec<String> = Vec::new();
        let mut by_id: Vec<Vec<(u32, u16)>> = vec![Vec::new(); words.len()];
        let mut lengths = Vec::new();
        let mut own: Vec<(u32, u16)> = Vec::new();
        let mut texts: Vec<Vec<String>> = Vec::new();
        let mut bodies: Vec<Vec<u32>> = Vec::new();
        for (text, ids) in documents {
            texts.push(tokens(text, stemming));
            bodies.push(
                ids.into_iter()
                    .filter(|&id| (id as usize) < words.len())
                    .collect(),
            );
        }
        for (document, (text, body)) in texts.iter().zip(&bodies).enumerate() {
            let document = u32::try_from(document).unwrap_or(u32::MAX);
            own.clear();
            for word in text {
                let id = if let Some(&id) = index.get(word.as_str()) {
                    id
                } else {
                    let id = u32::try_from(words.len() + extra.len()).unwrap_or(u32::MAX);
                    extra.push(word.clone());
                    by_id.push(Vec::new());
                    index.insert(word, id);
                    id
                };
                match own.iter_mut().find(|(own_id, _)| *own_id == id) {
                    Some((_, count)) => *count = count.saturating_add(1),
                    None => own.push((id, 1)),
                }
            }
            lengths.push(u32::try_from(text.len() + body.len()).unwrap_or(u32::MAX));
            for &id in body {
                let count = match own.iter_mut().find(|(own_id, _)| *own_id == id) {
                    // Counted with the body's: not pushed again below.
                    Some((_, count)) => std::mem::replace(count, 0).saturating_add(1),
                    None => 1,
                };
                by_id[id as usize].push((document, count));
            }
            for &(id, count) in &own {
                if count > 0 {
                    by_id[id as usize].push((document, count));
                }
            }
        }
        let mut postings: Map<String, Vec<(u32, u16)>> = Map::default();
        postings.reserve(by_id.iter().filter(|list| !list.is_empty()).count());
        for (id, list) in by_id.into_iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            let word = match words.get(id) {
                Some(word) => word.to_string(),
                None => extra[id - words.len()].clone(),
            };
            postings.insert(word, list);
        }
        Self::from_parts(stemming, postings, lengths)
    }

    /// The index of these postings and document lengths, with their average length.
    fn from_parts(
        stemming: Stemming,
        postings: Map<String, Vec<(u32, u16)>>,
        lengths: Vec<u32>,
    ) -> Self {
        #[expect(clippy::cast_precision_loss, reason = "document lengths are small")]
        let average_length = if lengths.is_empty() {
            0.0
        } else {
            lengths.iter().map(|&n| n as f32).sum::<f32>() / lengths.len() as f32
        };
        Self {
            stemming,
            postings: Postings::Built(postings),
            lengths,
            average_length,
        }
    }

    /// Appends this index to `out` as a section [`Bm25::read_section`] reads back (format in
    /// the `stored` module). An index read back from a section is written again as it is.
    pub fn write_section(&self, out: &mut Vec<u8>) {
        match &self.postings {
            Postings::Built(map) => crate::stored::write(
                out,
                self.stemming,
                &self.lengths,
                map.iter()
                    .map(|(term, list)| (term.as_str(), list.as_slice())),
            ),
            Postings::Stored(stored) => {
                let lists = stored.all();
                crate::stored::write(
                    out,
                    self.stemming,
                    &self.lengths,
                    lists
                        .iter()
                        .map(|(term, list)| (term.as_str(), list.as_slice())),
                );
            }
        }
    }

    /// The index in the section of `len` bytes at `offset` of `file` (written by
    /// [`Bm25::write_section`]): its lengths and dictionary read now, each term's postings when
    /// a query has it. It scores bit for bit as the index written. The caller checks that the
    /// file is the one written (a digest of it); a section whose parts do not fit together is
    /// an error.
    pub fn read_section(file: Arc<File>, offset: u64, len: u64) -> std::io::Result<Self> {
        let (stemming, lengths, stored) = crate::stored::read(file, offset, len)?;
        let mut index = Self::from_parts(stemming, Map::default(), lengths);
        index.postings = Postings::Stored(Arc::new(stored));
        Ok(index)
    }

    /// Whether postings read from the index's file were not as the file was when checked (it
    /// changed in place under this process): its scores are not to be trusted.
    pub fn damaged(&self) -> bool {
        matches!(&self.postings, Postings::Stored(stored) if stored.damaged())
    }

    /// How many documents are indexed.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Scores every document that shares a term with the query (others score 0).
    #[expect(clippy::cast_precision_loss, reason = "counts are small")]
    pub fn scores(&self, query: &str) -> Vec<f32> {
        let mut scores = vec![0.0_f32; self.lengths.len()];
        let total = self.lengths.len() as f32;
        for term in query_terms(query, self.stemming) {
            let Some(posting) = self.postings.get(&term) else {
                continue;
            };
            let frequency = posting.len() as f32;
            let idf = ((total - frequency + 0.5) / (frequency + 0.5) + 1.0).ln();
            for &(id, count) in posting.iter() {
                let tf = f32::from(count);
                let length = self.lengths[id as usize] as f32;
                let norm = K1 * (1.0 - B + B * length / self.average_length.max(1.0));
                scores[id as usize] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        scores
    }

    /// The weight of a query's words: the sum of each word's inverse document frequency, a
    /// word no document has counting as the rarest (joined pairs are left out), and never less
    /// than one such word weighs. A document holding every word once at the average length
    /// scores about the sum. The floor keeps a short, everyday request ("continue", "summarize
    /// this") from being covered whole by any document that has its one or two common words.
    #[expect(clippy::cast_precision_loss, reason = "counts are small")]
    pub fn query_weight(&self, query: &str) -> f32 {
        let total = self.lengths.len() as f32;
        let idf = |frequency: f32| ((total - frequency + 0.5) / (frequency + 0.5) + 1.0).ln();
        let sum: f32 = query_words(query, self.stemming)
            .into_iter()
            .map(|word| idf(self.postings.frequency(&word) as f32))
            .sum();
        sum.max(idf(0.0))
    }

    #[expect(clippy::cast_precision_loss, reason = "counts are small")]
    /// What each query term added to one document's score (`scores(query)[document]` is their
    /// sum), the terms it has, in query order (joined pairs after the words).
    pub fn term_scores(&self, query: &str, document: usize) -> Vec<(String, f32)> {
        let total = self.lengths.len() as f32;
        let Some(&length) = self.lengths.get(document) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for term in query_terms(query, self.stemming) {
            let Some(posting) = self.postings.get(&term) else {
                continue;
            };
            let Some(&(_, count)) = posting.iter().find(|(id, _)| *id as usize == document) else {
                continue;
            };
            let frequency = posting.len() as f32;
            let idf = ((total - frequency + 0.5) / (frequency + 0.5) + 1.0).ln();
            let tf = f32::from(count);
            let norm = K1 * (1.0 - B + B * length as f32 / self.average_length.max(1.0));
            found.push((term, idf * tf * (K1 + 1.0) / (tf + norm)));
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_words_worked_out_before_give_the_same_index_bit_for_bit() {
        let documents = [
            (
                "deploy services",
                "Deploy the services with argocd. Deploying again: services!",
            ),
            (
                "review contracts",
                "Redline a contract; review its clauses and deploy nothing.",
            ),
            ("plain", ""),
        ];
        let read = Bm25::build_with_bodies(documents, Stemming::Light);
        let kept: Vec<(&str, Vec<String>)> = documents
            .iter()
            .map(|(text, body)| (*text, body_terms(body, Stemming::Light)))
            .collect();
        let given = Bm25::build_with_body_terms(kept, Stemming::Light);
        assert_eq!(read.lengths, given.lengths);
        assert_eq!(
            read.average_length.to_bits(),
            given.average_length.to_bits()
        );
        for query in [
            "deploy services",
            "redline contract clauses",
            "argo cd",
            "nothing at all",
        ] {
            let bits = |index: &Bm25| -> Vec<u32> {
                index
                    .scores(query)
                    .iter()
                    .map(|score| score.to_bits())
                    .collect()
            };
            assert_eq!(bits(&read), bits(&given), "{query}");
        }
    }

    #[test]
    fn body_words_given_as_indexes_give_the_same_index_bit_for_bit() {
        // Own words that are body words too, own words no body has, a word twice in a text,
        // a table holding words no document uses, and an index past the table.
        let documents = [
            (
                "deploy services deploy",
                "Deploy the services with argocd again.",
            ),
            (
                "review contracts",
                "Redline a contract; review its clauses.",
            ),
            ("plain", ""),
            ("argocd", "argocd"),
        ];
        let kept: Vec<(&str, Vec<String>)> = documents
            .iter()
            .map(|(text, body)| (*text, body_terms(body, Stemming::Light)))
            .collect();
        let mut words: Vec<Box<str>> = vec!["unused".into()];
        let ids: Vec<Vec<u32>> = kept
            .iter()
            .map(|(_, terms)| {
                terms
                    .iter()
                    .map(|term| {
                        let at = words
                            .iter()
                            .position(|word| **word == **term)
                            .unwrap_or_else(|| {
                                words.push(term.as_str().into());
                                words.len() - 1
                            });
                        u32::try_from(at).unwrap()
                    })
                    .chain(std::iter::once(999))
                    .collect()
            })
            .collect();
        let given = Bm25::build_with_body_terms(kept.clone(), Stemming::Light);
        let interned = Bm25::build_with_body_ids(
            documents.iter().map(|(text, _)| *text).zip(ids),
            &words,
            Stemming::Light,
        );
        assert_eq!(given.lengths.len(), interned.lengths.len());
        // The index past the table is ignored.
        assert_eq!(given.lengths, interned.lengths);
        assert_eq!(
            given.average_length.to_bits(),
            interned.average_length.to_bits()
        );
        let built = |index: &Bm25| match &index.postings {
            Postings::Built(map) => map.clone(),
            Postings::Stored(_) => panic!("built in memory"),
        };
        assert_eq!(built(&given), built(&interned));
    }

    #[test]
    fn rare_words_weigh_more_and_joined_words_match() {
        let index = Bm25::build(
            [
                "deploy with argocd and flux",
                "deploy the docs site",
                "write typescript code",
            ],
            Stemming::Light,
        );
        let scores = index.scores("argo cd deploy");
        assert!(
            scores[0] > scores[1],
            "{scores:?}: `argo cd` finds `argocd`"
        );
        assert!(scores[2].abs() < f32::EPSILON);
        let scores = index.scores("type script");
        assert!(scores[2] > 0.0, "{scores:?}");
        assert!(index.scores("deploy")[0] > 0.0 && index.scores("nothing")[0].abs() < f32::EPSILON);
    }

    #[test]
    fn a_query_weighs_its_words_once_each_and_unknown_words_as_the_rarest() {
        let index = Bm25::build(
            ["deploy with argocd", "deploy the docs site", "write code"],
            Stemming::Light,
        );
        let idf = |df: f32| ((3.0 - df + 0.5) / (df + 0.5) + 1.0_f32).ln();
        let weight = index.query_weight("deploy deploy argocd banana");
        assert!(
            (weight - (idf(2.0) + idf(1.0) + idf(0.0))).abs() < 1e-5,
            "{weight}"
        );
        // Joined pairs and function words weigh nothing.
        assert!((index.query_weight("argo cd") - 2.0 * idf(0.0)).abs() < 1e-5);
        // A request never weighs less than one word no document has: not an empty one, nor
        // one common word.
        assert!((index.query_weight("the of and") - idf(0.0)).abs() < 1e-5);
        assert!((index.query_weight("deploy") - idf(0.0)).abs() < 1e-5);
        // A document holding every word once scores about the weight.
        let scores = index.scores("write code argocd");
        assert!((scores[2] + scores[0]) / index.query_weight("write code argocd") > 0.7);
    }

    #[test]
    fn body_terms_are_the_body_s_tokens_each_once() {
        let body = "Testing the Tests: tested, TESTED; naïve Naïve — k8s pods, pods.";
        let mut expected = tokens(body, Stemming::Light);
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(body_terms(body, Stemming::Light), expected);
        assert_eq!(
            body_terms(body, Stemming::Light),
            ["k8s", "naïve", "pod", "test"]
        );
    }

    #[test]
    fn a_body_word_counts_once_however_often_it_is_repeated() {
        let stuffed = format!("deploy {}", "kubernetes ".repeat(500));
        let index = Bm25::build_with_bodies(
            [
                ("helm charts", "kubernetes"),
                ("release notes", stuffed.as_str()),
                ("pdf forms", ""),
            ],
            Stemming::Light,
        );
        let scores = index.scores("kubernetes");
        assert!(
            scores[0] > scores[1],
            "{scores:?}: repetition in a body buys nothing"
        );
        assert!(scores[2].abs() < f32::EPSILON);
        // The text's own words still count by frequency.
        let index = Bm25::build_with_bodies(
            [("deploy deploy deploy", ""), ("deploy", "")],
            Stemming::Light,
        );
        assert_eq!(index.term_scores("deploy", 0).len(), 1);
        let scores = index.scores("deploy");
        assert!(scores[0] > scores[1], "{scores:?}");
    }
}
