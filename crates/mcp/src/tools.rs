//! The tools: `search_skills`, `load_skill`, `read_skill_file`, `list_skills`. All read only;
//! every description under [`MAX_TOOL_DESCRIPTION_CHARS`] (Claude Code cuts longer ones
//! without a word). A bad argument, an unknown skill or a path that leaves a skill is a tool
//! error (`isError`, the text saying what to do), which the model can correct; only an unknown
//! tool is a protocol error.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use skillet_library::source::{Found, Origin};
use skillet_retrieval::Mode;
use skillet_skills::{Invoker, LoadError, Skill, escape_invisible, read_head_in_skill};

use crate::state::{Ranking, Snapshot};

/// The longest tool description (Claude Code cuts at 2,048).
pub const MAX_TOOL_DESCRIPTION_CHARS: usize = 2_000;
/// Results of `search_skills` when the call asks for no number.
pub const DEFAULT_TOP_K: usize = 5;
/// The most results one `search_skills` call returns.
pub const MAX_TOP_K: usize = 25;
/// Skills per `list_skills` page when the call asks for no number.
pub const DEFAULT_PAGE: usize = 50;
/// The most skills one `list_skills` page holds.
pub const MAX_PAGE: usize = 200;
/// The most bytes of a text file `read_skill_file` returns (cut on a character boundary, with a
/// note saying how much there was).
pub const MAX_FILE_TEXT_BYTES: usize = 100 * 1024;
/// While the model-invocable skills' names fit in this many characters, `load_skill`'s `name`
/// is an enum of them (clients can check and complete it); past it the list would crowd the
/// tool list every client hands its model, and the name is a plain string.
pub const MAX_NAME_ENUM_CHARS: usize = 2_000;
/// The most characters of a name a client sent that an error repeats.
const MAX_ECHOED_NAME_CHARS: usize = 128;
/// The most characters of a description in `search_skills` and `list_skills` results.
const MAX_RESULT_DESCRIPTION_CHARS: usize = 400;

/// What the tools say of the skill source, when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceView {
    /// Where it is (no secret in it).
    pub label: String,
    /// How many skills it offers, once known.
    pub count: Option<usize>,
}

/// Every tool, as listed for `snapshot`'s library (and the source, when there is one).
pub fn list(snapshot: &Snapshot, source: Option<&SourceView>) -> Vec<Tool> {
    let count = snapshot.library.model_invocable().count();
    let names: Vec<&str> = snapshot
        .library
        .model_invocable()
        .map(|skill| skill.name.as_str())
        .collect();
    let mut name = json!({"type": "string", "description": if source.is_some() {
        "The skill's name, as search_skills or list_skills gave it (OWNER/NAME@SEQ for a registry skill)"
    } else {
        "The skill's name, as search_skills or list_skills gave it"
    }});
    let enum_chars: usize = names.iter().map(|name| name.chars().count() + 3).sum();
    // A registry skill's reference is no listed name: an enum would forbid it.
    if source.is_none() && !names.is_empty() && enum_chars <= MAX_NAME_ENUM_CHARS {
        name["enum"] = json!(names);
    }
    let shared = source.map_or_else(String::new, |source| {
        let how_many = source
            .count
            .map_or_else(|| "the skills".to_string(), |n| format!("the {n} skills"));
        format!(
            " and {how_many} shared in {} (those marked as in the registry are not installed: \
             load_skill takes their OWNER/NAME@SEQ and gives them as text only, nothing run)",
            source.label
        )
    });
    vec![
        tool(
            ("search_skills", source.is_some()),
            "Search skills",
            &format!(
                "Find the skills for a task among the {count} in this library{shared}, ranked by words and meaning. \
                 Returns each skill's name, description, score and whether it is relevant (clears the \
                 threshold). Then call load_skill with the best name."
            ),
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "What you need done, in plain words"},
                "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "description": "How many results (default 5)"}
            }, "required": ["query"]}),
            Some(json!({"type": "object", "properties": {
                "ranking": {"type": "string", "enum": ["hybrid", "words"], "description": "hybrid: words and meaning; words: by words only (the model is loading or absent)"},
                "note": {"type": "string"},
                "results": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "score": {"type": "number"},
                    "relevant": {"type": "boolean"},
                    "source": {"type": "string", "enum": ["local", "registry"], "description": "local: in this library; registry: shared, not installed here"},
                    "installed_seq": {"type": "integer", "description": "A registry skill's version installed here, when another than this one"}
                }, "required": ["name", "description", "score", "relevant", "source"]}}
            }, "required": ["ranking", "results"]})),
        ),
        tool(
            ("load_skill", source.is_some()),
            "Load a skill",
            "Load a skill's instructions (its SKILL.md body, its folder and the files it has) to follow \
             them. arguments, when given, fill the skill's $ARGUMENTS, $0, $1, … (or are appended).",
            json!({"type": "object", "properties": {
                "name": name,
                "arguments": {"type": "string", "description": "Arguments for the skill, as a user would type them after /name"}
            }, "required": ["name"]}),
            None,
        ),
        tool(
            ("read_skill_file", source.is_some()),
            "Read a skill's file",
            &format!(
                "Read a file of a skill by its path relative to the skill's folder (for example \
                 references/forms.md), as load_skill listed it. Text over {} KiB is cut, with a note; \
                 a binary file is described (type and size), not shown.",
                MAX_FILE_TEXT_BYTES / 1024
            ),
            json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "The skill's name (OWNER/NAME@SEQ for a registry skill)"},
                "path": {"type": "string", "description": "The file's path inside the skill's folder"}
            }, "required": ["name", "path"]}),
            None,
        ),
        tool(
            ("list_skills", false),
            "List skills",
            "List the skills the model may load, with their descriptions and where they come from, \
             a page at a time (offset and limit). search_skills is the better way to find one.",
            json!({"type": "object", "properties": {
                "offset": {"type": "integer", "minimum": 0, "description": "Skills to skip (default 0)"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "description": "Skills per page (default 50)"}
            }}),
            Some(json!({"type": "object", "properties": {
                "total": {"type": "integer"},
                "offset": {"type": "integer"},
                "next_offset": {"type": "integer"},
                "skills": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "source": {"type": "string"},
                    "folder": {"type": "string"}
                }, "required": ["name", "description", "source", "folder"]}},
                "problems": {"type": "integer", "description": "Skills skipped or degraded while loading; read skill://diagnostics"}
            }, "required": ["total", "offset", "skills", "problems"]})),
        ),
    ]
}

/// A tool's definition; `open_world`: it reads what a skill source (the shared registry) holds.
fn tool(
    (name, open_world): (&'static str, bool),
    title: &str,
    description: &str,
    input: Value,
    output: Option<Value>,
) -> Tool {
    let object = |value: Value| -> Arc<JsonObject> {
        match value {
            Value::Object(map) => Arc::new(map),
            _ => Arc::new(JsonObject::new()),
        }
    };
    let mut tool = Tool::new(name, description.to_string(), object(input))
        .with_title(title)
        .with_annotations(
            ToolAnnotations::with_title(title)
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(open_world),
        );
    if let Some(output) = output {
        tool = tool.with_raw_output_schema(object(output));
    }
    tool
}

/// Whether `name` is one of the tools.
pub fn exists(name: &str) -> bool {
    matches!(
        name,
        "search_skills" | "load_skill" | "read_skill_file" | "list_skills"
    )
}

/// Runs a tool (one [`exists`] knows); blocking (ranking embeds the query, files are read).
pub fn call(snapshot: &Snapshot, name: &str, arguments: &JsonObject) -> CallToolResult {
    let result = match name {
        "search_skills" => search(snapshot, arguments),
        "load_skill" => load(snapshot, arguments),
        "read_skill_file" => read_file(snapshot, arguments),
        "list_skills" => list_page(snapshot, arguments),
        other => Err(format!("unknown tool '{}'", echoed(other))),
    };
    match result {
        Ok(result) => result,
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}

fn string<'a>(arguments: &'a JsonObject, key: &str) -> Result<Option<&'a str>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(format!("'{key}' must be a string")),
    }
}

fn required<'a>(arguments: &'a JsonObject, key: &str) -> Result<&'a str, String> {
    string(arguments, key)?.ok_or_else(|| format!("'{key}' is required"))
}

fn count(
    arguments: &JsonObject,
    key: &str,
    min: usize,
    max: usize,
) -> Result<Option<usize>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (min..=max).contains(n))
            .map(Some)
            .ok_or_else(|| format!("'{key}' must be a whole number from {min} to {max}")),
    }
}

/// Text a client sent, safe to repeat: invisible characters shown, cut at
/// [`MAX_ECHOED_NAME_CHARS`].
pub(crate) fn echoed(name: &str) -> String {
    let shown = escape_invisible(name);
    let mut cut: String = shown.chars().take(MAX_ECHOED_NAME_CHARS).collect();
    if shown.chars().count() > MAX_ECHOED_NAME_CHARS {
        cut.push('…');
    }
    cut
}

fn short(text: &str) -> String {
    let mut cut: String = text.chars().take(MAX_RESULT_DESCRIPTION_CHARS).collect();
    if text.chars().count() > MAX_RESULT_DESCRIPTION_CHARS {
        cut.push('…');
    }
    cut
}

/// A search's local half: the library ranked, and what the source half needs.
pub(crate) struct LocalSearch {
    /// The query.
    pub query: String,
    /// How many results were asked for.
    pub k: usize,
    /// The local results, best first (at most `k`).
    pub found: Vec<Found>,
    /// The mode the library was ranked in.
    pub used: Mode,
    /// Why it ranked by words only, if it did.
    pub note: Option<&'static str>,
    /// The query's vector it ranked with (`None` by words).
    pub vector: Option<Vec<f32>>,
}

/// Ranks the library for a `search_skills` call (blocking: embeds the query).
pub(crate) fn search_local(
    snapshot: &Snapshot,
    arguments: &JsonObject,
) -> Result<LocalSearch, String> {
    // Cut at the source: only the first MAX_QUERY_BYTES are read, kept or echoed.
    let query = skillet_library::index::capped_query(required(arguments, "query")?);
    if query.trim().is_empty() {
        return Err("'query' is empty: say what you need done".to_string());
    }
    let k = count(arguments, "top_k", 1, MAX_TOP_K)?.unwrap_or(DEFAULT_TOP_K);
    let mode = match snapshot.ranking {
        Ranking::Hybrid => Mode::Hybrid,
        Ranking::Loading | Ranking::WordsOnly => Mode::Lexical,
    };
    // More than asked: skills the model may not load are left out.
    let ranking = snapshot
        .index
        .rank_keeping_vector(query, mode, k.saturating_mul(2))
        .map_err(|error| format!("the search failed: {error}"))?;
    let (used, ranked, vector) = (ranking.mode, ranking.ranked, ranking.vector);
    let note = match (snapshot.ranking, used) {
        (Ranking::Loading, _) => Some("ranked by words only: the embedding model is still loading"),
        (Ranking::WordsOnly, _) => Some(
            "ranked by words only: the embedding model is not available (see the server's log)",
        ),
        (Ranking::Hybrid, Mode::Hybrid | Mode::Semantic) => None,
        (Ranking::Hybrid, Mode::Lexical) => Some("ranked by words only"),
    };
    let found = ranked
        .iter()
        .filter_map(|hit| {
            let skill = snapshot.library.get(snapshot.index.name(hit.index))?;
            skill.model_invocable().then(|| Found {
                name: skill.name.clone(),
                description: skill.description.clone(),
                score: hit.score,
                relevant: hit.relevant,
                origin: Origin::Local,
            })
        })
        .take(k)
        .collect();
    Ok(LocalSearch {
        query: query.to_string(),
        k,
        found,
        used,
        note,
        vector,
    })
}

/// The result of a `search_skills` call: `found` (the local results, or merged with a
/// source's), and `notes` to add (the source's failure, say).
pub(crate) fn search_result(
    local: &LocalSearch,
    found: &[Found],
    notes: &[String],
) -> CallToolResult {
    let mut results = Vec::new();
    let mut text = String::new();
    for found in found {
        let description = short(&found.description);
        let (origin, installed) = match found.origin {
            Origin::Local => (String::new(), None),
            Origin::Source { installed } => (
                installed.map_or_else(
                    || ", in the registry, not installed".to_string(),
                    |seq| format!(", in the registry, not installed (@{seq} is)"),
                ),
                installed,
            ),
        };
        let _ = writeln!(
            text,
            "{} (score {:.3}{}{origin}): {description}",
            found.name,
            found.score,
            if found.relevant { ", relevant" } else { "" }
        );
        let mut item = json!({
            "name": found.name,
            "description": description,
            "score": found.score,
            "relevant": found.relevant,
            "source": if found.origin == Origin::Local { "local" } else { "registry" },
        });
        if let Some(seq) = installed {
            item["installed_seq"] = json!(seq);
        }
        results.push(item);
    }
    if results.is_empty() {
        text = format!("no skill matches '{}'\n", echoed(&local.query));
    }
    let mut all_notes: Vec<&str> = local.note.into_iter().collect();
    all_notes.extend(notes.iter().map(String::as_str));
    for note in &all_notes {
        let _ = writeln!(text, "({note})");
    }
    let mut structured = json!({
        "ranking": if local.used == Mode::Lexical { "words" } else { "hybrid" },
        "results": results,
    });
    if !all_notes.is_empty() {
        structured["note"] = json!(all_notes.join("; "));
    }
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(text.trim_end().to_string())];
    result
}

fn search(snapshot: &Snapshot, arguments: &JsonObject) -> Result<CallToolResult, String> {
    let local = search_local(snapshot, arguments)?;
    Ok(search_result(&local, &local.found, &[]))
}

fn load(snapshot: &Snapshot, arguments: &JsonObject) -> Result<CallToolResult, String> {
    let name = required(arguments, "name")?;
    let skill_arguments = string(arguments, "arguments")?;
    // Without arguments, Layer 2 exactly as `skillet skills show` prints it.
    let text = snapshot
        .library
        .load_with(name, Invoker::Model, skill_arguments)
        .map_err(|error| load_error(&error, name))?;
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// What the model is told when a skill will not load: the close names only, never the whole
/// library.
fn load_error(error: &LoadError, name: &str) -> String {
    match error {
        LoadError::Unknown { suggestions, .. } if suggestions.is_empty() => format!(
            "unknown skill '{}'; search_skills finds skills by what they do",
            echoed(name)
        ),
        LoadError::Unknown { suggestions, .. } => {
            let close: Vec<String> = suggestions.iter().map(|s| format!("'{s}'")).collect();
            format!(
                "unknown skill '{}'; did you mean {}?",
                echoed(name),
                close.join(" or ")
            )
        }
        other => other.to_string(),
    }
}

/// A skill the model may load, by name; an error naming the close names otherwise.
fn model_skill<'a>(snapshot: &'a Snapshot, name: &str) -> Result<&'a Skill, String> {
    match snapshot.library.get(name) {
        Some(skill) if skill.model_invocable() => Ok(skill),
        Some(_) => Err(LoadError::UserOnly { name: echoed(name) }.to_string()),
        None => Err(snapshot
            .library
            .load(name, Invoker::Model)
            .err()
            .map_or_else(String::new, |error| load_error(&error, name))),
    }
}

fn read_file(snapshot: &Snapshot, arguments: &JsonObject) -> Result<CallToolResult, String> {
    let name = required(arguments, "name")?;
    let path = required(arguments, "path")?;
    let skill = model_skill(snapshot, name)?;
    crate::uri::refuse_hidden(&skill.dir, path)
        .map_err(|why| format!("cannot read '{}': {why}", echoed(path)))?;
    // Only the start is read: a large file is cut, whatever its size.
    let (head, size) = read_head_in_skill(skill, Path::new(path), MAX_FILE_TEXT_BYTES as u64 + 4)
        .map_err(|error| {
        format!(
            "cannot read '{}' in skill '{}': {}",
            echoed(path),
            skill.name,
            read_error(&error)
        )
    })?;
    Ok(CallToolResult::success(vec![ContentBlock::text(
        file_text(path, &head, size),
    )]))
}

/// Why a file of a skill cannot be read, without the absolute folder or the raw path.
pub(crate) fn read_error(error: &skillet_skills::Error) -> String {
    match error {
        skillet_skills::Error::OutsideSkill { .. } => {
            "the path leaves the skill's folder".to_string()
        }
        skillet_skills::Error::CommandHasNoFiles { .. } => {
            "a command is one file, with no files of its own".to_string()
        }
        skillet_skills::Error::Io { source, .. }
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            "no such file".to_string()
        }
        skillet_skills::Error::NotRegular { kind, .. } => format!("{kind}, not a regular file"),
        skillet_skills::Error::FileTooLarge { size, limit, .. } => {
            format!("it is {size} bytes, over the {limit}-byte limit")
        }
        _ => "it cannot be read".to_string(),
    }
}

/// A file as the model is given it, from its first bytes (`head`) and its `size`: text, cut at
/// [`MAX_FILE_TEXT_BYTES`] with a note; a binary file described instead (by its first bytes).
pub fn file_text(path: &str, head: &[u8], size: u64) -> String {
    let cut = size > head.len() as u64 || head.len() > MAX_FILE_TEXT_BYTES;
    let text_part = &head[..head.len().min(MAX_FILE_TEXT_BYTES)];
    // A cut may split a character at the end: only the last few bytes may be incomplete.
    let valid = match std::str::from_utf8(text_part) {
        Ok(text) => Some(text),
        Err(error)
            if cut && text_part.len() - error.valid_up_to() < 4 && error.error_len().is_none() =>
        {
            std::str::from_utf8(&text_part[..error.valid_up_to()]).ok()
        }
        Err(_) => None,
    };
    match valid {
        Some(text) if !text.contains('\0') => {
            // The skill's text, for a model: nothing in it unseen.
            let text = skillet_skills::clean_text(text);
            if cut {
                format!(
                    "{text}\n[cut: the first {} KiB of {size} bytes]",
                    MAX_FILE_TEXT_BYTES / 1024
                )
            } else {
                text.into_owned()
            }
        }
        _ => format!(
            "binary file ({}, {size} bytes); not shown",
            crate::mime::describe(path, head)
        ),
    }
}

fn list_page(snapshot: &Snapshot, arguments: &JsonObject) -> Result<CallToolResult, String> {
    let offset = count(arguments, "offset", 0, usize::MAX)?.unwrap_or(0);
    let limit = count(arguments, "limit", 1, MAX_PAGE)?.unwrap_or(DEFAULT_PAGE);
    let skills: Vec<&Skill> = snapshot.library.model_invocable().collect();
    let total = skills.len();
    let page: Vec<&Skill> = skills.iter().skip(offset).take(limit).copied().collect();
    let problems = crate::diagnostics::count(&snapshot.library);
    let mut text = String::new();
    let mut items = Vec::new();
    for skill in &page {
        let description = short(&skill.description);
        let _ = writeln!(
            text,
            "{} [{}]: {description}",
            skill.name,
            skill.root_kind.as_str()
        );
        items.push(json!({
            "name": skill.name,
            "description": description,
            "source": skill.root_kind.as_str(),
            "folder": escape_invisible(&skill.dir.display().to_string()),
        }));
    }
    let next = offset.saturating_add(page.len());
    let _ = write!(
        text,
        "({} of {total} skills from {})",
        page.len(),
        offset.min(total)
    );
    if next < total {
        let _ = write!(text, "; next page: offset {next}");
    }
    text.push('\n');
    if problems > 0 {
        let _ = writeln!(
            text,
            "{problems} problems while loading skills (skills skipped, degraded or shadowed): the resource {} says which and why",
            crate::uri::DIAGNOSTICS_URI
        );
    }
    let mut structured = json!({
        "total": total,
        "offset": offset,
        "skills": items,
        "problems": problems,
    });
    if next < total {
        structured["next_offset"] = json!(next);
    }
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(text.trim_end().to_string())];
    Ok(result)
}
