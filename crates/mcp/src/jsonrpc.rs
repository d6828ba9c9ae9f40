//! Each message a client sends, checked against JSON-RPC 2.0 and MCP before the SDK sees it, so
//! every malformed one gets the error the specifications name, with the id when it can be read
//! and `null` when it cannot (the SDK alone drops the id, answers bad params as an unknown
//! method, calls a deeply nested line "not JSON", and answers HTTP batches 415):
//!
//! | what | code |
//! |---|---|
//! | not JSON | -32700 parse error, id `null` |
//! | nested deeper than serde's limit (128) | -32600, id `null` |
//! | a batch (an array; MCP removed batching in 2025-06-18) | -32600, id `null` |
//! | not an object, an id that is not a string or an integer | -32600, id `null` |
//! | `jsonrpc` not `"2.0"`, `method` not a string, a response without `result` or `error` | -32600 with the id |
//! | a request to a method of MCP whose params do not fit it | -32602 with the id |
//! | a request to a method skillet does not serve | -32601 with the id |
//!
//! A notification that cannot be read is dropped unanswered (JSON-RPC never answers one), and
//! every message quoting the client's input is escaped.
//!
//! A request whose id is one still in flight is refused by the transport (-32600 with the id):
//! ids are unique within a session.

use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, CompleteRequest, GetPromptRequest,
    GetSkillRequest, ReadResourceRequest,
};
use serde_json::{Value, json};
use skillet_skills::escape_invisible;

/// What a message is, once checked.
#[derive(Debug, PartialEq)]
pub enum Checked {
    /// A request, with its id as written (compact JSON), for telling repeated ids.
    Request(String),
    /// A notification, or a response to a request of the server's.
    Other,
    /// Nothing to pass on nor to answer (an error answer with a null id).
    Ignored,
    /// Malformed: the error to answer with.
    Invalid(Value),
}

/// The methods a client may call in MCP (those the SDK knows by name). A request to one of
/// them that the SDK reads as a custom request had params that do not fit.
const MCP_METHODS: [&str; 21] = [
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// The error message to answer with.
/// The message escaped ([`escape_invisible`]): it may quote the client's input (serde's words
/// on a value that did not fit, a method's name).
pub fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": escape_invisible(message)}})
}

/// Checks one message as it came (a line of stdio, a POST body).
pub fn check(text: &str) -> Checked {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(parse) if parse.to_string().contains("recursion limit exceeded") => {
            return Checked::Invalid(error(
                &Value::Null,
                -32600,
                "Invalid request: nested deeper than 128 levels",
            ));
        }
        Err(_) => {
            return Checked::Invalid(error(
                &Value::Null,
                -32700,
                "Parse error: the message is not JSON",
            ));
        }
    };
    let invalid = |id: &Value, why: &str| {
        Checked::Invalid(error(id, -32600, &format!("Invalid request: {why}")))
    };
    let Value::Object(fields) = &value else {
        return if value.is_array() {
            invalid(
                &Value::Null,
                "batches are not supported (MCP removed JSON-RPC batching in 2025-06-18); send one message at a time",
            )
        } else {
            invalid(&Value::Null, "a message is a JSON object")
        };
    };
    let id = match fields.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id),
        Some(id @ Value::Number(number)) if number.is_i64() => Some(id),
        // A client's error answer to a message of the server's it could not read: nothing to
        // answer, nothing the SDK needs.
        Some(Value::Null) if !fields.contains_key("method") && fields.contains_key("error") => {
            return Checked::Ignored;
        }
        Some(_) => {
            return invalid(
                &Value::Null,
                "an id is a string or an integer of at most 64 signed bits",
            );
        }
    };
    let shown_id = id.cloned().unwrap_or(Value::Null);
    if fields.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return invalid(&shown_id, "the jsonrpc member must be \"2.0\"");
    }
    // What the SDK cannot read, it answers without an id (and a request it never answers stays
    // in flight): read it as the SDK will, from the text (duplicate keys and all).
    let readable = serde_json::from_str::<ClientJsonRpcMessage>(text).is_ok();
    match fields.get("method") {
        Some(Value::String(method)) => {
            let Some(id) = id else {
                // A notification is never answered, even when it cannot be read: dropped.
                return if readable {
                    Checked::Other
                } else {
                    Checked::Ignored
                };
            };
            request_problem(&value, id, method, readable)
                .unwrap_or_else(|| Checked::Request(id.to_string()))
        }
        Some(_) => invalid(&shown_id, "the method is a string"),
        None => {
            let answer = fields.contains_key("result") != fields.contains_key("error");
            if id.is_none() || !answer || !readable {
                invalid(
                    &shown_id,
                    "a message has a method (a request or notification) or an id with a result or an error (a response)",
                )
            } else {
                Checked::Other
            }
        }
    }
}

/// What is wrong with a request to `method`, if anything: params that do not fit an MCP method,
/// a method skillet does not serve, a `skills/get` uri that names no `SKILL.md`, a message the
/// SDK cannot read.
fn request_problem(value: &Value, id: &Value, method: &str, readable: bool) -> Option<Checked> {
    if let Some(why) = params_problem(value, method) {
        return Some(Checked::Invalid(error(
            id,
            -32602,
            &format!("Invalid params for {method}: {why}"),
        )));
    }
    // skillet serves no method beyond MCP's: say so here, the method escaped (the SDK
    // echoes it raw).
    if !MCP_METHODS.contains(&method) {
        return Some(Checked::Invalid(error(
            id,
            -32601,
            &format!("Method not found: {}", escape_invisible(method)),
        )));
    }
    // The SDK refuses a skills/get uri that names no SKILL.md, echoing it raw: refused
    // here, escaped.
    if method == "skills/get"
        && let Some(uri) = value
            .get("params")
            .and_then(|params| params.get("uri"))
            .and_then(Value::as_str)
        && rmcp::model::skill_name_from_uri(uri).is_none()
    {
        return Some(Checked::Invalid(error(
            id,
            -32602,
            &format!("{uri} is not the uri of a SKILL.md"),
        )));
    }
    if !readable {
        return Some(Checked::Invalid(error(
            id,
            -32602,
            "Invalid params: params are an object (with `_meta`, when given, an object), and every key appears once",
        )));
    }
    None
}

/// Why a request to an MCP method has params that do not fit it; `None` when they fit, or the
/// method is not MCP's.
fn params_problem(message: &Value, method: &str) -> Option<String> {
    if !MCP_METHODS.contains(&method) {
        return None;
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(message.clone()) {
        Ok(ClientJsonRpcMessage::Request(request))
            if !matches!(request.request, ClientRequest::CustomRequest(_)) =>
        {
            return None;
        }
        Ok(_) | Err(_) => {}
    }
    // Read as the method's own request type, for serde's words on what does not fit.
    let request = json!({"method": method, "params": message.get("params")});
    let typed = match method {
        "tools/call" => serde_json::from_value::<CallToolRequest>(request).map(drop),
        "prompts/get" => serde_json::from_value::<GetPromptRequest>(request).map(drop),
        "resources/read" => serde_json::from_value::<ReadResourceRequest>(request).map(drop),
        "completion/complete" => serde_json::from_value::<CompleteRequest>(request).map(drop),
        "skills/get" => serde_json::from_value::<GetSkillRequest>(request).map(drop),
        _ => Ok(()),
    };
    Some(match typed {
        Err(why) => why.to_string(),
        Ok(()) => "they do not fit the MCP schema".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_and_id(checked: &Checked) -> (i64, Value) {
        let Checked::Invalid(answer) = checked else {
            panic!("not refused: {checked:?}");
        };
        (
            answer["error"]["code"].as_i64().unwrap(),
            answer["id"].clone(),
        )
    }

    #[test]
    fn each_malformed_message_gets_the_code_and_id_the_specifications_name() {
        let nested = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{{\"a\":{}1{}}}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        let cases: [(&str, i64, Value); 12] = [
            ("not json", -32700, Value::Null),
            (&nested, -32600, Value::Null),
            (
                r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#,
                -32600,
                Value::Null,
            ),
            ("[]", -32600, Value::Null),
            ("7", -32600, Value::Null),
            (r#"{"foo":1}"#, -32600, Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                -32600,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"1.0","id":6,"method":"ping"}"#,
                -32600,
                json!(6),
            ),
            (r#"{"jsonrpc":"2.0","id":7,"method":5}"#, -32600, json!(7)),
            (r#"{"jsonrpc":"2.0","id":4}"#, -32600, json!(4)),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"nam":"x"}}"#,
                -32602,
                json!(1),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"p","method":"prompts/get","params":{"name":5}}"#,
                -32602,
                json!("p"),
            ),
        ];
        for (text, code, id) in cases {
            assert_eq!(code_and_id(&check(text)), (code, id), "{text}");
        }
        let missing = check(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#);
        assert_eq!(code_and_id(&missing), (-32602, json!(2)));
        // What the SDK cannot read is answered here, with the id (it would drop the id and
        // never answer, keeping the id in flight for good).
        for text in [
            r#"{"jsonrpc":"2.0","id":40,"method":"tools/list","params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":40,"method":"tools/list","params":5}"#,
            r#"{"jsonrpc":"2.0","id":40,"method":"ping","params":{"_meta":5}}"#,
            r#"{"jsonrpc":"2.0","id":40,"id":40,"method":"ping"}"#,
        ] {
            assert_eq!(code_and_id(&check(text)), (-32602, json!(40)), "{text}");
        }
        assert_eq!(
            code_and_id(&check(
                r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#
            )),
            (-32600, Value::Null)
        );
        assert_eq!(
            check(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}"#),
            Checked::Ignored
        );
        // A notification that cannot be read is dropped, never answered.
        assert_eq!(
            check(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":[1]}"#),
            Checked::Ignored
        );
        // The SDK's own refusal of a skills/get uri echoes it raw: refused here, escaped.
        let uri = check(
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"skills/get\",\"params\":{\"uri\":\"skill://z\u{202e}\u{2028}\"}}",
        );
        assert_eq!(code_and_id(&uri), (-32602, json!(5)));
        let Checked::Invalid(answer) = uri else {
            unreachable!()
        };
        assert!(
            !answer.to_string().contains(['\u{202e}', '\u{2028}']),
            "{answer}"
        );
    }

    #[test]
    fn well_formed_messages_pass() {
        assert_eq!(
            check(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}"#
            ),
            Checked::Request("1".into())
        );
        assert_eq!(
            check(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#),
            Checked::Request("\"a\"".into())
        );
        // Methods skillet does not serve: -32601, the name escaped.
        let unknown = check("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no/su\u{202e}ch\"}");
        assert_eq!(code_and_id(&unknown), (-32601, json!(3)));
        let Checked::Invalid(answer) = unknown else {
            unreachable!()
        };
        assert!(!answer.to_string().contains('\u{202e}'), "{answer}");
        assert_eq!(
            check(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Checked::Other
        );
        assert_eq!(
            check(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#),
            Checked::Other
        );
    }
}
