//! OpenAI Chat Completions' request rules, worded as the API words them:
//!
//! - `model` and `messages` (a non-empty list) are required;
//! - reasoning models (names starting `o1`, `o3`, `o4`, `gpt-5`) refuse `max_tokens`
//!   (they take `max_completion_tokens`);
//! - `stream_options` only with `stream: true`;
//! - roles are `system`, `developer`, `user`, `assistant`, `tool` (or the old `function`);
//! - an assistant message has content unless it has `tool_calls`; each call has an `id` and
//!   `function.arguments` as a string;
//! - an assistant message with `tool_calls` is followed by `tool` messages answering each
//!   `tool_call_id` before any other message; a `tool` message answers a call of the assistant
//!   message its run of `tool` messages follows;
//! - tool function names match `^[a-zA-Z0-9_-]+$`.
//!
//! One rule is the one local servers add (llama.cpp's and vLLM's chat templates parse the
//! arguments, and fail on text that is not a JSON object): `function.arguments` must hold a
//! JSON object. OpenAI's own wording for it is not known, so that message is assumed.

use serde_json::Value;

use super::{Rejection, is_identifier, json_type, reject};

/// The prefixes of reasoning models' names, which take `max_completion_tokens`.
pub const REASONING_MODEL_PREFIXES: [&str; 4] = ["o1", "o3", "o4", "gpt-5"];
const ROLES: [&str; 6] = [
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "function",
];

/// Checks a `/chat/completions` request body.
pub fn check(body: &Value) -> Result<(), Rejection> {
    parameters(body)?;
    tools(body.get("tools"))?;
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return reject(
            Rejection::new("Missing required parameter: 'messages'.")
                .param("messages")
                .code("missing_required_parameter"),
        );
    };
    if messages.is_empty() {
        return reject(
            Rejection::new("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
                .param("messages")
                .code("empty_array"),
        );
    }
    let mut pending: Option<Vec<String>> = None;
    for (index, message) in messages.iter().enumerate() {
        check_message(index, message)?;
        pending = sequence(index, message, pending)?;
    }
    match pending {
        Some(unanswered) if !unanswered.is_empty() => reject(missing_responses(
            messages.len().saturating_sub(1),
            &unanswered,
        )),
        _ => Ok(()),
    }
}

/// Whether a model takes `max_completion_tokens` instead of `max_tokens`.
pub fn is_reasoning_model(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    REASONING_MODEL_PREFIXES
        .iter()
        .any(|prefix| model.starts_with(prefix))
}

fn parameters(body: &Value) -> Result<(), Rejection> {
    let Some(model) = body.get("model").and_then(Value::as_str) else {
        return reject(Rejection::new("You must provide a model parameter."));
    };
    if is_reasoning_model(model) && body.get("max_tokens").is_some() {
        return reject(
            Rejection::new("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
                .param("max_tokens")
                .code("unsupported_parameter"),
        );
    }
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    if body.get("stream_options").is_some_and(|o| !o.is_null()) && !streaming {
        return reject(
            Rejection::new(
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            )
            .param("stream_options"),
        );
    }
    Ok(())
}

fn tools(tools: Option<&Value>) -> Result<(), Rejection> {
    for (index, tool) in tools
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = tool
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !is_identifier(name, usize::MAX) {
            return reject(
                Rejection::new(format!("Invalid 'tools[{index}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."))
                    .param(format!("tools[{index}].function.name"))
                    .code("invalid_value"),
            );
        }
    }
    Ok(())
}

fn role(message: &Value) -> &str {
    message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn check_message(index: usize, message: &Value) -> Result<(), Rejection> {
    let role = role(message);
    if !ROLES.contains(&role) {
        return reject(
            Rejection::new(format!("Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'."))
                .param(format!("messages[{index}].role"))
                .code("invalid_value"),
        );
    }
    let has_content = message.get("content").is_some_and(|c| !c.is_null());
    match role {
        "assistant" => {
            let calls = message.get("tool_calls").and_then(Value::as_array);
            if !has_content && calls.is_none_or(Vec::is_empty) {
                return reject(
                    Rejection::new("Invalid value for 'content': expected a string, got null.")
                        .param(format!("messages.[{index}].content")),
                );
            }
            for (position, call) in calls.into_iter().flatten().enumerate() {
                check_call(index, position, call)?;
            }
            Ok(())
        }
        "tool"
            if message
                .get("tool_call_id")
                .and_then(Value::as_str)
                .is_none() =>
        {
            reject(missing(&format!("messages[{index}].tool_call_id")))
        }
        _ if !has_content => reject(missing(&format!("messages[{index}].content"))),
        _ => check_parts(index, role, message.get("content")),
    }
}

/// Content given as a list of parts: text parts with their text, image parts (in user messages
/// only) with a `data:image/…;base64,` or web address.
fn check_parts(index: usize, role: &str, content: Option<&Value>) -> Result<(), Rejection> {
    let Some(parts) = content.and_then(Value::as_array) else {
        return Ok(());
    };
    for (position, part) in parts.iter().enumerate() {
        let param = format!("messages[{index}].content[{position}]");
        match part.get("type").and_then(Value::as_str) {
            Some("text") if part.get("text").and_then(Value::as_str).is_some() => {}
            Some("image_url") if role == "user" => {
                let url = part
                    .pointer("/image_url/url")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let inline = url.strip_prefix("data:image/").and_then(|rest| {
                    let (kind, data) = rest.split_once(";base64,")?;
                    ["png", "jpeg", "gif", "webp"]
                        .contains(&kind)
                        .then_some(data)
                });
                let valid = inline.is_some_and(|data| {
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .is_ok()
                }) || url.starts_with("https://");
                if !valid {
                    return reject(
                        Rejection::new("Invalid image URL: expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,...'), or a valid URL.")
                            .param(format!("{param}.image_url.url"))
                            .code("invalid_image_url"),
                    );
                }
            }
            Some("image_url") => {
                return reject(
                    Rejection::new(format!(
                        "Image URLs are only allowed for messages with role 'user', but this message with role '{role}' contains an image URL."
                    ))
                    .param(param),
                );
            }
            _ => {
                return reject(
                    Rejection::new(format!("Invalid content part at {param}"))
                        .param(param)
                        .code("invalid_value"),
                );
            }
        }
    }
    Ok(())
}

fn missing(param: &str) -> Rejection {
    Rejection::new(format!("Missing required parameter: '{param}'."))
        .param(param)
        .code("missing_required_parameter")
}

fn check_call(index: usize, position: usize, call: &Value) -> Result<(), Rejection> {
    let at = format!("messages[{index}].tool_calls[{position}]");
    if call.get("id").and_then(Value::as_str).is_none() {
        return reject(missing(&format!("{at}.id")));
    }
    let param = format!("{at}.function.arguments");
    match call.pointer("/function/arguments") {
        None => reject(missing(&param)),
        Some(Value::String(text)) => {
            if serde_json::from_str::<Value>(text).is_ok_and(|value| value.is_object()) {
                Ok(())
            } else {
                // Wording assumed (see the module docs).
                reject(
                    Rejection::new(format!(
                        "Invalid value for '{param}': expected a string holding a JSON object."
                    ))
                    .param(param)
                    .code("invalid_value"),
                )
            }
        }
        Some(other) => reject(
            Rejection::new(format!(
                "Invalid type for '{param}': expected a string, but got {} instead.",
                article(json_type(other))
            ))
            .param(param)
            .code("invalid_type"),
        ),
    }
}

fn article(kind: &str) -> String {
    if kind.starts_with(['a', 'o']) {
        format!("an {kind}")
    } else {
        format!("a {kind}")
    }
}

/// The tool-call bookkeeping of one message: `pending` holds the ids of the latest assistant
/// message with `tool_calls` not yet answered (`None` when no run of tool messages may follow).
fn sequence(
    index: usize,
    message: &Value,
    pending: Option<Vec<String>>,
) -> Result<Option<Vec<String>>, Rejection> {
    if role(message) == "tool" {
        let id = message
            .get("tool_call_id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(mut ids) = pending.filter(|ids| ids.iter().any(|pending| pending == id)) else {
            return reject(
                Rejection::new("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
                    .param(format!("messages.[{index}].role")),
            );
        };
        ids.retain(|pending| pending != id);
        return Ok(Some(ids));
    }
    if let Some(unanswered) = pending.filter(|ids| !ids.is_empty()) {
        return reject(missing_responses(index, &unanswered));
    }
    let calls: Vec<String> = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|call| call.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    Ok((!calls.is_empty()).then_some(calls))
}

fn missing_responses(index: usize, unanswered: &[String]) -> Rejection {
    Rejection::new(format!(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
        unanswered.join(", ")
    ))
    .param(format!("messages.[{index}].role"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(model: &str, messages: &Value) -> Value {
        json!({"model": model, "messages": messages, "max_tokens": 100, "stream": false})
    }

    fn rejection(messages: &Value) -> Rejection {
        check(&body("gpt-test", messages)).unwrap_err()
    }

    fn assistant_calling(ids: &[&str]) -> Value {
        let calls: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id, "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}))
            .collect();
        json!({"role": "assistant", "content": "", "tool_calls": calls})
    }

    fn tool(id: &str) -> Value {
        json!({"role": "tool", "tool_call_id": id, "content": "ok"})
    }

    #[test]
    fn accepts_a_history_with_parallel_calls() {
        let messages = json!([
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "hello"},
            assistant_calling(&["call_1", "call_2"]),
            tool("call_2"),
            tool("call_1"),
            {"role": "user", "content": "go on"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_3", "type": "function", "function": {"name": "x", "arguments": "{}"}}]},
            tool("call_3"),
            {"role": "assistant", "content": "done"},
        ]);
        assert_eq!(check(&body("gpt-test", &messages)), Ok(()));
        let mut request = body("o3-mini", &json!([{"role": "user", "content": "hi"}]));
        request.as_object_mut().unwrap().remove("max_tokens");
        request["max_completion_tokens"] = json!(100);
        request["stream"] = json!(true);
        request["stream_options"] = json!({"include_usage": true});
        assert_eq!(check(&request), Ok(()));
    }

    #[test]
    fn rejects_calls_not_answered_before_the_next_message() {
        let messages = json!([
            {"role": "user", "content": "hello"},
            assistant_calling(&["call_1", "call_2"]),
            tool("call_1"),
            {"role": "user", "content": "next"},
        ]);
        let refused = rejection(&messages);
        assert_eq!(
            refused.message,
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2"
        );
        assert_eq!(refused.param.as_deref(), Some("messages.[3].role"));
        assert_eq!(refused.code, None);
        let at_end = json!([{"role": "user", "content": "hello"}, assistant_calling(&["call_1"])]);
        assert!(
            rejection(&at_end)
                .message
                .ends_with("did not have response messages: call_1")
        );
    }

    #[test]
    fn rejects_a_tool_message_that_answers_nothing() {
        let expected = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
        let orphan = json!([{"role": "user", "content": "hello"}, tool("call_1")]);
        let refused = rejection(&orphan);
        assert_eq!(refused.message, expected);
        assert_eq!(refused.param.as_deref(), Some("messages.[1].role"));
        let wrong_id = json!([
            {"role": "user", "content": "hello"},
            assistant_calling(&["call_1"]),
            tool("call_9"),
        ]);
        assert_eq!(rejection(&wrong_id).message, expected);
        let twice = json!([
            {"role": "user", "content": "hello"},
            assistant_calling(&["call_1"]),
            tool("call_1"),
            tool("call_1"),
        ]);
        assert_eq!(rejection(&twice).message, expected);
    }

    #[test]
    fn rejects_arguments_that_are_not_a_string_holding_an_object() {
        let mut object = assistant_calling(&["call_1"]);
        object["tool_calls"][0]["function"]["arguments"] = json!({"path": "a"});
        let messages = json!([{"role": "user", "content": "hi"}, object, tool("call_1")]);
        let refused = rejection(&messages);
        assert_eq!(
            refused.message,
            "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead."
        );
        assert_eq!(refused.code.as_deref(), Some("invalid_type"));
        let mut cut = assistant_calling(&["call_1"]);
        cut["tool_calls"][0]["function"]["arguments"] = json!("{\"path\": \"a");
        let messages = json!([{"role": "user", "content": "hi"}, cut, tool("call_1")]);
        assert_eq!(
            rejection(&messages).param.as_deref(),
            Some("messages[1].tool_calls[0].function.arguments")
        );
    }

    #[test]
    fn rejects_max_tokens_for_reasoning_models_only() {
        let messages = json!([{"role": "user", "content": "hi"}]);
        for model in [
            "o1",
            "o3-mini",
            "o4-mini",
            "gpt-5",
            "gpt-5.1-codex",
            "GPT-5-mini",
        ] {
            let rejection = check(&body(model, &messages)).unwrap_err();
            assert_eq!(
                rejection.message,
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "{model}"
            );
            assert_eq!(rejection.param.as_deref(), Some("max_tokens"));
            assert_eq!(rejection.code.as_deref(), Some("unsupported_parameter"));
        }
        for model in ["gpt-4o-mini", "llama3.2", "gpt-4.1", "smollm2-135m"] {
            assert_eq!(check(&body(model, &messages)), Ok(()), "{model}");
        }
    }

    #[test]
    fn rejects_missing_pieces() {
        assert_eq!(rejection(&json!([])).code.as_deref(), Some("empty_array"));
        let no_content =
            json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": null}]);
        assert_eq!(
            rejection(&no_content).message,
            "Invalid value for 'content': expected a string, got null."
        );
        let mut request = body("gpt-test", &json!([{"role": "user", "content": "hi"}]));
        request["stream_options"] = json!({"include_usage": true});
        assert!(
            check(&request)
                .unwrap_err()
                .message
                .contains("'stream_options'")
        );
        let bad_role = json!([{"role": "robot", "content": "hi"}]);
        assert_eq!(
            rejection(&bad_role).param.as_deref(),
            Some("messages[0].role")
        );
    }
}
