//! Cold index rate: embeds every skill of the corpus (`../shared/corpus` or `$SKILLET_CORPUS`)
//! with no cache and prints skills per second and the word-piece lengths of the texts.
//!
//! `cargo run --release -p skillet-retrieval --example index_rate [LIMIT]`

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss,
    reason = "a report"
)]

use std::path::PathBuf;
use std::time::Instant;

use skillet_retrieval::embedding_text;
use skillet_skills::{Root, RootKind, discover};

fn main() {
    let corpus = std::env::var_os("SKILLET_CORPUS")
        .map_or_else(|| PathBuf::from("../shared/corpus"), PathBuf::from);
    let corpus = if corpus.is_dir() {
        corpus
    } else {
        PathBuf::from("../../shared/corpus")
    };
    let Some(model) = skillet_test_support::embedding_model_dir() else {
        eprintln!(
            "no embedding model (scripts/fetch-model.sh, SKILLET_EMBED_MODEL): nothing to measure"
        );
        return;
    };
    let limit: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(usize::MAX);
    let library = discover(&[Root::new(&corpus, RootKind::Explicit)]);
    let texts: Vec<String> = library
        .skills()
        .iter()
        .take(limit)
        .map(|s| {
            embedding_text(
                &s.name,
                &s.description,
                s.frontmatter.when_to_use.as_deref(),
                &s.frontmatter.tags,
            )
        })
        .collect();
    let started = Instant::now();
    let mut embedder = skillet_retrieval::embed::Embedder::load(&model).unwrap();
    // Many texts: the layers read once.
    embedder.keep_layers(true).unwrap();
    let loaded = started.elapsed();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let lengths = embedder.token_lengths(&refs).unwrap();
    let mut sorted = lengths.clone();
    sorted.sort_unstable();
    let total: usize = lengths.iter().sum();
    println!(
        "{} texts; word pieces: mean {:.1}, median {}, p90 {}, max {} (after truncation)",
        texts.len(),
        total as f64 / texts.len() as f64,
        sorted[sorted.len() / 2],
        sorted[sorted.len() * 9 / 10],
        sorted[sorted.len() - 1]
    );
    let started = Instant::now();
    let vectors = embedder.embed(&refs).unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(vectors.len(), texts.len());
    println!(
        "model load {:.2} s; embedded {} in {elapsed:.2} s: {:.1} skills/s, {:.0} word pieces/s",
        loaded.as_secs_f64(),
        texts.len(),
        texts.len() as f64 / elapsed,
        total as f64 / elapsed
    );
}
