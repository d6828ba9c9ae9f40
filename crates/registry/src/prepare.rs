//! A skill folder made ready to publish: strictly validated (a specification error refuses it),
//! read whole, hashed, and its words counted with skillet's own tokeniser, from the very bytes
//! that will be stored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skillet_retrieval::{Stemming, body_terms, embedding_text, skill_text, tokens};
use skillet_skills::{
    MAX_BODY_BYTES, RootKind, SkillLocation, body_of, skill_from_text, validate_text,
};

use crate::bundle::Bundle;
use crate::error::RegistryError;

/// Owners nobody may publish under (they would pass for the registry's or a vendor's own).
pub const RESERVED_OWNERS: &[&str] = &[
    "admin",
    "administrator",
    "anthropic",
    "api",
    "claude",
    "codex",
    "global",
    "official",
    "openai",
    "registry",
    "root",
    "skillet",
    "skills",
    "system",
];

/// The longest owner, in characters (GitHub's limit for a user name).
pub const MAX_OWNER_CHARS: usize = 39;

/// A skill ready to publish.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Its folder.
    pub dir: PathBuf,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The text its vector is computed from ([`embedding_text`]).
    pub embedding_text: String,
    /// Its words and their counts ([`skill_text`] tokenised), sorted.
    pub terms: Vec<(String, i32)>,
    /// How many words in all (BM25's document length).
    pub length: i32,
    /// The words of its body, each once, sorted ([`body_terms`]): the hybrid blend weighs them
    /// as a local library's does.
    pub body_terms: Vec<String>,
    /// Its files.
    pub bundle: Bundle,
    /// The content hash.
    pub content_hash: [u8; 32],
    /// Warnings from validation (not refusing).
    pub warnings: Vec<String>,
}

/// Reads and checks the skill in `dir`.
pub fn prepare(dir: &Path) -> Result<Prepared, RegistryError> {
    let bundle = Bundle::read(dir)?;
    let Some(skill_file) = bundle.skill_file() else {
        return Err(RegistryError::Invalid {
            dir: dir.display().to_string(),
            problems: "  Missing required file: SKILL.md".into(),
        });
    };
    let file = dir.join(&skill_file.path);
    let text = String::from_utf8(skill_file.bytes.clone()).map_err(|_| RegistryError::Invalid {
        dir: dir.display().to_string(),
        problems: format!("  {}: not UTF-8 text", file.display()),
    })?;
    let validation = validate_text(&text, &file, dir);
    let problems: Vec<String> = validation
        .errors()
        .map(|diagnostic| format!("  {diagnostic}"))
        .collect();
    if !problems.is_empty() {
        return Err(RegistryError::Invalid {
            dir: dir.display().to_string(),
            problems: problems.join("\n"),
        });
    }
    let named = skill_from_text(
        SkillLocation {
            file: file.clone(),
            dir: dir.to_path_buf(),
            root: dir.to_path_buf(),
            root_kind: RootKind::Explicit,
            form: skillet_skills::Form::Folder,
        },
        &text,
    );
    check_name(&named.name)
        .map_err(|error| RegistryError::BadName(format!("{}: {error}", dir.display())))?;
    let warnings = validation
        .warnings()
        .map(ToString::to_string)
        .collect::<Vec<_>>();
    let skill = skill_from_text(
        SkillLocation {
            file: file.clone(),
            dir: dir.to_path_buf(),
            root: dir.to_path_buf(),
            root_kind: RootKind::Explicit,
            form: skillet_skills::Form::Folder,
        },
        &text,
    );
    let when = skill.frontmatter.when_to_use.as_deref();
    let tags = &skill.frontmatter.tags;
    let (terms, length) = term_counts(&skill_text(&skill.name, &skill.description, when, tags));
    Ok(Prepared {
        dir: dir.to_path_buf(),
        embedding_text: embedding_text(&skill.name, &skill.description, when, tags),
        name: skill.name,
        description: skill.description,
        terms,
        length,
        body_terms: body_terms_of(&skill_file.bytes),
        content_hash: bundle.content_hash(),
        bundle,
        warnings,
    })
}

/// The body's words of a stored skill file, as a local library counts them: none when the file
/// is over what `Skill::read_body` reads (`MAX_BODY_BYTES`; such a skill is ranked by its own
/// text locally, and cannot be loaded), else [`body_terms`] of its body.
pub fn body_terms_of(skill_file: &[u8]) -> Vec<String> {
    if u64::try_from(skill_file.len()).unwrap_or(u64::MAX) > MAX_BODY_BYTES {
        return Vec::new();
    }
    body_terms(
        body_of(&String::from_utf8_lossy(skill_file)),
        Stemming::Light,
    )
}

/// The words of a text as BM25 counts them, and how many in all.
pub fn term_counts(text: &str) -> (Vec<(String, i32)>, i32) {
    let words = tokens(text, Stemming::Light);
    let length = i32::try_from(words.len()).unwrap_or(i32::MAX);
    let mut counts: BTreeMap<String, i32> = BTreeMap::new();
    for word in words {
        *counts.entry(word).or_default() += 1;
    }
    (counts.into_iter().collect(), length)
}

/// Fails unless `owner` may be published under: the name rules of a skill's name, at most
/// [`MAX_OWNER_CHARS`], not reserved.
pub fn check_owner(owner: &str) -> Result<(), RegistryError> {
    if !is_slug(owner, MAX_OWNER_CHARS) {
        return Err(RegistryError::BadName(format!(
            "owner {owner:?} is not valid\n  hint: 1 to {MAX_OWNER_CHARS} lower-case letters, \
             digits and single hyphens, like a skill's name"
        )));
    }
    if RESERVED_OWNERS.contains(&owner) {
        return Err(RegistryError::BadName(format!(
            "owner {owner:?} is reserved\n  hint: publish under your team's or your own name"
        )));
    }
    Ok(())
}

/// 1 to `max` of `a-z`, `0-9` and single hyphens, neither first nor last.
fn is_slug(text: &str, max: usize) -> bool {
    !text.is_empty()
        && text.chars().count() <= max
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !text.starts_with('-')
        && !text.ends_with('-')
        && !text.contains("--")
}

/// The longest skill name the registry takes, in characters (the specification's limit).
pub const MAX_NAME_CHARS: usize = 64;

/// Whether the registry takes a skill's name: the specification allows lower-case letters of
/// any script, the registry only `a-z`, digits and single hyphens (names are typed in commands
/// and compared byte for byte, so look-alike letters cannot pass for each other).
pub fn check_name(name: &str) -> Result<(), RegistryError> {
    if is_slug(name, MAX_NAME_CHARS) {
        return Ok(());
    }
    Err(RegistryError::BadName(format!(
        "the skill name {name:?} is valid, but the registry does not take it: registry names are \
         1 to {MAX_NAME_CHARS} of a-z, 0-9 and single hyphens\n  hint: rename the skill (its \
         folder and its `name:`) to publish it, e.g. with letters a-z only"
    )))
}

/// `owner/name` and an optional `@seq`, checked.
pub fn parse_reference(text: &str) -> Result<(String, String, Option<i32>), RegistryError> {
    let bad = |why: &str| {
        RegistryError::BadName(format!(
            "{text:?} is not a registry skill: {why}\n  hint: OWNER/NAME or OWNER/NAME@SEQ, \
             like acme/pdf-forms@3"
        ))
    };
    let (skill, seq) = match text.split_once('@') {
        Some((skill, seq)) => {
            let seq: i32 = seq
                .parse()
                .ok()
                .filter(|seq| *seq >= 1)
                .ok_or_else(|| bad("the version is not a number from 1"))?;
            (skill, Some(seq))
        }
        None => (text, None),
    };
    let Some((owner, name)) = skill.split_once('/') else {
        return Err(bad("no owner"));
    };
    if !skillet_skills::name_problems(name).is_empty() || name.is_empty() {
        return Err(bad("the name breaks the specification's rules"));
    }
    let owner_ok = !owner.is_empty()
        && owner
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !owner_ok {
        return Err(bad(
            "the owner is not lower-case letters, digits and hyphens",
        ));
    }
    Ok((owner.to_string(), name.to_string(), seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_follow_name_rules_and_some_are_reserved() {
        assert!(check_owner("acme").is_ok());
        assert!(check_owner("acme-tools2").is_ok());
        for bad in ["", "Acme", "-acme", "acme-", "a--b", "a/b", &"x".repeat(40)] {
            assert!(check_owner(bad).is_err(), "{bad:?}");
        }
        let error = check_owner("anthropic").unwrap_err().to_string();
        assert!(error.contains("reserved"), "{error}");
    }

    #[test]
    fn references_parse() {
        assert_eq!(
            parse_reference("acme/pdf-forms@3").unwrap(),
            ("acme".into(), "pdf-forms".into(), Some(3))
        );
        assert_eq!(
            parse_reference("acme/pdf-forms").unwrap(),
            ("acme".into(), "pdf-forms".into(), None)
        );
        for bad in [
            "pdf-forms",
            "acme/PDF",
            "acme/pdf@0",
            "acme/pdf@x",
            "/pdf",
            "Acme/pdf",
        ] {
            assert!(parse_reference(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn terms_are_counted_as_bm25_counts_them() {
        let (terms, length) = term_counts("fill PDF forms, fill the forms");
        assert_eq!(length, 5);
        assert_eq!(
            terms,
            [
                ("fill".to_string(), 2),
                ("form".to_string(), 2),
                ("pdf".to_string(), 1)
            ]
        );
    }
}
