//! Strict validation against the specification, separate from lenient loading.
//!
//! Messages use the reference validator's (`skills-ref`) words so users can search them.
//! Errors break the specification; warnings are what clients accept but the specification does
//! not define (Claude Code's extra fields, values that needed quoting), and advice (long bodies).
//!
//! Where we differ from the reference validator, on purpose: a UTF-8 BOM is accepted; flow lists
//! (`[a, b]`) are accepted; a `---` inside a value does not end the frontmatter; fields that
//! clients define (`user-invocable`, `disable-model-invocation`, `when_to_use`, …) are warnings,
//! not errors; an empty `compatibility` and a non-map `metadata` are errors.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization;
use yaml_serde::Mapping;

use crate::diagnostic::Diagnostic;
use crate::discover::locate;
use crate::error::Error;
use crate::fields::{CLIENT_FIELDS, Frontmatter, SPEC_FIELDS, scalar_string};
use crate::frontmatter::{Split, parse_document, split};
use crate::regular::{describe, read_text_capped};
use crate::roots::{Root, RootKind};
use crate::skill::{
    FrontmatterSize, MAX_FRONTMATTER_BYTES, SKILL_FILE_NAMES, folder_name, frontmatter_too_large,
    structural_diagnostic,
};

/// The longest name the specification allows, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description the specification allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest compatibility text the specification allows, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The body length the specification recommends staying under, in lines.
pub const RECOMMENDED_MAX_BODY_LINES: usize = 500;
/// Descriptions shorter than this many words get advice: too little for a request to match.
pub const MIN_DESCRIPTION_WORDS: usize = 20;
/// The largest skill file validation reads, in bytes; a larger one is an error, not read.
pub const MAX_VALIDATED_BYTES: u64 = 20 * 1024 * 1024;

/// The verdict on one skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// The skill file (or the folder, when it has none).
    pub path: PathBuf,
    /// The skill's name, where the frontmatter gives one.
    pub name: Option<String>,
    /// Errors and warnings, in the order found.
    pub diagnostics: Vec<Diagnostic>,
}

impl Validation {
    /// True when there is no error (warnings allowed).
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| !d.is_error())
    }
}

/// Validates what a path names: a skill folder, a skill file, or a root to walk (every skill
/// under it, plus warnings for names used twice and for problems met on the walk).
pub fn validate_path(path: &Path) -> Vec<Validation> {
    if !path.exists() {
        return vec![single(
            path,
            Diagnostic::error(path, format!("Path does not exist: {}", path.display())),
        )];
    }
    if path.is_file() {
        let dir = path.parent().unwrap_or(Path::new("."));
        return vec![validate_file(path, dir)];
    }
    if let Ok(metadata) = std::fs::metadata(path)
        && !metadata.is_dir()
    {
        // A FIFO, a socket, a device: never opened.
        let through_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
        let error = Error::NotRegular {
            path: path.to_path_buf(),
            kind: describe(metadata.file_type()),
            through_link,
        };
        return vec![single(path, error.to_diagnostic())];
    }
    if let Some(file) = find_skill_file(path) {
        return vec![validate_file(&file, path)];
    }
    let (locations, walk_diagnostics) = locate(&[Root::new(path, RootKind::Explicit)]);
    if locations.is_empty() {
        let mut validation = single(
            path,
            Diagnostic::error(path, "Missing required file: SKILL.md")
                .with_hint("a skill is a folder holding SKILL.md; no skill folder was found below this one either"),
        );
        validation.diagnostics.extend(walk_diagnostics);
        return vec![validation];
    }
    let mut validations: Vec<Validation> = locations
        .iter()
        .map(|location| validate_file(&location.file, &location.dir))
        .collect();
    warn_duplicate_names(&mut validations);
    if !walk_diagnostics.is_empty() {
        validations.push(Validation {
            path: path.to_path_buf(),
            name: None,
            diagnostics: walk_diagnostics,
        });
    }
    validations
}

fn single(path: &Path, diagnostic: Diagnostic) -> Validation {
    Validation {
        path: path.to_path_buf(),
        name: None,
        diagnostics: vec![diagnostic],
    }
}

/// `SKILL.md`, else `skill.md`, in `dir`.
pub fn find_skill_file(dir: &Path) -> Option<PathBuf> {
    SKILL_FILE_NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
}

fn warn_duplicate_names(validations: &mut [Validation]) {
    let mut first: HashMap<String, PathBuf> = HashMap::new();
    for validation in validations.iter_mut() {
        let Some(name) = validation.name.clone() else {
            continue;
        };
        match first.get(&name) {
            Some(winner) => validation.diagnostics.push(
                Diagnostic::warning(
                    &validation.path,
                    format!(
                        "skill name '{name}' is also used by {}, which is found first and wins",
                        winner.display()
                    ),
                )
                .with_field("name"),
            ),
            None => {
                first.insert(name, validation.path.clone());
            }
        }
    }
}

/// Validates one skill file, whose folder is `dir`. Only a regular file (or a link to one) of
/// at most [`MAX_VALIDATED_BYTES`] is read; anything else is an error naming the file.
pub fn validate_file(file: &Path, dir: &Path) -> Validation {
    match read_text_capped(file, MAX_VALIDATED_BYTES) {
        Ok(text) => validate_text(&text, file, dir),
        Err(error) => single(file, error.to_diagnostic()),
    }
}

/// Validates the text of a skill file. A frontmatter over [`MAX_FRONTMATTER_BYTES`] is an error
/// and is not parsed.
pub fn validate_text(text: &str, file: &Path, dir: &Path) -> Validation {
    if let Split::Closed { yaml, .. } = split(text)
        && yaml.len() > MAX_FRONTMATTER_BYTES
    {
        return single(
            file,
            frontmatter_too_large(file, FrontmatterSize::Closed(yaml.len())),
        );
    }
    let document = parse_document(text);
    let mut diagnostics = Vec::new();
    let structural = structural_diagnostic(&document.status, file);
    let stop = structural.as_ref().is_some_and(Diagnostic::is_error);
    diagnostics.extend(structural);
    if stop {
        return Validation {
            path: file.to_path_buf(),
            name: None,
            diagnostics,
        };
    }
    let mut checker = Checker {
        file,
        text,
        diagnostics,
    };
    let mapping = &document.mapping;
    checker.fields(mapping);
    let name = checker.name(mapping, dir);
    checker.description(mapping);
    checker.compatibility(mapping);
    checker.simple_types(mapping);
    checker.body(document.body);
    Validation {
        path: file.to_path_buf(),
        name,
        diagnostics: checker.diagnostics,
    }
}

struct Checker<'a> {
    file: &'a Path,
    text: &'a str,
    diagnostics: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn error(&mut self, field: &str, message: String) {
        let line = field_line(self.text, field);
        self.diagnostics.push(
            Diagnostic::error(self.file, message)
                .with_field(field)
                .with_line(line),
        );
    }

    fn fields(&mut self, mapping: &Mapping) {
        let mut unknown = Vec::new();
        let mut client = Vec::new();
        for key in mapping.keys() {
            let key = scalar_string(key).unwrap_or_default();
            if SPEC_FIELDS.contains(&key.as_str()) {
                continue;
            }
            if CLIENT_FIELDS.contains(&key.as_str()) {
                client.push(key);
            } else {
                unknown.push(key);
            }
        }
        let allowed = format!("{SPEC_FIELDS:?}").replace('"', "'");
        if !unknown.is_empty() {
            unknown.sort();
            let line = field_line(self.text, &unknown[0]);
            self.diagnostics.push(
                Diagnostic::error(
                    self.file,
                    format!(
                        "Unexpected fields in frontmatter: {}. Only {allowed} are allowed.",
                        unknown.join(", ")
                    ),
                )
                .with_line(line)
                .with_hint("move custom data under 'metadata:' as string values"),
            );
        }
        if !client.is_empty() {
            client.sort();
            let line = field_line(self.text, &client[0]);
            self.diagnostics.push(
                Diagnostic::warning(
                    self.file,
                    format!(
                        "Unexpected fields in frontmatter: {}. Only {allowed} are allowed.",
                        client.join(", ")
                    ),
                )
                .with_line(line)
                .with_hint("clients such as Claude Code read these fields; others ignore them"),
            );
        }
    }

    fn name(&mut self, mapping: &Mapping, dir: &Path) -> Option<String> {
        let Some(value) = mapping.get("name") else {
            self.diagnostics.push(
                Diagnostic::error(self.file, "Missing required field in frontmatter: name")
                    .with_field("name")
                    .with_hint(format!("add 'name: {}'", folder_name(dir))),
            );
            return None;
        };
        let Some(raw) = scalar_string(value).filter(|name| !name.trim().is_empty()) else {
            self.error("name", "Field 'name' must be a non-empty string".into());
            return None;
        };
        let name: String = raw.trim().nfkc().collect();
        for problem in name_problems(&name) {
            self.error("name", problem);
        }
        let dir_name = folder_name(dir);
        if dir_name.nfkc().collect::<String>() != name {
            let line = field_line(self.text, "name");
            self.diagnostics.push(
                Diagnostic::error(
                    self.file,
                    format!("Directory name '{dir_name}' must match skill name '{name}'"),
                )
                .with_field("name")
                .with_line(line)
                .with_hint("rename the folder or the skill so they are the same"),
            );
        }
        Some(name)
    }

    fn description(&mut self, mapping: &Mapping) {
        let Some(value) = mapping.get("description") else {
            self.diagnostics.push(
                Diagnostic::error(
                    self.file,
                    "Missing required field in frontmatter: description",
                )
                .with_field("description")
                .with_hint("say what the skill does and when to use it"),
            );
            return;
        };
        let Some(description) = scalar_string(value).filter(|text| !text.trim().is_empty()) else {
            self.error(
                "description",
                "Field 'description' must be a non-empty string".into(),
            );
            return;
        };
        if description.contains(crate::scaffold::DESCRIPTION_PLACEHOLDER) {
            self.diagnostics.push(
                Diagnostic::warning(
                    self.file,
                    "Field 'description' still holds the template's placeholder ('Replace this text.')",
                )
                .with_field("description")
                .with_line(field_line(self.text, "description"))
                .with_hint(
                    "say what the skill does and when to use it: the model picks skills by their description",
                ),
            );
        } else {
            self.findability(mapping, &description);
        }
        let chars = description.chars().count();
        if chars > MAX_DESCRIPTION_CHARS {
            self.error(
                "description",
                format!(
                    "Description exceeds {MAX_DESCRIPTION_CHARS} character limit ({chars} chars)"
                ),
            );
        }
    }

    fn compatibility(&mut self, mapping: &Mapping) {
        let Some(value) = mapping.get("compatibility") else {
            return;
        };
        let Some(text) = scalar_string(value) else {
            self.error(
                "compatibility",
                "Field 'compatibility' must be a string".into(),
            );
            return;
        };
        let chars = text.chars().count();
        if text.trim().is_empty() {
            self.error(
                "compatibility",
                "Field 'compatibility' must be a non-empty string".into(),
            );
        } else if chars > MAX_COMPATIBILITY_CHARS {
            self.error(
                "compatibility",
                format!(
                    "Compatibility exceeds {MAX_COMPATIBILITY_CHARS} character limit ({chars} chars)"
                ),
            );
        }
    }

    /// `license`, `metadata`, `allowed-tools` and the client fields: the lenient reader already
    /// checks their types; here its problems become errors (spec fields) or warnings.
    fn simple_types(&mut self, mapping: &Mapping) {
        if let Some(value) = mapping.get("license")
            && !value.is_null()
            && scalar_string(value).is_none()
        {
            self.error("license", "Field 'license' must be a string".into());
        }
        let fields = Frontmatter::from_mapping(mapping);
        for (field, message) in fields.problems {
            // Checked above with the reference validator's messages.
            if ["name", "description", "compatibility", "license"].contains(&field.as_str()) {
                continue;
            }
            if SPEC_FIELDS.contains(&field.as_str()) {
                self.error(&field, message);
            } else {
                let line = field_line(self.text, &field);
                self.diagnostics.push(
                    Diagnostic::warning(self.file, message)
                        .with_field(field)
                        .with_line(line),
                );
            }
        }
    }

    /// Advice on whether a model can pick the skill from its description: long enough to say
    /// what it does, and saying when to use it (a `when_to_use` field counts).
    fn findability(&mut self, mapping: &Mapping, description: &str) {
        let line = field_line(self.text, "description");
        let words = description.split_whitespace().count();
        if words < MIN_DESCRIPTION_WORDS {
            self.diagnostics.push(
                Diagnostic::warning(
                    self.file,
                    format!(
                        "Field 'description' has {words} words; under {MIN_DESCRIPTION_WORDS}, a model has little to match a request against"
                    ),
                )
                .with_field("description")
                .with_line(line)
                .with_hint("say what the skill does, on what, and when to use it, in the words a user would use"),
            );
        }
        let when_to_use = ["when_to_use", "when-to-use"].iter().any(|key| {
            mapping
                .get(*key)
                .and_then(scalar_string)
                .is_some_and(|text| !text.trim().is_empty())
        });
        if !has_trigger_clause(description) && !when_to_use {
            self.diagnostics.push(
                Diagnostic::warning(
                    self.file,
                    "Field 'description' does not say when to use the skill",
                )
                .with_field("description")
                .with_line(line)
                .with_hint("add a clause such as \"Use when the user asks to …\": models load a skill when a request matches it"),
            );
        }
    }

    fn body(&mut self, body: &str) {
        let lines = body.lines().count();
        if lines > RECOMMENDED_MAX_BODY_LINES {
            self.diagnostics.push(
                Diagnostic::warning(
                    self.file,
                    format!(
                        "body has {lines} lines; the specification recommends under {RECOMMENDED_MAX_BODY_LINES}"
                    ),
                )
                .with_hint("move details into references/ files the skill points to"),
            );
        }
    }
}

/// Whether a description says when to use its skill: "when", "whenever", "if the user",
/// "if you", "use for/it/this/to/on/with/after/before/during/in", or a form of "trigger".
pub fn has_trigger_clause(description: &str) -> bool {
    let words: Vec<String> = description
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    let after = |at: usize| words.get(at + 1).map_or("", String::as_str);
    words
        .iter()
        .enumerate()
        .any(|(at, word)| match word.as_str() {
            "when" | "whenever" | "trigger" | "triggers" | "triggered" => true,
            "if" => matches!(after(at), "the" | "you" | "a" | "an"),
            "use" | "invoke" => matches!(
                after(at),
                "for" | "it" | "this" | "to" | "on" | "with" | "after" | "before" | "during" | "in"
            ),
            _ => false,
        })
}

/// The naming rules a name (already NFKC-normalized) breaks, in the reference validator's words.
pub fn name_problems(name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let chars = name.chars().count();
    if chars == 0 {
        problems.push("Field 'name' must be a non-empty string".to_string());
        return problems;
    }
    if chars > MAX_NAME_CHARS {
        problems.push(format!(
            "Skill name '{name}' exceeds {MAX_NAME_CHARS} character limit ({chars} chars)"
        ));
    }
    if name.to_lowercase() != name {
        problems.push(format!("Skill name '{name}' must be lowercase"));
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("Skill name cannot start or end with a hyphen".to_string());
    }
    if name.contains("--") {
        problems.push("Skill name cannot contain consecutive hyphens".to_string());
    }
    if !name.chars().all(|c| c.is_alphanumeric() || c == '-') {
        problems.push(format!(
            "Skill name '{name}' contains invalid characters. Only letters, digits, and hyphens are allowed."
        ));
    }
    problems
}

/// The 1-based line of a top-level frontmatter key, found by its text.
fn field_line(text: &str, field: &str) -> Option<usize> {
    text.lines()
        .take_while({
            let mut fences = 0;
            move |line| {
                if line.trim_start_matches('\u{feff}').trim_end() == "---" {
                    fences += 1;
                }
                fences < 2
            }
        })
        .position(|line| {
            line.strip_prefix(field)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|index| index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_line_finds_top_level_keys_in_the_frontmatter_only() {
        let text = "---\nname: a\ndescription: b\n---\ndescription: c\n";
        assert_eq!(field_line(text, "description"), Some(3));
        assert_eq!(field_line(text, "license"), None);
    }

    #[test]
    fn name_rules() {
        assert!(name_problems("pdf-forms").is_empty());
        assert!(name_problems("技能").is_empty());
        assert!(name_problems("мой-навык").is_empty());
        assert_eq!(
            name_problems("НАВЫК"),
            ["Skill name 'НАВЫК' must be lowercase"]
        );
        assert_eq!(
            name_problems("a--b"),
            ["Skill name cannot contain consecutive hyphens"]
        );
        assert_eq!(
            name_problems("-a"),
            ["Skill name cannot start or end with a hyphen"]
        );
        assert_eq!(name_problems("a_b").len(), 1);
        assert_eq!(name_problems(&"a".repeat(65)).len(), 1);
    }
}
