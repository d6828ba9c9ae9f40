//! Query latency: exact search over a flat matrix of normalised vectors at 10,000 and 100,000
//! skills (generated vectors and texts), hybrid scoring included, and embedding one query with
//! the real model when it is present; building the 100,000-skill index, with its memory.

#![allow(clippy::unwrap_used, clippy::print_stderr, reason = "benchmark setup")]

use std::sync::OnceLock;

use skillet_retrieval::{Matcher, Mode};

fn main() {
    divan::main();
}

// Counts allocations, so the build benches report memory ("max alloc" is the peak live heap).
#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

/// The width of the synthetic vectors: all-MiniLM-L6-v2's, though no model is loaded for the
/// search benches (the real width comes from the model's config).
const DIMENSIONS: usize = 384;

/// A deterministic pseudo-random unit vector per document.
fn vectors(count: usize) -> Vec<f32> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::with_capacity(count * DIMENSIONS);
    for _ in 0..count {
        let row: Vec<f32> = (0..DIMENSIONS)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                #[expect(clippy::cast_precision_loss, reason = "noise")]
                let value = (state % 2_000) as f32 / 1_000.0 - 1.0;
                value
            })
            .collect();
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        out.extend(row.iter().map(|x| x / norm));
    }
    out
}

fn matcher(count: usize) -> Matcher {
    let words = [
        "deploy",
        "review",
        "pdf",
        "forms",
        "kubernetes",
        "tests",
        "data",
        "plot",
        "security",
        "docs",
    ];
    let texts: Vec<String> = (0..count)
        .map(|i| {
            format!(
                "skill {i} {} {} {}",
                words[i % 10],
                words[(i / 10) % 10],
                words[(i / 100) % 10]
            )
        })
        .collect();
    Matcher::new(texts.iter().map(String::as_str)).with_vectors(DIMENSIONS, vectors(count))
}

fn matcher_10k() -> &'static Matcher {
    static MATCHER: OnceLock<Matcher> = OnceLock::new();
    MATCHER.get_or_init(|| matcher(10_000))
}

fn matcher_100k() -> &'static Matcher {
    static MATCHER: OnceLock<Matcher> = OnceLock::new();
    MATCHER.get_or_init(|| matcher(100_000))
}

fn query() -> Vec<f32> {
    vectors(1)
}

/// Building the index of 100,000 skills (BM25 postings + the 147 MB vector matrix); divan's
/// allocation counts give its memory.
#[divan::bench(sample_count = 3)]
fn build_index_100k() -> Matcher {
    matcher(100_000)
}

#[divan::bench(sample_count = 50)]
fn hybrid_search_10k(bencher: divan::Bencher) {
    let (matcher, query) = (matcher_10k(), query());
    bencher.bench(|| {
        matcher.rank(
            "review the security of this deploy",
            Some(&query),
            Mode::Hybrid,
            5,
        )
    });
}

#[divan::bench(sample_count = 30)]
fn hybrid_search_100k(bencher: divan::Bencher) {
    let (matcher, query) = (matcher_100k(), query());
    bencher.bench(|| {
        matcher.rank(
            "review the security of this deploy",
            Some(&query),
            Mode::Hybrid,
            5,
        )
    });
}

#[cfg(feature = "embeddings")]
#[divan::bench(sample_count = 30)]
fn embed_one_query(bencher: divan::Bencher) {
    let Some(dir) = skillet_test_support::embedding_model_dir() else {
        eprintln!("embed_one_query skipped: no model (scripts/fetch-model.sh)");
        return;
    };
    let embedder = skillet_retrieval::embed::Embedder::load(&dir).unwrap();
    bencher.bench(|| {
        embedder
            .embed(&["review my pull request for injection holes"])
            .unwrap()
    });
}
