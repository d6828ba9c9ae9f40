//! Resources: `skill://NAME/SKILL.md` (text/markdown) and each file of a skill as
//! `skill://NAME/PATH` with its MIME type and size, a page at a time; `skill://diagnostics`
//! first. Reading one gives text for text types that are UTF-8, base64 otherwise. Only what a
//! skill's listing holds is served: hidden files and links that leave the folder are not.

use std::path::Path;

use base64::Engine as _;
use rmcp::ErrorData as McpError;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents};
use skillet_skills::{Library, Skill, read_in_skill, skill_files_up_to};

use crate::manifest::MAX_FILES;
use crate::uri::{self, Target};

/// Resources per `resources/list` page.
pub const PAGE: usize = 100;

/// Where a page starts: the skill (in discovery order) and the entry within it (0: its
/// `SKILL.md`, then its files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The skill.
    pub skill: usize,
    /// The entry within it.
    pub entry: usize,
}

impl Position {
    /// The cursor a client sends back.
    pub fn cursor(self) -> String {
        format!("{}:{}", self.skill, self.entry)
    }

    /// A cursor this server gave; `None` for anything else.
    pub fn parse(cursor: &str) -> Option<Self> {
        let (skill, entry) = cursor.split_once(':')?;
        Some(Self {
            skill: skill.parse().ok()?,
            entry: entry.parse().ok()?,
        })
    }
}

/// The resources of one skill: its `SKILL.md`, then its files (none when its name cannot be a
/// URI segment).
fn skill_resources(skill: &Skill) -> Vec<Resource> {
    let Some(skill_md) = uri::skill_md_uri(&skill.name) else {
        return Vec::new();
    };
    let size = std::fs::metadata(&skill.file).map(|m| m.len()).ok();
    let mut main = Resource::new(skill_md, skill.name.clone())
        .with_title(format!("{}/SKILL.md", skill.name))
        .with_description(skill.description.clone())
        .with_mime_type("text/markdown");
    if let Some(size) = size {
        main = main.with_size(size);
    }
    let mut resources = vec![main];
    for relative in skill_files_up_to(skill, MAX_FILES).files {
        // A name that is not UTF-8 was listed lossily: it could not be read back.
        if relative.contains('\u{fffd}') {
            continue;
        }
        let Some(file_uri) = uri::file_uri(&skill.name, &relative) else {
            continue;
        };
        // A file name is the skill author's text: shown escaped, on one line.
        let shown = skillet_skills::escape_invisible(&relative);
        let mut resource = Resource::new(file_uri, format!("{}/{shown}", skill.name))
            .with_mime_type(crate::mime::by_extension(&relative));
        if let Ok(metadata) = std::fs::metadata(skill.dir.join(&relative)) {
            resource = resource.with_size(metadata.len());
        }
        resources.push(resource);
    }
    resources
}

/// The diagnostics resource, listed first.
fn diagnostics_resource() -> Resource {
    Resource::new(uri::DIAGNOSTICS_URI, "diagnostics")
        .with_title("Skills skipped or degraded while loading")
        .with_description(
            "Why skills are missing or degraded: files that are not skills, frontmatter that does not parse, shadowed names, skills the Skills extension cannot carry",
        )
        .with_mime_type("text/plain")
}

/// One page of resources from `start` (`None`: the first page), and where the next starts.
pub fn page(
    library: &Library,
    start: Option<Position>,
) -> Option<(Vec<Resource>, Option<Position>)> {
    let mut listed = Vec::new();
    let mut position = start.unwrap_or(Position { skill: 0, entry: 0 });
    if position.skill > library.skills().len() {
        return None;
    }
    if start.is_none() {
        listed.push(diagnostics_resource());
    }
    let skills = library.skills();
    while position.skill < skills.len() {
        let resources = skill_resources(&skills[position.skill]);
        for resource in resources.into_iter().skip(position.entry) {
            if listed.len() == PAGE {
                return Some((listed, Some(position)));
            }
            listed.push(resource);
            position.entry += 1;
        }
        position = Position {
            skill: position.skill + 1,
            entry: 0,
        };
    }
    Some((listed, None))
}

/// Reads a resource; an unknown URI, a file that is not the skill's or cannot be read is a
/// resource-not-found error naming it.
pub fn read(
    library: &Library,
    resource_uri: &str,
    extra: impl FnOnce() -> Vec<String>,
) -> Result<ReadResourceResult, McpError> {
    let not_found = |why: &str| {
        McpError::resource_not_found(
            format!("{}: {why}", crate::tools::echoed(resource_uri)),
            None,
        )
    };
    let target =
        uri::parse(resource_uri).ok_or_else(|| not_found("not a skill:// URI of this server"))?;
    let (skill, relative) = match &target {
        Target::Diagnostics => {
            let text = crate::diagnostics::text(library, &extra());
            return Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text, resource_uri).with_mime_type("text/plain"),
            ]));
        }
        Target::SkillMd { name } => {
            let skill = library
                .get(name)
                .ok_or_else(|| not_found("no such skill"))?;
            let file = skill
                .file
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            (skill, file)
        }
        Target::File { name, path } => {
            let skill = library
                .get(name)
                .ok_or_else(|| not_found("no such skill"))?;
            uri::refuse_hidden(&skill.dir, path).map_err(|why| not_found(&why))?;
            (skill, path.clone())
        }
    };
    let bytes = read_in_skill(skill, Path::new(&relative))
        .map_err(|error| not_found(&crate::tools::read_error(&error)))?;
    let mime = if matches!(target, Target::SkillMd { .. }) {
        "text/markdown"
    } else {
        crate::mime::by_extension(&relative)
    };
    let contents = match String::from_utf8(bytes) {
        // Text for a client to show or give a model: nothing in it unseen (a skill whose files
        // hold such characters is left out of the Skills extension, whose digests are of the
        // files as written).
        Ok(text) if crate::mime::is_text(mime) => {
            ResourceContents::text(skillet_skills::clean_text(&text).into_owned(), resource_uri)
        }
        Ok(text) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
            resource_uri,
        ),
        // Named as text but not UTF-8: shown as text, cleaned, with U+FFFD for the bad bytes
        // (base64 would carry whatever it hides to the client as it is).
        Err(error) if crate::mime::is_text(mime) => ResourceContents::text(
            skillet_skills::clean_text(&String::from_utf8_lossy(error.as_bytes())).into_owned(),
            resource_uri,
        ),
        Err(error) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(error.as_bytes()),
            resource_uri,
        ),
    };
    Ok(ReadResourceResult::new(vec![contents.with_mime_type(mime)]))
}
