//! Query latency: exact search over a flat matrix of normalised vectors at 10,000 and 100,000
//! skills (generated vectors and texts), hybrid scoring included, at 10,000 also with a
//! generated body per skill whose words the blend weighs; embedding one query with the real
//! model when it is present; building the indexes, with their memory.

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
    let texts = texts(count);
    Matcher::new(texts.iter().map(String::as_str)).with_vectors(DIMENSIONS, vectors(count))
}

/// A short synthetic text per document (its name and description).
fn texts(count: usize) -> Vec<String> {
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
    (0..count)
        .map(|i| {
            format!(
                "skill {i} {} {} {}",
                words[i % 10],
                words[(i / 10) % 10],
                words[(i / 100) % 10]
            )
        })
        .collect()
}

/// Words per synthetic body: about a real body's median (3 KB).
const BODY_WORDS: usize = 450;

/// A synthetic body per document: [`BODY_WORDS`] words drawn, skewed towards the common ones,
/// from a vocabulary of 3,000 that starts with the query's words, so their postings are long
/// (nearly every document's body has them).
fn bodies(count: usize) -> Vec<String> {
    let common = ["review", "security", "deploy", "code", "files", "data"];
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    (0..count)
        .map(|_| {
            (0..BODY_WORDS)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let r = state % 3_000;
                    let word = r * r / 3_000;
                    match usize::try_from(word).unwrap() {
                        w if w < common.len() => common[w].to_string(),
                        w => format!("w{w}"),
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// [`matcher`] with a body per document whose words the blend weighs, as skills have.
fn matcher_with_bodies(count: usize) -> Matcher {
    let texts = texts(count);
    let bodies = bodies(count);
    Matcher::new(texts.iter().map(String::as_str))
        .with_vectors(DIMENSIONS, vectors(count))
        .with_bodies(
            texts
                .iter()
                .map(String::as_str)
                .zip(bodies.iter().map(String::as_str)),
        )
}

fn matcher_10k_with_bodies() -> &'static Matcher {
    static MATCHER: OnceLock<Matcher> = OnceLock::new();
    MATCHER.get_or_init(|| matcher_with_bodies(10_000))
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

/// Building the index of 10,000 skills with their bodies' words (the blend's second index),
/// generating the synthetic texts, bodies and vectors included.
#[divan::bench(sample_count = 3)]
fn build_index_10k_with_bodies() -> Matcher {
    matcher_with_bodies(10_000)
}

/// The blend weighing the bodies' words too, as skills are ranked.
#[divan::bench(sample_count = 50)]
fn hybrid_search_10k_with_bodies(bencher: divan::Bencher) {
    let (matcher, query) = (matcher_10k_with_bodies(), query());
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
