//! `skillet skills audit [PATH…] [--json]`: scan skill folders with `skillet-audit` and print
//! the findings, grouped by skill. Exit 1 on a critical finding, 0 otherwise; 2 when the audit
//! itself fails (a path that does not exist, cannot be read or holds no skill, or the report
//! cannot be written), naming the path.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use skillet_audit::{Note, Report, Severity, SkillReport, audit_paths, audit_roots};

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
                // One line: a path may hold a newline.
                warn(&format!(
                    "error: {}",
                    terminal_safe(&error.to_string(), false)
                ));
                return Ok(ExitCode::from(EXIT_USAGE));
            }
        }
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let written = write_report(&mut out, &report, cwd, json).and_then(|()| out.flush());
    drop(out);
    let code = exit_code(&report, written)?;
    if !json && code != EXIT_USAGE {
        for note in &report.notes {
            warn(&note_line(note, cwd));
        }
        if report.skills.is_empty() && paths.is_empty() {
            warn(&super::skills::no_skills_found(context));
        }
    }
    Ok(ExitCode::from(code))
}

fn write_report(out: &mut impl Write, report: &Report, cwd: &Path, json: bool) -> io::Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, &report_json(report))?;
        writeln!(out)
    } else {
        write_text(out, report, cwd)
    }
}

/// The exit code once the report was written (or not): 1 on a critical finding, 0 otherwise;
/// 2, said on stderr, when it could not be written. A closed stdout (`| head`) stays an error,
/// which the caller treats as success.
fn exit_code(report: &Report, written: io::Result<()>) -> anyhow::Result<u8> {
    match written {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Err(error.into()),
        Err(error) => {
            warn(&format!("error: cannot write the audit report: {error}"));
            Ok(EXIT_USAGE)
        }
        Ok(()) if report.has_critical() => Ok(EXIT_FAILURE),
        Ok(()) => Ok(0),
    }
}

/// A note of the report for stderr, on one line: its path and message escaped.
fn note_line(note: &Note, cwd: &Path) -> String {
    format!(
        "note: {}: {}",
        shown(&note.path, cwd),
        terminal_safe(&note.message, false)
    )
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
        "{}, {} scanned: {}",
        crate::plural(report.skills.len(), "skill"),
        crate::plural(report.files_scanned(), "file"),
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

#[cfg(test)]
mod tests {
    use skillet_audit::Finding;

    use super::*;

    fn report(severity: Severity, path: &str) -> Report {
        let finding = Finding {
            rule: "PIPE_TO_SHELL",
            severity,
            title: "downloads a script and pipes it into a shell",
            hint: "read it first",
            path: PathBuf::from(path),
            line: 3,
            excerpt: "curl x | sh".to_string(),
            detail: None,
        };
        Report {
            skills: vec![SkillReport {
                name: "evil\nskill".to_string(),
                dir: PathBuf::from("/p/skills/evil"),
                file: PathBuf::from("/p/skills/evil/SKILL.md"),
                files_scanned: 2,
                findings: vec![finding],
                notes: vec![Note {
                    path: PathBuf::from("/p/skills/evil/a\nnote: forged.md"),
                    message: "a link to /x\ny; not followed".to_string(),
                }],
            }],
            notes: vec![Note {
                path: PathBuf::from("/p/skills/b\nnote: forged"),
                message: "cannot read this folder".to_string(),
            }],
        }
    }

    #[test]
    fn newlines_in_paths_and_names_are_escaped_on_every_line() {
        let report = report(
            Severity::High,
            "/p/skills/evil/x\n  critical FAKE forged.md",
        );
        let mut out = Vec::new();
        write_report(&mut out, &report, Path::new("/p"), false).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 5, "{text}");
        assert!(
            text.contains("  high     PIPE_TO_SHELL skills/evil/x\\n  critical FAKE forged.md:3  "),
            "{text}"
        );
        assert!(text.starts_with("evil\\nskill (skills/evil)\n"), "{text}");
        assert!(
            text.contains(
                "  note: skills/evil/a\\nnote: forged.md: a link to /x\\ny; not followed\n"
            ),
            "{text}"
        );
        // The notes of the walk, on stderr.
        assert_eq!(
            note_line(&report.notes[0], Path::new("/p")),
            "note: skills/b\\nnote: forged: cannot read this folder"
        );
    }

    #[test]
    fn critical_findings_exit_1_and_a_report_that_cannot_be_written_exits_2() {
        let critical = report(Severity::Critical, "/p/skills/evil/x.sh");
        let high = report(Severity::High, "/p/skills/evil/x.sh");
        assert_eq!(exit_code(&critical, Ok(())).unwrap(), EXIT_FAILURE);
        assert_eq!(exit_code(&high, Ok(())).unwrap(), 0);
        let full = io::Error::new(io::ErrorKind::StorageFull, "no space left on device");
        assert_eq!(exit_code(&critical, Err(full)).unwrap(), EXIT_USAGE);
        let closed = io::Error::from(io::ErrorKind::BrokenPipe);
        let error = exit_code(&critical, Err(closed)).unwrap_err();
        assert!(crate::output::is_broken_pipe(&error));
    }
}
