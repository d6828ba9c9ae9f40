//! What both dialects do with the blocks of an answer before it becomes a [`Response`]: empty
//! and whitespace-only text blocks are dropped (the APIs refuse them in a history), and a tool
//! call whose arguments do not read as a JSON object is kept with input `{}` and listed in
//! [`Response::malformed_calls`], so one cut-off call does not lose the whole answer.

use serde_json::{Value, json};

use crate::types::{ContentBlock, MalformedCall, Message, Response, Role, StopReason, Usage};

/// The blocks of an answer, as they are read.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    content: Vec<ContentBlock>,
    malformed: Vec<MalformedCall>,
}

impl Answer {
    /// Adds a text block, unless it is empty or only whitespace.
    pub(crate) fn text(&mut self, text: String) {
        if !text.trim().is_empty() {
            self.content.push(ContentBlock::Text { text });
        }
    }

    /// Adds the model's thinking, unless it came without a signature (the API would refuse it
    /// back, and it carries nothing the answer needs).
    pub(crate) fn thinking(&mut self, thinking: String, signature: String) {
        if !signature.is_empty() {
            self.content.push(ContentBlock::Thinking {
                thinking,
                signature,
            });
        }
    }

    /// Adds redacted thinking, unless it is empty.
    pub(crate) fn redacted_thinking(&mut self, data: String) {
        if !data.is_empty() {
            self.content.push(ContentBlock::RedactedThinking { data });
        }
    }

    /// Adds a call whose arguments came as JSON text (empty text means no arguments).
    pub(crate) fn call_from_text(&mut self, id: String, name: String, arguments: &str) {
        let input = if arguments.trim().is_empty() {
            Ok(json!({}))
        } else {
            serde_json::from_str::<Value>(arguments)
                .map_err(|error| format!("the arguments are not valid JSON ({error})"))
                .and_then(object)
        };
        self.call(id, name, input);
    }

    /// Adds a call whose arguments came as a JSON value (absent means no arguments).
    pub(crate) fn call_from_value(&mut self, id: String, name: String, input: Option<Value>) {
        self.call(id, name, object(input.unwrap_or_else(|| json!({}))));
    }

    fn call(&mut self, id: String, name: String, input: Result<Value, String>) {
        let input = input.unwrap_or_else(|error| {
            self.malformed.push(MalformedCall {
                id: id.clone(),
                name: name.clone(),
                error,
            });
            json!({})
        });
        self.content.push(ContentBlock::ToolUse { id, name, input });
    }

    /// The response; when the output limit stopped the model, each malformed call's error says
    /// that is the likely cause.
    pub(crate) fn finish(self, stop_reason: StopReason, usage: Usage) -> Response {
        let mut malformed_calls = self.malformed;
        if stop_reason == StopReason::MaxTokens {
            for call in &mut malformed_calls {
                call.error
                    .push_str("; they were probably cut off by the output limit");
            }
        }
        Response {
            message: Message {
                role: Role::Assistant,
                content: self.content,
            },
            stop_reason,
            usage,
            malformed_calls,
        }
    }
}

/// The value when it is a JSON object, else what it is instead.
fn object(value: Value) -> Result<Value, String> {
    let kind = match &value {
        Value::Object(_) => return Ok(value),
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
    };
    Err(format!("the arguments are {kind}, not a JSON object"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn blank_text_is_dropped_and_bad_arguments_are_listed() {
        let mut answer = Answer::default();
        answer.text(String::new());
        answer.text("\n\n".into());
        answer.text("Hi".into());
        answer.call_from_text("a".into(), "read_file".into(), "{\"path\": \"x");
        answer.call_from_text("b".into(), "glob".into(), "");
        answer.call_from_value("c".into(), "grep".into(), Some(json!("{\"pattern\"")));
        answer.call_from_text("d".into(), "glob".into(), "[1]");
        let response = answer.finish(StopReason::MaxTokens, Usage::default());
        assert_eq!(
            response.message.content,
            [
                ContentBlock::text("Hi"),
                ContentBlock::ToolUse {
                    id: "a".into(),
                    name: "read_file".into(),
                    input: json!({})
                },
                ContentBlock::ToolUse {
                    id: "b".into(),
                    name: "glob".into(),
                    input: json!({})
                },
                ContentBlock::ToolUse {
                    id: "c".into(),
                    name: "grep".into(),
                    input: json!({})
                },
                ContentBlock::ToolUse {
                    id: "d".into(),
                    name: "glob".into(),
                    input: json!({})
                },
            ]
        );
        let errors: Vec<(&str, &str)> = response
            .malformed_calls
            .iter()
            .map(|call| (call.id.as_str(), call.error.as_str()))
            .collect();
        assert_eq!(
            errors,
            [
                (
                    "a",
                    "the arguments are not valid JSON (EOF while parsing a string at line 1 column 11); they were probably cut off by the output limit"
                ),
                (
                    "c",
                    "the arguments are a string, not a JSON object; they were probably cut off by the output limit"
                ),
                (
                    "d",
                    "the arguments are an array, not a JSON object; they were probably cut off by the output limit"
                ),
            ]
        );
    }

    #[test]
    fn without_the_output_limit_there_is_no_guess() {
        let mut answer = Answer::default();
        answer.call_from_text("a".into(), "x".into(), "nope");
        let response = answer.finish(StopReason::ToolUse, Usage::default());
        assert_eq!(
            response.malformed_calls[0].error,
            "the arguments are not valid JSON (expected ident at line 1 column 2)"
        );
    }
}
