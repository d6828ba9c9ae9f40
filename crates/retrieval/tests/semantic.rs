//! The embedding model and hybrid ranking, on real text. Skips, saying so, when the model is
//! absent (`scripts/fetch-model.sh` fetches it; `SKILLET_EMBED_MODEL` points at it).

#![cfg(feature = "embeddings")]
#![allow(
    clippy::unwrap_used,
    clippy::print_stderr,
    clippy::single_match_else,
    reason = "tests"
)]

use std::path::PathBuf;

use skillet_retrieval::embed::{Embedder, dot, fingerprint};
use skillet_retrieval::{Matcher, Mode};

/// all-MiniLM-L6-v2's width (its config's `hidden_size`), to check the config is read.
const MINILM_WIDTH: usize = 384;

fn model() -> Option<Embedder> {
    match skillet_test_support::embedding_model_dir() {
        Some(dir) => Some(Embedder::load(&dir).unwrap()),
        None => {
            skillet_test_support::skip(
                "SKIPPED: no embedding model (run scripts/fetch-model.sh, set SKILLET_EMBED_MODEL)",
            );
            None
        }
    }
}

#[test]
fn vectors_are_normalised_and_meaningful() {
    let Some(embedder) = model() else { return };
    let texts = [
        "How do I bake a loaf of bread?",
        "A recipe for homemade sourdough bread",
        "Deploy the service to a Kubernetes cluster with Helm",
    ];
    let vectors = embedder.embed(&texts).unwrap();
    for vector in &vectors {
        assert_eq!(vector.len(), embedder.dimensions());
        assert_eq!(vector.len(), MINILM_WIDTH);
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    }
    let related = dot(&vectors[0], &vectors[1]);
    let unrelated = dot(&vectors[0], &vectors[2]);
    assert!(related > 0.5 && unrelated < 0.2, "{related} {unrelated}");
}

#[test]
fn padding_does_not_change_a_vector() {
    let Some(embedder) = model() else { return };
    let short = "fill in PDF forms";
    let alone = embedder.embed(&[short]).unwrap().remove(0);
    let long = "a much longer text that forces the short one to be padded in its batch, with many more words than it";
    let batched = embedder.embed(&[long, short]).unwrap().remove(1);
    let difference = alone
        .iter()
        .zip(&batched)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0_f32, f32::max);
    assert!(
        difference < 1e-4,
        "mean pooling must ignore padding ({difference})"
    );
}

#[test]
fn hybrid_ranking_finds_the_skill_behind_other_words() {
    let Some(embedder) = model() else { return };
    let skills = [
        "differential review: Performs security-focused differential review of code changes (PRs, commits, diffs)",
        "pdf: Work with PDF files: extract text and tables, fill forms, merge documents",
        "helm chart scaffolding: Design, organize, and manage Helm charts for Kubernetes",
    ];
    let vectors: Vec<f32> = embedder.embed(&skills).unwrap().concat();
    let matcher = Matcher::new(skills).with_vectors(embedder.dimensions(), vectors);
    // No word in common with the right skill. (In a library this small, one shared word such as
    // "merge" with the pdf skill can outweigh meaning, since word scores are scaled by the best
    // one; on the 500-skill evaluation pool the blend is measured best.)
    let query = "look over my pull request for injection holes";
    let query_vector = embedder.embed(&[query]).unwrap().remove(0);
    let (mode, ranked) = matcher.rank(query, Some(&query_vector), Mode::Hybrid, 3);
    assert_eq!(mode, Mode::Hybrid);
    assert_eq!(ranked[0].index, 0);
    let direct = "fill in this PDF form for me";
    let vector = embedder.embed(&[direct]).unwrap().remove(0);
    let (_, ranked) = matcher.rank(direct, Some(&vector), Mode::Hybrid, 3);
    assert_eq!(
        (ranked[0].index, ranked[0].relevant),
        (1, true),
        "{ranked:?}"
    );
    let unrelated = "what's a good recipe for banana bread";
    let vector = embedder.embed(&[unrelated]).unwrap().remove(0);
    let (_, ranked) = matcher.rank(unrelated, Some(&vector), Mode::Hybrid, 3);
    assert!(ranked.iter().all(|r| !r.relevant), "{ranked:?}");
}

/// The encoder against vectors made by candle-transformers' `BertModel` (the implementation it
/// replaced, mean-pooled and normalised the same way) for texts from one word to a truncated
/// 200-word one, with accents, quotes and an emoji. Batched together and one by one.
#[test]
fn vectors_match_the_reference_implementation() {
    let Some(embedder) = model() else { return };
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm_reference.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let cases: Vec<(&str, Vec<f32>)> = fixture
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let vector = case["vector"].as_array().unwrap();
            #[expect(clippy::cast_possible_truncation, reason = "f32 fixture values")]
            let vector = vector.iter().map(|x| x.as_f64().unwrap() as f32).collect();
            (case["text"].as_str().unwrap(), vector)
        })
        .collect();
    let texts: Vec<&str> = cases.iter().map(|(text, _)| *text).collect();
    let together = embedder.embed(&texts).unwrap();
    for ((text, want), got) in cases.iter().zip(&together) {
        let alone = embedder.embed(&[text]).unwrap().remove(0);
        for vector in [got, &alone] {
            let cosine = dot(want, vector);
            assert!(cosine > 0.9999, "{text:?}: cosine {cosine}");
        }
    }
}

/// The real model's fingerprint: its width from its config, the same with or without the
/// digest memo, and the same on every call.
#[test]
fn the_real_models_fingerprint_reads_its_width_and_is_stable() {
    let Some(dir) = skillet_test_support::embedding_model_or_skip("the real model's fingerprint")
    else {
        return;
    };
    let memo = tempfile::tempdir().unwrap();
    let first = fingerprint(&dir, Some(memo.path())).unwrap();
    assert_eq!(first.dimensions, MINILM_WIDTH);
    assert_eq!(fingerprint(&dir, Some(memo.path())).unwrap(), first);
    assert_eq!(fingerprint(&dir, None).unwrap(), first);
    assert_eq!(Embedder::load(&dir).unwrap().dimensions(), first.dimensions);
}
