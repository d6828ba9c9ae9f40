//! The audit over the 1,939 real `SKILL.md` files of `../shared/corpus` (or `$SKILLET_CORPUS`):
//! every skill is audited without a panic, and the counts per rule are printed
//! (`cargo test -p skillet-audit --test corpus -- --nocapture`). Skips, saying so, where the
//! corpus is absent.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "test helpers"
)]

use std::path::{Path, PathBuf};

use skillet_audit::{RULES, Severity, audit_paths};

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SKILLET_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
        PathBuf::from,
    );
    if dir.join("INDEX.jsonl").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: no corpus at {} (set SKILLET_CORPUS to its folder)",
            dir.display()
        );
        None
    }
}

#[test]
fn the_whole_corpus_is_audited_and_counted_per_rule() {
    let Some(corpus) = corpus_dir() else { return };
    let report = audit_paths(&[corpus]).unwrap();
    let index = std::fs::read_to_string(
        std::env::var_os("SKILLET_CORPUS")
            .map_or_else(
                || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
                PathBuf::from,
            )
            .join("INDEX.jsonl"),
    )
    .unwrap();
    assert_eq!(report.skills.len(), index.lines().count());
    let by_rule = report.counts_by_rule();
    eprintln!(
        "corpus: {} skills, {} files scanned, {} notes",
        report.skills.len(),
        report.files_scanned(),
        report.notes.len() + report.skills.iter().map(|s| s.notes.len()).sum::<usize>()
    );
    for rule in RULES {
        eprintln!(
            "  {:<24} {:<8} {:>5}",
            rule.id,
            rule.severity.as_str(),
            by_rule.get(rule.id).copied().unwrap_or(0)
        );
    }
    let counts = report.counts();
    eprintln!(
        "  by severity: {}",
        Severity::ALL
            .iter()
            .map(|s| format!("{} {}", counts.get(*s), s.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // Every finding names a file of its skill and a line.
    for (skill, finding) in report.findings() {
        assert!(finding.path.starts_with(&skill.dir), "{finding:?}");
        assert!(finding.line >= 1);
    }
}
