//! Live reload: the skills found again while a session runs (the CLI watches the roots and
//! calls [`crate::Agent::reload_skills`] between turns). The system prompt and the tools never
//! change, so the prompt cache holds: what changed is told in a short note appended to the next
//! user message (skills added, with their descriptions; changed; removed), and from then on
//! `load_skill`, `search_skills` and matching see the new skills (a changed body is read fresh
//! by the next `load_skill` in any case).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::SystemTime;

use skillet_skills::{Library, Skill, clean_description, escape_invisible, neutralize_tags};

/// The most skills named in one note for each of added, changed and removed.
pub const MAX_NOTED_SKILLS: usize = 20;
/// The most characters of an added skill's description in the note.
pub const MAX_NOTED_DESCRIPTION_CHARS: usize = 200;
/// The tag the note is wrapped in.
const NOTE_TAG: &str = "skills_changed";

/// What a skill was when last seen: enough to tell that it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    file: PathBuf,
    description: String,
    size: Option<u64>,
    modified: Option<SystemTime>,
    model_invocable: bool,
}

/// The skills the model may load, as last seen (by name).
#[derive(Debug, Clone, Default)]
pub(crate) struct SkillsSeen(BTreeMap<String, Seen>);

impl SkillsSeen {
    /// The library's model-invocable skills now.
    pub(crate) fn of(library: &Library) -> Self {
        Self(
            library
                .skills()
                .iter()
                .filter(|skill| skill.model_invocable())
                .map(|skill| (skill.name.clone(), seen(skill)))
                .collect(),
        )
    }
}

fn seen(skill: &Skill) -> Seen {
    let metadata = std::fs::metadata(&skill.file).ok();
    Seen {
        file: skill.file.clone(),
        description: skill.description.clone(),
        size: metadata.as_ref().map(std::fs::Metadata::len),
        modified: metadata.and_then(|metadata| metadata.modified().ok()),
        model_invocable: skill.model_invocable(),
    }
}

/// What changed between two sightings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillChanges {
    /// New skills: name and description.
    pub added: Vec<(String, String)>,
    /// Skills whose file, description or content changed.
    pub changed: Vec<String>,
    /// Skills gone (or no longer loadable by the model).
    pub removed: Vec<String>,
}

impl SkillChanges {
    /// Between `before` and `after` (added and changed read from `library`).
    pub(crate) fn between(before: &SkillsSeen, after: &SkillsSeen, library: &Library) -> Self {
        let mut changes = Self::default();
        for (name, now) in &after.0 {
            match before.0.get(name) {
                None => changes.added.push((
                    name.clone(),
                    library
                        .get(name)
                        .map(|skill| skill.description.clone())
                        .unwrap_or_default(),
                )),
                Some(was) if was != now => changes.changed.push(name.clone()),
                Some(_) => {}
            }
        }
        changes.removed = before
            .0
            .keys()
            .filter(|name| !after.0.contains_key(*name))
            .cloned()
            .collect();
        changes
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }

    /// One line for the user: `skills changed: added a, b; changed c; removed d`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        let names = |list: Vec<&str>| list.join(", ");
        if !self.added.is_empty() {
            parts.push(format!(
                "added {}",
                names(self.added.iter().map(|(name, _)| name.as_str()).collect())
            ));
        }
        if !self.changed.is_empty() {
            parts.push(format!(
                "changed {}",
                names(self.changed.iter().map(String::as_str).collect())
            ));
        }
        if !self.removed.is_empty() {
            parts.push(format!(
                "removed {}",
                names(self.removed.iter().map(String::as_str).collect())
            ));
        }
        format!("skills changed: {}", parts.join("; "))
    }

    /// The note appended to the next user message. Names and descriptions are the skills'
    /// authors' text: cleaned as the catalog cleans them, one line each, the tag neutralised.
    pub fn note(&self) -> String {
        let clean = |text: &str| {
            let (cleaned, _) = clean_description(text);
            let one_line = escape_invisible(&cleaned).replace('\n', " ");
            neutralize_tags(&one_line, &[NOTE_TAG]).into_owned()
        };
        let mut note = format!(
            "<{NOTE_TAG}>\nThe skills changed since the list you were given; load_skill reads them as they are now.\n"
        );
        let mut list = |label: &str, names: Vec<String>| {
            for name in names.iter().take(MAX_NOTED_SKILLS) {
                let _ = writeln!(note, "- {label}: {name}");
            }
            if names.len() > MAX_NOTED_SKILLS {
                let _ = writeln!(
                    note,
                    "- … and {} more {label}",
                    names.len() - MAX_NOTED_SKILLS
                );
            }
        };
        list(
            "added",
            self.added
                .iter()
                .map(|(name, description)| {
                    let description: String = clean(description)
                        .chars()
                        .take(MAX_NOTED_DESCRIPTION_CHARS)
                        .collect();
                    format!("{}: {description}", clean(name))
                })
                .collect(),
        );
        list(
            "changed (load it again before relying on it)",
            self.changed.iter().map(|name| clean(name)).collect(),
        );
        list(
            "removed (no longer available)",
            self.removed.iter().map(|name| clean(name)).collect(),
        );
        let _ = write!(note, "</{NOTE_TAG}>");
        note
    }
}
