//! Ranking skills for a request. Documents are skills (name with hyphens split into words,
//! description, `when_to_use`, tags; the hybrid blend weighs the body's words too); [`Bm25`] ranks them by words, `embed::Embedder`
//! (all-MiniLM-L6-v2 with candle, feature `embeddings`) by meaning, and [`Matcher`] blends
//! both with a threshold so "no skill applies" is a possible answer. Vectors are cached on disk
//! by [`EmbeddingCache`]. The crate ranks any documents and knows nothing of the skills engine.

#[cfg(feature = "embeddings")]
mod bert;
mod bm25;
mod cache;
#[cfg(feature = "download")]
pub mod download;
#[cfg(feature = "embeddings")]
pub mod embed;
#[cfg(feature = "embeddings")]
mod fingerprint;
mod fnv;
mod matcher;
mod regular;
mod stored;
mod tokenize;
mod vectors;

pub use bm25::{B, Bm25, K1, body_terms, query_terms, query_words};
pub use cache::{
    CacheWarning, EmbeddingCache, InvalidVector, LOCK_WAIT, MAX_DIMENSIONS, MAX_FILE_BYTES,
    NORM_TOLERANCE, PRUNE_AFTER, SaveReport, TOUCH_INTERVAL, UnreadableReason, check_vector,
    text_hash, write_atomically,
};
pub use matcher::{
    Explanation, HYBRID_ALPHA, LEXICAL_THRESHOLD, Matcher, Mode, RELEVANCE_THRESHOLD, Ranked,
    SEMANTIC_THRESHOLD, hybrid_score, relevance_score,
};
pub use regular::read_at;
pub use tokenize::{Stemming, stem, tokens};
pub use vectors::Vectors;

/// The most of a skill's body whose words the hybrid blend weighs, in bytes (cut back to a
/// character boundary). Half the real skills' bodies are under 3 KB and 99 in 100 under 27 KB,
/// so nearly every body counts whole; past this, a body's words are not indexed.
pub const MAX_RANKED_BODY_BYTES: usize = 32 * 1024;

/// The text a skill is ranked by words: its name twice (hyphens as spaces, so
/// "differential-review" matches "review"), its description, `when_to_use` and tags.
pub fn skill_text(
    name: &str,
    description: &str,
    when_to_use: Option<&str>,
    tags: &[String],
) -> String {
    let name_words = name.replace(['-', '_'], " ");
    let mut text = format!("{name_words} {name_words} {description}");
    if let Some(when) = when_to_use {
        text.push(' ');
        text.push_str(when);
    }
    for tag in tags {
        text.push(' ');
        text.push_str(tag);
    }
    text
}

/// The part of a body that is ranked: at most [`MAX_RANKED_BODY_BYTES`], whole characters.
pub fn ranked_body(body: &str) -> &str {
    if body.len() <= MAX_RANKED_BODY_BYTES {
        return body;
    }
    let mut end = MAX_RANKED_BODY_BYTES;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    &body[..end]
}

/// The text a skill is embedded by: `name words: description when_to_use tags`.
pub fn embedding_text(
    name: &str,
    description: &str,
    when_to_use: Option<&str>,
    tags: &[String],
) -> String {
    let mut text = format!("{}: {description}", name.replace(['-', '_'], " "));
    if let Some(when) = when_to_use {
        text.push(' ');
        text.push_str(when);
    }
    if !tags.is_empty() {
        text.push_str(" (");
        text.push_str(&tags.join(", "));
        text.push(')');
    }
    text
}

/// Reciprocal rank fusion of rankings (each a list of document indexes, best first):
/// `sum 1 / (k + rank)`, with `k` = [`RRF_K`].
pub fn reciprocal_rank_fusion(documents: usize, rankings: &[&[usize]]) -> Vec<f32> {
    let mut scores = vec![0.0_f32; documents];
    for ranking in rankings {
        for (rank, &document) in ranking.iter().enumerate() {
            #[expect(clippy::cast_precision_loss, reason = "ranks are small")]
            let contribution = 1.0 / (RRF_K + rank as f32 + 1.0);
            scores[document] += contribution;
        }
    }
    scores
}

/// The usual reciprocal-rank-fusion constant.
pub const RRF_K: f32 = 60.0;

/// The indexes of the `k` highest scores, best first (ties by index). A score that is not a
/// number (a broken vector) ranks last, as negative infinity.
pub fn top_k(scores: &[f32], k: usize) -> Vec<(usize, f32)> {
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut ranked: Vec<(usize, f32)> = scores
        .iter()
        .map(|&score| {
            if score.is_nan() {
                f32::NEG_INFINITY
            } else {
                score
            }
        })
        .enumerate()
        .collect();
    // Select the k best first (linear), then sort only those.
    if k < ranked.len() {
        ranked.select_nth_unstable_by(k, order);
        ranked.truncate(k);
    }
    ranked.sort_by(order);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_score_that_is_not_a_number_ranks_last() {
        let ranked = top_k(&[0.1, f32::NAN, -f32::NAN, 0.5], 4);
        assert_eq!(
            ranked.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [3, 0, 1, 2]
        );
    }

    #[test]
    fn a_body_is_ranked_up_to_its_limit_on_a_character_boundary() {
        assert_eq!(
            skill_text("a-b", "d", Some("w"), &["t".into()]),
            "a b a b d w t"
        );
        // A multi-byte character straddling the limit is left out whole.
        let body = format!("{}é tail", "x".repeat(MAX_RANKED_BODY_BYTES - 1));
        let ranked = ranked_body(&body);
        assert_eq!(ranked.len(), MAX_RANKED_BODY_BYTES - 1);
        assert!(!ranked.contains('é'));
        let body = "y".repeat(MAX_RANKED_BODY_BYTES + 10);
        assert_eq!(ranked_body(&body).len(), MAX_RANKED_BODY_BYTES);
        assert_eq!(ranked_body("short"), "short");
    }

    #[test]
    fn top_k_orders_by_score_then_index() {
        let scores = [0.1, 0.9, 0.5, 0.9, 0.0];
        assert_eq!(top_k(&scores, 3), [(1, 0.9), (3, 0.9), (2, 0.5)]);
        assert_eq!(top_k(&scores, 10).len(), 5);
        assert!(top_k(&scores, 0).is_empty());
    }
}
