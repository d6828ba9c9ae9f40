//! The paraphrase set (`eval/paraphrase.jsonl`) holds what it claims: each request names a
//! skill of the ~500-skill pool and shares no content word with that skill's name or
//! description, as the lexical ranker sees words (its tokenizer, stop words and stemmer). The
//! set was written and frozen on 2026-12-01, before any tuning against it; this keeps an edit
//! from quietly giving a request the skill's words. Needs the corpus (`../shared/corpus` or
//! `SKILLET_CORPUS`); skips, saying so, without it.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use skillet_retrieval::{Stemming, tokens};
use skillet_skills::{Root, RootKind, discover};

#[path = "../eval/pool.rs"]
mod pool;
use pool::POOL;

fn corpus() -> Option<PathBuf> {
    let dir = skillet_test_support::corpus_dir();
    if dir.is_none() {
        skillet_test_support::skip(
            "SKIPPED: the paraphrase set's property: no corpus (set SKILLET_CORPUS to its folder)",
        );
    }
    dir
}

#[test]
fn paraphrases_share_no_content_word_with_their_skill() {
    let Some(corpus) = corpus() else { return };
    let roots: Vec<Root> = POOL
        .iter()
        .map(|name| Root::new(corpus.join(name), RootKind::Explicit))
        .collect();
    let library = discover(&roots);
    let set = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("eval/paraphrase.jsonl"),
    )
    .unwrap();
    let mut requests = 0;
    let mut failures = Vec::new();
    for line in set.lines().filter(|line| !line.trim().is_empty()) {
        let request: serde_json::Value = serde_json::from_str(line).unwrap();
        let query = request["query"].as_str().unwrap();
        let words: HashSet<String> = tokens(query, Stemming::Light).into_iter().collect();
        for expected in request["expected"].as_array().unwrap() {
            let name = expected.as_str().unwrap();
            let skill = library
                .get(name)
                .unwrap_or_else(|| panic!("{name} is not in the pool ({query})"));
            let skill_words: HashSet<String> = tokens(
                &format!("{} {}", skill.name.replace('-', " "), skill.description),
                Stemming::Light,
            )
            .into_iter()
            .collect();
            let shared: Vec<&String> = words.intersection(&skill_words).collect();
            if !shared.is_empty() {
                failures.push(format!("'{query}' shares {shared:?} with {name}"));
            }
        }
        requests += 1;
    }
    assert!(
        failures.is_empty(),
        "not paraphrases:\n{}",
        failures.join("\n")
    );
    assert!(requests >= 30, "{requests} requests");
}
