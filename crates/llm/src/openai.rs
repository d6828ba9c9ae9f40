//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`), streaming and not. One
//! dialect serves OpenAI, Ollama, vLLM, llama.cpp's server and OpenRouter.

use serde_json::{Value, json};

use crate::error::LlmError;
use crate::transport::{ErrorContext, Transport, excerpt};
use crate::types::{
    ContentBlock, Message, Request, Response, Role, StopReason, StreamEvent, Usage,
};

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
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
        let context = ErrorContext {
            provider: NAME,
            key_env: KEY_ENV,
            model: &self.model,
        };
        let response = self
            .transport
            .post(&url, &headers, &body, context, events)
            .await?;
        if !request.stream {
            let json = self.transport.json(response, NAME).await?;
            return parse_response(&json);
        }
        let mut stream = self.transport.events(response, NAME);
        let mut assembler = StreamAssembler::default();
        while let Some(event) = stream.next().await {
            let event = event?;
            if event.data.trim() == "[DONE]" {
                return assembler.finish();
            }
            assembler.handle(&event.data, events)?;
        }
        // Some servers close without [DONE]; a finish reason means the answer is whole.
        if assembler.finish_reason.is_some() {
            return assembler.finish();
        }
        Err(LlmError::StreamCut {
            provider: NAME,
            message: "the stream ended without a finish reason or [DONE]".into(),
        })
    }
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
        "max_tokens": request.max_tokens,
        "stream": request.stream,
    });
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
            if !text.is_empty() {
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
    let mut content = Vec::new();
    if let Some(text) = message.get("content").and_then(Value::as_str)
        && !text.is_empty()
    {
        content.push(ContentBlock::text(text));
    }
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = call
            .pointer("/function/arguments")
            .and_then(Value::as_str)
            .unwrap_or("{}");
        content.push(ContentBlock::ToolUse {
            id: call
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            name: name.to_string(),
            input: parse_arguments(name, arguments)?,
        });
    }
    Ok(Response {
        message: Message {
            role: Role::Assistant,
            content,
        },
        stop_reason: stop_reason(choice.get("finish_reason").and_then(Value::as_str)),
        usage: usage(json.get("usage")),
    })
}

fn parse_arguments(name: &str, arguments: &str) -> Result<Value, LlmError> {
    if arguments.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(arguments)
        .map_err(|error| protocol(format!("tool '{name}' arguments are not JSON ({error})")))
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

impl StreamAssembler {
    fn handle(
        &mut self,
        data: &str,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), LlmError> {
        let chunk: Value = serde_json::from_str(data)
            .map_err(|error| protocol(format!("bad chunk ({error}): {}", excerpt(data))))?;
        if let Some(error) = chunk.get("error") {
            return Err(LlmError::Provider {
                provider: NAME,
                kind: error
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("error")
                    .to_string(),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            });
        }
        if chunk.get("usage").is_some_and(|usage| !usage.is_null()) {
            self.usage = usage(chunk.get("usage"));
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
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
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|index| usize::try_from(index).ok())
                .unwrap_or(self.calls.len().saturating_sub(1));
            if index >= self.calls.len() {
                self.calls.resize_with(index + 1, PartialCall::default);
            }
            let partial = &mut self.calls[index];
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                partial.id = id.to_string();
            }
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                partial.name.push_str(name);
                events(StreamEvent::ToolUseStart {
                    id: partial.id.clone(),
                    name: partial.name.clone(),
                });
            }
            if let Some(arguments) = call.pointer("/function/arguments").and_then(Value::as_str) {
                partial.arguments.push_str(arguments);
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Response, LlmError> {
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(ContentBlock::Text { text: self.text });
        }
        for (index, call) in self.calls.into_iter().enumerate() {
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            content.push(ContentBlock::ToolUse {
                input: parse_arguments(&call.name, &call.arguments)?,
                id,
                name: call.name,
            });
        }
        Ok(Response {
            message: Message {
                role: Role::Assistant,
                content,
            },
            stop_reason: stop_reason(self.finish_reason.as_deref()),
            usage: self.usage,
        })
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
            assembler.handle(data, &mut sink).unwrap();
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
}
