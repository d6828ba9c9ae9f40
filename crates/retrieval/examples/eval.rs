//! The retrieval evaluation: natural requests written against real skills of the corpus (each
//! with the skill names that would be right) and requests no skill fits, ranked over a pool of
//! the smaller collections (~500 skills) and over the whole corpus.
//!
//! `cargo run --release -p skillet-retrieval --example eval` (the corpus is `../shared/corpus`
//! or `$SKILLET_CORPUS`; `SKILLET_EVAL_REQUESTS=crates/retrieval/eval/holdout.jsonl` for the 25
//! requests written after every parameter was tuned). Prints recall@1, recall@5, MRR, and how often no-fit requests clear
//! the threshold.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines,
    reason = "a report"
)]

use std::path::{Path, PathBuf};

use skillet_retrieval::{
    Bm25, Stemming, embedding_text, reciprocal_rank_fusion, skill_text, top_k,
};
use skillet_skills::{Root, RootKind, discover};

#[path = "../eval/pool.rs"]
mod pool;
use pool::POOL;

#[path = "../eval/requests.rs"]
mod requests;
use requests::{Request, load};

struct Metrics {
    recall_at_1: f64,
    recall_at_5: f64,
    mrr: f64,
    no_fit_cleared: f64,
}

#[expect(clippy::cast_precision_loss, reason = "small counts")]
fn evaluate(
    names: &[String],
    scores_for: &dyn Fn(&str) -> Vec<f32>,
    requests: &[Request],
    no_fit: &[Request],
    threshold: f32,
) -> Metrics {
    let (mut at1, mut at5, mut reciprocal) = (0.0, 0.0, 0.0);
    for request in requests {
        let ranked = top_k(&scores_for(&request.query), 100);
        let rank = ranked
            .iter()
            .position(|(index, _)| request.expected.contains(&names[*index]))
            .map(|position| position + 1);
        if rank == Some(1) {
            at1 += 1.0;
        } else if std::env::var_os("SKILLET_EVAL_MISSES").is_some() {
            eprintln!(
                "miss ({rank:?}): {} -> {} (want {:?})",
                request.query, names[ranked[0].0], request.expected
            );
        }
        if rank.is_some_and(|r| r <= 5) {
            at5 += 1.0;
        }
        if let Some(rank) = rank {
            reciprocal += 1.0 / rank as f64;
        }
    }
    let cleared = no_fit
        .iter()
        .filter(|request| {
            top_k(&scores_for(&request.query), 1)
                .first()
                .is_some_and(|(_, s)| *s >= threshold)
        })
        .count();
    let n = requests.len() as f64;
    Metrics {
        recall_at_1: at1 / n,
        recall_at_5: at5 / n,
        mrr: reciprocal / n,
        no_fit_cleared: cleared as f64 / no_fit.len().max(1) as f64,
    }
}

fn main() {
    let Some(corpus) =
        skillet_test_support::corpus_dir().filter(|dir| dir.join("INDEX.jsonl").is_file())
    else {
        eprintln!("SKIPPED: no corpus (set SKILLET_CORPUS to its folder)");
        return;
    };
    let eval = Path::new(env!("CARGO_MANIFEST_DIR")).join("eval");
    // SKILLET_EVAL_REQUESTS swaps the request set (eval/holdout.jsonl: written after tuning).
    let requests = load(
        &std::env::var_os("SKILLET_EVAL_REQUESTS")
            .map_or_else(|| eval.join("requests.jsonl"), PathBuf::from),
    );
    // SKILLET_EVAL_NO_FIT swaps the set no skill fits (eval/no_fit_hard.jsonl: in the skills'
    // own domains, written and frozen before any tuning against it).
    let no_fit = load(
        &std::env::var_os("SKILLET_EVAL_NO_FIT")
            .map_or_else(|| eval.join("no_fit.jsonl"), PathBuf::from),
    );
    println!(
        "{} requests with a right skill, {} with none",
        requests.len(),
        no_fit.len()
    );
    let pool_roots: Vec<Root> = POOL
        .iter()
        .map(|c| Root::new(corpus.join(c), RootKind::Explicit))
        .collect();
    let all_roots = vec![Root::new(&corpus, RootKind::Explicit)];
    for (label, roots) in [("pool", pool_roots), ("whole corpus", all_roots)] {
        let library = discover(&roots);
        let names: Vec<String> = library.skills().iter().map(|s| s.name.clone()).collect();
        let texts: Vec<String> = library
            .skills()
            .iter()
            .map(|s| {
                skill_text(
                    &s.name,
                    &s.description,
                    s.frontmatter.when_to_use.as_deref(),
                    &s.frontmatter.tags,
                )
            })
            .collect();
        // The words the hybrid blend weighs: each skill's text with its body.
        let bodies: Vec<String> = library
            .skills()
            .iter()
            .map(|s| s.read_body().unwrap_or_default())
            .collect();
        let with_bodies = || {
            texts
                .iter()
                .map(String::as_str)
                .zip(bodies.iter().map(String::as_str))
        };
        println!("\n{label}: {} skills", names.len());
        println!(
            "{:<24} {:>9} {:>9} {:>7} {:>16}",
            "mode", "recall@1", "recall@5", "MRR", "no-fit cleared"
        );
        for (mode, stemming) in [
            ("lexical (no stemming)", Stemming::None),
            ("lexical (light stem)", Stemming::Light),
        ] {
            let index = Bm25::build(texts.iter().map(String::as_str), stemming);
            let scores = |query: &str| index.scores(query);
            let metrics = evaluate(&names, &scores, &requests, &no_fit, lexical_threshold());
            report(mode, &metrics);
        }
        let Some(model) = skillet_test_support::embedding_model_dir() else {
            println!("(semantic and hybrid skipped: no model; run scripts/fetch-model.sh)");
            continue;
        };
        let mut embedder = skillet_retrieval::embed::Embedder::load(&model).unwrap();
        // Many texts: the layers read once.
        embedder.keep_layers(true).unwrap();
        let doc_texts: Vec<String> = library
            .skills()
            .iter()
            .map(|s| {
                embedding_text(
                    &s.name,
                    &s.description,
                    s.frontmatter.when_to_use.as_deref(),
                    &s.frontmatter.tags,
                )
            })
            .collect();
        let started = std::time::Instant::now();
        let doc_vectors = embed_cached(&embedder, &model, &doc_texts);
        eprintln!(
            "embedded {} skills in {:.1} s",
            doc_vectors.len(),
            started.elapsed().as_secs_f64()
        );
        let all_queries: Vec<&str> = requests
            .iter()
            .chain(&no_fit)
            .map(|r| r.query.as_str())
            .collect();
        let query_vectors = embedder.embed(&all_queries).unwrap();
        let vector_of = |query: &str| {
            let position = all_queries.iter().position(|q| *q == query).unwrap();
            &query_vectors[position]
        };
        let semantic = |query: &str| -> Vec<f32> {
            let q = vector_of(query);
            doc_vectors
                .iter()
                .map(|d| skillet_retrieval::embed::dot(q, d))
                .collect()
        };
        report(
            "semantic",
            &evaluate(&names, &semantic, &requests, &no_fit, semantic_threshold()),
        );
        let index = Bm25::build_with_bodies(with_bodies(), Stemming::Light);
        let rrf = |query: &str| -> Vec<f32> {
            let lexical: Vec<usize> = top_k(&index.scores(query), 100)
                .into_iter()
                .map(|(i, _)| i)
                .collect();
            let meaning: Vec<usize> = top_k(&semantic(query), 100)
                .into_iter()
                .map(|(i, _)| i)
                .collect();
            reciprocal_rank_fusion(names.len(), &[&lexical, &meaning])
        };
        report(
            "hybrid (RRF)",
            &evaluate(&names, &rrf, &requests, &no_fit, f32::MAX),
        );
        for (alpha, gated) in [
            (0.3_f32, true),
            (0.4, true),
            (0.5, true),
            (0.6, true),
            (0.4, false),
            (0.5, false),
            (0.6, false),
        ] {
            let blend = |query: &str| -> Vec<f32> {
                let lexical = index.scores(query);
                let best = lexical.iter().copied().fold(0.0_f32, f32::max).max(1e-6);
                let meaning = semantic(query);
                lexical
                    .iter()
                    .zip(&meaning)
                    .map(|(l, m)| {
                        let gate = if gated {
                            m.max(0.0).powf(gate_power())
                        } else {
                            1.0
                        };
                        alpha * m + (1.0 - alpha) * (l / best) * gate
                    })
                    .collect()
            };
            report(
                &format!("hybrid ({alpha}{})", if gated { " gated" } else { "" }),
                &evaluate(&names, &blend, &requests, &no_fit, semantic_threshold()),
            );
        }
        // The shipped ranking, as `skillet skills match` and the agent use it.
        let matcher = skillet_retrieval::Matcher::new(texts.iter().map(String::as_str))
            .with_vectors(384, doc_vectors.concat())
            .with_bodies(with_bodies());
        let ranked = |query: &str| {
            matcher
                .rank(
                    query,
                    Some(vector_of(query)),
                    skillet_retrieval::Mode::Hybrid,
                    100,
                )
                .1
        };
        let shipped = |query: &str| -> Vec<f32> {
            let mut scores = vec![f32::MIN; names.len()];
            for r in ranked(query) {
                scores[r.index] = r.score;
            }
            scores
        };
        let mut metrics = evaluate(&names, &shipped, &requests, &no_fit, f32::MAX);
        #[expect(clippy::cast_precision_loss, reason = "small counts")]
        let cleared = no_fit
            .iter()
            .filter(|r| ranked(&r.query).first().is_some_and(|top| top.relevant))
            .count() as f64
            / no_fit.len() as f64;
        metrics.no_fit_cleared = cleared;
        report("HYBRID (as shipped)", &metrics);
        // Where the top scores of fitting and non-fitting requests lie, to set thresholds.
        let top = |query: &str| top_k(&semantic(query), 1)[0].1;
        let mut fits: Vec<f32> = requests.iter().map(|r| top(&r.query)).collect();
        let mut none: Vec<f32> = no_fit.iter().map(|r| top(&r.query)).collect();
        fits.sort_by(f32::total_cmp);
        none.sort_by(f32::total_cmp);
        println!(
            "top cosine, fitting requests: min {:.3} p10 {:.3} median {:.3}",
            fits[0],
            fits[fits.len() / 10],
            fits[fits.len() / 2]
        );
        println!(
            "top cosine, no-fit requests: median {:.3} max {:.3}",
            none[none.len() / 2],
            none[none.len() - 1]
        );
    }
}

/// Vectors through the on-disk cache (`SKILLET_EVAL_CACHE`, default the system temp folder), so
/// reruns while tuning do not embed again.
fn embed_cached(
    embedder: &skillet_retrieval::embed::Embedder,
    model: &Path,
    texts: &[String],
) -> Vec<Vec<f32>> {
    use skillet_retrieval::{EmbeddingCache, text_hash};
    let dir = std::env::var_os("SKILLET_EVAL_CACHE").map_or_else(std::env::temp_dir, PathBuf::from);
    let fingerprint = skillet_retrieval::embed::fingerprint(model, Some(&dir)).unwrap();
    assert_eq!(fingerprint.dimensions, embedder.dimensions());
    let path = EmbeddingCache::path_for(&dir, &format!("eval-{}", fingerprint.id));
    let (mut cache, warnings) = EmbeddingCache::open(&path, fingerprint.dimensions);
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    let missing: Vec<&str> = texts
        .iter()
        .filter(|t| cache.get(text_hash(t)).is_none())
        .map(String::as_str)
        .collect();
    for (text, vector) in missing.iter().zip(embedder.embed(&missing).unwrap()) {
        cache.insert(text_hash(text), vector).unwrap();
    }
    for text in texts {
        cache.touch(text_hash(text));
    }
    cache.save().unwrap();
    texts
        .iter()
        .map(|t| cache.get(text_hash(t)).unwrap().to_vec())
        .collect()
}

fn report(mode: &str, metrics: &Metrics) {
    println!(
        "{mode:<24} {:>9.3} {:>9.3} {:>7.3} {:>16.3}",
        metrics.recall_at_1, metrics.recall_at_5, metrics.mrr, metrics.no_fit_cleared
    );
}

fn gate_power() -> f32 {
    std::env::var("SKILLET_GATE_POWER")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.5)
}

fn semantic_threshold() -> f32 {
    std::env::var("SKILLET_SEMANTIC_THRESHOLD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.35)
}

/// The BM25 score a top result must reach to count as relevant.
fn lexical_threshold() -> f32 {
    std::env::var("SKILLET_LEXICAL_THRESHOLD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8.0)
}
