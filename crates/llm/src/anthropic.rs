//! The Anthropic Messages API (`POST {base}/v1/messages`), streaming and not, with prompt-cache
//! breakpoints on the system prompt and on the latest message.

use serde_json::{Value, json};

use crate::answer::Answer;
use crate::error::LlmError;
use crate::exchange::{StreamReader, exchange};
use crate::transport::{ErrorContext, Post, Transport, excerpt};
use crate::types::{
    ContentBlock, Message, Request, Response, Role, StopReason, StreamEvent, Usage,
};

/// The API version header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const NAME: &str = "Anthropic";
const KEY_ENV: &str = "ANTHROPIC_API_KEY";

/// A client for one model of the Anthropic Messages API.
#[derive(Debug, Clone)]
pub struct Anthropic {
    transport: Transport,
    base_url: String,
    api_key: String,
    model: String,
}

impl Anthropic {
    /// A client; `base_url` without the `/v1/messages` path.
    pub fn new(transport: Transport, base_url: &str, api_key: &str, model: &str) -> Self {
        Self {
            transport,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: api_key.to_string(),
            model: model.to_string(),
        }
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Asks for another model from the next request on (same server, same key).
    pub fn set_model(&mut self, model: &str) {
        model.clone_into(&mut self.model);
    }

    /// Sends one request and returns the whole answer, reporting text as it streams.
    pub async fn send(
        &self,
        request: Request<'_>,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Response, LlmError> {
        let url = format!("{}/v1/messages", self.base_url);
        let body = request_body(&self.model, request);
        let headers = [
            ("x-api-key", self.api_key.clone()),
            ("anthropic-version", ANTHROPIC_VERSION.to_string()),
        ];
        let post = Post {
            url: &url,
            headers: &headers,
            body: &body,
            context: ErrorContext {
                provider: NAME,
                key_env: KEY_ENV,
                model: &self.model,
            },
        };
        exchange::<StreamAssembler>(
            &self.transport,
            &post,
            request.stream,
            parse_response,
            events,
        )
        .await
    }
}

/// The JSON body of a request: the system prompt and the latest message carry
/// `cache_control` breakpoints, so each request reuses the cached prefix of the one before.
///
/// With thinking, `thinking` asks for it with its budget, and `max_tokens` is the answer's
/// limit plus the budget (the API counts thinking within `max_tokens` and wants the budget
/// below it); the history's thinking blocks go back as they came. Without it, they are left
/// out: the API takes thinking blocks only where it asked for them.
pub fn request_body(model: &str, request: Request<'_>) -> Value {
    let last = request.messages.len().saturating_sub(1);
    let thinking = request.thinking.is_some();
    let messages: Vec<Value> = request
        .messages
        .iter()
        .enumerate()
        .map(|(index, message)| message_json(message, index == last, thinking))
        .collect();
    let budget = request.thinking.unwrap_or(0);
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens.saturating_add(budget),
        "messages": messages,
        "stream": request.stream,
    });
    if let Some(budget) = request.thinking {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    if !request.system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": request.system,
            "cache_control": {"type": "ephemeral"},
        }]);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                })
            })
            .collect();
    }
    body
}

fn message_json(message: &Message, cache_breakpoint: bool, thinking: bool) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let mut content: Vec<Value> = message
        .content
        .iter()
        .filter(|block| thinking || !block.is_thinking())
        .map(|block| match block {
            ContentBlock::Text { text } => json!({"type": "text", "text": text}),
            ContentBlock::Thinking {
                thinking,
                signature,
            } => json!({"type": "thinking", "thinking": thinking, "signature": signature}),
            ContentBlock::RedactedThinking { data } => {
                json!({"type": "redacted_thinking", "data": data})
            }
            ContentBlock::Image { media_type, data } => json!({
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data},
            }),
            ContentBlock::ToolUse { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let mut result =
                    json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content});
                if *is_error {
                    result["is_error"] = json!(true);
                }
                result
            }
        })
        .collect();
    // Thinking blocks cannot carry a breakpoint themselves.
    if cache_breakpoint
        && let Some(last) = content.iter_mut().rev().find(|block| {
            !matches!(
                block["type"].as_str(),
                Some("thinking" | "redacted_thinking")
            )
        })
    {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
    json!({"role": role, "content": content})
}

/// Reads a non-streaming answer.
pub fn parse_response(json: &Value) -> Result<Response, LlmError> {
    let blocks = json
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| protocol(format!("no content in {}", excerpt(&json.to_string()))))?;
    let mut answer = Answer::default();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => answer.text(str_field(block, "text")),
            Some("thinking") => {
                answer.thinking(str_field(block, "thinking"), str_field(block, "signature"));
            }
            Some("redacted_thinking") => answer.redacted_thinking(str_field(block, "data")),
            Some("tool_use") => {
                let (id, name) = call_identity(block)?;
                answer.call_from_value(id, name, block.get("input").cloned());
            }
            _ => {}
        }
    }
    Ok(answer.finish(
        stop_reason(json.get("stop_reason").and_then(Value::as_str)),
        usage(json.get("usage")),
    ))
}

/// A `tool_use` block's id and name; a call without an id cannot be answered, so it is an
/// error.
fn call_identity(block: &Value) -> Result<(String, String), LlmError> {
    let name = str_field(block, "name");
    let id = str_field(block, "id");
    if id.is_empty() {
        return Err(protocol(format!(
            "a call of tool '{name}' came without an id"
        )));
    }
    Ok((id, name))
}

fn str_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn protocol(message: String) -> LlmError {
    LlmError::Protocol {
        provider: NAME,
        message,
    }
}

fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        Some("end_turn") | None => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        Some("stop_sequence") => StopReason::StopSequence,
        Some(other) => StopReason::Other(other.to_string()),
    }
}

/// Anthropic's usage object; absent fields count as zero.
fn usage(value: Option<&Value>) -> Usage {
    let count = |key: &str| {
        value
            .and_then(|usage| usage.get(key))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Usage {
        input_tokens: count("input_tokens"),
        output_tokens: count("output_tokens"),
        cache_write_tokens: count("cache_creation_input_tokens"),
        cache_read_tokens: count("cache_read_input_tokens"),
    }
}

/// A content block being streamed.
#[derive(Debug)]
enum Partial {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

/// Builds the answer from `message_start`, `content_block_*`, `message_delta`, `message_stop`.
#[derive(Debug, Default)]
struct StreamAssembler {
    blocks: Vec<Partial>,
    usage: Usage,
    stop_reason: Option<String>,
}

impl StreamReader for StreamAssembler {
    /// Handles one event; true once the message is complete.
    fn event(
        &mut self,
        event: &str,
        data: &str,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, LlmError> {
        if event == "ping" {
            return Ok(false);
        }
        let json: Value = serde_json::from_str(data)
            .map_err(|error| protocol(format!("bad {event} event ({error}): {}", excerpt(data))))?;
        match event {
            "message_start" => {
                self.usage = usage(json.pointer("/message/usage"));
            }
            "content_block_start" => {
                let block = json.get("content_block").cloned().unwrap_or_default();
                let partial = match block.get("type").and_then(Value::as_str) {
                    Some("text") => Partial::Text(str_field(&block, "text")),
                    Some("thinking") => Partial::Thinking {
                        thinking: str_field(&block, "thinking"),
                        signature: str_field(&block, "signature"),
                    },
                    Some("redacted_thinking") => Partial::Redacted(str_field(&block, "data")),
                    Some("tool_use") => {
                        let (id, name) = call_identity(&block)?;
                        events(StreamEvent::ToolUseStart {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Partial::ToolUse {
                            id,
                            name,
                            json: String::new(),
                        }
                    }
                    _ => Partial::Other,
                };
                self.blocks.push(partial);
            }
            "content_block_delta" => {
                let delta = json.get("delta").cloned().unwrap_or_default();
                match (
                    delta.get("type").and_then(Value::as_str),
                    self.blocks.last_mut(),
                ) {
                    (Some("text_delta"), Some(Partial::Text(text))) => {
                        let piece = str_field(&delta, "text");
                        if !piece.is_empty() {
                            text.push_str(&piece);
                            events(StreamEvent::TextDelta(piece));
                        }
                    }
                    (Some("input_json_delta"), Some(Partial::ToolUse { json, .. })) => {
                        json.push_str(&str_field(&delta, "partial_json"));
                    }
                    (Some("thinking_delta"), Some(Partial::Thinking { thinking, .. })) => {
                        let piece = str_field(&delta, "thinking");
                        if !piece.is_empty() {
                            thinking.push_str(&piece);
                            events(StreamEvent::ThinkingDelta(piece));
                        }
                    }
                    (Some("signature_delta"), Some(Partial::Thinking { signature, .. })) => {
                        signature.push_str(&str_field(&delta, "signature"));
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = json.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                let more = usage(json.get("usage"));
                // message_delta carries the final output count (and sometimes input counts).
                self.usage.output_tokens = more.output_tokens.max(self.usage.output_tokens);
                if more.input_tokens > 0 {
                    self.usage.input_tokens = more.input_tokens;
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                return Err(LlmError::Provider {
                    provider: NAME,
                    kind: json
                        .pointer("/error/type")
                        .and_then(Value::as_str)
                        .unwrap_or("error")
                        .to_string(),
                    message: json
                        .pointer("/error/message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                });
            }
            _ => {}
        }
        Ok(false)
    }

    fn ended(&self) -> Result<(), LlmError> {
        Err(LlmError::StreamCut {
            provider: NAME,
            message: "the stream ended without message_stop".into(),
        })
    }

    fn finish(self) -> Result<Response, LlmError> {
        let mut answer = Answer::default();
        for block in self.blocks {
            match block {
                Partial::Text(text) => answer.text(text),
                Partial::Thinking {
                    thinking,
                    signature,
                } => answer.thinking(thinking, signature),
                Partial::Redacted(data) => answer.redacted_thinking(data),
                Partial::ToolUse { id, name, json } => answer.call_from_text(id, name, &json),
                Partial::Other => {}
            }
        }
        Ok(answer.finish(stop_reason(self.stop_reason.as_deref()), self.usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolSpec;
    use pretty_assertions::assert_eq;

    #[test]
    fn body_marks_cache_breakpoints_on_system_and_latest_message() {
        let messages = vec![
            Message::user("first"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "load_skill".into(),
                    input: json!({"name": "pdf"}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "body".into(),
                    is_error: false,
                }],
            },
        ];
        let tools = [ToolSpec {
            name: "load_skill".into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        }];
        let body = request_body(
            "m",
            Request {
                system: "sys",
                messages: &messages,
                tools: &tools,
                max_tokens: 100,
                stream: true,
                thinking: None,
            },
        );
        assert_eq!(
            body["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(body["messages"][0]["content"][0].get("cache_control"), None);
        assert_eq!(
            body["messages"][2]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "t1", "content": "body", "cache_control": {"type": "ephemeral"}})
        );
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    }

    #[test]
    fn stream_assembles_text_and_tool_use() {
        let mut assembler = StreamAssembler::default();
        let mut seen = Vec::new();
        let mut sink = |event: StreamEvent| seen.push(event);
        let events = [
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":90,"cache_creation_input_tokens":5,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ("ping", "{}"),
            (
                "content_block_delta",
                r#"{"index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"index":0,"delta":{"type":"text_delta","text":"lo"}}"#,
            ),
            ("content_block_stop", r#"{"index":0}"#),
            (
                "content_block_start",
                r#"{"index":1,"content_block":{"type":"tool_use","id":"tu1","name":"read_file","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}}"#,
            ),
            (
                "content_block_delta",
                r#"{"index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.md\"}"}}"#,
            ),
            ("content_block_stop", r#"{"index":1}"#),
            (
                "message_delta",
                r#"{"delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}"#,
            ),
        ];
        for (event, data) in events {
            assert!(!assembler.event(event, data, &mut sink).unwrap());
        }
        assert!(assembler.event("message_stop", "{}", &mut sink).unwrap());
        let response = assembler.finish().unwrap();
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 10,
                output_tokens: 20,
                cache_write_tokens: 5,
                cache_read_tokens: 90
            }
        );
        assert_eq!(response.message.text(), "Hello");
        assert_eq!(
            response.message.content[1],
            ContentBlock::ToolUse {
                id: "tu1".into(),
                name: "read_file".into(),
                input: json!({"path": "a.md"})
            }
        );
        assert_eq!(seen[0], StreamEvent::TextDelta("Hel".into()));
    }

    #[test]
    fn error_event_is_an_error() {
        let mut assembler = StreamAssembler::default();
        let error = assembler
            .event(
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                &mut |_| {},
            )
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "Anthropic reported an error (overloaded_error): Overloaded"
        );
    }
}
