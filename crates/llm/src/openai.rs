//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`), streaming and not. One
//! dialect serves OpenAI, Ollama, vLLM, llama.cpp's server and OpenRouter.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::answer::Answer;
use crate::error::LlmError;
use crate::exchange::{StreamReader, exchange};
use crate::transport::{ErrorContext, Post, Transport, excerpt};
use crate::types::{
    ContentBlock, Message, Request, Response, Role, StopReason, StreamEvent, Usage,
};

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The prefixes of the names of models that take `max_completion_tokens`.
pub const REASONING_MODEL_PREFIXES: [&str; 4] = ["o1", "o3", "o4", "gpt-5"];
const NAME: &str = "the OpenAI-compatible server";
const KEY_ENV: &str = "OPENAI_API_KEY";

/// A client for one model of an OpenAI-compatible server.
#[derive(Debug, Clone)]
pub struct OpenAi {
    transport: Transport,
    base_url: String,
    api_key: Option<String>,
    model: String,
}

impl OpenAi {
    /// A client; `base_url` up to (not including) `/chat/completions`, e.g.
    /// `http://localhost:11434/v1` for Ollama. Local servers need no key.
    pub fn new(transport: Transport, base_url: &str, api_key: Option<&str>, model: &str) -> Self {
        Self {
            transport,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: api_key.map(str::to_string),
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
        let url = format!("{}/chat/completions", self.base_url);
        let body = request_body(&self.model, request);
        let headers: Vec<(&str, String)> = self
            .api_key
            .iter()
            .map(|key| ("authorization", format!("Bearer {key}")))
            .collect();
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

/// Whether a model takes `max_completion_tokens` instead of `max_tokens`: OpenAI's reasoning
/// models (names starting `o1`, `o3`, `o4`, `gpt-5`) refuse `max_tokens`. Other models, local
/// servers' among them, keep `max_tokens`, which every OpenAI-compatible server reads.
pub fn takes_max_completion_tokens(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    REASONING_MODEL_PREFIXES
        .iter()
        .any(|prefix| model.starts_with(prefix))
}

/// The JSON body of a request.
pub fn request_body(model: &str, request: Request<'_>) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in request.messages {
        push_message(&mut messages, message);
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": request.stream,
    });
    let limit = if takes_max_completion_tokens(model) {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[limit] = json!(request.max_tokens);
    if request.stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                    }
                })
            })
            .collect();
    }
    body
}

/// One of our messages as Chat Completions messages: tool results become `tool` messages,
/// one per call, after any text of the same turn.
fn push_message(out: &mut Vec<Value>, message: &Message) {
    match message.role {
        Role::Assistant => {
            let text = message.text();
            let calls: Vec<Value> = message
                .tool_uses()
                .map(|(id, name, input)| {
                    json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": name, "arguments": input.to_string()},
                    })
                })
                .collect();
            let mut json = json!({"role": "assistant", "content": text});
            if !calls.is_empty() {
                json["tool_calls"] = Value::Array(calls);
            }
            out.push(json);
        }
        Role::User => {
            for block in &message.content {
                if let ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } = block
                {
                    out.push(
                        json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}),
                    );
                }
            }
            let text = message.text();
            let images: Vec<Value> = message
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Image { media_type, data } => Some(json!({
                        "type": "image_url",
                        "image_url": {"url": format!("data:{media_type};base64,{data}")},
                    })),
                    _ => None,
                })
                .collect();
            if !images.is_empty() {
                // With images, the content is a list of parts: the text first, then each.
                let mut parts = Vec::with_capacity(images.len() + 1);
                if !text.is_empty() {
                    parts.push(json!({"type": "text", "text": text}));
                }
                parts.extend(images);
                out.push(json!({"role": "user", "content": parts}));
            } else if !text.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
        }
    }
}

fn protocol(message: String) -> LlmError {
    LlmError::Protocol {
        provider: NAME,
        message,
    }
}

/// Reads a non-streaming answer.
pub fn parse_response(json: &Value) -> Result<Response, LlmError> {
    let choice = json
        .pointer("/choices/0")
        .ok_or_else(|| protocol(format!("no choices in {}", excerpt(&json.to_string()))))?;
    let message = choice.get("message").cloned().unwrap_or_default();
    let mut answer = Answer::default();
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        answer.text(text.to_string());
    }
    for (index, call) in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map_or_else(|| synthetic_id(index), str::to_string);
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match call.pointer("/function/arguments") {
            Some(Value::String(arguments)) => answer.call_from_text(id, name, arguments),
            // Some servers send the arguments as an object.
            arguments => answer.call_from_value(id, name, arguments.cloned()),
        }
    }
    Ok(answer.finish(
        stop_reason(choice.get("finish_reason").and_then(Value::as_str)),
        usage(json.get("usage")),
    ))
}

/// An id for a call the server sent without one (some local servers do), unique across
/// requests and processes so a history never holds it twice.
fn synthetic_id(index: usize) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("call_{nanos:x}{count:x}_{index}")
}

fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        Some("stop") | None => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_string()),
    }
}

/// Chat Completions usage: `prompt_tokens` includes cached tokens, which we count apart.
fn usage(value: Option<&Value>) -> Usage {
    let count = |pointer: &str| {
        value
            .and_then(|usage| usage.pointer(pointer))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let cached = count("/prompt_tokens_details/cached_tokens");
    Usage {
        input_tokens: count("/prompt_tokens").saturating_sub(cached),
        output_tokens: count("/completion_tokens"),
        cache_write_tokens: 0,
        cache_read_tokens: cached,
    }
}

/// The most tool calls read from one streamed answer (a larger `index` is refused, not
/// allocated).
pub const MAX_CALLS_PER_ANSWER: usize = 256;

/// A tool call being streamed, by index.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Builds the answer from `data:` chunks.
#[derive(Debug, Default)]
struct StreamAssembler {
    text: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
}

impl StreamReader for StreamAssembler {
    fn event(
        &mut self,
        _event: &str,
        data: &str,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, LlmError> {
        if data.trim() == "[DONE]" {
            return Ok(true);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|error| protocol(format!("bad chunk ({error}): {}", excerpt(data))))?;
        if let Some(error) = chunk.get("error") {
            return Err(stream_error(error));
        }
        if chunk.get("usage").is_some_and(|usage| !usage.is_null()) {
            self.usage = usage(chunk.get("usage"));
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(false);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(false);
        };
        // Reasoning some servers stream beside the answer (DeepSeek, vLLM and llama.cpp's
        // `reasoning_content`, OpenRouter's `reasoning`): shown, never kept, since those APIs
        // refuse it back in a history.
        if let Some(thinking) = ["reasoning_content", "reasoning"].iter().find_map(|key| {
            delta
                .get(*key)
                .and_then(Value::as_str)
                .filter(|text| !text.is_empty())
        }) {
            events(StreamEvent::ThinkingDelta(thinking.to_string()));
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.text.push_str(text);
            events(StreamEvent::TextDelta(text.to_string()));
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.call_delta(call, events)?;
        }
        Ok(false)
    }

    /// Some servers close without `[DONE]`; a finish reason means the answer is whole.
    fn ended(&self) -> Result<(), LlmError> {
        if self.finish_reason.is_some() {
            return Ok(());
        }
        Err(LlmError::StreamCut {
            provider: NAME,
            message: "the stream ended without a finish reason or [DONE]".into(),
        })
    }

    fn finish(self) -> Result<Response, LlmError> {
        let mut answer = Answer::default();
        answer.text(self.text);
        for (index, call) in self.calls.into_iter().enumerate() {
            if call.name.is_empty() && call.arguments.is_empty() {
                // A gap in the server's numbering, not a call.
                continue;
            }
            if call.name.is_empty() {
                return Err(protocol(format!(
                    "tool call {index} has arguments but no function name"
                )));
            }
            let id = if call.id.is_empty() {
                synthetic_id(index)
            } else {
                call.id
            };
            answer.call_from_text(id, call.name, &call.arguments);
        }
        Ok(answer.finish(stop_reason(self.finish_reason.as_deref()), self.usage))
    }
}

impl StreamAssembler {
    /// A piece of a tool call: its id and name come first (with index), arguments in pieces.
    fn call_delta(
        &mut self,
        call: &Value,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), LlmError> {
        let index = match call.get("index") {
            None | Some(Value::Null) => self.calls.len().saturating_sub(1),
            Some(index) => index
                .as_u64()
                .and_then(|index| usize::try_from(index).ok())
                .filter(|index| *index < MAX_CALLS_PER_ANSWER)
                .ok_or_else(|| {
                    protocol(format!(
                        "a tool call's index is {index}; at most {MAX_CALLS_PER_ANSWER} calls per answer are read"
                    ))
                })?,
        };
        if index >= self.calls.len() {
            self.calls.resize_with(index + 1, PartialCall::default);
        }
        let partial = &mut self.calls[index];
        if let Some(id) = call.get("id").and_then(Value::as_str)
            && !id.is_empty()
        {
            partial.id = id.to_string();
        }
        if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
            if partial.id.is_empty() {
                partial.id = synthetic_id(index);
            }
            partial.name.push_str(name);
            events(StreamEvent::ToolUseStart {
                id: partial.id.clone(),
                name: partial.name.clone(),
            });
        }
        if let Some(arguments) = call.pointer("/function/arguments").and_then(Value::as_str) {
            partial.arguments.push_str(arguments);
        }
        Ok(())
    }
}

/// An error a server sent inside the stream; its kind is its `type`, else its `code`.
fn stream_error(error: &Value) -> LlmError {
    let kind = match (error.get("type"), error.get("code")) {
        (Some(Value::String(kind)), _) | (_, Some(Value::String(kind))) => kind.clone(),
        (_, Some(Value::Number(code))) => code.to_string(),
        _ => "error".to_string(),
    };
    LlmError::Provider {
        provider: NAME,
        kind,
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn tool_results_become_tool_messages() {
        let messages = vec![
            Message::user("hi"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("Let me look."),
                    ContentBlock::ToolUse {
                        id: "c1".into(),
                        name: "read_file".into(),
                        input: json!({"path": "a"}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "c1".into(),
                    content: "text".into(),
                    is_error: false,
                }],
            },
        ];
        let body = request_body(
            "m",
            Request {
                system: "sys",
                messages: &messages,
                tools: &[],
                max_tokens: 10,
                stream: false,
                thinking: None,
            },
        );
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "Let me look.", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "text"},
            ])
        );
        assert_eq!(body.get("stream_options"), None);
    }

    #[test]
    fn streamed_reasoning_is_shown_under_either_key_and_never_kept() {
        let mut assembler = StreamAssembler::default();
        let mut thought = String::new();
        let mut sink = |event: StreamEvent| {
            if let StreamEvent::ThinkingDelta(text) = event {
                thought.push_str(&text);
            }
        };
        for data in [
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"DeepSeek's. "}}]}"#,
            // An empty one beside OpenRouter's key: the other is read.
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"","reasoning":"OpenRouter's."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Answer."},"finish_reason":"stop"}]}"#,
        ] {
            assembler.event("", data, &mut sink).unwrap();
        }
        assert_eq!(thought, "DeepSeek's. OpenRouter's.");
        let response = assembler.finish().unwrap();
        assert_eq!(response.message.content, [ContentBlock::text("Answer.")]);
    }

    #[test]
    fn stream_assembles_incremental_tool_calls_and_usage() {
        let mut assembler = StreamAssembler::default();
        let mut sink = |_: StreamEvent| {};
        for data in [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"On it"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"load_skill","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"name\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"pdf\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":64}}}"#,
        ] {
            assembler.event("", data, &mut sink).unwrap();
        }
        let response = assembler.finish().unwrap();
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.message.text(), "On it");
        assert_eq!(
            response.message.content[1],
            ContentBlock::ToolUse {
                id: "call_a".into(),
                name: "load_skill".into(),
                input: json!({"name": "pdf"})
            }
        );
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 36,
                output_tokens: 7,
                cache_write_tokens: 0,
                cache_read_tokens: 64
            }
        );
    }

    #[test]
    fn reasoning_models_take_max_completion_tokens() {
        for model in ["o1", "o3-mini", "o4-mini-high", "gpt-5", "GPT-5.1-codex"] {
            assert!(takes_max_completion_tokens(model), "{model}");
        }
        for model in ["gpt-4o-mini", "gpt-4.1", "llama3.2", "qwen3:8b", "omni"] {
            assert!(!takes_max_completion_tokens(model), "{model}");
        }
        let messages = [Message::user("hi")];
        let request = Request {
            system: "",
            messages: &messages,
            tools: &[],
            max_tokens: 42,
            stream: false,
            thinking: None,
        };
        let body = request_body("o3", request);
        assert_eq!(
            (body.get("max_tokens"), &body["max_completion_tokens"]),
            (None, &json!(42))
        );
        assert_eq!(request_body("gpt-4o", request)["max_tokens"], 42);
    }

    #[test]
    fn in_stream_errors_are_named_by_type_else_code() {
        let mut assembler = StreamAssembler::default();
        let mut sink = |_: StreamEvent| {};
        for (data, kind) in [
            (
                r#"{"error":{"message":"busy","type":"server_error"}}"#,
                "server_error",
            ),
            (r#"{"error":{"message":"busy","code":503}}"#, "503"),
            (r#"{"error":{"message":"busy"}}"#, "error"),
        ] {
            let error = assembler.event("", data, &mut sink).unwrap_err();
            assert!(
                matches!(&error, LlmError::Provider { kind: found, .. } if found == kind),
                "{error:?}"
            );
        }
    }

    #[test]
    fn calls_without_ids_get_unique_ones() {
        let json = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"type": "function", "function": {"name": "glob", "arguments": "{}"}},
            {"id": "", "type": "function", "function": {"name": "glob", "arguments": "{}"}},
        ]}, "finish_reason": "tool_calls"}]});
        let first = parse_response(&json).unwrap();
        let second = parse_response(&json).unwrap();
        let ids: Vec<&str> = first
            .message
            .tool_uses()
            .chain(second.message.tool_uses())
            .map(|(id, _, _)| id)
            .collect();
        let unique: std::collections::HashSet<&&str> = ids.iter().collect();
        assert_eq!(unique.len(), 4, "{ids:?}");
        assert!(ids.iter().all(|id| id.starts_with("call_")));
    }

    #[test]
    fn a_huge_or_sparse_call_index_is_refused_or_skipped_without_panic() {
        let mut sink = |_: StreamEvent| {};
        for index in ["18446744073709551615", "1099511627776", "256"] {
            let mut assembler = StreamAssembler::default();
            let data = format!(
                r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{index},"id":"c","function":{{"name":"bash","arguments":"{{}}"}}}}]}}}}]}}"#
            );
            let error = assembler.event("", &data, &mut sink).unwrap_err();
            assert!(error.to_string().contains("at most 256 calls"), "{error}");
        }
        let mut assembler = StreamAssembler::default();
        assembler
            .event(
                "",
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":"c2","function":{"name":"bash","arguments":"{}"}}]}}]}"#,
                &mut sink,
            )
            .unwrap();
        let response = assembler.finish().unwrap();
        assert_eq!(response.message.tool_uses().count(), 1);
    }
}
