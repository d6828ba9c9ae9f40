//! `skillet skills new`: a new skill that passes validation.

use std::fs;
use std::io::{ErrorKind, Write as _};
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

use crate::error::Error;
use crate::validate::name_problems;

/// How the template's description starts: `validate` warns while a description still holds it.
pub const DESCRIPTION_PLACEHOLDER: &str = "Replace this text.";

/// Creates `parent/NAME/SKILL.md` from a template that passes validation, and returns the file's
/// path. Refuses names that break the naming rules (so a name is a path segment only when it
/// passes them: no separator, no `.` or `..`), and never overwrites an existing folder or file.
pub fn scaffold_skill(parent: &Path, name: &str) -> Result<PathBuf, Error> {
    let name: String = name.trim().nfkc().collect();
    if let Err(reason) = name_segment(&name) {
        return Err(Error::InvalidName { name, reason });
    }
    let dir = parent.join(&name);
    if fs::symlink_metadata(&dir).is_ok() {
        return Err(Error::AlreadyExists { path: dir });
    }
    fs::create_dir_all(parent).map_err(|source| Error::io(parent, source))?;
    // The skill's own folder is created here, not found: one that appeared meanwhile (or a link
    // put in its place) is not written into.
    fs::create_dir(&dir).map_err(|source| {
        if source.kind() == ErrorKind::AlreadyExists {
            Error::AlreadyExists { path: dir.clone() }
        } else {
            Error::io(&dir, source)
        }
    })?;
    let file = dir.join("SKILL.md");
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .map_err(|source| Error::io(&file, source))?;
    out.write_all(template(&name).as_bytes())
        .map_err(|source| Error::io(&file, source))?;
    Ok(file)
}

/// A skill name as one path or URI segment: only a name that passes the specification's naming
/// rules (lowercase letters, digits, single hyphens, at most 64 characters, NFKC-normalised),
/// and is a single folder name besides, is ever used as one (scaffolded folders, and every
/// later place a name becomes a path, a cache key or a URI); elsewhere a name is shown escaped.
/// The error is the first rule it breaks.
pub fn name_segment(name: &str) -> Result<&str, String> {
    let normalised: String = name.nfkc().collect();
    if normalised != name {
        return Err(format!(
            "Skill name '{}' is not in NFKC form",
            name.escape_debug()
        ));
    }
    if let Some(reason) = name_problems(name).into_iter().next() {
        return Err(reason);
    }
    match segment_problem(name) {
        Some(reason) => Err(reason.to_string()),
        None => Ok(name),
    }
}

/// Why a name that passes the naming rules still cannot be one path segment, if it cannot: a
/// second check, so a change to the rules can never let a name climb out of `parent`.
fn segment_problem(name: &str) -> Option<&'static str> {
    let mut components = Path::new(name).components();
    let single = matches!(components.next(), Some(Component::Normal(segment)) if segment == name)
        && components.next().is_none();
    if !single {
        return Some("a skill name must be a single folder name");
    }
    if cfg!(windows) && is_windows_device_name(name) {
        return Some("the name is reserved for a device on Windows");
    }
    None
}

/// `con`, `nul`, `com1`, …: names Windows gives to devices in every folder.
fn is_windows_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    matches!(stem, "con" | "prn" | "aux" | "nul")
        || ((stem.starts_with("com") || stem.starts_with("lpt"))
            && stem.len() == 4
            && stem[3..].chars().all(|c| c.is_ascii_digit() && c != '0'))
}

fn template(name: &str) -> String {
    let title = name
        .split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().collect::<String>() + chars.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        r#"---
name: {name}
description: >-
  {DESCRIPTION_PLACEHOLDER} Say in one or two sentences what this skill does, then when to use it:
  "Use when the user asks to ..." with the words users really say. The model sees only
  this description until it loads the skill, so it decides whether the skill is used.
---

# {title}

Write the instructions the agent follows once it has loaded this skill: the steps, the
commands to run, what to check, and what good output looks like. Keep this file under
500 lines.

Put longer material next to this file and say when to read it:
- `references/` for documents to read when needed (link them: [guide](references/guide.md))
- `scripts/` for code to run
- `assets/` for templates and data
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_segments() {
        assert_eq!(segment_problem("pdf-forms"), None);
        assert!(segment_problem("a/b").is_some());
        assert!(segment_problem("..").is_some());
        assert!(segment_problem(".").is_some());
        assert!(segment_problem("/etc").is_some());
        assert!(is_windows_device_name("com1"));
        assert!(is_windows_device_name("nul"));
        assert!(!is_windows_device_name("com"));
        assert!(!is_windows_device_name("console"));
    }

    #[test]
    fn only_names_that_pass_the_rules_become_segments() {
        assert_eq!(name_segment("pdf-forms"), Ok("pdf-forms"));
        assert_eq!(name_segment("données"), Ok("données"));
        for bad in [
            "",
            "..",
            ".",
            "a/b",
            "a\\b",
            "/etc",
            "Pdf",
            "-a",
            "a--b",
            "a b",
            "a%2fb",
            "a?b",
            "a#b",
            "e\u{301}",
            "\u{FB01}le",
        ] {
            assert!(name_segment(bad).is_err(), "{bad:?}");
        }
        assert!(name_segment(&"a".repeat(65)).is_err());
    }

    #[test]
    fn names_that_break_the_rules_are_never_paths() {
        let temp = tempfile::tempdir().unwrap();
        for name in ["../escape", "a/b", "..", "/abs", "a\\b", "."] {
            let error = scaffold_skill(temp.path(), name).unwrap_err();
            assert!(
                matches!(error, Error::InvalidName { .. }),
                "{name}: {error}"
            );
        }
        assert!(!temp.path().parent().unwrap().join("escape").exists());
        let file = scaffold_skill(temp.path(), "my-skill").unwrap();
        assert_eq!(file, temp.path().join("my-skill/SKILL.md"));
        let again = scaffold_skill(temp.path(), "my-skill").unwrap_err();
        assert!(matches!(again, Error::AlreadyExists { .. }), "{again}");
    }
}
