//! The rules a conversation history must keep for every provider to accept it, checked in one
//! place before anything is sent ([`crate::Provider::send`] refuses a history that breaks one).
//!
//! Both APIs refuse a request whose history breaks these (Anthropic and OpenAI word it their
//! own way, as a 400), so a broken history is a bug in whoever built it, found here with the
//! message index and call id instead of a provider's error mid-session:
//!
//! - the first message is the user's, and no two assistant messages follow each other (two
//!   user messages may: both APIs accept them, Anthropic joins them into one turn; a turn the
//!   user cancelled before any answer leaves one);
//! - no message is empty, and no text block is empty or only whitespace;
//! - tool calls and thinking are in assistant messages, tool results and images in user
//!   messages;
//! - every call has a non-empty id used by no other call, and a JSON object as input;
//! - every call of an assistant message is answered by a result in the very next message, in
//!   the order of the calls, once, and that message's results come before any of its text;
//! - every result answers a call of the message before it.

use std::collections::{HashMap, HashSet};

use crate::types::{ContentBlock, Message, Role};

/// The rule a history breaks; messages and blocks are numbered from 0.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// No message at all.
    #[error("the history has no message")]
    Empty,
    /// The first message is the assistant's.
    #[error("message 0 is the assistant's; the first message must be the user's")]
    FirstNotUser,
    /// Two assistant messages in a row.
    #[error("messages {} and {index} are both the {role}'s; an answer must follow the user's message", .index - 1)]
    NotAlternating {
        /// The second of the two.
        index: usize,
        /// `user` or `assistant`.
        role: &'static str,
    },
    /// A message without blocks.
    #[error("message {index} is empty")]
    EmptyMessage {
        /// The message.
        index: usize,
    },
    /// A text block that is empty or only whitespace.
    #[error("message {index}, block {block}: the text block is empty")]
    BlankText {
        /// The message.
        index: usize,
        /// The block.
        block: usize,
    },
    /// A tool call in a user message, or a tool result in an assistant message.
    #[error("message {index}, block {block}: a {what} in the {role}'s message")]
    Misplaced {
        /// The message.
        index: usize,
        /// The block.
        block: usize,
        /// `tool call` or `tool result`.
        what: &'static str,
        /// `user` or `assistant`.
        role: &'static str,
    },
    /// A tool call with an empty id.
    #[error("message {index}, block {block}: a tool call ('{name}') has an empty id")]
    EmptyId {
        /// The message.
        index: usize,
        /// The block.
        block: usize,
        /// The tool.
        name: String,
    },
    /// A tool call id used before.
    #[error(
        "message {index}, block {block}: tool call id '{id}' is used twice (first in message {first})"
    )]
    DuplicateId {
        /// The message.
        index: usize,
        /// The block.
        block: usize,
        /// The id.
        id: String,
        /// The message that used it first.
        first: usize,
    },
    /// A tool call whose input is not a JSON object.
    #[error("message {index}, block {block}: the input of tool call '{id}' is not a JSON object")]
    InputNotObject {
        /// The message.
        index: usize,
        /// The block.
        block: usize,
        /// The call's id.
        id: String,
    },
    /// A call the next message does not answer.
    #[error("message {index}: tool call '{id}' has no result in the next message")]
    Unanswered {
        /// The assistant message.
        index: usize,
        /// The call's id.
        id: String,
    },
    /// A result that answers no call of the previous message.
    #[error(
        "message {index}, block {block}: tool result '{id}' answers no tool call of the previous message"
    )]
    UnexpectedResult {
        /// The user message.
        index: usize,
        /// The block.
        block: usize,
        /// The id it names.
        id: String,
    },
    /// A second result for the same call.
    #[error("message {index}, block {block}: tool call '{id}' is answered twice")]
    DuplicateResult {
        /// The user message.
        index: usize,
        /// The block.
        block: usize,
        /// The call's id.
        id: String,
    },
    /// A result after text in its message.
    #[error(
        "message {index}, block {block}: tool result '{id}' comes after text; results must come first"
    )]
    ResultAfterText {
        /// The user message.
        index: usize,
        /// The block.
        block: usize,
        /// The call's id.
        id: String,
    },
    /// Results in a different order than the calls.
    #[error(
        "message {index}: the tool results are not in the order of the calls (result {position} answers '{found}', call {position} is '{expected}')"
    )]
    OutOfOrder {
        /// The user message.
        index: usize,
        /// Which result (among the results) is out of place.
        position: usize,
        /// The call at that position.
        expected: String,
        /// The call that result answers.
        found: String,
    },
}

/// Checks a history against every rule above; the first rule broken is the error.
pub fn check(messages: &[Message]) -> Result<(), HistoryError> {
    let first = messages.first().ok_or(HistoryError::Empty)?;
    if first.role != Role::User {
        return Err(HistoryError::FirstNotUser);
    }
    let mut ids = HashMap::new();
    for (index, message) in messages.iter().enumerate() {
        if index > 0
            && message.role == Role::Assistant
            && messages[index - 1].role == Role::Assistant
        {
            return Err(HistoryError::NotAlternating {
                index,
                role: role_name(message.role),
            });
        }
        if message.content.is_empty() {
            return Err(HistoryError::EmptyMessage { index });
        }
        for (block, content) in message.content.iter().enumerate() {
            check_block(index, block, message.role, content, &mut ids)?;
        }
        match message.role {
            Role::Assistant => calls_answered(index, message, messages.get(index + 1))?,
            Role::User => results_match(index, message, &messages[index.saturating_sub(1)])?,
        }
    }
    Ok(())
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn check_block<'a>(
    index: usize,
    block: usize,
    role: Role,
    content: &'a ContentBlock,
    ids: &mut HashMap<&'a str, usize>,
) -> Result<(), HistoryError> {
    let misplaced = |what| HistoryError::Misplaced {
        index,
        block,
        what,
        role: role_name(role),
    };
    match content {
        ContentBlock::Text { text } if text.trim().is_empty() => {
            Err(HistoryError::BlankText { index, block })
        }
        ContentBlock::ToolResult { .. } if role != Role::User => Err(misplaced("tool result")),
        ContentBlock::Image { .. } if role != Role::User => Err(misplaced("image")),
        ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. }
            if role != Role::Assistant =>
        {
            Err(misplaced("thinking block"))
        }
        ContentBlock::Text { .. }
        | ContentBlock::ToolResult { .. }
        | ContentBlock::Image { .. }
        | ContentBlock::Thinking { .. }
        | ContentBlock::RedactedThinking { .. } => Ok(()),
        ContentBlock::ToolUse { .. } if role != Role::Assistant => Err(misplaced("tool call")),
        ContentBlock::ToolUse { id, name, input } => {
            if id.is_empty() {
                return Err(HistoryError::EmptyId {
                    index,
                    block,
                    name: name.clone(),
                });
            }
            if let Some(&first) = ids.get(id.as_str()) {
                return Err(HistoryError::DuplicateId {
                    index,
                    block,
                    id: id.clone(),
                    first,
                });
            }
            ids.insert(id, index);
            if !input.is_object() {
                return Err(HistoryError::InputNotObject {
                    index,
                    block,
                    id: id.clone(),
                });
            }
            Ok(())
        }
    }
}

/// The ids of the results of a message, with their block numbers.
fn results(message: &Message) -> Vec<(usize, &str)> {
    message
        .content
        .iter()
        .enumerate()
        .filter_map(|(block, content)| match content {
            ContentBlock::ToolResult { tool_use_id, .. } => Some((block, tool_use_id.as_str())),
            _ => None,
        })
        .collect()
}

/// Every call of assistant message `index` has a result in the next message.
fn calls_answered(
    index: usize,
    message: &Message,
    next: Option<&Message>,
) -> Result<(), HistoryError> {
    let answered: HashSet<&str> = next
        .filter(|next| next.role == Role::User)
        .map(|next| results(next).into_iter().map(|(_, id)| id).collect())
        .unwrap_or_default();
    match message
        .tool_uses()
        .find(|(id, _, _)| !answered.contains(id))
    {
        Some((id, _, _)) => Err(HistoryError::Unanswered {
            index,
            id: id.to_string(),
        }),
        None => Ok(()),
    }
}

/// The results of user message `index` answer the calls of `previous`, once each, in order,
/// before any text.
fn results_match(index: usize, message: &Message, previous: &Message) -> Result<(), HistoryError> {
    let calls: Vec<&str> = if index == 0 {
        Vec::new()
    } else {
        previous.tool_uses().map(|(id, _, _)| id).collect()
    };
    let first_text = message
        .content
        .iter()
        .position(|content| matches!(content, ContentBlock::Text { .. }));
    let results = results(message);
    let mut seen = HashSet::new();
    for &(block, id) in &results {
        let error = if !calls.contains(&id) {
            HistoryError::UnexpectedResult {
                index,
                block,
                id: id.to_string(),
            }
        } else if !seen.insert(id) {
            HistoryError::DuplicateResult {
                index,
                block,
                id: id.to_string(),
            }
        } else if first_text.is_some_and(|text| text < block) {
            HistoryError::ResultAfterText {
                index,
                block,
                id: id.to_string(),
            }
        } else {
            continue;
        };
        return Err(error);
    }
    let order = results.iter().map(|(_, id)| *id).zip(&calls).enumerate();
    for (position, (found, &expected)) in order {
        if found != expected {
            return Err(HistoryError::OutOfOrder {
                index,
                position,
                expected: expected.to_string(),
                found: found.to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn call(id: &str) -> ContentBlock {
        ContentBlock::ToolUse {
            id: id.into(),
            name: "read_file".into(),
            input: json!({"path": "a"}),
        }
    }

    fn result(id: &str) -> ContentBlock {
        ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: "ok".into(),
            is_error: false,
        }
    }

    fn assistant(content: Vec<ContentBlock>) -> Message {
        Message {
            role: Role::Assistant,
            content,
        }
    }

    fn user(content: Vec<ContentBlock>) -> Message {
        Message {
            role: Role::User,
            content,
        }
    }

    fn error(messages: &[Message]) -> String {
        check(messages).unwrap_err().to_string()
    }

    #[test]
    fn accepts_text_parallel_calls_and_results_followed_by_text() {
        let history = [
            Message::user("hello"),
            assistant(vec![ContentBlock::text("Looking."), call("a"), call("b")]),
            user(vec![result("a"), result("b"), ContentBlock::text("note")]),
            assistant(vec![ContentBlock::text("Done.")]),
            Message::user("thanks"),
        ];
        assert_eq!(check(&history), Ok(()));
        assert_eq!(
            check(&history[..4]),
            Ok(()),
            "ends with the assistant's answer"
        );
    }

    #[test]
    fn the_first_message_is_the_users_and_answers_follow_the_user() {
        assert_eq!(check(&[]), Err(HistoryError::Empty));
        assert_eq!(
            error(&[assistant(vec![ContentBlock::text("hi")])]),
            "message 0 is the assistant's; the first message must be the user's"
        );
        assert_eq!(check(&[Message::user("a"), Message::user("b")]), Ok(()));
        assert_eq!(
            error(&[
                Message::user("a"),
                assistant(vec![ContentBlock::text("b")]),
                assistant(vec![ContentBlock::text("c")])
            ]),
            "messages 1 and 2 are both the assistant's; an answer must follow the user's message"
        );
    }

    #[test]
    fn no_empty_message_or_blank_text() {
        assert_eq!(
            error(&[Message::user("a"), assistant(vec![])]),
            "message 1 is empty"
        );
        assert_eq!(
            error(&[
                Message::user("a"),
                assistant(vec![ContentBlock::text(" \n"), call("x")])
            ]),
            "message 1, block 0: the text block is empty"
        );
        assert_eq!(
            error(&[Message::user("")]),
            "message 0, block 0: the text block is empty"
        );
    }

    #[test]
    fn every_call_is_answered_in_the_next_message() {
        let history = [
            Message::user("a"),
            assistant(vec![call("x"), call("y")]),
            user(vec![result("x")]),
        ];
        assert_eq!(
            error(&history),
            "message 1: tool call 'y' has no result in the next message"
        );
        assert_eq!(
            error(&history[..2]),
            "message 1: tool call 'x' has no result in the next message"
        );
    }

    #[test]
    fn every_result_answers_a_call_of_the_previous_message_once() {
        assert_eq!(
            error(&[user(vec![result("x")])]),
            "message 0, block 0: tool result 'x' answers no tool call of the previous message"
        );
        let stale = [
            Message::user("a"),
            assistant(vec![call("x")]),
            user(vec![result("x")]),
            assistant(vec![ContentBlock::text("ok")]),
            user(vec![result("x")]),
        ];
        assert!(error(&stale).starts_with("message 4, block 0: tool result 'x' answers no"));
        let twice = [
            Message::user("a"),
            assistant(vec![call("x")]),
            user(vec![result("x"), result("x")]),
        ];
        assert_eq!(
            error(&twice),
            "message 2, block 1: tool call 'x' is answered twice"
        );
    }

    #[test]
    fn results_come_first_and_in_the_order_of_the_calls() {
        let after_text = [
            Message::user("a"),
            assistant(vec![call("x")]),
            user(vec![ContentBlock::text("first"), result("x")]),
        ];
        assert_eq!(
            error(&after_text),
            "message 2, block 1: tool result 'x' comes after text; results must come first"
        );
        let swapped = [
            Message::user("a"),
            assistant(vec![call("x"), call("y")]),
            user(vec![result("y"), result("x")]),
        ];
        assert_eq!(
            check(&swapped),
            Err(HistoryError::OutOfOrder {
                index: 2,
                position: 0,
                expected: "x".into(),
                found: "y".into()
            })
        );
    }

    #[test]
    fn calls_have_unique_ids_object_inputs_and_the_right_role() {
        let duplicate = [
            Message::user("a"),
            assistant(vec![call("x")]),
            user(vec![result("x")]),
            assistant(vec![call("x")]),
            user(vec![result("x")]),
        ];
        assert_eq!(
            error(&duplicate),
            "message 3, block 0: tool call id 'x' is used twice (first in message 1)"
        );
        let not_object = [
            Message::user("a"),
            assistant(vec![ContentBlock::ToolUse {
                id: "x".into(),
                name: "n".into(),
                input: json!("{\"cut"),
            }]),
            user(vec![result("x")]),
        ];
        assert_eq!(
            error(&not_object),
            "message 1, block 0: the input of tool call 'x' is not a JSON object"
        );
        let empty_id = [Message::user("a"), assistant(vec![call("")])];
        assert_eq!(
            error(&empty_id),
            "message 1, block 0: a tool call ('read_file') has an empty id"
        );
        assert_eq!(
            error(&[user(vec![call("x")])]),
            "message 0, block 0: a tool call in the user's message"
        );
        assert_eq!(
            error(&[Message::user("a"), assistant(vec![result("x")])]),
            "message 1, block 0: a tool result in the assistant's message"
        );
        let thought = ContentBlock::Thinking {
            thinking: "hmm".into(),
            signature: "sig".into(),
        };
        assert_eq!(
            error(&[user(vec![thought.clone(), ContentBlock::text("a")])]),
            "message 0, block 0: a thinking block in the user's message"
        );
        // In the assistant's message, before its calls, it is fine.
        check(&[
            Message::user("a"),
            assistant(vec![thought, call("x")]),
            user(vec![result("x")]),
        ])
        .unwrap();
    }
}
