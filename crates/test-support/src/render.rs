//! A [`Turn`] in each dialect: server-sent events or whole JSON, and the error bodies and
//! in-stream error events each API sends.

use serde_json::{Value, json};

use crate::Turn;
use crate::strict::Dialect;
use crate::strict::thinking::{REDACTED_DATA, signature};

/// One tool call as sent: its arguments as the JSON text the model wrote (maybe cut off).
struct Call<'a> {
    id: &'a str,
    name: &'a str,
    arguments: String,
    /// False when the text is not JSON (the call was cut off).
    whole: bool,
}

/// The turn's calls in order: the whole ones, then the cut one.
fn calls(turn: &Turn) -> Vec<Call<'_>> {
    let mut calls: Vec<Call<'_>> = turn
        .tool_calls
        .iter()
        .map(|(id, name, input)| Call {
            id,
            name,
            arguments: input.to_string(),
            whole: true,
        })
        .collect();
    if let Some((id, name, partial)) = &turn.cut_call {
        calls.push(Call {
            id,
            name,
            arguments: partial.clone(),
            whole: false,
        });
    }
    calls
}

/// The SSE frames of a turn in either dialect.
pub fn sse_events(turn: &Turn, anthropic: bool) -> Vec<String> {
    if anthropic {
        anthropic_sse(turn)
    } else {
        openai_sse(turn)
    }
}

/// The whole JSON answer of a turn.
pub(crate) fn json_answer(turn: &Turn, dialect: Dialect) -> Value {
    match dialect {
        Dialect::Anthropic => anthropic_json(turn),
        Dialect::OpenAi => openai_json(turn),
    }
}

fn frame(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// Splits text in two, to exercise deltas; empty text gives no pieces (the APIs send no delta
/// for an empty block).
fn halves(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let middle = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(text.len(), |(i, _)| i);
    vec![text[..middle].to_string(), text[middle..].to_string()]
}

fn anthropic_sse(turn: &Turn) -> Vec<String> {
    let mut events = vec![frame(
        "message_start",
        &json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message", "role": "assistant", "content": [], "usage": {
            "input_tokens": turn.usage.input, "output_tokens": 1,
            "cache_read_input_tokens": turn.usage.cache_read, "cache_creation_input_tokens": turn.usage.cache_write}}}),
    )];
    events.push(frame("ping", &json!({"type": "ping"})));
    // Each block: its start, its content in two deltas, its stop.
    let mut blocks: Vec<(Value, Value, &str, String)> = Vec::new();
    if let Some(thinking) = &turn.thinking {
        blocks.push((
            json!({"type": "thinking", "thinking": ""}),
            json!({"type": "thinking_delta"}),
            "thinking",
            thinking.clone(),
        ));
    }
    if turn.redacted_thinking {
        blocks.push((
            json!({"type": "redacted_thinking", "data": REDACTED_DATA}),
            Value::Null,
            "",
            String::new(),
        ));
    }
    if let Some(text) = &turn.text {
        blocks.push((
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta"}),
            "text",
            text.clone(),
        ));
    }
    for call in calls(turn) {
        blocks.push((
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
            json!({"type": "input_json_delta"}),
            "partial_json",
            call.arguments,
        ));
    }
    for (index, (start, delta, field, content)) in blocks.into_iter().enumerate() {
        events.push(frame(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for piece in halves(&content) {
            let mut delta = delta.clone();
            delta[field] = json!(piece);
            events.push(frame(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        if field == "thinking" {
            // The signature comes last, in a delta of its own.
            events.push(frame(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "signature_delta", "signature": signature(&content)}}),
            ));
        }
        events.push(frame(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(frame("message_delta", &json!({"type": "message_delta", "delta": {"stop_reason": turn.stop_reason()}, "usage": {"output_tokens": turn.usage.output}})));
    events.push(frame("message_stop", &json!({"type": "message_stop"})));
    events
}

/// Anthropic's whole answer. A cut call cannot be sent as invalid JSON here, so its `input` is
/// the cut text as a JSON string, which a client must treat as malformed all the same.
fn anthropic_json(turn: &Turn) -> Value {
    let mut content = Vec::new();
    if let Some(thinking) = &turn.thinking {
        content.push(
            json!({"type": "thinking", "thinking": thinking, "signature": signature(thinking)}),
        );
    }
    if turn.redacted_thinking {
        content.push(json!({"type": "redacted_thinking", "data": REDACTED_DATA}));
    }
    if let Some(text) = &turn.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in calls(turn) {
        let input = if call.whole {
            serde_json::from_str(&call.arguments).unwrap_or_default()
        } else {
            json!(call.arguments)
        };
        content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    json!({"id": "msg_mock", "type": "message", "role": "assistant", "content": content,
        "stop_reason": turn.stop_reason(),
        "usage": {"input_tokens": turn.usage.input, "output_tokens": turn.usage.output,
            "cache_read_input_tokens": turn.usage.cache_read, "cache_creation_input_tokens": turn.usage.cache_write}})
}

fn openai_finish(turn: &Turn) -> &str {
    match turn.stop_reason() {
        "tool_use" => "tool_calls",
        "max_tokens" => "length",
        _ => "stop",
    }
}

fn openai_usage(turn: &Turn) -> Value {
    json!({"prompt_tokens": turn.usage.input + turn.usage.cache_read, "completion_tokens": turn.usage.output,
        "total_tokens": turn.usage.input + turn.usage.cache_read + turn.usage.output,
        "prompt_tokens_details": {"cached_tokens": turn.usage.cache_read}})
}

fn openai_chunk(delta: &Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
}

fn openai_sse(turn: &Turn) -> Vec<String> {
    let mut events = vec![openai_chunk(
        &json!({"role": "assistant", "content": ""}),
        None,
    )];
    if let Some(thinking) = &turn.thinking {
        for piece in halves(thinking) {
            events.push(openai_chunk(&json!({"reasoning_content": piece}), None));
        }
    }
    if let Some(text) = &turn.text {
        for piece in halves(text) {
            events.push(openai_chunk(&json!({"content": piece}), None));
        }
    }
    for (index, call) in calls(turn).into_iter().enumerate() {
        events.push(openai_chunk(&json!({"tool_calls": [{"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}]}), None));
        for piece in halves(&call.arguments) {
            events.push(openai_chunk(
                &json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    events.push(openai_chunk(&json!({}), Some(openai_finish(turn))));
    events.push(format!("data: {}\n\n", json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "choices": [], "usage": openai_usage(turn)})));
    events.push("data: [DONE]\n\n".to_string());
    events
}

fn openai_json(turn: &Turn) -> Value {
    let calls: Vec<Value> = calls(turn)
        .into_iter()
        .map(|call| json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": turn.text});
    if let Some(thinking) = &turn.thinking {
        message["reasoning_content"] = json!(thinking);
    }
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({"id": "chatcmpl-mock", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": openai_finish(turn)}],
        "usage": openai_usage(turn)})
}

/// The in-stream error event: Anthropic's `event: error`, or the error chunk OpenAI-compatible
/// servers send.
pub(crate) fn stream_error(dialect: Dialect, kind: &str, message: &str) -> String {
    match dialect {
        Dialect::Anthropic => frame(
            "error",
            &json!({"type": "error", "error": {"type": kind, "message": message}}),
        ),
        Dialect::OpenAi => format!(
            "data: {}\n\n",
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
        ),
    }
}

/// An error body in the dialect's shape.
pub(crate) fn error_body(dialect: Dialect, kind: &str, message: &str) -> String {
    match dialect {
        Dialect::Anthropic => {
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Dialect::OpenAi => {
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
        }
    }
    .to_string()
}

/// The error type an API names for a status.
pub(crate) fn error_kind(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// The status an API answers a non-streamed request with for an error type.
pub(crate) fn error_status(kind: &str) -> u16 {
    match kind {
        "overloaded_error" => 529,
        "rate_limit_error" => 429,
        "invalid_request_error" => 400,
        _ => 500,
    }
}
