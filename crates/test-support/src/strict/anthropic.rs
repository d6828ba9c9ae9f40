//! The Anthropic Messages API's request rules, worded as the API words them:
//!
//! - `model`, `max_tokens` (an integer ≥ 1) and `messages` (a non-empty list) are required;
//! - the first message is the user's (the first-party API has relaxed this at times; Bedrock and
//!   Vertex keep it, so the double keeps it);
//! - every message has content, except an optional final assistant message;
//! - text blocks are not empty and not only whitespace (in `system` too);
//! - a `tool_use` block (only in assistant messages) has an id matching `^[a-zA-Z0-9_-]+$`, an
//!   object as `input`, and an id no other `tool_use` of the request has;
//! - each `tool_use` id of an assistant message is answered by a `tool_result` block at the start
//!   of the very next message (results come before any other block);
//! - each `tool_result` (only in user messages) answers a `tool_use` of the previous message,
//!   once;
//! - tool names match `^[a-zA-Z0-9_-]{1,64}$` and are unique; each tool has an `input_schema`;
//! - at most 4 blocks carry `cache_control`;
//! - extended thinking's rules ([`super::thinking`]).
//!
//! Wording not seen from the real API (marked "wording assumed"): tool blocks in the wrong role.

use std::collections::HashSet;

use serde_json::Value;

use super::{Rejection, is_identifier, reject};

/// The most blocks that may carry `cache_control`.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;
/// The longest tool name.
pub const MAX_TOOL_NAME: usize = 64;

/// Checks a `/v1/messages` request body.
pub fn check(body: &Value) -> Result<(), Rejection> {
    required(body)?;
    super::thinking::check_parameter(body)?;
    system(body.get("system"))?;
    tools(body.get("tools"))?;
    cache_breakpoints(body)?;
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return reject(Rejection::new("messages: Input should be a valid list"));
    };
    if messages.is_empty() {
        return reject(Rejection::new("messages: at least one message is required"));
    }
    let mut ids = HashSet::new();
    for (index, message) in messages.iter().enumerate() {
        check_message(messages, index, message, &mut ids)?;
    }
    super::thinking::check_turn_starts_with_thinking(body, messages)
}

fn required(body: &Value) -> Result<(), Rejection> {
    for field in ["model", "max_tokens", "messages"] {
        if body.get(field).is_none_or(Value::is_null) {
            return reject(Rejection::new(format!("{field}: Field required")));
        }
    }
    match body["max_tokens"].as_i64() {
        None => reject(Rejection::new(
            "max_tokens: Input should be a valid integer",
        )),
        Some(tokens) if tokens < 1 => reject(Rejection::new(
            "max_tokens: Input should be greater than or equal to 1",
        )),
        Some(_) => Ok(()),
    }
}

fn system(system: Option<&Value>) -> Result<(), Rejection> {
    let blocks = match system {
        None | Some(Value::String(_)) => return Ok(()),
        Some(Value::Array(blocks)) => blocks,
        Some(_) => return reject(Rejection::new("system: Input should be a valid list")),
    };
    for block in blocks {
        if let Some(text) = block.get("text").and_then(Value::as_str) {
            blank_text(text, "system")?;
        }
    }
    Ok(())
}

fn tools(tools: Option<&Value>) -> Result<(), Rejection> {
    let Some(tools) = tools.and_then(Value::as_array) else {
        return Ok(());
    };
    let mut names = HashSet::new();
    for (index, tool) in tools.iter().enumerate() {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        if !is_identifier(name, MAX_TOOL_NAME) {
            return reject(Rejection::new(format!(
                "tools.{index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,{MAX_TOOL_NAME}}}$'"
            )));
        }
        if tool.get("input_schema").is_none() {
            return reject(Rejection::new(format!(
                "tools.{index}.custom.input_schema: Field required"
            )));
        }
        if !names.insert(name) {
            return reject(Rejection::new("tools: Tool names must be unique."));
        }
    }
    Ok(())
}

fn cache_breakpoints(body: &Value) -> Result<(), Rejection> {
    let marked = |blocks: Option<&Value>| {
        blocks.and_then(Value::as_array).map_or(0, |blocks| {
            blocks
                .iter()
                .filter(|block| block.get("cache_control").is_some())
                .count()
        })
    };
    let in_messages: usize = body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|message| marked(message.get("content")))
        .sum();
    let found = marked(body.get("system")) + marked(body.get("tools")) + in_messages;
    if found > MAX_CACHE_BREAKPOINTS {
        return reject(Rejection::new(format!(
            "A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
        )));
    }
    Ok(())
}

fn check_message(
    messages: &[Value],
    index: usize,
    message: &Value,
    ids: &mut HashSet<String>,
) -> Result<(), Rejection> {
    let role = message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if role != "user" && role != "assistant" {
        return reject(Rejection::new(format!(
            "messages.{index}.role: Input should be 'user' or 'assistant'"
        )));
    }
    if index == 0 && role != "user" {
        return reject(Rejection::new(
            "messages: first message must use the \"user\" role",
        ));
    }
    let blocks = blocks(message);
    let final_assistant = role == "assistant" && index + 1 == messages.len();
    if blocks.is_empty() && !final_assistant {
        return reject(Rejection::new(format!(
            "messages.{index}: all messages must have non-empty content except for the optional final assistant message"
        )));
    }
    for (position, block) in blocks.iter().enumerate() {
        check_block(index, position, role, block, ids)?;
    }
    if role == "user" {
        results_answer_previous(index, &blocks, index.checked_sub(1).map(|i| &messages[i]))?;
    } else {
        calls_answered_next(index, &blocks, messages.get(index + 1))?;
    }
    Ok(())
}

/// A message's blocks; string content is one text block.
pub(super) fn blocks(message: &Value) -> Vec<Value> {
    match message.get("content") {
        Some(Value::String(text)) if text.is_empty() => Vec::new(),
        Some(Value::String(text)) => vec![serde_json::json!({"type": "text", "text": text})],
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    }
}

fn block_type(block: &Value) -> &str {
    block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn check_block(
    index: usize,
    position: usize,
    role: &str,
    block: &Value,
    ids: &mut HashSet<String>,
) -> Result<(), Rejection> {
    match block_type(block) {
        "text" => blank_text(
            block
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            "messages",
        ),
        "tool_use" => check_tool_use(index, position, role, block, ids),
        "tool_result" => check_tool_result(index, position, role, block),
        "image" => check_image(index, position, role, block),
        "thinking" | "redacted_thinking" => {
            super::thinking::check_block(index, position, role, block)
        }
        _ => Ok(()),
    }
}

/// An inline image: in a user message, base64 of one of the four types, whose bytes are what
/// the type says.
fn check_image(index: usize, position: usize, role: &str, block: &Value) -> Result<(), Rejection> {
    use base64::Engine as _;
    let at = format!("messages.{index}.content.{position}.image");
    if role != "user" {
        // Wording assumed.
        return reject(Rejection::new(format!(
            "{at}: image content blocks can only be in `user` messages"
        )));
    }
    let source = block.get("source").cloned().unwrap_or_default();
    if source.get("type").and_then(Value::as_str) != Some("base64") {
        return reject(Rejection::new(format!(
            "{at}.source: Input tag does not match any of the expected tags: 'base64', 'url', 'file'"
        )));
    }
    let media_type = source
        .get("media_type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !["image/jpeg", "image/png", "image/gif", "image/webp"].contains(&media_type) {
        return reject(Rejection::new(format!(
            "{at}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
        )));
    }
    let data = source
        .get("data")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
        return reject(Rejection::new(format!(
            "{at}.source.base64.data: The image data is not valid base64"
        )));
    };
    if data.len() > 5 * 1024 * 1024 {
        return reject(Rejection::new(format!(
            "{at}.source.base64: image exceeds 5 MB maximum: {} bytes > 5242880 bytes",
            data.len()
        )));
    }
    let signature = match media_type {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => bytes.starts_with(b"GIF8"),
        _ => bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP",
    };
    if !signature {
        return reject(Rejection::new(format!(
            "{at}.source.base64.data: Image does not match the provided media type {media_type}"
        )));
    }
    Ok(())
}

fn blank_text(text: &str, field: &str) -> Result<(), Rejection> {
    if text.is_empty() {
        return reject(Rejection::new(format!(
            "{field}: text content blocks must be non-empty"
        )));
    }
    if text.trim().is_empty() {
        return reject(Rejection::new(format!(
            "{field}: text content blocks must contain non-whitespace text"
        )));
    }
    Ok(())
}

fn check_tool_use(
    index: usize,
    position: usize,
    role: &str,
    block: &Value,
    ids: &mut HashSet<String>,
) -> Result<(), Rejection> {
    if role != "assistant" {
        // Wording assumed.
        return reject(Rejection::new(format!(
            "messages.{index}.content.{position}: `tool_use` blocks can only be in `assistant` messages"
        )));
    }
    let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
    if !is_identifier(id, usize::MAX) {
        return reject(Rejection::new(format!(
            "messages.{index}.content.{position}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
        )));
    }
    if !block.get("input").is_some_and(Value::is_object) {
        return reject(Rejection::new(format!(
            "messages.{index}.content.{position}.tool_use.input: Input should be a valid dictionary"
        )));
    }
    if !ids.insert(id.to_string()) {
        return reject(Rejection::new(format!(
            "messages.{index}.content.{position}: `tool_use` ids must be unique"
        )));
    }
    Ok(())
}

fn check_tool_result(
    index: usize,
    position: usize,
    role: &str,
    block: &Value,
) -> Result<(), Rejection> {
    if role != "user" {
        // Wording assumed.
        return reject(Rejection::new(format!(
            "messages.{index}.content.{position}: `tool_result` blocks can only be in `user` messages"
        )));
    }
    if let Some(Value::Array(inner)) = block.get("content") {
        for part in inner.iter().filter(|part| block_type(part) == "text") {
            blank_text(
                part.get("text").and_then(Value::as_str).unwrap_or_default(),
                "messages",
            )?;
        }
    }
    Ok(())
}

fn tool_use_ids(blocks: &[Value]) -> Vec<&str> {
    blocks
        .iter()
        .filter(|block| block_type(block) == "tool_use")
        .filter_map(|block| block.get("id").and_then(Value::as_str))
        .collect()
}

fn result_id(block: &Value) -> Option<&str> {
    (block_type(block) == "tool_result")
        .then(|| block.get("tool_use_id").and_then(Value::as_str))
        .flatten()
}

/// Every `tool_use` of assistant message `index` is answered at the start of the next message.
fn calls_answered_next(
    index: usize,
    blocks: &[Value],
    next: Option<&Value>,
) -> Result<(), Rejection> {
    let calls = tool_use_ids(blocks);
    if calls.is_empty() {
        return Ok(());
    }
    let next_blocks = next
        .filter(|message| message.get("role").and_then(Value::as_str) == Some("user"))
        .map(self::blocks)
        .unwrap_or_default();
    let leading: HashSet<&str> = next_blocks.iter().map_while(result_id).collect();
    let missing: Vec<&str> = calls
        .into_iter()
        .filter(|id| !leading.contains(id))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    reject(Rejection::new(format!(
        "messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        missing.join(", ")
    )))
}

/// Every `tool_result` of user message `index` answers a `tool_use` of the previous message,
/// once.
fn results_answer_previous(
    index: usize,
    blocks: &[Value],
    previous: Option<&Value>,
) -> Result<(), Rejection> {
    let previous_blocks = previous
        .filter(|message| message.get("role").and_then(Value::as_str) == Some("assistant"))
        .map(self::blocks)
        .unwrap_or_default();
    let calls = tool_use_ids(&previous_blocks);
    let mut answered = HashSet::new();
    for (position, block) in blocks.iter().enumerate() {
        if block_type(block) != "tool_result" {
            continue;
        }
        let id = result_id(block).unwrap_or_default();
        if !calls.contains(&id) {
            return reject(Rejection::new(format!(
                "messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            )));
        }
        if !answered.insert(id) {
            return reject(Rejection::new(format!(
                "messages.{index}.content.{position}: each tool_use must have a single result. Found multiple `tool_result` blocks with id: {id}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(messages: &Value) -> Value {
        json!({"model": "claude-test", "max_tokens": 100, "messages": messages})
    }

    fn message_of(messages: &Value) -> String {
        check(&body(messages)).unwrap_err().message
    }

    fn call(id: &str) -> Value {
        json!({"type": "tool_use", "id": id, "name": "read_file", "input": {"path": "a"}})
    }

    fn result(id: &str) -> Value {
        json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
    }

    fn text(text: &str) -> Value {
        json!({"type": "text", "text": text})
    }

    #[test]
    fn accepts_a_history_with_parallel_calls_text_and_cache_marks() {
        let messages = json!([
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": [text("Looking."), call("toolu_1"), call("toolu_2")]},
            {"role": "user", "content": [result("toolu_2"), result("toolu_1"), text("and go on")]},
            {"role": "assistant", "content": [call("toolu_3")]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_3", "content": "x", "is_error": true,
                 "cache_control": {"type": "ephemeral"}}
            ]},
        ]);
        let mut request = body(&messages);
        request["system"] =
            json!([{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]);
        request["tools"] = json!([{"name": "read_file", "input_schema": {"type": "object"}}]);
        assert_eq!(check(&request), Ok(()));
        let prefill =
            json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": []}]);
        assert_eq!(
            check(&body(&prefill)),
            Ok(()),
            "an empty final assistant message"
        );
    }

    #[test]
    fn rejects_a_call_without_a_result_in_the_next_message() {
        let messages = json!([
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": [call("toolu_1"), call("toolu_2")]},
            {"role": "user", "content": [result("toolu_1")]},
        ]);
        assert_eq!(
            message_of(&messages),
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        );
        let unanswered_at_end = json!([
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": [call("toolu_1")]},
        ]);
        assert!(message_of(&unanswered_at_end).starts_with("messages.1: `tool_use` ids"));
        let text_first = json!([
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": [call("toolu_1")]},
            {"role": "user", "content": [text("first"), result("toolu_1")]},
        ]);
        assert!(
            message_of(&text_first).ends_with("immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."),
            "results must lead the message"
        );
    }

    #[test]
    fn rejects_a_result_that_answers_no_call_of_the_previous_message() {
        let messages = json!([
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": [call("toolu_1")]},
            {"role": "user", "content": [result("toolu_1"), result("toolu_9")]},
        ]);
        assert_eq!(
            message_of(&messages),
            "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
        );
        let first = json!([{"role": "user", "content": [result("toolu_1")]}]);
        assert!(message_of(&first).starts_with("messages.0.content.0: unexpected `tool_use_id`"));
        let twice = json!([
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": [call("toolu_1")]},
            {"role": "user", "content": [result("toolu_1"), result("toolu_1")]},
        ]);
        assert!(
            message_of(&twice).contains("Found multiple `tool_result` blocks with id: toolu_1")
        );
    }

    #[test]
    fn rejects_empty_and_blank_text_and_empty_messages() {
        let empty = json!([{"role": "user", "content": [text("")]}]);
        assert_eq!(
            message_of(&empty),
            "messages: text content blocks must be non-empty"
        );
        let blank = json!([{"role": "user", "content": [text("hi")]}, {"role": "assistant", "content": [text("\n\n")]}]);
        assert_eq!(
            message_of(&blank),
            "messages: text content blocks must contain non-whitespace text"
        );
        let no_content = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": []},
            {"role": "user", "content": "more"},
        ]);
        assert_eq!(
            message_of(&no_content),
            "messages.1: all messages must have non-empty content except for the optional final assistant message"
        );
        let mut request = body(&json!([{"role": "user", "content": "hi"}]));
        request["system"] = json!([{"type": "text", "text": ""}]);
        assert_eq!(
            check(&request).unwrap_err().message,
            "system: text content blocks must be non-empty"
        );
    }

    #[test]
    fn rejects_bad_roles_ids_inputs_and_duplicates() {
        let assistant_first = json!([{"role": "assistant", "content": "hi"}]);
        assert_eq!(
            message_of(&assistant_first),
            "messages: first message must use the \"user\" role"
        );
        let not_object = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "x", "input": "{\"a\":"}]},
            {"role": "user", "content": [result("toolu_1")]},
        ]);
        assert_eq!(
            message_of(&not_object),
            "messages.1.content.0.tool_use.input: Input should be a valid dictionary"
        );
        let empty_id = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [call("")]},
            {"role": "user", "content": [result("")]},
        ]);
        assert_eq!(
            message_of(&empty_id),
            "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
        );
        let duplicate = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [call("toolu_1")]},
            {"role": "user", "content": [result("toolu_1")]},
            {"role": "assistant", "content": [call("toolu_1")]},
            {"role": "user", "content": [result("toolu_1")]},
        ]);
        assert_eq!(
            message_of(&duplicate),
            "messages.3.content.0: `tool_use` ids must be unique"
        );
    }

    #[test]
    fn rejects_missing_fields_bad_tools_and_too_many_cache_marks() {
        let mut request = body(&json!([{"role": "user", "content": "hi"}]));
        request.as_object_mut().unwrap().remove("max_tokens");
        assert_eq!(
            check(&request).unwrap_err().message,
            "max_tokens: Field required"
        );
        let mut request = body(&json!([]));
        assert_eq!(
            check(&request).unwrap_err().message,
            "messages: at least one message is required"
        );
        request["messages"] = json!([{"role": "user", "content": "hi"}]);
        request["tools"] = json!([
            {"name": "a", "input_schema": {}}, {"name": "a", "input_schema": {}}
        ]);
        assert_eq!(
            check(&request).unwrap_err().message,
            "tools: Tool names must be unique."
        );
        request["tools"] = json!([{"name": "bad name", "input_schema": {}}]);
        assert!(
            check(&request)
                .unwrap_err()
                .message
                .starts_with("tools.0.custom.name")
        );
        let marked = json!({"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}});
        request["tools"] = json!([]);
        request["messages"] =
            json!([{"role": "user", "content": [marked, marked, marked, marked, marked]}]);
        assert_eq!(
            check(&request).unwrap_err().message,
            "A maximum of 4 blocks with cache_control may be provided. Found 5."
        );
    }
}
