//! A server's tools as the model may see them: named `mcp__SERVER__TOOL` within the providers'
//! rules, descriptions cleaned of what hides text and capped, schemas checked. A server's text
//! is untrusted: what would hide something in a schema's names or values leaves the tool out
//! rather than be shown changed.

use serde_json::Value;

/// The longest tool name the providers take (OpenAI's 64; Anthropic's 128).
pub const MAX_TOOL_NAME: usize = 64;
/// The longest name a server may give a tool (the MCP specification's 128).
pub const MAX_SERVER_TOOL_NAME: usize = 128;
/// The most characters of a tool's description kept (Claude Code's cap too).
pub const MAX_DESCRIPTION_CHARS: usize = 2048;
/// The largest input schema kept, as JSON.
pub const MAX_SCHEMA_BYTES: usize = 32 * 1024;
/// The deepest input schema kept.
pub const MAX_SCHEMA_DEPTH: usize = 16;

/// One server tool, ready to offer.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// The server's name.
    pub server: String,
    /// The tool's own name, as the server calls it.
    pub name: String,
    /// The name the model calls it by: `mcp__SERVER__TOOL`.
    pub qualified: String,
    /// Its description, cleaned and capped.
    pub description: String,
    /// Its input schema (an object schema).
    pub schema: Value,
    /// The server marks it read-only (a hint; trusted only where the user's config says so).
    pub read_only: bool,
}

impl ToolDef {
    /// What it would cost to send inline, in tokens (about four bytes each).
    pub fn inline_tokens(&self) -> usize {
        (self.qualified.len() + self.description.len() + self.schema.to_string().len()).div_ceil(4)
    }

    /// The names of its parameters (the schema's top-level properties).
    pub fn parameters(&self) -> Vec<&str> {
        self.schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// The name the model calls `tool` of `server` by: `mcp__SERVER__TOOL`, characters other than
/// letters, digits, `_` and `-` as `_`, and past [`MAX_TOOL_NAME`] cut with a hash of the
/// whole so two long names stay apart.
pub fn qualified_name(server: &str, tool: &str) -> String {
    let safe: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("mcp__{server}__{safe}");
    if name.len() <= MAX_TOOL_NAME {
        return name;
    }
    let hash = tool.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let suffix = format!("_{:08x}", hash & 0xffff_ffff);
    format!("{}{suffix}", &name[..MAX_TOOL_NAME - suffix.len()])
}

/// The tools of `server` from its `tools/list`, in its order; what was left out goes to
/// `problems`, one line each.
pub fn tool_defs(
    server: &str,
    tools: Vec<rmcp::model::Tool>,
    problems: &mut Vec<String>,
) -> Vec<ToolDef> {
    let mut defs: Vec<ToolDef> = Vec::with_capacity(tools.len());
    for tool in tools {
        let shown = crate::connect::short(&tool.name);
        match tool_def(server, &tool) {
            Ok(def) if defs.iter().any(|other| other.qualified == def.qualified) => {
                problems.push(format!(
                    "MCP server `{server}`: the tool `{shown}` is left out: its name reads as another tool's ({})",
                    def.qualified
                ));
            }
            // The name resource reads are asked and ruled by is skillet's, not a tool's.
            Ok(def) if def.qualified == qualified_name(server, "read_resource") => {
                problems.push(format!(
                    "MCP server `{server}`: the tool `{shown}` is left out: its name is the one skillet's read_resource is asked about as"
                ));
            }
            Ok(def) => defs.push(def),
            Err(why) => problems.push(format!(
                "MCP server `{server}`: the tool `{shown}` is left out: {why}"
            )),
        }
    }
    defs
}

fn tool_def(server: &str, tool: &rmcp::model::Tool) -> Result<ToolDef, String> {
    let name = tool.name.to_string();
    if name.is_empty()
        || name.chars().count() > MAX_SERVER_TOOL_NAME
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
    {
        return Err(format!(
            "its name is not 1 to {MAX_SERVER_TOOL_NAME} letters, digits, `_`, `-`, `.` or `/`"
        ));
    }
    let schema = Value::Object((*tool.input_schema).clone());
    check_schema(&schema)?;
    let description = tool
        .description
        .as_deref()
        .map(|text| clean(text, MAX_DESCRIPTION_CHARS))
        .unwrap_or_default();
    let read_only = tool
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.read_only_hint)
        .unwrap_or(false);
    Ok(ToolDef {
        server: server.to_string(),
        qualified: qualified_name(server, &name),
        name,
        description,
        schema: clean_schema(schema),
        read_only,
    })
}

/// Untrusted text as it may reach the model: what hides text shown as escapes, at most `max`
/// characters (cut with `…`).
pub fn clean(text: &str, max: usize) -> String {
    let cleaned = skillet_skills::clean_text(text);
    if cleaned.chars().count() <= max {
        return cleaned.into_owned();
    }
    let mut cut: String = cleaned.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Whether a schema may be offered: an object schema, small and shallow enough, with no
/// property name or value that hides characters (its descriptions are cleaned instead).
fn check_schema(schema: &Value) -> Result<(), String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("its input schema is not `\"type\": \"object\"`".into());
    }
    let size = schema.to_string().len();
    if size > MAX_SCHEMA_BYTES {
        return Err(format!(
            "its input schema is {size} bytes, over the {MAX_SCHEMA_BYTES}-byte limit"
        ));
    }
    check_values(schema, 0, false)
}

fn hides(text: &str) -> bool {
    text.chars().any(|c| skillet_skills::hiding(c).is_some())
}

fn check_values(value: &Value, depth: usize, prose: bool) -> Result<(), String> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(format!(
            "its input schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
    }
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if hides(key) {
                    return Err("a name in its input schema hides characters".into());
                }
                check_values(
                    inner,
                    depth + 1,
                    matches!(key.as_str(), "description" | "title"),
                )?;
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| check_values(item, depth + 1, false)),
        Value::String(text) if !prose && hides(text) => {
            Err("a value in its input schema hides characters".into())
        }
        _ => Ok(()),
    }
}

/// The schema with its descriptions and titles cleaned (and capped).
fn clean_schema(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, inner)| {
                    let inner = match (key.as_str(), inner) {
                        ("description" | "title", Value::String(text)) => {
                            Value::String(clean(&text, MAX_DESCRIPTION_CHARS))
                        }
                        (_, inner) => clean_schema(inner),
                    };
                    (key, inner)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(clean_schema).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str, schema: Value) -> rmcp::model::Tool {
        let Value::Object(schema) = schema else {
            panic!("an object")
        };
        rmcp::model::Tool::new(name.to_string(), description.to_string(), Arc::new(schema))
    }

    #[test]
    fn names_fit_the_providers_and_stay_apart() {
        assert_eq!(
            qualified_name("github", "create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(
            qualified_name("fs", "read.file/v2"),
            "mcp__fs__read_file_v2"
        );
        let long_a = qualified_name("server", &"a".repeat(100));
        let long_b = qualified_name("server", &format!("{}b", "a".repeat(99)));
        assert_eq!(long_a.len(), MAX_TOOL_NAME);
        assert_ne!(long_a, long_b);
        assert!(
            long_a
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
    }

    #[test]
    fn hostile_tools_are_cleaned_or_left_out() {
        let object = json!({"type": "object", "properties": {"q": {"type": "string", "description": "the query\u{200b}"}}});
        let mut problems = Vec::new();
        let defs = tool_defs(
            "s",
            vec![
                tool("search", "Finds\u{202e} things\u{e0041}", object.clone()),
                tool("bad name!", "x", object.clone()),
                tool(
                    "hidden_key",
                    "x",
                    json!({"type": "object", "properties": {"a\u{200b}": {}}}),
                ),
                tool(
                    "hidden_enum",
                    "x",
                    json!({"type": "object", "properties": {"a": {"enum": ["x\u{200d}"]}}}),
                ),
                tool("not_object", "x", json!({"type": "string"})),
                tool(
                    "huge",
                    "x",
                    json!({"type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES)}),
                ),
                tool("search", "twice", object.clone()),
                tool("long", &"d".repeat(5000), object.clone()),
                tool("read_resource", "shadows skillet's own", object),
            ],
            &mut problems,
        );
        let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["search", "long"]);
        assert!(!defs[0].description.contains('\u{202e}'));
        assert!(defs[0].description.contains("\\u{202e}"));
        assert!(!defs[0].schema.to_string().contains('\u{200b}'));
        assert_eq!(defs[1].description.chars().count(), MAX_DESCRIPTION_CHARS);
        assert_eq!(problems.len(), 7, "{problems:?}");
        assert!(problems.iter().all(|p| p.contains("left out")));
    }
}
