//! Servers' prompts and resources. Prompts become chat commands (`/mcp__SERVER__PROMPT ARGS`),
//! whose messages the user sends as theirs; resources are read by the model with the
//! `read_resource` tool, asked about as a call is. Both are untrusted text, cleaned and capped
//! as tool results are.

use std::sync::Arc;

use rmcp::model::{ClientConfig, PaginatedRequestParams};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use skillet_agent::permission::{ApprovalRequest, ToolKind};
use skillet_agent::tool::{BoxFuture, Tool, ToolContext, ToolError, string_arg};

use crate::catalog::{MAX_DESCRIPTION_CHARS, clean, qualified_name};
use crate::hub::Hub;

/// The most prompts kept from one server.
pub const MAX_PROMPTS_PER_SERVER: usize = 256;
/// The most resources kept from one server (the listing `read_resource` gives).
pub const MAX_RESOURCES_PER_SERVER: usize = 512;
/// The most pages of `prompts/list` or `resources/list` read.
const MAX_PAGES: usize = 5;

/// One prompt of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptDef {
    /// The server.
    pub server: String,
    /// The prompt's own name.
    pub name: String,
    /// Its chat command: `mcp__SERVER__PROMPT`.
    pub qualified: String,
    /// Its description, cleaned.
    pub description: String,
    /// Its arguments: name and whether it is required.
    pub arguments: Vec<(String, bool)>,
}

/// One resource of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDef {
    /// The server.
    pub server: String,
    /// Its URI.
    pub uri: String,
    /// Its name and description, cleaned, on one line.
    pub about: String,
}

/// The prompts and resources of a connected server (none where it offers none, or its listing
/// fails: the tools still work).
pub(crate) async fn list(
    server: &str,
    service: &RunningService<RoleClient, ClientConfig>,
) -> (Vec<PromptDef>, Vec<ResourceDef>) {
    let capabilities = service
        .peer_info()
        .map(|info| info.capabilities.clone())
        .unwrap_or_default();
    let mut prompts = Vec::new();
    if capabilities.prompts.is_some() {
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor
                .take()
                .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
            let Ok(page) = service.list_prompts(params).await else {
                break;
            };
            for prompt in page.prompts {
                let Ok(prompt) = serde_json::to_value(&prompt) else {
                    continue;
                };
                if let Some(def) = prompt_def(server, &prompt) {
                    prompts.push(def);
                }
            }
            match page.next_cursor {
                Some(next) if !next.is_empty() && prompts.len() < MAX_PROMPTS_PER_SERVER => {
                    cursor = Some(next);
                }
                _ => break,
            }
        }
        prompts.truncate(MAX_PROMPTS_PER_SERVER);
    }
    let mut resources = Vec::new();
    if capabilities.resources.is_some() {
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor
                .take()
                .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
            let Ok(page) = service.list_resources(params).await else {
                break;
            };
            for resource in page.resources {
                let Ok(resource) = serde_json::to_value(&resource) else {
                    continue;
                };
                let field = |key: &str| resource.get(key).and_then(Value::as_str).unwrap_or("");
                let about = clean(
                    &format!("{} {}", field("name"), field("description"))
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                    300,
                );
                // Whole (a cut address could not be read), hidden characters shown.
                let uri: String = field("uri").chars().take(2048).collect();
                resources.push(ResourceDef {
                    server: server.to_string(),
                    uri: skillet_skills::escape_invisible(&uri).into_owned(),
                    about,
                });
            }
            match page.next_cursor {
                Some(next) if !next.is_empty() && resources.len() < MAX_RESOURCES_PER_SERVER => {
                    cursor = Some(next);
                }
                _ => break,
            }
        }
        resources.truncate(MAX_RESOURCES_PER_SERVER);
    }
    (prompts, resources)
}

fn prompt_def(server: &str, prompt: &Value) -> Option<PromptDef> {
    let name = prompt.get("name")?.as_str()?;
    if name.is_empty()
        || name.len() > crate::catalog::MAX_SERVER_TOOL_NAME
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
    {
        return None;
    }
    let arguments = prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|argument| {
            let name = argument.get("name")?.as_str()?;
            let plain = !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
            plain.then(|| {
                (
                    name.to_string(),
                    argument.get("required").and_then(Value::as_bool) == Some(true),
                )
            })
        })
        .collect();
    Some(PromptDef {
        server: server.to_string(),
        name: name.to_string(),
        qualified: qualified_name(server, name),
        description: prompt
            .get("description")
            .and_then(Value::as_str)
            .map(|text| clean(text, MAX_DESCRIPTION_CHARS))
            .unwrap_or_default(),
        arguments,
    })
}

/// The text a prompt command sends, from `/mcp__SERVER__PROMPT ARGS` ([`prompt_arguments`]):
/// the prompt's messages, cleaned and capped, one paragraph each.
pub async fn expand(hub: &Hub, command: &str, arguments: &str) -> Result<String, String> {
    let Some(prompt) = hub.prompts().into_iter().find(|p| p.qualified == command) else {
        return Err(format!("no MCP prompt is called {command}"));
    };
    let given = prompt_arguments(&prompt.arguments, arguments);
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|(name, required)| *required && !given.contains_key(name.as_str()))
        .map(|(name, _)| name.as_str())
        .collect();
    if !missing.is_empty() {
        let usage: Vec<String> = prompt
            .arguments
            .iter()
            .map(|(name, required)| {
                if *required {
                    format!("{name}=…")
                } else {
                    format!("[{name}=…]")
                }
            })
            .collect();
        return Err(format!(
            "/{command} needs {}\n  usage: /{command} {}",
            missing.join(", "),
            usage.join(" ")
        ));
    }
    let Some(index) = hub
        .servers()
        .iter()
        .position(|server| server.config.name == prompt.server)
    else {
        return Err("its server is not in this session".to_string());
    };
    let result = hub
        .get_prompt(index, &prompt.name, given)
        .await
        .map_err(|error| error.0)?;
    // Each message labelled with its role: what the server says as the assistant is not the
    // user's word.
    let parts: Vec<String> = result
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|message| {
            let content = message.get("content")?;
            let text = content.get("text").and_then(Value::as_str).map_or_else(
                || {
                    format!(
                        "[a `{}` block left out]",
                        content.get("type").and_then(Value::as_str).unwrap_or("")
                    )
                },
                str::to_string,
            );
            match message.get("role").and_then(Value::as_str) {
                Some("user") => Some(text),
                role => Some(format!(
                    "[{} (from the server's prompt)]: {text}",
                    role.unwrap_or("?")
                )),
            }
        })
        .collect();
    if parts.is_empty() {
        return Err(format!("the prompt {command} gave no messages"));
    }
    Ok(clean(&parts.join("\n\n"), crate::render::MAX_RESULT_CHARS))
}

/// A prompt command's arguments: `NAME=value` pairs where the text names the prompt's
/// arguments so (a value runs to the next pair), else the whole text as its first argument.
pub fn prompt_arguments(declared: &[(String, bool)], text: &str) -> serde_json::Map<String, Value> {
    let mut given = serde_json::Map::new();
    let text = text.trim();
    let starts: Vec<(usize, &str)> = text
        .char_indices()
        .filter(|(at, _)| *at == 0 || text[..*at].ends_with(char::is_whitespace))
        .filter_map(|(at, _)| {
            declared
                .iter()
                .find(|(name, _)| text[at..].starts_with(&format!("{name}=")))
                .map(|(name, _)| (at, name.as_str()))
        })
        .collect();
    if starts.is_empty() {
        if let Some((first, _)) = declared.first()
            && !text.is_empty()
        {
            given.insert(first.clone(), Value::String(text.to_string()));
        }
        return given;
    }
    for (index, (at, name)) in starts.iter().enumerate() {
        let end = starts.get(index + 1).map_or(text.len(), |(next, _)| *next);
        let value = text[at + name.len() + 1..end].trim();
        given.insert((*name).to_string(), Value::String(value.to_string()));
    }
    given
}

/// `read_resource`: a server's resources listed, or one read.
pub(crate) struct ReadResource {
    pub(crate) hub: Arc<Hub>,
}

impl Tool for ReadResource {
    fn name(&self) -> &'static str {
        "read_resource"
    }

    fn description(&self, _context: &ToolContext) -> String {
        "Read a resource (a file, a record, a page) of the user's MCP servers by its URI; \
         without a uri, list the server's resources."
            .to_string()
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The MCP server's name."},
                "uri": {"type": "string", "description": "The resource's URI; leave it out to list them."}
            },
            "required": ["server"]
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn call<'a>(
        &'a self,
        input: &'a Value,
        context: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let server = string_arg(input, "server")?;
            let Some(index) = self
                .hub
                .servers()
                .iter()
                .position(|known| known.config.name == server)
            else {
                return Err(ToolError::new(format!(
                    "no MCP server is called {:?}",
                    crate::connect::short(server)
                )));
            };
            let Some(uri) = input.get("uri").and_then(Value::as_str) else {
                let listed: Vec<String> = self
                    .hub
                    .resources()
                    .into_iter()
                    .filter(|resource| resource.server == server)
                    .map(|resource| format!("{}  {}", resource.uri, resource.about))
                    .collect();
                if listed.is_empty() {
                    return Ok(format!("the MCP server `{server}` lists no resources"));
                }
                // The server's text: wrapped, cleaned and capped as a result is.
                let listing = json!({"content": [{"type": "text", "text": listed.join("\n")}]});
                return Ok(crate::render::render(server, "read_resource", &listing).0);
            };
            // Reading asks as a call does: the server acts on the request.
            let request = ApprovalRequest::new(
                &format!("mcp__{server}__read_resource"),
                ToolKind::Execute,
                format!(
                    "mcp__{server}__read_resource {}",
                    crate::connect::short(uri)
                ),
            );
            let rule_input = json!({"uri": uri});
            if let Some(refusal) = context.gate.refusal(&request.tool, &rule_input) {
                return Err(ToolError::new(refusal));
            }
            context.approve(&request, &rule_input)?;
            let result = self
                .hub
                .read_resource(index, uri)
                .await
                .map_err(|error| ToolError::new(error.0))?;
            let contents: Vec<Value> = result
                .get("contents")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|content| match content.get("text") {
                    Some(text) => json!({"type": "text", "text": text}),
                    None => json!({"type": "resource", "resource": content}),
                })
                .collect();
            let mut contents = contents;
            contents.insert(
                0,
                json!({"type": "text", "text": format!("[resource {uri}]")}),
            );
            let (text, _) =
                crate::render::render(server, "read_resource", &json!({"content": contents}));
            Ok(text)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_arguments_are_pairs_or_the_whole_text_for_the_first() {
        let declared = vec![("topic".to_string(), true), ("tone".to_string(), false)];
        let whole = prompt_arguments(&declared, "the release notes");
        assert_eq!(whole.get("topic"), Some(&json!("the release notes")));
        assert_eq!(whole.len(), 1);
        let pairs = prompt_arguments(&declared, "topic=the notes tone=stern but fair");
        assert_eq!(pairs.get("topic"), Some(&json!("the notes")));
        assert_eq!(pairs.get("tone"), Some(&json!("stern but fair")));
        // `tone=` inside a word is text, not a pair.
        let inside = prompt_arguments(&declared, "undertone=x");
        assert_eq!(inside.get("topic"), Some(&json!("undertone=x")));
        assert!(prompt_arguments(&declared, "  ").is_empty());
    }
}
