//! Corpus-wide checks over the 1,939 real `SKILL.md` files of `../shared/corpus` (or
//! `$SKILLET_CORPUS`): every file loads without a panic, and where `validate` disagrees with the
//! reference validator's verdicts in `INDEX.jsonl`, each disagreement has a documented reason.
//! Skips, saying so, where the corpus is absent.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "test helpers"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use skillet_skills::{
    CLIENT_FIELDS, FrontmatterStatus, Root, RootKind, Validation, discover, locate, validate_file,
};

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SKILLET_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
        PathBuf::from,
    );
    if dir.join("INDEX.jsonl").is_file() {
        Some(dir)
    } else {
        skillet_test_support::skip(&format!(
            "SKIPPED: no corpus at {} (set SKILLET_CORPUS to its folder)",
            dir.display()
        ));
        None
    }
}

struct Record {
    file: PathBuf,
    dir: PathBuf,
    description: Option<String>,
    reference_errors: Vec<String>,
}

fn records(corpus: &Path) -> Vec<Record> {
    let index = std::fs::read_to_string(corpus.join("INDEX.jsonl")).unwrap();
    index
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap();
            let dir = corpus
                .join(value["collection"].as_str().unwrap())
                .join(value["skill_dir"].as_str().unwrap());
            Record {
                file: dir.join("SKILL.md"),
                dir,
                description: value["description"].as_str().map(str::to_string),
                reference_errors: value["skills_ref_errors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_str().unwrap().to_string())
                    .collect(),
            }
        })
        .collect()
}

fn collections(corpus: &Path) -> Vec<Root> {
    let mut roots: Vec<Root> = std::fs::read_dir(corpus)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        .map(|entry| Root::new(entry.path(), RootKind::Explicit))
        .collect();
    roots.sort_by(|a, b| a.path.cmp(&b.path));
    roots
}

#[test]
fn every_corpus_file_loads() {
    let Some(corpus) = corpus_dir() else { return };
    let records = records(&corpus);
    assert_eq!(records.len(), 1_939);
    let roots = collections(&corpus);
    let (locations, walk_diagnostics) = locate(&roots);
    assert_eq!(locations.len(), records.len(), "{walk_diagnostics:?}");
    let library = discover(&roots);
    let with_diagnostics = library
        .skills()
        .iter()
        .filter(|skill| !skill.diagnostics.is_empty())
        .count();
    let shadowed: usize = library.skills().iter().map(|s| s.shadowed.len()).sum();
    let recovered = library
        .skills()
        .iter()
        .filter(|skill| matches!(skill.status, FrontmatterStatus::RecoveredByQuoting { .. }))
        .count();
    let broken = library
        .skills()
        .iter()
        .filter(|skill| !skill.status.is_mapping())
        .count();
    eprintln!(
        "corpus: {} files found, {} skills loaded under unique names, {shadowed} shadowed copies, \
         {with_diagnostics} with load diagnostics ({recovered} recovered by quoting, {broken} without usable frontmatter), \
         {} library diagnostics",
        locations.len(),
        library.skills().len(),
        library.diagnostics().len()
    );
    // 1,761 unique names in the corpus (INDEX README).
    assert_eq!(library.skills().len(), 1_761);
    assert_eq!(library.skills().len() + shadowed, 1_939);
    assert!(library.skills().iter().all(|skill| !skill.name.is_empty()));
    // Whole-corpus discovery as one explicit root finds the same files.
    let (whole, _) = locate(&[Root::new(&corpus, RootKind::Explicit)]);
    assert_eq!(whole.len(), 1_939);
}

#[test]
fn descriptions_match_the_reference_parse() {
    let Some(corpus) = corpus_dir() else { return };
    let library = discover(&collections(&corpus));
    let mut compared = 0;
    let mut differing = Vec::new();
    for record in records(&corpus) {
        let Some(expected) = record.description else {
            continue;
        };
        let real = record.file.canonicalize().unwrap();
        let Some(skill) = library.skills().iter().find(|skill| skill.file == real) else {
            continue; // shadowed copy
        };
        compared += 1;
        let expected = skillet_skills::fold_whitespace(&expected);
        if skill.description != expected {
            differing.push(format!(
                "{}: {:?} vs {:?}",
                real.display(),
                skill.description,
                expected
            ));
        }
    }
    eprintln!(
        "descriptions compared with PyYAML's: {compared}, differing: {}",
        differing.len()
    );
    assert!(compared > 1_500);
    assert!(differing.is_empty(), "{differing:#?}");
}

/// Why our verdict differs from the reference validator's, or `None` when unexplained.
fn explain(record: &Record, ours: &Validation) -> Option<&'static str> {
    let ours_valid = ours.is_valid();
    let reference_valid = record.reference_errors.is_empty();
    if ours_valid == reference_valid {
        return Some("agree");
    }
    if ours_valid {
        // The reference failed where we pass: each of its errors must be one we relax on purpose.
        let reasons: Vec<Option<&'static str>> = record
            .reference_errors
            .iter()
            .map(|error| {
                if error.starts_with("Invalid YAML") && error.contains("JSONesque") {
                    Some("flow-style YAML ([a, b]) rejected by the reference's strictyaml; valid YAML to us")
                } else if error.starts_with("Invalid YAML")
                    && ours.warnings().any(|w| w.message.starts_with("Unquoted ': '"))
                {
                    Some("unquoted ': ' in a value: we load it by quoting and warn")
                } else if let Some(fields) = error
                    .strip_prefix("Unexpected fields in frontmatter: ")
                    .and_then(|rest| rest.split(". Only").next())
                {
                    fields
                        .split(", ")
                        .all(|field| CLIENT_FIELDS.contains(&field))
                        .then_some("client-defined fields (Claude Code's) are warnings to us")
                } else {
                    None
                }
            })
            .collect();
        if reasons.iter().all(Option::is_some) {
            return reasons[0];
        }
        return None;
    }
    // We fail where the reference passes: each of our errors must be a rule we add on purpose.
    let all_ours = ours.errors().all(|error| {
        error.message == "Field 'metadata' must be a map of strings"
            || error.message == "Field 'compatibility' must be a non-empty string"
    });
    all_ours.then_some("metadata must be a map of strings / compatibility non-empty: the spec's rules, which the reference does not check")
}

#[test]
fn validate_agrees_with_the_reference_or_says_why() {
    let Some(corpus) = corpus_dir() else { return };
    let mut reasons: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut unexplained = Vec::new();
    let mut ours_valid = 0;
    let records = records(&corpus);
    for record in &records {
        let validation = validate_file(&record.file, &record.dir);
        if validation.is_valid() {
            ours_valid += 1;
        }
        match explain(record, &validation) {
            Some(reason) => *reasons.entry(reason).or_default() += 1,
            None => unexplained.push(format!(
                "{}\n  reference: {:?}\n  ours: {:?}",
                record.file.display(),
                record.reference_errors,
                validation
                    .errors()
                    .map(|e| e.message.clone())
                    .collect::<Vec<_>>()
            )),
        }
    }
    let reference_valid = records
        .iter()
        .filter(|r| r.reference_errors.is_empty())
        .count();
    eprintln!(
        "validate: {ours_valid} of {} valid to us, {reference_valid} to the reference",
        records.len()
    );
    for (reason, count) in &reasons {
        eprintln!("  {count:>5}  {reason}");
    }
    assert_eq!(reference_valid, 899);
    assert!(
        unexplained.is_empty(),
        "{} unexplained:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
}
