//! One skill: its fields, where it lives, and how its file is read.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::dir::DirHandle;
use crate::error::Error;
use crate::fields::{Frontmatter, fold_whitespace};
use crate::frontmatter::{FrontmatterStatus, parse_document};
use crate::roots::RootKind;

/// How many bytes of each `SKILL.md` discovery reads: enough for nearly every frontmatter.
/// When the closing `---` lies beyond it, the whole file is read.
pub const FRONTMATTER_PREFIX_BYTES: usize = 4096;

/// The largest body `load` will hand to a model (about 50,000 tokens). The specification asks
/// for bodies under 5,000 tokens; larger ones are refused with a message saying how to read them.
pub const MAX_BODY_BYTES: u64 = 200_000;

/// The file names a skill folder may hold, preferred first.
pub const SKILL_FILE_NAMES: [&str; 2] = ["SKILL.md", "skill.md"];

/// A discovered skill: its frontmatter and where it lives. The body is read on demand.
#[derive(Debug, Clone)]
pub struct Skill {
    /// The name the skill is known by: `name` from the frontmatter, else the folder name.
    pub name: String,
    /// The description, folded to one line: from the frontmatter, else the first body line.
    pub description: String,
    /// Every field of the frontmatter.
    pub frontmatter: Frontmatter,
    /// What became of the frontmatter when it was parsed.
    pub status: FrontmatterStatus,
    /// The `SKILL.md` file, absolute.
    pub file: PathBuf,
    /// The skill's folder, absolute.
    pub dir: PathBuf,
    /// The root the skill was found under.
    pub root: PathBuf,
    /// What kind of root that is.
    pub root_kind: RootKind,
    /// Problems met while loading this skill (lenient: the skill still loads).
    pub diagnostics: Vec<Diagnostic>,
    /// Other copies with the same name that this one shadows, lowest precedence last.
    pub shadowed: Vec<PathBuf>,
}

impl Skill {
    /// Whether the model may load this skill (and see it in the catalog).
    pub fn model_invocable(&self) -> bool {
        !self.frontmatter.disable_model_invocation
    }

    /// Whether the user may invoke this skill by hand (`/name`).
    pub fn user_invocable(&self) -> bool {
        self.frontmatter.user_invocable
    }

    /// Reads the body (frontmatter removed, surrounding blank lines trimmed) from disk, so an
    /// edited body shows without a restart.
    pub fn read_body(&self) -> Result<String, Error> {
        let size = std::fs::metadata(&self.file)
            .map_err(|source| Error::io(&self.file, source))?
            .len();
        if size > MAX_BODY_BYTES {
            return Err(Error::BodyTooLarge {
                path: self.file.clone(),
                size,
                limit: MAX_BODY_BYTES,
            });
        }
        let text = read_text(&self.file)?;
        Ok(trim_blank_lines(parse_document(&text).body).to_string())
    }
}

/// Reads a whole file as UTF-8, naming the file in every error.
pub(crate) fn read_text(path: &Path) -> Result<String, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::io(path, source))?;
    String::from_utf8(bytes).map_err(|error| Error::NotUtf8 {
        path: path.to_path_buf(),
        offset: error.utf8_error().valid_up_to(),
    })
}

/// Trims blank lines (and trailing whitespace) around a body, keeping the first line's indent.
fn trim_blank_lines(body: &str) -> &str {
    let start = body
        .char_indices()
        .find(|&(_, c)| !c.is_whitespace())
        .map_or(body.len(), |(index, _)| {
            body[..index].rfind('\n').map_or(0, |newline| newline + 1)
        });
    body[start..].trim_end()
}

/// Where a skill file was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillLocation {
    /// The `SKILL.md` (or `skill.md`) file.
    pub file: PathBuf,
    /// The skill's folder.
    pub dir: PathBuf,
    /// The real path of the root it was found under.
    pub root: PathBuf,
    /// The kind of that root.
    pub root_kind: RootKind,
}

/// Reads a skill's frontmatter from a bounded prefix of its file. The prefix decides only when it
/// shows a closed frontmatter with a description, in valid UTF-8; anything else (a frontmatter
/// longer than the prefix, a description taken from the body, a character cut at the boundary,
/// an encoding error) reads the whole file. A file that cannot be read or is not UTF-8 gives a
/// diagnostic instead of a skill.
pub(crate) fn read_skill(
    location: SkillLocation,
    dir: Option<&DirHandle>,
) -> Result<Skill, Diagnostic> {
    if let Some(prefix) = read_prefix(&location.file, dir)? {
        let skill = skill_from_text(location, &prefix);
        let settled = matches!(
            skill.status,
            FrontmatterStatus::Parsed | FrontmatterStatus::RecoveredByQuoting { .. }
        ) && skill.frontmatter.description.is_some();
        if settled {
            return Ok(skill);
        }
        let location = SkillLocation {
            file: skill.file,
            dir: skill.dir,
            root: skill.root,
            root_kind: skill.root_kind,
        };
        return whole_file_skill(location);
    }
    whole_file_skill(location)
}

fn whole_file_skill(location: SkillLocation) -> Result<Skill, Diagnostic> {
    let text = read_text(&location.file).map_err(|error| error.to_diagnostic())?;
    Ok(skill_from_text(location, &text))
}

/// Up to [`FRONTMATTER_PREFIX_BYTES`] of the file in one read, ending at a line end when the
/// file may go on; `None` when they are not valid UTF-8.
fn read_prefix(path: &Path, dir: Option<&DirHandle>) -> Result<Option<String>, Diagnostic> {
    let io_error = |source| Error::io(path, source).to_diagnostic();
    let opened = match (dir, path.file_name()) {
        (Some(dir), Some(name)) => dir.open_file(name),
        _ => File::open(path),
    };
    let mut file = opened.map_err(io_error)?;
    let mut bytes = vec![0; FRONTMATTER_PREFIX_BYTES];
    let length = loop {
        match file.read(&mut bytes) {
            Ok(length) => break length,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(io_error(error)),
        }
    };
    bytes.truncate(length);
    if length == FRONTMATTER_PREFIX_BYTES {
        // The last line may go on past the prefix: leave it out, so a cut line is never taken
        // for a closing `---` and no character is cut in two.
        let keep = bytes
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |newline| newline + 1);
        bytes.truncate(keep);
    }
    Ok(String::from_utf8(bytes).ok())
}

/// Builds a skill from its file's text, leniently: every problem becomes a diagnostic.
fn skill_from_text(location: SkillLocation, text: &str) -> Skill {
    let document = parse_document(text);
    let frontmatter = Frontmatter::from_mapping(&document.mapping);
    let file = &location.file;
    let mut diagnostics: Vec<Diagnostic> = structural_diagnostic(&document.status, file)
        .into_iter()
        .collect();
    for (field, message) in &frontmatter.problems {
        diagnostics.push(Diagnostic::warning(file, message.clone()).with_field(field.clone()));
    }
    let folder_name = folder_name(&location.dir);
    let name = match frontmatter.name.as_deref() {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => {
            if document.status.is_mapping() {
                diagnostics.push(
                    Diagnostic::warning(file, "Missing required field in frontmatter: name")
                        .with_field("name")
                        .with_hint(format!("using the folder name '{folder_name}'")),
                );
            }
            folder_name
        }
    };
    let description = if let Some(description) = &frontmatter.description {
        description.clone()
    } else {
        if document.status.is_mapping() {
            diagnostics.push(
                Diagnostic::warning(file, "Missing required field in frontmatter: description")
                    .with_field("description")
                    .with_hint("using the first line of the body; add a description that says what the skill does and when to use it"),
            );
        }
        first_body_line(document.body)
    };
    Skill {
        name,
        description,
        frontmatter,
        status: document.status,
        file: location.file,
        dir: location.dir,
        root: location.root,
        root_kind: location.root_kind,
        diagnostics,
        shadowed: Vec::new(),
    }
}

/// The diagnostic for a frontmatter that is missing or broken, in the reference validator's
/// words, or `None` when it parsed.
pub(crate) fn structural_diagnostic(status: &FrontmatterStatus, file: &Path) -> Option<Diagnostic> {
    let diagnostic = match status {
        FrontmatterStatus::Parsed => return None,
        FrontmatterStatus::RecoveredByQuoting { lines } => Diagnostic::warning(
            file,
            "Unquoted ': ' inside a value; loaded by quoting it",
        )
        .with_line(lines.first().copied())
        .with_hint(
            "quote the value (description: \"Use when: ...\") so strict YAML parsers accept it",
        ),
        FrontmatterStatus::Missing => {
            Diagnostic::error(file, "SKILL.md must start with YAML frontmatter (---)")
                .with_line(Some(1))
                .with_hint(
                    "start the file with a line '---', then 'name:' and 'description:', then '---'",
                )
        }
        FrontmatterStatus::Unclosed => {
            Diagnostic::error(file, "SKILL.md frontmatter not properly closed with ---")
                .with_line(Some(1))
                .with_hint("end the frontmatter with a line that is exactly '---'")
        }
        FrontmatterStatus::Empty | FrontmatterStatus::NotMapping => {
            Diagnostic::error(file, "SKILL.md frontmatter must be a YAML mapping")
                .with_line(Some(2))
                .with_hint("write 'key: value' lines, at least 'name:' and 'description:'")
        }
        FrontmatterStatus::InvalidYaml { message, line } => {
            Diagnostic::error(file, format!("Invalid YAML in frontmatter: {message}"))
                .with_line(*line)
                .with_hint("quote values that contain ': ' or start with a special character")
        }
    };
    Some(diagnostic)
}

/// The folder's own name (lossy for names that are not UTF-8).
pub(crate) fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The first non-empty body line, without leading `#` marks, whitespace folded.
fn first_body_line(body: &str) -> String {
    body.lines()
        .map(|line| line.trim().trim_start_matches('#').trim())
        .find(|line| !line.is_empty())
        .map(fold_whitespace)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_body_line_strips_heading_marks() {
        assert_eq!(first_body_line("\n\n##   My   Skill  \nmore"), "My Skill");
        assert_eq!(first_body_line("   \n"), "");
    }

    #[test]
    fn trim_blank_lines_keeps_indent() {
        assert_eq!(trim_blank_lines("\n\n  code\nx\n\n"), "  code\nx");
        assert_eq!(trim_blank_lines("\n \n"), "");
    }
}
