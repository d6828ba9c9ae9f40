//! One skill: its fields, where it lives, and how its file is read.

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::confine::{Beneath, ConfineError};
use crate::diagnostic::Diagnostic;
use crate::dir::DirHandle;
use crate::error::Error;
use crate::fields::{Frontmatter, fold_whitespace};
use crate::frontmatter::{FrontmatterStatus, Split, parse_document, split};
use crate::regular::{check_opened, open_no_follow, read_capped, reported_size};
use crate::roots::RootKind;

/// How many bytes of each `SKILL.md` discovery reads first: enough for nearly every
/// frontmatter. When the closing `---` lies beyond it, reading goes on, up to
/// [`MAX_FRONTMATTER_BYTES`] and a little more.
pub const FRONTMATTER_PREFIX_BYTES: usize = 4096;

/// The longest frontmatter (the YAML between the `---` lines) that is parsed, in bytes. A longer
/// one is not parsed: the skill is skipped with a diagnostic giving the size and this limit.
/// Discovery reads at most this many bytes of a skill file, plus [`FRONTMATTER_PREFIX_BYTES`]
/// for the opening and closing lines and the start of the body.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// How many bytes of a skill file discovery reads at most.
const MAX_DISCOVERY_READ_BYTES: usize = MAX_FRONTMATTER_BYTES + FRONTMATTER_PREFIX_BYTES;

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
    /// A skill folder, or a command file.
    pub form: Form,
}

/// What a skill is on disk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Form {
    /// A folder with a `SKILL.md` and whatever else it holds.
    #[default]
    Folder,
    /// One Markdown file of Claude Code's custom commands (`.claude/commands/NAME.md`): a skill
    /// with no folder of its own. Its `dir` is the folder it lies in, shared with other commands;
    /// it has no files of its own, its positional placeholders count from `$1` as Claude Code's
    /// commands do, and trust pins the file alone ([`Skill::home`]).
    Command {
        /// The subfolders between the commands folder and the file, joined by `:`
        /// (`frontend:` for `frontend/component.md`; empty at the top): shown beside the name,
        /// as Claude Code shows `(project:frontend)`.
        namespace: String,
    },
}

impl Skill {
    /// Whether this is a command file rather than a skill folder.
    pub fn is_command(&self) -> bool {
        matches!(self.form, Form::Command { .. })
    }

    /// What the skill is, on disk: its folder, or a command's file. Trust pins and keys this.
    pub fn home(&self) -> &Path {
        if self.is_command() {
            &self.file
        } else {
            &self.dir
        }
    }

    /// When this skill hides others of the same name (a project's skill over your own
    /// command), the line saying so for whoever invokes it by hand; `None` when it hides none.
    pub fn shadow_note(&self) -> Option<String> {
        let hidden = self.shadowed.first()?;
        Some(format!(
            "note: /{} runs {} ({}); it hides {} of the same name ({})",
            crate::clean::escape_invisible(&self.name),
            crate::clean::escape_invisible(&self.file.display().to_string()),
            self.origin(),
            if self.shadowed.len() == 1 {
                "another".to_string()
            } else {
                format!("{} others", self.shadowed.len())
            },
            crate::clean::escape_invisible(&hidden.display().to_string()),
        ))
    }

    /// What `$N` counts from in its body: 1 for a command (`$1` is the first argument, as in
    /// Claude Code's commands), 0 for a skill (as in Claude Code's skills).
    pub fn first_positional(&self) -> usize {
        usize::from(self.is_command())
    }

    /// Where the skill comes from, as a listing shows it beside the name: `project`, `user`,
    /// `explicit`; a command's with `command` and its namespace (`project command:frontend`).
    pub fn origin(&self) -> String {
        match &self.form {
            Form::Folder => self.root_kind.as_str().to_string(),
            Form::Command { namespace } if namespace.is_empty() => {
                format!("{} command", self.root_kind.as_str())
            }
            Form::Command { namespace } => {
                format!("{} command:{namespace}", self.root_kind.as_str())
            }
        }
    }

    /// Whether the model may load this skill (and see it in the catalog).
    pub fn model_invocable(&self) -> bool {
        !self.frontmatter.disable_model_invocation
    }

    /// Whether the user may invoke this skill by hand (`/name`).
    pub fn user_invocable(&self) -> bool {
        self.frontmatter.user_invocable
    }

    /// Reads the body (frontmatter removed, surrounding blank lines trimmed) from disk, so an
    /// edited body shows without a restart. The file is read under the rules discovery found it
    /// by, held by the kernel rather than checked and then opened ([`Beneath`]): beneath the
    /// skill's root (a link is followed only while it stays inside), a regular file, at most
    /// [`MAX_BODY_BYTES`] and one more byte read. A file swapped since discovery for a link out
    /// of the root is refused ([`Error::LeftRoot`]), never read.
    pub fn read_body(&self) -> Result<String, Error> {
        let path = &self.file;
        let left = || Error::LeftRoot {
            path: path.clone(),
            root: self.root.clone(),
        };
        let beneath = Beneath::open(&self.root).map_err(|source| Error::io(&self.root, source))?;
        let relative = beneath.relative(path).ok_or_else(left)?;
        let shown = path.display().to_string();
        let bytes = match beneath.read(&relative, &shown, MAX_BODY_BYTES) {
            // The kernel refuses every absolute link, even one that stays inside the root, which
            // discovery follows: resolve it as discovery did and read its target, beneath the
            // root again.
            Err(ConfineError::Outside { .. } | ConfineError::Link { .. }) => {
                let real = std::fs::canonicalize(path).map_err(|source| Error::io(path, source))?;
                let relative = beneath.relative(&real).ok_or_else(left)?;
                beneath.read(&relative, &shown, MAX_BODY_BYTES)
            }
            read => read,
        }
        .map_err(|error| match error {
            ConfineError::Outside { .. } | ConfineError::Link { .. } => left(),
            ConfineError::TooLarge { size, limit, .. } => Error::BodyTooLarge {
                path: path.clone(),
                size,
                limit,
            },
            ConfineError::NotFile { kind, .. } => Error::NotRegular {
                path: path.clone(),
                kind,
                through_link: false,
            },
            ConfineError::Io { source, .. } => Error::io(path, source),
        })?;
        self.body_from(bytes)
    }

    /// The body of this skill's `SKILL.md` from bytes already read (by a check that must see
    /// the same bytes the model gets): at most [`MAX_BODY_BYTES`], UTF-8.
    pub fn body_from(&self, bytes: Vec<u8>) -> Result<String, Error> {
        let size = bytes.len() as u64;
        if size > MAX_BODY_BYTES {
            return Err(Error::BodyTooLarge {
                path: self.file.clone(),
                size,
                limit: MAX_BODY_BYTES,
            });
        }
        let text = String::from_utf8(bytes).map_err(|error| Error::NotUtf8 {
            path: self.file.clone(),
            offset: error.utf8_error().valid_up_to(),
        })?;
        Ok(body_of(&text).to_string())
    }
}

/// The body of a skill file's text: the frontmatter split off (without parsing the YAML),
/// surrounding blank lines trimmed; what [`Skill::read_body`] gives for a file.
pub fn body_of(text: &str) -> &str {
    let body = match split(text) {
        Split::Missing { body } | Split::Unclosed { body, .. } | Split::Closed { body, .. } => body,
    };
    trim_blank_lines(body)
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
    /// A skill folder's file, or a command.
    pub form: Form,
}

/// How the reader opens a skill file the walk found.
#[derive(Debug, Clone)]
pub(crate) enum Opener {
    /// By its name in its open folder, not following a link there.
    InDir(DirHandle, OsString),
    /// At its real path (it was found through a link, resolved and checked), not following a
    /// link there.
    Resolved(PathBuf),
}

impl Opener {
    /// Opens the file for reading: never blocking, never through a link swapped in since the
    /// walk, and only when it is a regular file. `shown` is the path errors name.
    fn open(&self, shown: &Path) -> Result<File, Error> {
        let (opened, through_link) = match self {
            Self::InDir(dir, name) => (dir.open_file(name), false),
            Self::Resolved(real) => (open_no_follow(real), true),
        };
        let file = opened.map_err(|source| Error::io(shown, source))?;
        check_opened(file, shown, through_link)
    }
}

/// Reads a skill's frontmatter from a bounded prefix of its file. The prefix decides only when it
/// shows a closed frontmatter with a description, in valid UTF-8; anything else (a frontmatter
/// longer than the prefix, a description taken from the body, a character cut at the boundary,
/// an encoding error) reads on, from the same open file, up to [`MAX_FRONTMATTER_BYTES`] and
/// [`FRONTMATTER_PREFIX_BYTES`] more: never the whole file. A file that cannot be read, is not a
/// regular file, is not UTF-8 or has a frontmatter over the limit gives a diagnostic instead of
/// a skill.
pub(crate) fn read_skill(location: SkillLocation, opener: &Opener) -> Result<Skill, Diagnostic> {
    let mut file = opener
        .open(&location.file)
        .map_err(|error| error.to_diagnostic())?;
    let io_error = |source| Error::io(&location.file, source).to_diagnostic();
    let mut bytes = vec![0; FRONTMATTER_PREFIX_BYTES];
    let length = loop {
        match file.read(&mut bytes) {
            Ok(length) => break length,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(io_error(error)),
        }
    };
    bytes.truncate(length);
    let location = if let Some(prefix) = prefix_text(&bytes, length == FRONTMATTER_PREFIX_BYTES) {
        let skill = skill_from_text(location, prefix);
        let settled = matches!(
            skill.status,
            FrontmatterStatus::Parsed | FrontmatterStatus::RecoveredByQuoting { .. }
        ) && skill.frontmatter.description.is_some();
        if settled {
            return Ok(skill);
        }
        SkillLocation {
            file: skill.file,
            dir: skill.dir,
            root: skill.root,
            root_kind: skill.root_kind,
            form: skill.form,
        }
    } else {
        location
    };
    let limit = u64::try_from(MAX_DISCOVERY_READ_BYTES).unwrap_or(u64::MAX);
    let cut = read_capped(&mut file, &mut bytes, limit)
        .map_err(|error| Error::io(&location.file, error).to_diagnostic())?;
    // What was read, before the last line is left out: the size a message about this read
    // gives (a single 70 KB line is not "the first 40 bytes").
    let read = bytes.len();
    if cut {
        // The last line may go on: leave it out (see `prefix_text`).
        bytes.truncate(after_last_newline(&bytes));
    }
    let text = String::from_utf8(bytes).map_err(|error| {
        Error::NotUtf8 {
            path: location.file.clone(),
            offset: error.utf8_error().valid_up_to(),
        }
        .to_diagnostic()
    })?;
    match split(&text) {
        Split::Closed { yaml, .. } if yaml.len() > MAX_FRONTMATTER_BYTES => Err(
            frontmatter_too_large(&location.file, FrontmatterSize::Closed(yaml.len())),
        ),
        Split::Unclosed { .. } if cut => Err(frontmatter_too_large(
            &location.file,
            FrontmatterSize::NotClosedWithin {
                read,
                file: reported_size(&file),
            },
        )),
        _ => Ok(skill_from_text(location, &text)),
    }
}

/// The prefix as text, ending at a line end when the file may go on; `None` when it is not
/// valid UTF-8.
fn prefix_text(bytes: &[u8], may_go_on: bool) -> Option<&str> {
    // The last line may go on past the prefix: leave it out, so a cut line is never taken for
    // a closing `---` and no character is cut in two.
    let keep = if may_go_on {
        after_last_newline(bytes)
    } else {
        bytes.len()
    };
    std::str::from_utf8(&bytes[..keep]).ok()
}

/// The length of `bytes` up to and including its last `\n` (0 without one).
fn after_last_newline(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |newline| newline + 1)
}

/// How long a frontmatter over [`MAX_FRONTMATTER_BYTES`] is, as far as it was read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FrontmatterSize {
    /// Closed, with this many bytes between the `---` lines.
    Closed(usize),
    /// No closing line in the first `read` bytes of a file of `file` bytes.
    NotClosedWithin {
        /// Bytes read.
        read: usize,
        /// The file's size.
        file: u64,
    },
}

/// The diagnostic for a frontmatter over [`MAX_FRONTMATTER_BYTES`]: it is not parsed.
pub(crate) fn frontmatter_too_large(path: &Path, size: FrontmatterSize) -> Diagnostic {
    let message = match size {
        FrontmatterSize::Closed(bytes) => format!(
            "frontmatter is {bytes} bytes, over the {MAX_FRONTMATTER_BYTES}-byte limit; not parsed, skipped"
        ),
        FrontmatterSize::NotClosedWithin { read, file } => format!(
            "frontmatter has no closing --- in the first {read} bytes of this {file}-byte file: it is unclosed or over the {MAX_FRONTMATTER_BYTES}-byte limit; not parsed, skipped"
        ),
    };
    Diagnostic::error(path, message)
        .with_line(Some(1))
        .with_hint(
            "keep the frontmatter to a few short fields, end it with a line '---', and move long text into the body or references/",
        )
}

/// Builds a skill from its file's text, leniently: every problem becomes a diagnostic.
pub fn skill_from_text(location: SkillLocation, text: &str) -> Skill {
    let document = parse_document(text);
    let frontmatter = Frontmatter::from_mapping(&document.mapping);
    let file = &location.file;
    // A command needs no frontmatter, and is named by its file (as in Claude Code).
    let command = matches!(location.form, Form::Command { .. });
    let mut diagnostics: Vec<Diagnostic> = structural_diagnostic(&document.status, file)
        .filter(|_| !(command && document.status == FrontmatterStatus::Missing))
        .into_iter()
        .collect();
    for (field, message) in &frontmatter.problems {
        diagnostics.push(Diagnostic::warning(file, message.clone()).with_field(field.clone()));
    }
    let folder_name = folder_name(&location.dir);
    let name = match frontmatter.name.as_deref() {
        _ if command => command_name(file),
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
        if document.status.is_mapping() && !command {
            diagnostics.push(
                Diagnostic::warning(file, "Missing required field in frontmatter: description")
                    .with_field("description")
                    .with_hint("using the first line of the body; add a description that says what the skill does and when to use it"),
            );
        }
        first_body_line(document.body)
    };
    // A name or tag goes into every catalog as it is: one that could start a line of its own or
    // hide text is shown escaped instead (and is not a valid name anyway).
    let name = match crate::clean::escape_invisible(&name) {
        std::borrow::Cow::Borrowed(_) => name,
        std::borrow::Cow::Owned(escaped) => {
            diagnostics.push(
                Diagnostic::error(
                    file,
                    format!("name holds control or invisible characters; shown as '{escaped}'"),
                )
                .with_field("name")
                .with_hint("use lowercase letters, digits and hyphens only"),
            );
            escaped
        }
    };
    // Tags are escaped where a catalog shows them.
    if frontmatter.tags.iter().any(|tag| {
        matches!(
            crate::clean::escape_invisible(tag),
            std::borrow::Cow::Owned(_)
        )
    }) {
        diagnostics.push(
            Diagnostic::warning(
                file,
                format!("a tag of '{name}' holds control or invisible characters; shown escaped"),
            )
            .with_field("tags"),
        );
    }
    let (description, removed) = crate::clean::clean_description(&description);
    diagnostics.extend(description_diagnostics(file, &name, &removed));
    cap_diagnostics(&mut diagnostics, file);
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
        form: location.form,
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
                .with_hint(yaml_hint(message))
        }
    };
    Some(diagnostic)
}

/// What to do about a YAML error, by what the parser said: an unclosed bracket or quote is not
/// fixed by quoting `: `.
fn yaml_hint(message: &str) -> &'static str {
    if message.contains("expected ',' or ']'") || message.contains("expected ',' or '}'") {
        "close the [ or { this line opens, or quote the whole value if the bracket is part of the text"
    } else if message.contains("quoted scalar") || message.contains("end of stream") {
        "close the quote (or bracket) this value opens, or remove it"
    } else if message.contains("alias") {
        "quote the value: an unquoted * or & at its start is YAML syntax"
    } else if message.contains("mapping values are not allowed") {
        "quote values that contain ': ' (description: \"Use when: ...\")"
    } else if message.contains("tab") {
        "indent with spaces; YAML does not allow tabs there"
    } else {
        "check the line: keys are 'name: value'; quote values that start with a special character (*, &, !, |, >, %, @, `)"
    }
}

/// A command's name: its file's name without `.md` (lossy for names that are not UTF-8).
fn command_name(file: &Path) -> String {
    file.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
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

/// A diagnostic for each kind of character removed from a description: they hide or reorder
/// text the user does not see but the model reads in every catalog.
fn description_diagnostics(
    file: &Path,
    name: &str,
    removed: &crate::clean::Removed,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut note = |count: usize, what: &str| {
        if count > 0 {
            diagnostics.push(
                Diagnostic::warning(
                    file,
                    format!("description of '{name}': removed {count} {what}"),
                )
                .with_field("description"),
            );
        }
    };
    note(removed.control, "control character(s)");
    note(
        removed.bidi,
        "bidi override, isolate or mark character(s) (they reorder text)",
    );
    note(removed.zero_width, "invisible character(s)");
    note(
        removed.variation,
        "variation selector(s) (a run of them can encode hidden text)",
    );
    if removed.tags > 0 {
        let hidden: String = removed.hidden.chars().take(MAX_HIDDEN_SHOWN).collect();
        diagnostics.push(
            Diagnostic::error(
                file,
                format!(
                    "description of '{name}': removed {} Unicode tag character(s) hiding text: {hidden:?}",
                    removed.tags
                ),
            )
            .with_field("description")
            .with_hint("tag characters are invisible; text hidden in them is a known way to steer the model"),
        );
    }
    diagnostics
}

/// The most diagnostics one skill keeps: a frontmatter of thousands of bad keys said the same
/// thing 3,266 times (34 MB of `skill://diagnostics`).
pub const MAX_DIAGNOSTICS_PER_SKILL: usize = 20;

/// Keeps each distinct diagnostic once and at most [`MAX_DIAGNOSTICS_PER_SKILL`] of them, the
/// errors first; one more line says how many were left out.
fn cap_diagnostics(diagnostics: &mut Vec<Diagnostic>, file: &Path) {
    let mut seen = std::collections::HashSet::new();
    diagnostics.retain(|diagnostic| {
        seen.insert((
            diagnostic.message.clone(),
            diagnostic.field.clone(),
            diagnostic.line,
        ))
    });
    drop(seen);
    if diagnostics.len() <= MAX_DIAGNOSTICS_PER_SKILL {
        return;
    }
    diagnostics.sort_by_key(|diagnostic| diagnostic.severity != crate::Severity::Error);
    let left_out = diagnostics.len() - MAX_DIAGNOSTICS_PER_SKILL;
    diagnostics.truncate(MAX_DIAGNOSTICS_PER_SKILL);
    diagnostics.push(
        Diagnostic::warning(
            file,
            format!("{left_out} more problems in this skill not listed"),
        )
        .with_hint("fix the ones listed (repeated ones are shown once) and look again"),
    );
}

/// How much hidden text a diagnostic shows.
pub(crate) const MAX_HIDDEN_SHOWN: usize = 120;

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
