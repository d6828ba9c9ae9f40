//! Ranking documents for a request by words (BM25), by meaning (embeddings), or both.

use std::borrow::Cow;

use crate::bm25::Bm25;
use crate::tokenize::Stemming;
use crate::top_k;
use crate::vectors::Vectors;

/// Cosine similarity a document must reach to count as relevant (calibrated on the evaluation
/// set: the top match of requests no skill fits stayed at or under 0.32; one in ten fitting
/// requests' top match lies under 0.35).
pub const SEMANTIC_THRESHOLD: f32 = 0.35;
/// Relevance score ([`relevance_score`]) a document must reach to count as relevant in hybrid
/// mode (chosen by cross-validation: the five folds chose 0.22, 0.28, and 0.26 three times).
pub const RELEVANCE_THRESHOLD: f32 = 0.26;
/// BM25 score a document must reach to count as relevant when no embeddings are available.
pub const LEXICAL_THRESHOLD: f32 = 8.0;
/// Weight of meaning against words in the hybrid score (measured best on the evaluation set).
pub const HYBRID_ALPHA: f32 = 0.5;

/// The hybrid score of a document: meaning weighted by [`HYBRID_ALPHA`], plus words scaled by
/// the best word score of any document for the query and damped by the square root of the
/// cosine (so words alone never lift an unrelated document). Local and registry rankings both
/// use this.
pub fn hybrid_score(words: f32, best_words: f32, cosine: f32) -> f32 {
    blend(words / best_words.max(1e-6), cosine)
}

/// Meaning weighted by [`HYBRID_ALPHA`], plus a share of word evidence damped by the square
/// root of the cosine: the form both [`hybrid_score`] and [`relevance_score`] take.
fn blend(word_share: f32, cosine: f32) -> f32 {
    HYBRID_ALPHA * cosine + (1.0 - HYBRID_ALPHA) * word_share * cosine.max(0.0).sqrt()
}

/// How relevant a document is for a query in hybrid mode: the blend's form, with the
/// document's word score taken as a share of the query's weight ([`Bm25::query_weight`],
/// capped at 1) instead of the best document's. Words count as evidence only as far as the
/// request's own words are found, so the skill that best matches the one everyday word of an
/// off-topic request ("recipe") gains little, while a request phrased in a skill's body's words
/// can be relevant on a modest cosine.
pub fn relevance_score(words: f32, query_weight: f32, cosine: f32) -> f32 {
    blend((words / query_weight.max(1e-6)).min(1.0), cosine)
}

/// How to rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// BM25 only.
    Lexical,
    /// Embeddings only.
    Semantic,
    /// Both, blended.
    Hybrid,
}

impl Mode {
    /// `lexical`, `semantic` or `hybrid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lexical => "lexical",
            Self::Semantic => "semantic",
            Self::Hybrid => "hybrid",
        }
    }
}

/// One ranked document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// The document's index.
    pub index: usize,
    /// Its score in the mode used.
    pub score: f32,
    /// Whether it clears the relevance threshold.
    pub relevant: bool,
}

/// Why a document scored as it did for a query ([`Matcher::explain`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The mode the score is in.
    pub mode: Mode,
    /// Each query term the document has, and what it added to its word score.
    pub terms: Vec<(String, f32)>,
    /// The terms of `terms` found only in the document's body (hybrid ranks words over the
    /// body too; see [`Matcher::with_bodies`]).
    pub body_only: Vec<String>,
    /// Its word score (BM25).
    pub words: f32,
    /// The best word score of any document for this query (hybrid ranks by the share of it).
    pub best_words: f32,
    /// The weight of the query's words ([`Bm25::query_weight`]: hybrid relevance takes the
    /// share of it).
    pub query_weight: f32,
    /// Its relevance score ([`relevance_score`]), when ranked by both.
    pub relevance: Option<f32>,
    /// The cosine of its vector with the query's, when ranked by meaning.
    pub cosine: Option<f32>,
    /// Its score in `mode`.
    pub score: f32,
    /// Whether it clears the relevance threshold.
    pub relevant: bool,
}

/// Documents indexed by words, and by meaning when vectors are given.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// The documents' own texts (a skill's name, description, `when_to_use`, tags): lexical
    /// ranking and its threshold.
    bm25: Bm25,
    /// The texts the hybrid blend weighs words over, when given (a skill's with its body).
    blend_words: Option<Bm25>,
    /// Normalised vectors, one per document, in document order.
    vectors: Option<Vectors>,
    len: usize,
}

impl Matcher {
    /// Indexes documents' texts by words.
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let bm25 = Bm25::build(texts, Stemming::Light);
        let len = bm25.len();
        Self {
            bm25,
            blend_words: None,
            vectors: None,
            len,
        }
    }

    /// The matcher of two word indexes built before (read back from a file,
    /// [`Bm25::read_section`]): `own` of the documents' own texts, `blend` of the texts with
    /// their bodies (ignored unless it has as many documents).
    pub fn from_indexes(own: Bm25, blend: Option<Bm25>) -> Self {
        let len = own.len();
        Self {
            bm25: own,
            blend_words: blend.filter(|blend| blend.len() == len),
            vectors: None,
            len,
        }
    }

    /// The word indexes: of the documents' own texts, and of the blend's texts when given
    /// (for [`Matcher::from_indexes`] another time).
    pub fn word_indexes(&self) -> (&Bm25, Option<&Bm25>) {
        (&self.bm25, self.blend_words.as_ref())
    }

    /// Each document's text again with its body, whose words the hybrid blend weighs too
    /// ([`Bm25::build_with_bodies`]: a body's words count once each, its first
    /// [`crate::MAX_RANKED_BODY_BYTES`]); ignored unless there is one per document. Lexical
    /// ranking and its threshold keep the documents' own texts: over bodies, words alone rank
    /// worse (recall@1 0.726 against 0.830 on the tuning set) and unrelated requests clear
    /// [`LEXICAL_THRESHOLD`], while the blend damps each word score by the cosine.
    #[must_use]
    pub fn with_bodies<'a, Body: AsRef<str>>(
        mut self,
        documents: impl IntoIterator<Item = (&'a str, Body)>,
    ) -> Self {
        let index = Bm25::build_with_bodies(documents, Stemming::Light);
        if index.len() == self.len {
            self.blend_words = Some(index);
        }
        self
    }

    /// [`Matcher::with_bodies`] with each body's words worked out before
    /// ([`crate::body_terms`]).
    #[must_use]
    pub fn with_body_terms<'a, Terms, Term>(
        mut self,
        documents: impl IntoIterator<Item = (&'a str, Terms)>,
    ) -> Self
    where
        Terms: IntoIterator<Item = Term>,
        Term: AsRef<str>,
    {
        let index = Bm25::build_with_body_terms(documents, Stemming::Light);
        if index.len() == self.len {
            self.blend_words = Some(index);
        }
        self
    }

    /// [`Matcher::with_body_terms`] with each body's words given as indexes into `words`
    /// ([`Bm25::build_with_body_ids`]): the same index, built faster.
    #[must_use]
    pub fn with_body_ids<'a, Ids>(
        mut self,
        documents: impl IntoIterator<Item = (&'a str, Ids)>,
        words: &[Box<str>],
    ) -> Self
    where
        Ids: IntoIterator<Item = u32>,
    {
        let index = Bm25::build_with_body_ids(documents, words, Stemming::Light);
        if index.len() == self.len {
            self.blend_words = Some(index);
        }
        self
    }

    /// The index the hybrid blend scores words with.
    fn blend_index(&self) -> &Bm25 {
        self.blend_words.as_ref().unwrap_or(&self.bm25)
    }

    /// Adds the documents' vectors (normalised, one per document, in order).
    #[must_use]
    pub fn with_vectors(self, dimensions: usize, vectors: Vec<f32>) -> Self {
        match Vectors::in_memory(dimensions, vectors) {
            Some(vectors) => self.with_stored_vectors(vectors),
            None => self,
        }
    }

    /// Adds the documents' vectors, wherever they are kept (ignored unless there is one per
    /// document).
    #[must_use]
    pub fn with_stored_vectors(mut self, vectors: Vectors) -> Self {
        if vectors.len() == self.len {
            self.vectors = Some(vectors);
        }
        self
    }

    /// Whether ranking by meaning is possible.
    pub fn has_vectors(&self) -> bool {
        self.vectors.is_some()
    }

    /// How many documents.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A document's vector (normalised), when the documents have vectors.
    pub fn vector(&self, document: usize) -> Option<Cow<'_, [f32]>> {
        self.vectors.as_ref()?.vector(document)
    }

    /// Cosine similarity of the query vector with every document (exact search over the flat
    /// matrix).
    pub fn similarities(&self, query: &[f32]) -> Option<Vec<f32>> {
        self.vectors.as_ref()?.similarities(query)
    }

    /// Why `document` scores as it does for `query` in `mode` (the parts of the same formula
    /// [`Matcher::rank`] uses; without vectors, words only).
    pub fn explain(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        mode: Mode,
        document: usize,
    ) -> Explanation {
        let similarities = query_vector.and_then(|vector| self.similarities(vector));
        let cosine = similarities
            .as_ref()
            .and_then(|cosines| cosines.get(document).copied());
        // The words of the mode actually used: the blend's when ranked by both.
        let blended = mode == Mode::Hybrid && cosine.is_some() && self.blend_words.is_some();
        let index = if blended {
            self.blend_index()
        } else {
            &self.bm25
        };
        let words_all = index.scores(query);
        let words = words_all.get(document).copied().unwrap_or(0.0);
        let best_words = words_all.iter().copied().fold(0.0_f32, f32::max);
        let terms = index.term_scores(query, document);
        let body_only = if blended {
            let own: Vec<String> = self
                .bm25
                .term_scores(query, document)
                .into_iter()
                .map(|(term, _)| term)
                .collect();
            terms
                .iter()
                .map(|(term, _)| term)
                .filter(|term| !own.contains(term))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let query_weight = index.query_weight(query);
        let relevance = match (mode, cosine) {
            (Mode::Hybrid, Some(c)) => Some(relevance_score(words, query_weight, c)),
            _ => None,
        };
        let (mode, score, relevant) = match (mode, cosine, relevance) {
            (Mode::Semantic, Some(c), _) => (Mode::Semantic, c, c >= SEMANTIC_THRESHOLD),
            (Mode::Hybrid, Some(c), Some(relevance)) => (
                Mode::Hybrid,
                hybrid_score(words, best_words, c),
                relevance >= RELEVANCE_THRESHOLD,
            ),
            _ => (Mode::Lexical, words, words >= LEXICAL_THRESHOLD),
        };
        Explanation {
            mode,
            terms,
            body_only,
            words,
            best_words,
            query_weight,
            relevance,
            cosine,
            score,
            relevant,
        }
    }

    /// The `k` best documents for a query. Semantic and hybrid modes need `query_vector`
    /// and the documents' vectors; without them the ranking falls back to words.
    ///
    /// Word indexes read from a file that changed under this session (another program, or the
    /// disk: [`Bm25::damaged`]) are not used: the documents are then ranked by meaning alone
    /// when there are vectors, else not at all.
    pub fn rank(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        mode: Mode,
        k: usize,
    ) -> (Mode, Vec<Ranked>) {
        let (used, ranked) = self.rank_as_kept(query, query_vector, mode, k);
        let damaged = self.bm25.damaged() || self.blend_words.as_ref().is_some_and(Bm25::damaged);
        if !damaged || used == Mode::Semantic {
            return (used, ranked);
        }
        match query_vector {
            Some(vector) if self.similarities(vector).is_some() => {
                self.rank_as_kept(query, Some(vector), Mode::Semantic, k)
            }
            _ => (Mode::Lexical, Vec::new()),
        }
    }

    /// [`Matcher::rank`] with the indexes as they are.
    fn rank_as_kept(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        mode: Mode,
        k: usize,
    ) -> (Mode, Vec<Ranked>) {
        let similarities = query_vector.and_then(|vector| self.similarities(vector));
        let mode = if similarities.is_none() {
            Mode::Lexical
        } else {
            mode
        };
        let ranked = match (mode, similarities) {
            (Mode::Semantic, Some(cosines)) => top_k(&cosines, k)
                .into_iter()
                .map(|(index, score)| Ranked {
                    index,
                    score,
                    relevant: score >= SEMANTIC_THRESHOLD,
                })
                .collect(),
            (Mode::Hybrid, Some(cosines)) => {
                let words = self.blend_index().scores(query);
                let best = words.iter().copied().fold(0.0_f32, f32::max);
                let weight = self.blend_index().query_weight(query);
                let blended: Vec<f32> = words
                    .iter()
                    .zip(&cosines)
                    .map(|(w, c)| hybrid_score(*w, best, *c))
                    .collect();
                top_k(&blended, k)
                    .into_iter()
                    .map(|(index, score)| Ranked {
                        index,
                        score,
                        relevant: relevance_score(words[index], weight, cosines[index])
                            >= RELEVANCE_THRESHOLD,
                    })
                    .collect()
            }
            _ => top_k(&self.bm25.scores(query), k)
                .into_iter()
                .filter(|(_, score)| *score > 0.0)
                .map(|(index, score)| Ranked {
                    index,
                    score,
                    relevant: score >= LEXICAL_THRESHOLD,
                })
                .collect(),
        };
        (mode, ranked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_ranking_and_fallback() {
        let matcher = Matcher::new([
            "pdf forms fill extract text",
            "kubernetes deploy helm",
            "git branches cleanup",
        ]);
        let (mode, ranked) =
            matcher.rank("fill in this PDF form", Some(&[1.0, 0.0]), Mode::Hybrid, 2);
        assert_eq!(mode, Mode::Lexical, "no vectors: words only");
        assert_eq!(ranked[0].index, 0);
        assert_eq!(ranked.len(), 1, "documents sharing no word are not listed");
    }

    #[test]
    fn semantic_and_hybrid_use_vectors() {
        let matcher =
            Matcher::new(["alpha words", "beta words"]).with_vectors(2, vec![1.0, 0.0, 0.0, 1.0]);
        let (mode, ranked) = matcher.rank("beta", Some(&[0.0, 1.0]), Mode::Semantic, 2);
        assert_eq!(mode, Mode::Semantic);
        assert_eq!((ranked[0].index, ranked[0].relevant), (1, true));
        assert!(!ranked[1].relevant);
        let (_, ranked) = matcher.rank("alpha", Some(&[0.6, 0.8]), Mode::Hybrid, 2);
        assert_eq!(
            ranked[0].index, 0,
            "the word match lifts alpha over beta's closer vector"
        );
    }

    #[test]
    fn hybrid_relevance_counts_words_as_a_share_of_the_request_s_own() {
        let matcher = Matcher::new([
            "pdf forms fill",
            "kubernetes deploy",
            "pdf merge split pages",
        ])
        .with_vectors(2, vec![1.0, 0.0, 0.0, -1.0, -1.0, 0.0]);
        // A cosine of 0.3 with the first, under the cosine threshold; the others' are below 0.
        let vector = [0.3, (1.0_f32 - 0.09).sqrt()];
        let (_, ranked) = matcher.rank("fill pdf forms", Some(&vector), Mode::Hybrid, 3);
        assert_eq!(ranked[0].index, 0);
        assert!(
            ranked[0].relevant,
            "the request's words all found: relevant on a modest cosine: {ranked:?}"
        );
        let why = matcher.explain("fill pdf forms", Some(&vector), Mode::Hybrid, 0);
        assert!(
            why.relevance.is_some_and(|r| r >= RELEVANCE_THRESHOLD),
            "{why:?}"
        );
        // The same cosine, and the best words of any document, but for one word of three: the
        // other two are no skill's, so they weigh as the rarest.
        let (_, ranked) = matcher.rank("banana bread pdf", Some(&vector), Mode::Hybrid, 3);
        assert_eq!(ranked[0].index, 0);
        assert!(!ranked[0].relevant, "{ranked:?}");
        let why = matcher.explain("banana bread pdf", Some(&vector), Mode::Hybrid, 0);
        assert!((why.words - why.best_words).abs() < 1e-6, "{why:?}");
        assert!(
            why.relevance.is_some_and(|r| r < RELEVANCE_THRESHOLD),
            "{why:?}"
        );
        // Meaning alone is judged by the cosine, as before.
        let (_, ranked) = matcher.rank("fill pdf forms", Some(&vector), Mode::Semantic, 1);
        assert!(!ranked[0].relevant, "{ranked:?}");
        assert!(
            matcher
                .explain("fill pdf forms", Some(&vector), Mode::Semantic, 0)
                .relevance
                .is_none()
        );
    }

    #[test]
    fn an_explanation_adds_up_to_the_score_ranking_gave() {
        let matcher = Matcher::new([
            "pdf forms fill",
            "kubernetes deploy",
            "pdf merge split pages",
        ])
        .with_vectors(2, vec![1.0, 0.0, 0.0, 1.0, 0.8, 0.6]);
        for mode in [Mode::Lexical, Mode::Semantic, Mode::Hybrid] {
            let (_, ranked) = matcher.rank("fill pdf forms", Some(&[0.6, 0.8]), mode, 3);
            for hit in ranked {
                let why = matcher.explain("fill pdf forms", Some(&[0.6, 0.8]), mode, hit.index);
                assert!(
                    (why.score - hit.score).abs() < 1e-6,
                    "{mode:?} {why:?} {hit:?}"
                );
                assert_eq!(why.relevant, hit.relevant);
                let sum: f32 = why.terms.iter().map(|(_, score)| score).sum();
                assert!((sum - why.words).abs() < 1e-5, "{why:?}");
            }
        }
        let why = matcher.explain("fill pdf forms", None, Mode::Hybrid, 0);
        assert_eq!(why.mode, Mode::Lexical, "no vectors: words only");
        assert!(why.body_only.is_empty());
        let terms: Vec<&str> = why.terms.iter().map(|(term, _)| term.as_str()).collect();
        assert_eq!(terms.len(), 3, "{terms:?}");
    }

    #[test]
    fn the_blend_weighs_body_words_and_lexical_ranking_does_not() {
        let own = [
            "git cleanup delete merged branches",
            "docx edit word documents",
        ];
        let with_bodies = [
            (own[0], "prune topic lines folded into trunk"),
            (own[1], "redline contracts tracked changes"),
        ];
        let matcher = Matcher::new(own)
            .with_vectors(2, vec![0.8, 0.6, 0.6, 0.8])
            .with_bodies(with_bodies);
        let query = "redline this contract";
        // Equal cosines: only the body's words can tell the two apart.
        let vector = [std::f32::consts::FRAC_1_SQRT_2; 2];
        let (_, ranked) = matcher.rank(query, Some(&vector), Mode::Hybrid, 2);
        assert_eq!(ranked[0].index, 1, "{ranked:?}");
        assert!(ranked[0].score > ranked[1].score, "{ranked:?}");
        let (mode, ranked) = matcher.rank(query, None, Mode::Hybrid, 2);
        assert_eq!(mode, Mode::Lexical);
        assert!(ranked.is_empty(), "words alone ignore bodies: {ranked:?}");
        for mode in [Mode::Lexical, Mode::Semantic, Mode::Hybrid] {
            let (_, ranked) = matcher.rank(query, Some(&vector), mode, 2);
            for hit in ranked {
                let why = matcher.explain(query, Some(&vector), mode, hit.index);
                assert!((why.score - hit.score).abs() < 1e-6, "{mode:?} {why:?}");
            }
        }
        let why = matcher.explain(query, Some(&vector), Mode::Hybrid, 1);
        assert_eq!(why.body_only, ["redline", "contract"], "{why:?}");
        let why = matcher.explain("delete prune branches", Some(&vector), Mode::Hybrid, 0);
        assert_eq!(why.body_only, ["prune"], "{why:?}");
        // A list of the wrong length is ignored: words as the documents' own.
        let short = Matcher::new(own).with_bodies([("only one", "")]);
        assert!(short.blend_words.is_none());
    }
}
