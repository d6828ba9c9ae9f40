//! The audit over the 1,939 real `SKILL.md` files of `../shared/corpus` (or `$SKILLET_CORPUS`):
//! every skill is audited without a panic, the counts per rule and every finding are printed
//! (`cargo test -p skillet-audit --test corpus -- --nocapture`), and the counts stay within
//! bounds, so a rule that turns noisy fails here. Skips, saying so, where the corpus is absent.
//!
//! The findings the bounds allow were each read by hand: `curl … | sh` installers (uv, bun,
//! rustup, Homebrew, Flux, Linkerd, nodesource) and two `irm … | iex`, a key fetched with `curl`
//! in a penetration-testing skill, an `eval(atob(…))` XSS payload in an XSS-testing skill (the
//! one critical finding), and image links with CDN resize queries.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "test helpers"
)]

use std::path::{Path, PathBuf};

use skillet_audit::{RULES, Severity, audit_paths};

/// Critical findings the corpus may hold: (rule, the skill's folder name).
const ALLOWED_CRITICAL: &[(&str, &str)] = &[("DECODE_EXEC", "xss-html-injection")];
/// The most findings over the whole corpus (27 when the bounds were set).
const MAX_FINDINGS: usize = 35;
/// The most findings of a rule over the whole corpus, for the rules that have some (the
/// counts when the bounds were set, in the comments).
const MAX_BY_RULE: &[(&str, usize)] = &[
    ("PIPE_TO_SHELL", 28),   // 22
    ("IMAGE_BEACON", 5),     // 3
    ("CREDENTIAL_EXFIL", 2), // 1
    ("DECODE_EXEC", 2),      // 1
];
/// The most findings of any other rule (none had any when the bounds were set).
const MAX_OTHER_RULE: usize = 1;

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

#[test]
fn the_whole_corpus_is_audited_and_its_counts_stay_within_bounds() {
    let Some(corpus) = corpus_dir() else { return };
    let index = std::fs::read_to_string(corpus.join("INDEX.jsonl")).unwrap();
    let report = audit_paths(&[corpus]).unwrap();
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
    let folder = |dir: &Path| dir.file_name().unwrap().to_string_lossy().into_owned();
    for (skill, finding) in report.findings() {
        eprintln!(
            "  {} {}:{} {} | {}",
            finding.rule,
            finding.path.strip_prefix(&skill.dir).unwrap().display(),
            finding.line,
            folder(&skill.dir),
            finding.excerpt
        );
    }
    // Every finding names a file of its skill and a line.
    for (skill, finding) in report.findings() {
        assert!(finding.path.starts_with(&skill.dir), "{finding:?}");
        assert!(finding.line >= 1);
    }
    // The bounds.
    let critical: Vec<(&str, String)> = report
        .findings()
        .filter(|(_, f)| f.severity == Severity::Critical)
        .map(|(skill, f)| (f.rule, folder(&skill.dir)))
        .filter(|(rule, dir)| !ALLOWED_CRITICAL.contains(&(*rule, dir.as_str())))
        .collect();
    assert!(critical.is_empty(), "critical findings: {critical:?}");
    let total: usize = by_rule.values().sum();
    assert!(total <= MAX_FINDINGS, "{total} findings: {by_rule:?}");
    for (rule, count) in &by_rule {
        let bound = MAX_BY_RULE
            .iter()
            .find(|(id, _)| id == rule)
            .map_or(MAX_OTHER_RULE, |&(_, bound)| bound);
        assert!(*count <= bound, "{rule}: {count} findings, at most {bound}");
    }
}
