//! Ranking skills for a request. Documents are skills (name with hyphens split into words,
//! description, `when_to_use`, tags); [`Bm25`] ranks them by words. The crate ranks any
//! documents and knows nothing of the skills engine.

mod bm25;
mod tokenize;

pub use bm25::{B, Bm25, K1};
pub use tokenize::{Stemming, stem, tokens};

/// The text a skill is ranked by: its name twice (hyphens as spaces, so "differential-review"
/// matches "review"), its description, `when_to_use` and tags.
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

/// The indexes of the `k` highest scores, best first (ties by index).
pub fn top_k(scores: &[f32], k: usize) -> Vec<(usize, f32)> {
    let mut ranked: Vec<(usize, f32)> = scores.iter().copied().enumerate().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(k);
    ranked
}
