//! The retrieval evaluation: natural requests written against real skills of the corpus (each
//! with the skill names that would be right) and requests no skill fits, ranked over a pool of
//! the smaller collections (~500 skills) and over the whole corpus.
//!
//! `cargo run --release -p skillet-retrieval --example eval` (the corpus is `../shared/corpus`
//! or `$SKILLET_CORPUS`). Prints recall@1, recall@5, MRR, and how often no-fit requests clear
//! the threshold.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a report"
)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use skillet_retrieval::{Bm25, Stemming, skill_text, top_k};
use skillet_skills::{Root, RootKind, discover};

/// The collections of the ~500-skill pool (all but the two largest).
const POOL: [&str; 9] = [
    "anthropics-claude-plugins-official",
    "anthropics-skills",
    "openai-skills",
    "obra-superpowers",
    "vercel-agent-skills",
    "mattpocock-skills",
    "trailofbits-skills",
    "wshobson-agents",
    "kdense-scientific-skills",
];

struct Request {
    query: String,
    expected: Vec<String>,
}

fn load(path: &Path) -> Vec<Request> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap();
            Request {
                query: value["query"].as_str().unwrap().to_string(),
                expected: value
                    .get("expected")
                    .and_then(Value::as_array)
                    .map(|names| {
                        names
                            .iter()
                            .map(|n| n.as_str().unwrap().to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect()
}

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
    let corpus = std::env::var_os("SKILLET_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
        PathBuf::from,
    );
    if !corpus.join("INDEX.jsonl").is_file() {
        eprintln!("SKIPPED: no corpus at {}", corpus.display());
        return;
    }
    let eval = Path::new(env!("CARGO_MANIFEST_DIR")).join("eval");
    let requests = load(&eval.join("requests.jsonl"));
    let no_fit = load(&eval.join("no_fit.jsonl"));
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
            println!(
                "{mode:<24} {:>9.3} {:>9.3} {:>7.3} {:>16.3}",
                metrics.recall_at_1, metrics.recall_at_5, metrics.mrr, metrics.no_fit_cleared
            );
        }
    }
}

/// The BM25 score a top result must reach to count as relevant.
fn lexical_threshold() -> f32 {
    std::env::var("SKILLET_LEXICAL_THRESHOLD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8.0)
}
