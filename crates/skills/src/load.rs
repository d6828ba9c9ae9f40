//! Layer 2 (a skill's body, as the model receives it) and Layer 3 (paths inside a skill).

use std::fmt;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use crate::confine::{Beneath, ConfineError, normalize};

use crate::discover::Library;
use crate::error::Error;
use crate::skill::{SKILL_FILE_NAMES, Skill};

/// How many of a skill's own files are listed when it loads.
pub const MAX_LISTED_FILES: usize = 50;
/// How many entries the file listing walks at most (the rest are only counted as unknown).
const MAX_FILES_WALKED: usize = 10_000;
/// How many names an unknown-skill error lists.
pub const MAX_NAMES_IN_ERROR: usize = 100;
/// How many "did you mean" suggestions an unknown-skill error makes.
const MAX_SUGGESTIONS: usize = 3;

/// Who asks for a skill: the model may not load `disable-model-invocation` skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invoker {
    /// The model, through `load_skill`.
    Model,
    /// The user, by hand (`/name`, `skillet skills show`).
    User,
}

/// Why a skill could not be loaded. Its `Display` is the text the model receives.
#[derive(Debug)]
pub enum LoadError {
    /// No skill has this name.
    Unknown {
        /// The name asked for.
        name: String,
        /// The names that could have been asked for.
        available: Vec<String>,
        /// Close names.
        suggestions: Vec<String>,
    },
    /// The skill is marked `disable-model-invocation` and the model asked.
    UserOnly {
        /// The skill's name.
        name: String,
    },
    /// The skill's file could not be read or is too large.
    Read {
        /// The skill's name.
        name: String,
        /// What went wrong.
        error: Error,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown {
                name,
                available,
                suggestions,
            } => {
                write!(f, "Error: Unknown skill '{name}'. Available: ")?;
                if available.is_empty() {
                    write!(f, "(none)")?;
                } else {
                    let shown = available.len().min(MAX_NAMES_IN_ERROR);
                    write!(f, "{}", available[..shown].join(", "))?;
                    if available.len() > shown {
                        write!(f, " and {} more", available.len() - shown)?;
                    }
                }
                if !suggestions.is_empty() {
                    let quoted: Vec<String> =
                        suggestions.iter().map(|name| format!("'{name}'")).collect();
                    write!(f, ". Did you mean {}?", quoted.join(" or "))?;
                }
                Ok(())
            }
            Self::UserOnly { name } => write!(
                f,
                "Error: Skill '{name}' can only be invoked by the user (disable-model-invocation: true)"
            ),
            Self::Read { name, error } => write!(f, "Error: cannot load skill '{name}': {error}"),
        }
    }
}

impl std::error::Error for LoadError {}

impl Library {
    /// Loads a skill by name: Layer 2, exactly as the model receives it.
    pub fn load(&self, name: &str, invoker: Invoker) -> Result<String, LoadError> {
        let visible = |skill: &&Skill| invoker == Invoker::User || skill.model_invocable();
        let Some(skill) = self.get(name) else {
            let available: Vec<String> = self
                .skills()
                .iter()
                .filter(visible)
                .map(|skill| skill.name.clone())
                .collect();
            let suggestions = suggest(name, &available);
            return Err(LoadError::Unknown {
                name: name.to_string(),
                available,
                suggestions,
            });
        };
        if !visible(&skill) {
            return Err(LoadError::UserOnly {
                name: name.to_string(),
            });
        }
        render_skill(skill).map_err(|error| LoadError::Read {
            name: name.to_string(),
            error,
        })
    }
}

/// Renders Layer 2 for one skill: the body, the skill's folder, and its own files (listed, not
/// read), wrapped in `<skill name="…">`.
pub fn render_skill(skill: &Skill) -> Result<String, Error> {
    let body = skill.read_body()?;
    let (files, total) = list_skill_files(&skill.dir);
    let mut text = String::with_capacity(body.len() + 512);
    let _ = writeln!(
        text,
        "<skill name=\"{}\">",
        crate::catalog::xml_escape(&skill.name)
    );
    if !body.is_empty() {
        text.push_str(&body);
        text.push_str("\n\n");
    }
    let _ = writeln!(text, "Skill folder: {}", skill.dir.display());
    text.push_str(
        "Relative paths in this skill (scripts/, references/, assets/, …) resolve against that folder.\n",
    );
    if !files.is_empty() {
        text.push_str("Files in the skill folder (not loaded; read or run them when needed):\n");
        for file in &files {
            let _ = writeln!(text, "- {file}");
        }
        if total > files.len() {
            let _ = writeln!(text, "- … and {} more", total - files.len());
        }
    }
    text.push_str("</skill>");
    Ok(text)
}

/// The skill's own files, relative to its folder, sorted, at most [`MAX_LISTED_FILES`], and how
/// many there are in all. The skill file, hidden entries and links that leave the folder are
/// left out.
pub fn list_skill_files(dir: &Path) -> (Vec<String>, usize) {
    let real_dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::new()];
    let mut walked = 0;
    while let Some(relative) = stack.pop() {
        let Ok(entries) = fs::read_dir(real_dir.join(&relative)) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(fs::DirEntry::file_name);
        let mut subdirs = Vec::new();
        for entry in entries {
            walked += 1;
            if walked > MAX_FILES_WALKED {
                break;
            }
            let name = entry.file_name();
            let name_text = name.to_string_lossy();
            if name_text.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let Ok(real) = fs::canonicalize(&path) else {
                continue;
            };
            if !real.starts_with(&real_dir) {
                continue;
            }
            let child = relative.join(&name);
            if real.is_dir() {
                subdirs.push(child);
            } else if !(relative.as_os_str().is_empty()
                && SKILL_FILE_NAMES.contains(&name_text.as_ref()))
            {
                found.push(child.to_string_lossy().replace('\\', "/"));
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    found.sort();
    let total = found.len();
    found.truncate(MAX_LISTED_FILES);
    (found, total)
}

/// The largest skill file [`read_in_skill`] reads.
pub const MAX_SKILL_FILE_BYTES: u64 = 20 * 1024 * 1024;

/// Layer 3: resolves `requested` (relative to the skill's folder, or absolute) to a path inside
/// the skill's folder that exists there. Anything that leaves it (`..`, an absolute path
/// elsewhere, a link out) is refused; the kernel resolves the links ([`crate::confine`]). The
/// path returned is for showing: read through [`read_in_skill`], which resolves it again
/// beneath the folder, so a link swapped in between cannot lead out.
pub fn resolve_in_skill(skill_dir: &Path, requested: &Path) -> Result<PathBuf, Error> {
    let (beneath, relative) = beneath_skill(skill_dir, requested)?;
    beneath
        .metadata(&relative, &requested.display().to_string())
        .map_err(|error| confine_error(skill_dir, requested, error))?;
    Ok(skill_dir.join(relative))
}

/// Layer 3: reads a regular file inside the skill's folder (at most
/// [`MAX_SKILL_FILE_BYTES`]), with the rules of [`resolve_in_skill`].
pub fn read_in_skill(skill_dir: &Path, requested: &Path) -> Result<Vec<u8>, Error> {
    let (beneath, relative) = beneath_skill(skill_dir, requested)?;
    beneath
        .read(
            &relative,
            &requested.display().to_string(),
            MAX_SKILL_FILE_BYTES,
        )
        .map_err(|error| confine_error(skill_dir, requested, error))
}

fn beneath_skill(skill_dir: &Path, requested: &Path) -> Result<(Beneath, PathBuf), Error> {
    let outside = || Error::OutsideSkill {
        path: requested.to_path_buf(),
        dir: skill_dir.to_path_buf(),
    };
    let joined = skill_dir.join(requested);
    let normalized = normalize(&joined).ok_or_else(outside)?;
    let beneath = Beneath::open(skill_dir).map_err(|source| Error::io(skill_dir, source))?;
    let relative = if let Some(relative) = beneath.relative(&normalized) {
        relative
    } else {
        // An absolute path through the folder's real location (its links resolved).
        let real = fs::canonicalize(skill_dir).map_err(|source| Error::io(skill_dir, source))?;
        normalized
            .strip_prefix(&real)
            .map(Path::to_path_buf)
            .map_err(|_| outside())?
    };
    Ok((beneath, relative))
}

fn confine_error(skill_dir: &Path, requested: &Path, error: ConfineError) -> Error {
    match error {
        ConfineError::Outside { .. } | ConfineError::Link { .. } => Error::OutsideSkill {
            path: requested.to_path_buf(),
            dir: skill_dir.to_path_buf(),
        },
        ConfineError::Io { source, .. } => Error::io(&skill_dir.join(requested), source),
        other => Error::io(
            &skill_dir.join(requested),
            std::io::Error::other(other.to_string()),
        ),
    }
}

/// Names close to `name`: by edit distance, or containing it.
fn suggest(name: &str, available: &[String]) -> Vec<String> {
    let wanted = name.to_lowercase();
    let threshold = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &String)> = available
        .iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let distance = edit_distance(&wanted, &lower);
            if distance <= threshold {
                Some((distance, candidate))
            } else if wanted.len() >= 3 && (lower.contains(&wanted) || wanted.contains(&lower)) {
                Some((threshold + 1, candidate))
            } else {
                None
            }
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, candidate)| candidate.clone())
        .collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("pdf", "pdf"), 0);
    }

    #[test]
    fn suggestions_rank_close_names_first() {
        let names: Vec<String> = ["pdf", "pptx", "docx", "pdf-forms"]
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(suggest("pfd", &names), ["pdf"]);
        assert_eq!(suggest("pdf-form", &names), ["pdf-forms", "pdf"]);
        assert_eq!(suggest("forms", &names), ["pdf-forms"]);
        assert!(suggest("kubernetes", &names).is_empty());
    }
}
