//! The server's `instructions` at initialize: how to use the tools, the library's size, then as
//! much of the catalog as fits in [`MAX_INSTRUCTIONS_CHARS`] (Claude Code cuts instructions
//! there without a word, and its tool search keeps tool descriptions out of the model's view,
//! so this is where the catalog reaches the model). Every skill's name goes in before any
//! description: a name the model sees can be loaded; the rest are found by `search_skills`.

use std::fmt::Write as _;

use skillet_skills::Library;

/// The most characters of instructions (Claude Code cuts at 2,048).
pub const MAX_INSTRUCTIONS_CHARS: usize = 2_000;
/// The most characters of one skill's description in the instructions.
pub const MAX_DESCRIPTION_CHARS: usize = 120;

/// The instructions for `library` (and the skill source named `source`, when there is one):
/// at most [`MAX_INSTRUCTIONS_CHARS`] characters.
pub fn instructions(library: &Library, source: Option<&str>) -> String {
    let skills: Vec<_> = library.model_invocable().collect();
    let count = match skills.len() {
        1 => "1 skill".to_string(),
        n => format!("{n} skills"),
    };
    let mut text = format!(
        "skillet serves a library of {count}: instructions for tasks, loaded when needed. \
         When a task may match a skill, call search_skills with what you need done, then \
         load_skill with the best name and follow what it says; read_skill_file reads a file the \
         skill refers to (by its relative path). list_skills pages through them all."
    );
    if let Some(source) = source {
        let _ = write!(
            text,
            " search_skills also searches {source}: a result there loads by its OWNER/NAME@SEQ, \
             as text only (not installed: run nothing from it)."
        );
    }
    if skills.is_empty() {
        return text;
    }
    text.push_str("\nSkills:");
    let budget = MAX_INSTRUCTIONS_CHARS;
    // Names first, as many as fit with room left for the line saying how many did not.
    let more_line = |left: usize| format!("\n(and {left} more: search_skills finds them)");
    let mut lines: Vec<String> = Vec::new();
    let mut used = text.chars().count();
    for (shown, skill) in skills.iter().enumerate() {
        let line = format!("\n- {}", skill.name);
        let left_after = skills.len() - shown - 1;
        let reserve = if left_after > 0 {
            more_line(left_after).chars().count()
        } else {
            0
        };
        if used + line.chars().count() + reserve > budget {
            break;
        }
        used += line.chars().count();
        lines.push(line);
    }
    let left = skills.len() - lines.len();
    let reserve = if left > 0 {
        more_line(left).chars().count()
    } else {
        0
    };
    // Then descriptions, in order, while they fit.
    for (line, skill) in lines.iter_mut().zip(&skills) {
        let description: String = skill
            .description
            .chars()
            .take(MAX_DESCRIPTION_CHARS)
            .collect();
        let cut = if skill.description.chars().count() > MAX_DESCRIPTION_CHARS {
            "…"
        } else {
            ""
        };
        let suffix = format!(": {description}{cut}");
        if used + suffix.chars().count() + reserve > budget {
            break;
        }
        used += suffix.chars().count();
        line.push_str(&suffix);
    }
    for line in &lines {
        text.push_str(line);
    }
    if left > 0 {
        let _ = write!(text, "{}", more_line(left));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_skills::{Root, RootKind, discover};

    fn library(count: usize, description: &str) -> (tempfile::TempDir, Library) {
        let temp = tempfile::tempdir().unwrap();
        for index in 0..count {
            let dir = temp.path().join(format!("skill-{index:04}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("SKILL.md"),
                format!("---\nname: skill-{index:04}\ndescription: {description}\n---\nbody\n"),
            )
            .unwrap();
        }
        let library = discover(&[Root::new(temp.path(), RootKind::Explicit)]);
        (temp, library)
    }

    #[test]
    fn a_small_library_is_listed_whole() {
        let (_temp, library) = library(3, "Does a thing");
        let text = instructions(&library, None);
        assert!(text.contains("library of 3 skills"), "{text}");
        assert!(text.contains("\n- skill-0002: Does a thing"), "{text}");
        assert!(!text.contains("more"), "{text}");
    }

    #[test]
    fn a_large_library_gives_names_first_and_stays_within_the_limit() {
        let (_temp, library) = library(500, &"long words ".repeat(30));
        let text = instructions(&library, None);
        assert!(
            text.chars().count() <= MAX_INSTRUCTIONS_CHARS,
            "{}",
            text.len()
        );
        assert!(text.contains("library of 500 skills"), "{text}");
        assert!(text.contains("\n- skill-0000"), "{text}");
        assert!(text.contains("more: search_skills finds them)"), "{text}");
        // Names before descriptions: no description while names were left out.
        assert!(!text.contains("long words"), "{text}");
        let (_temp, library) = library_of_ten();
        let text = instructions(&library, None);
        assert!(text.chars().count() <= MAX_INSTRUCTIONS_CHARS);
        assert!(text.contains("\n- skill-0009"), "{text}");
    }

    fn library_of_ten() -> (tempfile::TempDir, Library) {
        library(10, &"long words ".repeat(30))
    }
}
