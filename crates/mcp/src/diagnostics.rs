//! What went wrong while loading the library, for the client to see: skills skipped (a file
//! that is not a skill, frontmatter that does not parse), degraded (a field that could not be
//! read, a link that leaves the skill), shadowed by a same-named skill, or left out of the
//! Skills extension's listing (over its limits, a name that cannot be a URI). Users of other
//! servers complain that broken skills just vanish; here each one is a line of
//! `skill://diagnostics`, and `list_skills` says how many there are.

use std::fmt::Write as _;

use skillet_skills::{Library, Severity, escape_invisible};

/// How long `skill://diagnostics` grows at most (then one line says how many more there are);
/// each skill keeps at most [`skillet_skills::MAX_DIAGNOSTICS_PER_SKILL`] too.
pub const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// How many problems [`text`] lists: library-wide ones and each skill's, shadowed skills
/// included.
pub fn count(library: &Library) -> usize {
    library.diagnostics().len()
        + library
            .skills()
            .iter()
            .map(|skill| skill.diagnostics.len() + skill.shadowed.len())
            .sum::<usize>()
}

/// The diagnostics as text, one per line (`error|warning PATH[:LINE]: MESSAGE (hint: …)`),
/// then `extra` lines (what the server itself left out, e.g. of the Skills extension).
pub fn text(library: &Library, extra: &[String]) -> String {
    let mut out = String::new();
    let mut left_out = 0usize;
    let mut line = |diagnostic: &skillet_skills::Diagnostic| {
        if out.len() >= MAX_TEXT_BYTES {
            left_out += 1;
            return;
        }
        let severity = match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        // Paths and messages quote names from disk: shown escaped, one line each.
        let _ = write!(
            out,
            "{severity} {}",
            escape_invisible(&diagnostic.path.display().to_string())
        );
        if let Some(line) = diagnostic.line {
            let _ = write!(out, ":{line}");
        }
        let _ = write!(out, ": {}", escape_invisible(&diagnostic.message));
        if let Some(field) = &diagnostic.field {
            let _ = write!(out, " (field `{}`)", escape_invisible(field));
        }
        if let Some(hint) = &diagnostic.hint {
            let _ = write!(out, " (hint: {})", escape_invisible(hint));
        }
        out.push('\n');
    };
    for diagnostic in library.diagnostics() {
        line(diagnostic);
    }
    for skill in library.skills() {
        for diagnostic in &skill.diagnostics {
            line(diagnostic);
        }
        // What listing its files left out: links out of it, FIFOs and devices, folders that
        // cannot be read.
        for diagnostic in &skillet_skills::skill_files(skill).diagnostics {
            line(diagnostic);
        }
    }
    for skill in library.skills() {
        for shadowed in &skill.shadowed {
            if out.len() >= MAX_TEXT_BYTES {
                left_out += 1;
                continue;
            }
            let _ = writeln!(
                out,
                "warning {}: skill '{}' is shadowed by {} (same name; the first root wins)",
                escape_invisible(&shadowed.display().to_string()),
                escape_invisible(&skill.name),
                escape_invisible(&skill.file.display().to_string())
            );
        }
    }
    for extra in extra {
        if out.len() >= MAX_TEXT_BYTES {
            left_out += 1;
            continue;
        }
        let _ = writeln!(out, "{extra}");
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "… {left_out} more problems not listed (the list stops past {} KiB)",
            MAX_TEXT_BYTES / 1024
        );
    }
    if out.is_empty() {
        out.push_str("no problems: every skill loaded\n");
    }
    out
}
