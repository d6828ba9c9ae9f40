//! Making a stored history valid again before it is resumed: a session that stopped while tools
//! ran, or one written by an older skillet, can hold calls nobody answered (anywhere, not only
//! at the end), results of no call, and empty text; the real APIs reject each of those with
//! HTTP 400 on every later request.
//!
//! The repair is written to the transcript, so the file says what was sent: when it only adds
//! messages at the end they are appended as they are; otherwise one `repaired` event holds the
//! whole repaired history, which replaces what came before it when the file is read.

use skillet_llm::{ContentBlock, Message, Role};

use crate::transcript::TranscriptEvent;

/// What a call left open in a stored session is answered with.
pub const NOT_RUN: &str =
    "error: the session stopped before this call ran; run it again if it is still needed";

/// A repaired history.
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired {
    /// The valid history.
    pub messages: Vec<Message>,
    /// What to write to the transcript so that reading it gives `messages`.
    pub record: Vec<TranscriptEvent>,
    /// What was repaired, one line each, for the user.
    pub notes: Vec<String>,
}

/// Counts of what was repaired.
#[derive(Default)]
struct Counts {
    unanswered: usize,
    stray: usize,
    empty: usize,
}

/// Repairs `history` (see the module's documentation).
pub fn repair(history: &[Message]) -> Repaired {
    let mut out: Vec<Message> = Vec::with_capacity(history.len() + 1);
    let mut counts = Counts::default();
    let mut messages: Vec<Message> = Vec::with_capacity(history.len());
    for message in history {
        let mut message = message.clone();
        let before = message.content.len();
        message.content.retain(|block| !is_blank(block));
        counts.empty += before - message.content.len();
        if !message.content.is_empty() {
            messages.push(message);
        }
    }
    let mut rest = messages.into_iter().peekable();
    while let Some(message) = rest.next() {
        if out.is_empty() && message.role == Role::Assistant {
            continue;
        }
        if message.role == Role::User {
            // Results here answer no call of the previous message (those were taken below).
            let (kept, dropped): (Vec<_>, Vec<_>) = message
                .content
                .into_iter()
                .partition(|block| !matches!(block, ContentBlock::ToolResult { .. }));
            counts.stray += dropped.len();
            if !kept.is_empty() {
                out.push(Message {
                    role: Role::User,
                    content: kept,
                });
            }
            continue;
        }
        let ids: Vec<String> = message.tool_uses().map(|(id, ..)| id.to_string()).collect();
        out.push(message);
        if ids.is_empty() {
            continue;
        }
        // The next message must answer every call, in order, before any text.
        let reply = rest
            .next_if(|next| next.role == Role::User)
            .map(|next| next.content)
            .unwrap_or_default();
        out.push(Message {
            role: Role::User,
            content: answer_calls(&ids, reply, &mut counts),
        });
    }
    Repaired {
        record: record_for(history, &out),
        notes: notes(&counts),
        messages: out,
    }
}

/// A text block with nothing but whitespace.
fn is_blank(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Text { text } if text.trim().is_empty())
}

/// The blocks of the message answering `ids`: their results in order (made up for calls the
/// reply does not answer), then the reply's other blocks; results of other calls are dropped.
fn answer_calls(
    ids: &[String],
    mut reply: Vec<ContentBlock>,
    counts: &mut Counts,
) -> Vec<ContentBlock> {
    let mut results = Vec::with_capacity(ids.len());
    for id in ids {
        let found = reply.iter().position(|block| {
            matches!(block, ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id)
        });
        if let Some(index) = found {
            results.push(reply.remove(index));
        } else {
            counts.unanswered += 1;
            results.push(ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: NOT_RUN.to_string(),
                is_error: true,
            });
        }
    }
    let before = reply.len();
    reply.retain(|block| !matches!(block, ContentBlock::ToolResult { .. }));
    counts.stray += before - reply.len();
    results.extend(reply);
    results
}

/// What to write so that reading the transcript gives `repaired` after `history`.
fn record_for(history: &[Message], repaired: &[Message]) -> Vec<TranscriptEvent> {
    if repaired == history {
        Vec::new()
    } else if repaired.len() > history.len() && repaired[..history.len()] == history[..] {
        repaired[history.len()..]
            .iter()
            .map(|message| TranscriptEvent::Message {
                message: message.clone(),
            })
            .collect()
    } else {
        vec![TranscriptEvent::Repaired {
            messages: repaired.to_vec(),
        }]
    }
}

fn notes(counts: &Counts) -> Vec<String> {
    let mut notes = Vec::new();
    if counts.unanswered > 0 {
        notes.push(format!(
            "{} tool call(s) had no result and were answered as not run",
            counts.unanswered
        ));
    }
    if counts.stray > 0 {
        notes.push(format!(
            "{} tool result(s) answering no call were dropped",
            counts.stray
        ));
    }
    if counts.empty > 0 {
        notes.push(format!("{} empty text block(s) were dropped", counts.empty));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> ContentBlock {
        ContentBlock::ToolUse {
            id: id.into(),
            name: "bash".into(),
            input: json!({"command": "ls"}),
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

    #[test]
    fn a_valid_history_is_left_alone() {
        let history = vec![
            Message::user("hi"),
            assistant(vec![ContentBlock::text("look"), call("a"), call("b")]),
            user(vec![result("a"), result("b")]),
            assistant(vec![ContentBlock::text("done")]),
        ];
        let repaired = repair(&history);
        assert_eq!(repaired.messages, history);
        assert!(repaired.record.is_empty() && repaired.notes.is_empty());
    }

    #[test]
    fn open_calls_at_the_end_are_answered_by_appending() {
        let history = vec![Message::user("hi"), assistant(vec![call("a")])];
        let repaired = repair(&history);
        assert_eq!(repaired.messages.len(), 3);
        assert!(matches!(
            &repaired.record[..],
            [TranscriptEvent::Message { message }] if message == &repaired.messages[2]
        ));
    }

    #[test]
    fn open_calls_in_the_middle_stray_results_and_empty_text_are_repaired_whole() {
        let history = vec![
            Message::user("hi"),
            assistant(vec![call("a"), call("b")]),
            // b answered, a missing, a stray result and text after the results.
            user(vec![result("b"), result("zzz"), ContentBlock::text("more")]),
            assistant(vec![ContentBlock::text(""), call("c")]),
            Message::user("next"),
            assistant(vec![ContentBlock::text("ok")]),
            user(vec![result("orphan")]),
        ];
        let repaired = repair(&history);
        let expected = vec![
            Message::user("hi"),
            assistant(vec![call("a"), call("b")]),
            user(vec![
                ContentBlock::ToolResult {
                    tool_use_id: "a".into(),
                    content: NOT_RUN.into(),
                    is_error: true,
                },
                result("b"),
                ContentBlock::text("more"),
            ]),
            assistant(vec![call("c")]),
            user(vec![
                ContentBlock::ToolResult {
                    tool_use_id: "c".into(),
                    content: NOT_RUN.into(),
                    is_error: true,
                },
                ContentBlock::text("next"),
            ]),
            assistant(vec![ContentBlock::text("ok")]),
        ];
        assert_eq!(repaired.messages, expected);
        assert!(
            matches!(&repaired.record[..], [TranscriptEvent::Repaired { messages }] if messages == &expected)
        );
        assert_eq!(repaired.notes.len(), 3, "{:?}", repaired.notes);
    }
}
