//! `skillet skills audit [PATH…] [--json]`: scan skill folders with `skillet-audit` and print
//! the findings, grouped by skill; exit 1 on a critical finding.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use skillet_audit::{Report, Severity, SkillReport, audit_paths, audit_roots};

use super::Context;
use crate::output::{terminal_safe, warn};
use crate::{EXIT_FAILURE, EXIT_USAGE};

pub fn run(context: &Context, paths: &[PathBuf], json: bool) -> anyhow::Result<ExitCode> {
    let cwd = &context.env.cwd;
    let report = if paths.is_empty() {
        audit_roots(&context.roots)
    } else {
        let paths: Vec<PathBuf> = paths.iter().map(|path| cwd.join(path)).collect();
        match audit_paths(&paths) {
            Ok(report) => report,
            Err(error) => {
                warn(&format!("error: {error}"));
                return Ok(ExitCode::from(EXIT_USAGE));
            }
        }
    };
    let mut out = BufWriter::new(io::stdout().lock());
    if json {
        serde_json::to_writer_pretty(&mut out, &report_json(&report))?;
        writeln!(out)?;
    } else {
        write_text(&mut out, &report, cwd)?;
    }
    out.flush()?;
    drop(out);
    if !json {
        for note in &report.notes {
            warn(&format!("note: {}: {}", note.path.display(), note.message));
        }
        if report.skills.is_empty() && paths.is_empty() {
            warn(&super::skills::no_skills_found(context));
        }
    }
    Ok(if report.has_critical() {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

/// `path` relative to the working directory when it lies below it.
fn shown(path: &Path, cwd: &Path) -> String {
    let relative = path.strip_prefix(cwd).unwrap_or(path);
    terminal_safe(&relative.display().to_string(), false).into_owned()
}

fn write_text(out: &mut impl Write, report: &Report, cwd: &Path) -> io::Result<()> {
    for skill in &report.skills {
        if skill.findings.is_empty() && skill.notes.is_empty() {
            continue;
        }
        write_skill(out, skill, cwd)?;
    }
    let counts = report.counts();
    let by_severity: Vec<String> = Severity::ALL
        .iter()
        .map(|severity| format!("{} {severity}", counts.get(*severity)))
        .collect();
    writeln!(
        out,
        "{} skills, {} files scanned: {}",
        report.skills.len(),
        report.files_scanned(),
        by_severity.join(", ")
    )
}

fn write_skill(out: &mut impl Write, skill: &SkillReport, cwd: &Path) -> io::Result<()> {
    writeln!(
        out,
        "{} ({})",
        terminal_safe(&skill.name, false),
        shown(&skill.dir, cwd)
    )?;
    for finding in &skill.findings {
        let mut line = format!(
            "  {:<8} {} {}:{}  {}",
            finding.severity.as_str(),
            finding.rule,
            shown(&finding.path, cwd),
            finding.line,
            finding.title
        );
        if !finding.excerpt.is_empty() {
            line.push_str(" — ");
            line.push_str(&finding.excerpt);
        }
        writeln!(out, "{}", terminal_safe(&line, false))?;
        if let Some(detail) = &finding.detail {
            writeln!(out, "           {}", terminal_safe(detail, false))?;
        }
        writeln!(out, "           hint: {}", finding.hint)?;
    }
    for note in &skill.notes {
        writeln!(
            out,
            "  note: {}: {}",
            shown(&note.path, cwd),
            terminal_safe(&note.message, false)
        )?;
    }
    Ok(())
}

/// The stable JSON document: counts, every finding (flat, naming its skill), every note. Paths
/// are written lossily: a file name that is not UTF-8 must not make the document fail.
fn report_json(report: &Report) -> Value {
    let findings: Vec<Value> = report
        .findings()
        .map(|(skill, finding)| {
            json!({
                "skill": skill.name,
                "skill_dir": skill.dir.to_string_lossy(),
                "rule": finding.rule,
                "severity": finding.severity,
                "title": finding.title,
                "path": finding.path.to_string_lossy(),
                "line": finding.line,
                "excerpt": finding.excerpt,
                "detail": finding.detail,
                "hint": finding.hint,
            })
        })
        .collect();
    let notes: Vec<Value> = report
        .notes
        .iter()
        .chain(report.skills.iter().flat_map(|skill| &skill.notes))
        .map(|note| json!({"path": note.path.to_string_lossy(), "message": note.message}))
        .collect();
    json!({
        "skills_scanned": report.skills.len(),
        "files_scanned": report.files_scanned(),
        "critical": report.has_critical(),
        "counts": report.counts(),
        "rules": report.counts_by_rule(),
        "findings": findings,
        "notes": notes,
    })
}
