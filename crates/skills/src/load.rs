//! Layer 2 (a skill's body, as the model receives it) and Layer 3 (paths inside a skill).

use std::fmt;
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::discover::Library;
use crate::error::Error;
use crate::skill::Skill;
use crate::validate::MAX_NAME_CHARS;

/// How many names an unknown-skill error lists.
pub const MAX_NAMES_IN_ERROR: usize = 100;
/// How many "did you mean" suggestions an unknown-skill error makes.
const MAX_SUGGESTIONS: usize = 3;
/// The longest name, in characters, that "did you mean" compares or an unknown-skill error
/// repeats: twice the longest valid name. A longer name asked for gets no suggestion, and
/// longer names in the library are not suggested.
pub const MAX_SUGGESTION_NAME_CHARS: usize = 2 * MAX_NAME_CHARS;

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
                write!(f, "Unknown skill '{}'. Available: ", shown_name(name))?;
                if available.is_empty() {
                    write!(f, "(none)")?;
                } else {
                    let shown = available.len().min(MAX_NAMES_IN_ERROR);
                    let names: Vec<String> = available[..shown]
                        .iter()
                        .map(|name| shown_name(name).into_owned())
                        .collect();
                    write!(f, "{}", names.join(", "))?;
                    if available.len() > shown {
                        write!(f, " and {} more", available.len() - shown)?;
                    }
                }
                if !suggestions.is_empty() {
                    let quoted: Vec<String> = suggestions
                        .iter()
                        .map(|name| format!("'{}'", shown_name(name)))
                        .collect();
                    write!(f, ". Did you mean {}?", quoted.join(" or "))?;
                }
                Ok(())
            }
            Self::UserOnly { name } => write!(
                f,
                "Skill '{name}' can only be invoked by the user (disable-model-invocation: true)"
            ),
            Self::Read { name, error } => write!(f, "cannot load skill '{name}': {error}"),
        }
    }
}

impl std::error::Error for LoadError {}

impl Library {
    /// Loads a skill by name: Layer 2, exactly as the model receives it.
    pub fn load(&self, name: &str, invoker: Invoker) -> Result<String, LoadError> {
        self.load_with(name, invoker, None)
    }

    /// [`Library::load`], invoked with `arguments` (`None`: loaded, not invoked): the body's
    /// placeholders filled as [`crate::expand`] says.
    pub fn load_with(
        &self,
        name: &str,
        invoker: Invoker,
        arguments: Option<&str>,
    ) -> Result<String, LoadError> {
        let skill = self.invocable(name, invoker)?;
        render_invoked(skill, arguments).map_err(|error| LoadError::Read {
            name: name.to_string(),
            error,
        })
    }

    /// The skill `invoker` may load by this name, or why not (unknown, with suggestions; the
    /// user's only).
    pub fn invocable(&self, name: &str, invoker: Invoker) -> Result<&Skill, LoadError> {
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
        Ok(skill)
    }
}

/// Renders Layer 2 for one skill: the body, the skill's folder, and its own files (listed, not
/// read), wrapped in `<skill name="…">`.
pub fn render_skill(skill: &Skill) -> Result<String, Error> {
    render_invoked(skill, None)
}

/// [`render_skill`] for a skill invoked with `arguments` (`None`: loaded, not invoked): the
/// body's placeholders filled as [`crate::expand`] says, `${SKILL_DIR}` in any case. Dynamic
/// context ([`crate::dynamic`]) is not run here: each command is replaced by a note saying so
/// (the agent runs them, when trusted: [`render_expanded`] takes its result).
pub fn render_invoked(skill: &Skill, arguments: Option<&str>) -> Result<String, Error> {
    let body = crate::arguments::expand_running_from(
        &skill.read_body()?,
        arguments,
        (
            &skill.frontmatter.arguments,
            Some(&shown_dir(skill)),
            skill.first_positional(),
        ),
        |command| {
            Ok::<_, std::convert::Infallible>(not_run(
                &command.shown,
                "commands in skills are run only by the skillet agent",
            ))
        },
    )
    .unwrap_or_else(|never| match never {});
    Ok(render_expanded(skill, &body))
}

/// The skill's folder as placeholders give it: invisible characters made visible.
pub fn shown_dir(skill: &Skill) -> PathBuf {
    PathBuf::from(crate::clean::escape_invisible(&skill.dir.display().to_string()).as_ref())
}

/// What stands in the body for a command of the dynamic context that did not run, and why.
pub fn not_run(command: &str, why: &str) -> String {
    let first = command.lines().next().unwrap_or_default();
    let more = if command.lines().nth(1).is_some() {
        " …"
    } else {
        ""
    };
    format!("[not run: `{first}{more}` ({why})]")
}

/// Layer 2 for one skill whose body is already expanded (arguments filled, dynamic context
/// run or noted): the body wrapped in `<skill name="…">`, the skill's folder, and its own files
/// (listed, not read).
pub fn render_expanded(skill: &Skill, body: &str) -> String {
    render_expanded_noting(skill, body, "not loaded; read or run them when needed")
}

/// [`render_expanded`] with another note on the skill's files (for a skill whose scripts must
/// not be run, say).
pub fn render_expanded_noting(skill: &Skill, body: &str, files_note: &str) -> String {
    let listing = crate::files::skill_files(skill);
    let mut text = String::with_capacity(body.len() + 512);
    let _ = writeln!(
        text,
        "<skill name=\"{}\">",
        crate::catalog::xml_escape(&skill.name)
    );
    if !body.is_empty() {
        text.push_str(&crate::clean::neutralize_wrapper(
            &crate::clean::clean_text(body),
        ));
        text.push_str("\n\n");
    }
    // Folder and file names are the skill author's text too: one line each, nothing hidden,
    // no wrapper tag.
    if skill.is_command() {
        let file = skill.file.display().to_string();
        let _ = writeln!(
            text,
            "Command file: {}",
            crate::clean::neutralize_wrapper(&crate::clean::escape_invisible(&file))
        );
        text.push_str("</skill>");
        return text;
    }
    let folder = skill.dir.display().to_string();
    let _ = writeln!(
        text,
        "Skill folder: {}",
        crate::clean::neutralize_wrapper(&crate::clean::escape_invisible(&folder))
    );
    text.push_str(
        "Relative paths in this skill (scripts/, references/, assets/, …) resolve against that folder.\n",
    );
    if !listing.files.is_empty() {
        let _ = writeln!(text, "Files in the skill folder ({files_note}):");
        for file in &listing.files {
            let _ = writeln!(
                text,
                "- {}",
                crate::clean::neutralize_wrapper(&crate::clean::escape_invisible(file))
            );
        }
        let more = listing.total - listing.files.len();
        if !listing.complete {
            if more > 0 {
                let _ = writeln!(text, "- … and at least {more} more (not all counted)");
            } else {
                text.push_str("- … and possibly more (not all counted)\n");
            }
        } else if more > 0 {
            let _ = writeln!(text, "- … and {more} more");
        }
    }
    text.push_str("</skill>");
    text
}

/// A name as an unknown-skill error repeats it: at most [`MAX_SUGGESTION_NAME_CHARS`]
/// characters.
fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    match name.char_indices().nth(MAX_SUGGESTION_NAME_CHARS) {
        Some((cut, _)) => format!("{}…", &name[..cut]).into(),
        None => name.into(),
    }
}

/// The name's characters, lowercased, when it has at most [`MAX_SUGGESTION_NAME_CHARS`]; `None`
/// for a longer one, found without reading more than four bytes a character allows.
fn comparable(name: &str) -> Option<Vec<char>> {
    if name.len() > 4 * MAX_SUGGESTION_NAME_CHARS {
        return None;
    }
    let chars: Vec<char> = name.to_lowercase().chars().collect();
    (chars.len() <= MAX_SUGGESTION_NAME_CHARS).then_some(chars)
}

/// Names close to `name`: by edit distance, or containing it. The work is bounded whatever the
/// input: a name over [`MAX_SUGGESTION_NAME_CHARS`] gets no suggestion, longer candidates are
/// skipped, and each distance is computed only within its threshold.
fn suggest(name: &str, available: &[String]) -> Vec<String> {
    let Some(wanted) = comparable(name) else {
        return Vec::new();
    };
    let wanted_text: String = wanted.iter().collect();
    let threshold = (wanted.len() / 3).max(2);
    let mut scored: Vec<(usize, &String)> = available
        .iter()
        .filter_map(|candidate| {
            let lower = comparable(candidate)?;
            if let Some(distance) = edit_distance_within(&wanted, &lower, threshold) {
                return Some((distance, candidate));
            }
            let lower_text: String = lower.iter().collect();
            (wanted_text.len() >= 3
                && (lower_text.contains(&wanted_text) || wanted_text.contains(&lower_text)))
            .then_some((threshold + 1, candidate))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, candidate)| candidate.clone())
        .collect()
}

/// Levenshtein distance over characters when it is at most `limit`, else `None`. Only the band
/// of cells within `limit` of the diagonal is computed, and the work stops as soon as a row
/// exceeds the limit: at most `a.len() × (2 × limit + 1)` cells.
fn edit_distance_within(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let over = limit + 1;
    let mut previous: Vec<usize> = (0..=b.len()).map(|j| j.min(over)).collect();
    let mut current = vec![over; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        let row = i + 1;
        let low = row.saturating_sub(limit).max(1);
        let high = (row + limit).min(b.len());
        current[0] = row.min(over);
        current[low - 1] = if low == 1 { current[0] } else { over };
        let mut best = current[low - 1];
        for j in low..=high {
            let substitution = previous[j - 1] + usize::from(ca != b[j - 1]);
            let cell = substitution
                .min(previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(over);
            current[j] = cell;
            best = best.min(cell);
        }
        if high < b.len() {
            current[high + 1] = over;
        }
        if best > limit {
            return None;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    let distance = previous[b.len()];
    (distance <= limit).then_some(distance)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(a: &str, b: &str, limit: usize) -> Option<usize> {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        edit_distance_within(&a, &b, limit)
    }

    /// The plain dynamic programme, to check the banded one against.
    fn full_distance(a: &str, b: &str) -> usize {
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

    #[test]
    fn edit_distances() {
        assert_eq!(distance("kitten", "sitting", 3), Some(3));
        assert_eq!(distance("kitten", "sitting", 2), None);
        assert_eq!(distance("", "abc", 3), Some(3));
        assert_eq!(distance("pdf", "pdf", 2), Some(0));
        assert_eq!(distance("abc", "", 2), None);
        let words = [
            "",
            "a",
            "ab",
            "pdf",
            "pfd",
            "pdf-forms",
            "pdf-form",
            "forms",
            "docx",
            "pptx",
            "kitten",
            "sitting",
            "kubernetes",
            "flaw",
            "lawn",
            "aaaa",
            "bbbbbb",
            "abcdefgh",
            "hgfedcba",
            "мой-навык",
            "мой-навк",
        ];
        for a in words {
            for b in words {
                let full = full_distance(a, b);
                for limit in 0..10 {
                    let expected = (full <= limit).then_some(full);
                    assert_eq!(distance(a, b, limit), expected, "{a:?} {b:?} {limit}");
                }
            }
        }
    }

    #[test]
    fn long_names_get_no_suggestion_and_are_shown_cut() {
        let names: Vec<String> = vec!["pdf".into(), "x".repeat(MAX_SUGGESTION_NAME_CHARS + 1)];
        let long = "p".repeat(1 << 20);
        assert!(suggest(&long, &names).is_empty());
        // A long candidate is never compared, even with itself.
        assert!(suggest(&names[1], &names).is_empty());
        assert_eq!(
            suggest(&"x".repeat(MAX_SUGGESTION_NAME_CHARS), &names),
            Vec::<String>::new()
        );
        assert_eq!(suggest("pdff", &names), ["pdf"]);
        let shown = shown_name(&long);
        assert_eq!(shown.chars().count(), MAX_SUGGESTION_NAME_CHARS + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(shown_name("pdf"), "pdf");
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
