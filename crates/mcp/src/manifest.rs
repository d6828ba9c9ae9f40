//! The MCP Skills extension (SEP-2640): each skill as a complete manifest (its frontmatter as
//! written, every file once with its sha256 digest and size), built from skillet's own discovery
//! and its listing of a skill's files, never from a second walker.
//!
//! A skill the extension cannot carry faithfully is left out of `skills/list` and said why in
//! `skill://diagnostics` ([`exclusions`]): over [`MAX_FILES`] files or [`MAX_TOTAL_BYTES`]
//! bytes, a name that cannot be a URI segment or breaks the spec's naming rules, frontmatter
//! that only parsed after skillet's lenient recovery (the host compares it with the file), no
//! `name` or `description` in it, a file that cannot be read. Hidden files and links that leave
//! the folder are not the skill's (skillet never serves them), so the manifest is complete for
//! what the server serves.

use std::path::Path;

use rmcp::model::{Skill as McpSkill, SkillFrontmatter, SkillResource, SkillResources};
use serde_json::Value;
use skillet_skills::{Skill, read_in_skill, skill_files_up_to, strict_frontmatter};

use crate::state::Snapshot;
use crate::uri;

/// The most files of one skill the extension carries (hosts must accept up to this).
pub const MAX_FILES: usize = 512;
/// The most bytes of one skill the extension carries (hosts must accept up to this).
pub const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// Skills per `skills/list` page.
pub const PAGE: usize = 50;

/// The manifest of one skill, or why it cannot have one.
pub fn manifest(skill: &Skill) -> Result<McpSkill, String> {
    let skill_uri = uri::skill_md_uri(&skill.name).ok_or_else(|| {
        let why = skillet_skills::name_segment(&skill.name)
            .err()
            .unwrap_or_default();
        format!("its name cannot be a URI segment ({why})")
    })?;
    let file_name = skill
        .file
        .file_name()
        .map(Path::new)
        .ok_or_else(|| "its skill file has no name".to_string())?;
    let skill_md = read_in_skill(skill, file_name)
        .map_err(|error| format!("its skill file cannot be read: {error}"))?;
    let text = std::str::from_utf8(&skill_md)
        .map_err(|_| "its skill file is not UTF-8 text".to_string())?;
    if skillet_skills::clean_text(text) != text {
        return Err("its SKILL.md holds characters that hide or reorder text (the extension gives it as written; skillet's own tools show it escaped)".to_string());
    }
    let mapping = strict_frontmatter(text).ok_or_else(|| {
        "its frontmatter is not plain YAML as written (skillet read it leniently; a host compares it with the file)".to_string()
    })?;
    if !plain(&yaml_serde::Value::Mapping(mapping.clone()), 0) {
        return Err("its frontmatter holds YAML that JSON cannot carry as written (tags, merge keys, keys that are not strings, NaN or infinities)".to_string());
    }
    let Value::Object(mut fields) = serde_json::to_value(&mapping)
        .map_err(|error| format!("its frontmatter cannot be given as JSON: {error}"))?
    else {
        return Err("its frontmatter is not a mapping".to_string());
    };
    if hides_text(&Value::Object(fields.clone())) {
        return Err("its frontmatter holds characters that hide or reorder text (the extension gives it as written; skillet's own tools show it cleaned)".to_string());
    }
    let Some(Value::String(name)) = fields.remove("name") else {
        return Err("its frontmatter has no `name` string".to_string());
    };
    let Some(Value::String(description)) = fields.remove("description") else {
        return Err("its frontmatter has no `description` string".to_string());
    };
    if name != skill.name {
        return Err(format!(
            "its frontmatter name '{name}' is not the name it is served by"
        ));
    }
    let mut frontmatter = SkillFrontmatter::new(name, description);
    for (key, value) in fields {
        frontmatter = frontmatter.with_field(key, value);
    }
    let mut total = skill_md.len() as u64;
    let mut resources = vec![SkillResource::from_bytes(skill_uri.clone(), &skill_md)];
    let listing = skill_files_up_to(skill, MAX_FILES);
    if !listing.complete || listing.total + 1 > MAX_FILES {
        return Err(format!(
            "it has {} files{}, over the extension's {MAX_FILES}",
            listing.total + 1,
            if listing.complete { "" } else { " or more" }
        ));
    }
    for relative in &listing.files {
        let file_uri = uri::file_uri(&skill.name, relative)
            .ok_or_else(|| format!("its file {relative} cannot be a URI"))?;
        let bytes = read_in_skill(skill, Path::new(relative))
            .map_err(|error| format!("its file {relative} cannot be read: {error}"))?;
        total += bytes.len() as u64;
        if total > MAX_TOTAL_BYTES {
            return Err(format!(
                "its files are over the extension's {} MiB",
                MAX_TOTAL_BYTES / (1024 * 1024)
            ));
        }
        // Text (valid UTF-8, or named as text but not valid): checked as a client would show it.
        let shown_as_text = std::str::from_utf8(&bytes).is_ok()
            || crate::mime::is_text(crate::mime::by_extension(relative));
        let text = String::from_utf8_lossy(&bytes);
        if shown_as_text && skillet_skills::clean_text(&text) != text {
            return Err(format!(
                "its file {} holds characters that hide or reorder text (the extension gives files as written; skillet's resources/read shows them escaped)",
                skillet_skills::escape_invisible(relative)
            ));
        }
        resources.push(SkillResource::from_bytes(file_uri, &bytes));
    }
    let manifest = McpSkill::new(skill_uri, frontmatter, SkillResources::Files(resources));
    manifest
        .validate()
        .map_err(|error| format!("its manifest breaks the extension's rules: {error}"))?;
    Ok(manifest)
}

/// Whether any string (or key) in `value` holds a character that hides or reorders text
/// (newlines and tabs aside): the extension gives frontmatter as written, so such a skill is
/// left out of it rather than cleaned.
fn hides_text(value: &Value) -> bool {
    let hides = |text: &str| skillet_skills::clean_text(text) != text;
    match value {
        Value::String(text) => hides(text),
        Value::Array(items) => items.iter().any(hides_text),
        Value::Object(fields) => fields
            .iter()
            .any(|(key, item)| hides(key) || hides_text(item)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// One page of `skills/list` from skill number `start` (in discovery order): the manifests, and
/// where the next page starts; `None` when `start` is past the end (not a cursor this server
/// gave).
pub fn page(snapshot: &Snapshot, start: usize) -> Option<(Vec<McpSkill>, Option<usize>)> {
    let manifests = snapshot.manifests();
    if start > manifests.len() {
        return None;
    }
    let end = start.saturating_add(PAGE).min(manifests.len());
    let listed = manifests[start..end]
        .iter()
        .filter_map(|manifest| manifest.as_ref().ok().cloned())
        .collect();
    Some((listed, (end < manifests.len()).then_some(end)))
}

/// The skill named by a `SKILL.md` URI, as a manifest; `None` when no skill has that URI or the
/// extension cannot carry it.
pub fn get(snapshot: &Snapshot, skill_uri: &str) -> Option<McpSkill> {
    let uri::Target::SkillMd { name } = uri::parse(skill_uri)? else {
        return None;
    };
    let position = snapshot
        .library
        .skills()
        .iter()
        .position(|skill| skill.name == name)?;
    snapshot.manifests()[position]
        .as_ref()
        .ok()
        .filter(|manifest| manifest.uri == skill_uri)
        .cloned()
}

/// Why each skill left out of `skills/list` is left out, one line each, for
/// `skill://diagnostics`.
pub fn exclusions(snapshot: &Snapshot) -> Vec<String> {
    snapshot
        .library
        .skills()
        .iter()
        .zip(snapshot.manifests())
        .filter_map(|(skill, manifest)| {
            manifest.as_ref().err().map(|why| {
                format!(
                    "note {}: skill '{}' is not in the Skills extension's listing (skills/list): {why}; the tools still serve it",
                    skillet_skills::escape_invisible(&skill.file.display().to_string()),
                    skillet_skills::escape_invisible(&skill.name)
                )
            })
        })
        .collect()
}

/// Whether a YAML value turns into JSON that means the same to a host parsing the file: no
/// tags, no merge keys, no keys that are not strings, no NaN or infinities (JSON has none), no
/// nesting past [`skillet_skills::MAX_YAML_DEPTH`].
fn plain(value: &yaml_serde::Value, depth: usize) -> bool {
    use yaml_serde::Value;
    if depth > skillet_skills::MAX_YAML_DEPTH {
        return false;
    }
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => true,
        Value::Number(number) => number.as_f64().is_none_or(f64::is_finite),
        Value::Sequence(items) => items.iter().all(|item| plain(item, depth + 1)),
        Value::Mapping(mapping) => mapping.iter().all(|(key, value)| {
            matches!(key, Value::String(key) if key != "<<") && plain(value, depth + 1)
        }),
        Value::Tagged(_) => false,
    }
}
