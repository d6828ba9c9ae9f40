//! `skillet skills new`: a new skill that passes validation.

use std::fs;
use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

use crate::error::Error;
use crate::validate::name_problems;

/// Creates `parent/NAME/SKILL.md` from a template that passes validation, and returns the file's
/// path. Refuses names that break the naming rules, and never overwrites an existing folder.
pub fn scaffold_skill(parent: &Path, name: &str) -> Result<PathBuf, Error> {
    let name: String = name.trim().nfkc().collect();
    if let Some(reason) = name_problems(&name).into_iter().next() {
        return Err(Error::InvalidName { name, reason });
    }
    let dir = parent.join(&name);
    if dir.exists() {
        return Err(Error::AlreadyExists { path: dir });
    }
    fs::create_dir_all(&dir).map_err(|source| Error::io(&dir, source))?;
    let file = dir.join("SKILL.md");
    fs::write(&file, template(&name)).map_err(|source| Error::io(&file, source))?;
    Ok(file)
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
  Replace this text. Say in one or two sentences what this skill does, then when to use it:
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
