//! Anthropic's extended thinking, as the Messages API checks it:
//!
//! - `thinking` is `{"type": "enabled", "budget_tokens": N}` with N ≥ 1,024 and below
//!   `max_tokens`, or `{"type": "disabled"}`;
//! - with thinking on, `temperature` may only be 1 and `top_k` must be unset;
//! - a `thinking` block (only in assistant messages) comes back with the signature the API gave
//!   it, over the very text it gave; a `redacted_thinking` block with its `data` as given;
//! - with thinking on, a turn still using tools (the last message holds only `tool_result`s)
//!   must start with the thinking the API sent: the first assistant message after the user's
//!   last own words begins with a `thinking` or `redacted_thinking` block.
//!
//! The double signs what it sends ([`signature`]) and checks what comes back against it, as
//! the real service does with its own key. Wording assumed where marked.

use serde_json::Value;

use super::{Rejection, reject};

/// The smallest thinking budget.
pub const MIN_BUDGET: i64 = 1_024;
const DOCS: &str = "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

/// The signature the double gives thinking `text`: any change to the text or to the
/// signature makes it fail.
pub fn signature(text: &str) -> String {
    // FNV-1a over a fixed key and the text: enough to tell an edited block from the one sent.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in b"skillet-mock-key:".iter().chain(text.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("EqMock{hash:016x}")
}

/// The `data` of a redacted block the double sends.
pub const REDACTED_DATA: &str =
    "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPmock";

/// Whether the request asks for thinking (its `thinking` is `enabled`).
pub fn enabled(body: &Value) -> bool {
    body.pointer("/thinking/type").and_then(Value::as_str) == Some("enabled")
}

/// Checks the `thinking` parameter and what it rules out.
pub fn check_parameter(body: &Value) -> Result<(), Rejection> {
    let Some(thinking) = body.get("thinking") else {
        return Ok(());
    };
    match thinking.get("type").and_then(Value::as_str) {
        Some("disabled") => return Ok(()),
        Some("enabled") => {}
        other => {
            return reject(Rejection::new(format!(
                "thinking: Input tag '{}' found using 'type' does not match any of the expected tags: 'disabled', 'enabled'",
                other.unwrap_or_default()
            )));
        }
    }
    let Some(budget) = thinking.get("budget_tokens").and_then(Value::as_i64) else {
        return reject(Rejection::new(
            "thinking.enabled.budget_tokens: Field required",
        ));
    };
    if budget < MIN_BUDGET {
        return reject(Rejection::new(format!(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_BUDGET}"
        )));
    }
    let max_tokens = body.get("max_tokens").and_then(Value::as_i64).unwrap_or(0);
    if max_tokens <= budget {
        return reject(Rejection::new(format!(
            "`max_tokens` must be greater than `thinking.budget_tokens`. {DOCS}#max-tokens-and-context-window-size"
        )));
    }
    if body
        .get("temperature")
        .and_then(Value::as_f64)
        .is_some_and(|temperature| (temperature - 1.0).abs() > f64::EPSILON)
    {
        return reject(Rejection::new(format!(
            "`temperature` may only be set to 1 when thinking is enabled. {DOCS}#feature-compatibility"
        )));
    }
    if body.get("top_k").is_some() {
        return reject(Rejection::new(format!(
            "`top_k` must be unset when thinking is enabled. {DOCS}#feature-compatibility"
        )));
    }
    Ok(())
}

/// Checks one `thinking` or `redacted_thinking` block of message `index`.
pub fn check_block(
    index: usize,
    position: usize,
    role: &str,
    block: &Value,
) -> Result<(), Rejection> {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let at = format!("messages.{index}.content.{position}");
    if role != "assistant" {
        // Wording assumed.
        return reject(Rejection::new(format!(
            "{at}: `{kind}` blocks can only be in `assistant` messages"
        )));
    }
    if kind == "redacted_thinking" {
        if block.get("data").and_then(Value::as_str) != Some(REDACTED_DATA) {
            // Wording assumed.
            return reject(Rejection::new(format!(
                "{at}: Invalid `data` in `redacted_thinking` block"
            )));
        }
        return Ok(());
    }
    let Some(given) = block.get("signature").and_then(Value::as_str) else {
        return reject(Rejection::new(format!(
            "{at}.thinking.signature: Field required"
        )));
    };
    let text = block
        .get("thinking")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if given != signature(text) {
        return reject(Rejection::new(format!(
            "{at}: Invalid `signature` in `thinking` block"
        )));
    }
    if block.get("cache_control").is_some() {
        // Wording assumed.
        return reject(Rejection::new(format!(
            "{at}.thinking.cache_control: Extra inputs are not permitted"
        )));
    }
    Ok(())
}

/// With thinking on, a turn still using tools starts with the thinking sent.
pub fn check_turn_starts_with_thinking(body: &Value, messages: &[Value]) -> Result<(), Rejection> {
    if !enabled(body) {
        return Ok(());
    }
    let kinds = |message: &Value| -> Vec<String> {
        super::anthropic::blocks(message)
            .iter()
            .map(|block| {
                block
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    let role = |message: &Value| {
        message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let only_results = |message: &Value| {
        role(message) == "user" && {
            let kinds = kinds(message);
            !kinds.is_empty() && kinds.iter().all(|kind| kind == "tool_result")
        }
    };
    let Some(last) = messages.last() else {
        return Ok(());
    };
    if !only_results(last) {
        return Ok(());
    }
    // The user's last own words: the turn under way starts after them.
    let start = messages
        .iter()
        .rposition(|message| role(message) == "user" && !only_results(message))
        .map_or(0, |index| index + 1);
    let Some((index, first)) = messages
        .iter()
        .enumerate()
        .skip(start)
        .find(|(_, message)| role(message) == "assistant")
    else {
        return Ok(());
    };
    let kinds = kinds(first);
    let found = kinds.first().map_or("nothing", String::as_str);
    if found == "thinking" || found == "redacted_thinking" {
        return Ok(());
    }
    reject(Rejection::new(format!(
        "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. {DOCS}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn thought(text: &str) -> Value {
        json!({"type": "thinking", "thinking": text, "signature": signature(text)})
    }

    fn call(id: &str) -> Value {
        json!({"type": "tool_use", "id": id, "name": "read_file", "input": {}})
    }

    fn result(id: &str) -> Value {
        json!({"type": "tool_result", "tool_use_id": id, "content": "x"})
    }

    fn body(messages: &Value, thinking: bool) -> Value {
        let mut body = json!({"model": "claude-test", "max_tokens": 3000, "messages": messages});
        if thinking {
            body["thinking"] = json!({"type": "enabled", "budget_tokens": 2000});
        }
        body
    }

    fn refusal(body: &Value) -> Option<String> {
        super::super::anthropic::check(body)
            .err()
            .map(|rejection| rejection.message)
    }

    #[test]
    fn the_parameter_is_checked_as_the_api_does() {
        let messages = json!([{"role": "user", "content": "hi"}]);
        assert_eq!(refusal(&body(&messages, true)), None);
        let mut low = body(&messages, true);
        low["thinking"]["budget_tokens"] = json!(1000);
        assert!(
            refusal(&low)
                .unwrap()
                .contains("greater than or equal to 1024")
        );
        let mut over = body(&messages, true);
        over["max_tokens"] = json!(2000);
        assert!(
            refusal(&over)
                .unwrap()
                .starts_with("`max_tokens` must be greater")
        );
        let mut warm = body(&messages, true);
        warm["temperature"] = json!(0.2);
        assert!(
            refusal(&warm)
                .unwrap()
                .starts_with("`temperature` may only be set to 1")
        );
        let mut odd = body(&messages, true);
        odd["thinking"] = json!({"type": "on"});
        assert!(
            refusal(&odd)
                .unwrap()
                .contains("does not match any of the expected tags")
        );
    }

    #[test]
    fn thinking_comes_back_unchanged_and_starts_a_turn_still_using_tools() {
        let good = json!([
            {"role": "user", "content": "look"},
            {"role": "assistant", "content": [thought("I should read it."), call("a")]},
            {"role": "user", "content": [result("a")]},
            {"role": "assistant", "content": [call("b")]},
            {"role": "user", "content": [result("b")]},
        ]);
        assert_eq!(refusal(&body(&good, true)), None);
        // The thinking left out: refused while the turn still uses tools.
        let mut dropped = good.clone();
        dropped[1]["content"] = json!([call("a")]);
        let message = refusal(&body(&dropped, true)).unwrap();
        assert!(
            message.starts_with("messages.1.content.0.type: Expected `thinking`"),
            "{message}"
        );
        // ...but not with thinking off, nor once the user speaks again.
        assert_eq!(refusal(&body(&dropped, false)), None);
        let mut next_turn = dropped.as_array().unwrap().clone();
        next_turn.push(json!({"role": "assistant", "content": "done"}));
        next_turn.push(json!({"role": "user", "content": "thanks"}));
        assert_eq!(refusal(&body(&Value::Array(next_turn), true)), None);
        // Edited thinking, or a signature not the API's.
        let mut edited = good.clone();
        edited[1]["content"][0]["thinking"] = json!("I should delete it.");
        assert!(
            refusal(&body(&edited, true))
                .unwrap()
                .ends_with("Invalid `signature` in `thinking` block")
        );
        // In the user's message.
        let mut misplaced = good;
        misplaced[0]["content"] = json!([thought("x"), {"type": "text", "text": "hi"}]);
        assert!(
            refusal(&body(&misplaced, true))
                .unwrap()
                .contains("can only be in `assistant` messages")
        );
    }
}
