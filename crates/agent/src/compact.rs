//! Compaction (`/compact`): the history is replaced by a summary the model writes of it, to free
//! up the context window.
//!
//! The summary is asked for with the session's own system prompt and tool definitions, byte for
//! byte, and the history as it is, followed by one user message asking for the summary (so the
//! provider's prompt cache still hits, and the request is one the APIs accept: a history holding
//! tool calls must come with its tools). The request says not to call tools; calls the model
//! makes anyway are not run, only its text is used. The history must be between turns: an answer
//! whose calls have no results yet is refused ([`CompactError::MidTurn`]).
//!
//! The new history is a user message, [`SUMMARY_HEADER`] then the summary, then the skills loaded
//! so far as the model last received them (found in the history: `load_skill` results and skills
//! the user invoked; the most recent first, each within [`MAX_KEPT_SKILL_CHARS`], all within
//! [`MAX_KEPT_SKILLS_CHARS`]), and the short answer [`SUMMARY_ACKNOWLEDGED`], so roles alternate
//! for servers whose chat templates insist. The system prompt and tools do not change.
//!
//! A session compacts itself once the last request neared the model's context window
//! ([`AUTO_COMPACT_SHARE`] of it, from the provider's usage figures), before the next user
//! message is sent, and says so ([`crate::Agent::run_turn`]). A `compacted` event in the transcript holds the new history, so a
//! resumed session continues from it. Nothing changes unless a whole summary came back.

use skillet_llm::{ContentBlock, Message, Request, Role, StopReason, StreamEvent, Usage};

use crate::error::AgentError;
use crate::event::AgentEvent;
use crate::state::Core;
use crate::transcript::{Transcript, TranscriptEvent};

/// Characters per token, for the estimates of [`CompactOutcome`].
pub const CHARS_PER_TOKEN: usize = 4;
/// The share of the model's context window the last request may fill before the session is
/// compacted, between turns.
pub const AUTO_COMPACT_SHARE: f64 = 0.8;
/// Tokens left free besides the answer's `max_tokens` when deciding to compact: the summary
/// request is the whole history, the request, and room for the summary, and must fit.
pub const COMPACT_MARGIN_TOKENS: u64 = 1_024;
/// The most characters of one loaded skill kept after a compaction.
pub const MAX_KEPT_SKILL_CHARS: usize = 8_000;
/// The most characters of all loaded skills kept after a compaction.
pub const MAX_KEPT_SKILLS_CHARS: usize = 24_000;
/// What the kept skills start with.
pub const KEPT_SKILLS_HEADER: &str = "[Skills loaded before the compaction, as you received them:]";

/// What is asked of the model (the user's own instructions, if any, follow it).
pub const COMPACT_REQUEST: &str = "The conversation so far is about to be replaced by a summary, \
to free up the context window; you will continue the work from that summary alone. Write the \
summary now, as plain text. Do not call any tools.\n\n\
Include:\n\
1. The user's requests and goals, and every preference or constraint they stated (in their own \
words where the wording matters).\n\
2. What has been done: files read, created or changed (with their paths), commands run and what \
they showed, decisions taken and why.\n\
3. The current state: what works, what fails (with the exact error messages), what is half done.\n\
4. What remains, as concrete next steps, the very next one first.\n\
5. Anything else needed to go on without asking again: names, values, short pieces of code \
worth keeping.\n\n\
Be complete but brief: facts, not narration.";

/// The model's side of a compacted history: it follows the summary, so roles still alternate.
pub const SUMMARY_ACKNOWLEDGED: &str = "Understood. I will continue from this summary.";

/// What the summary message starts with, so the model (and a reader of the transcript) knows
/// what it is.
pub const SUMMARY_HEADER: &str = "[Summary of the earlier conversation. The conversation was \
compacted to free up the context window: the messages this summary replaces are no longer \
available. Continue the work from it.]";

pub use crate::error::CompactError;

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactOutcome {
    /// The summary the model wrote (without [`SUMMARY_HEADER`]).
    pub summary: String,
    /// How many messages it replaced.
    pub messages_before: usize,
    /// The history's size before, in tokens (estimated at [`CHARS_PER_TOKEN`]).
    pub tokens_before: usize,
    /// Its size after (the summary message), estimated the same way.
    pub tokens_after: usize,
    /// What the summary request cost.
    pub usage: Usage,
}

/// Compacts `history` (see the module's documentation); `instructions` are the user's, added
/// to the request. The transcript, when there is one, gets the request's usage and the new
/// history; if writing it fails the user is told with a notice and the compaction stands.
pub(crate) async fn compact(
    core: &Core,
    history: &mut Vec<Message>,
    transcript: &mut Option<Transcript>,
    instructions: Option<&str>,
    events: &mut (dyn FnMut(AgentEvent) + Send),
) -> Result<CompactOutcome, AgentError> {
    // The acknowledgement a compaction leaves is not an answer to summarise.
    if !history
        .iter()
        .any(|message| message.role == Role::Assistant && message.text() != SUMMARY_ACKNOWLEDGED)
    {
        return Err(CompactError::NothingToCompact.into());
    }
    if history
        .last()
        .is_some_and(|last| last.role == Role::Assistant && last.tool_uses().next().is_some())
    {
        return Err(CompactError::MidTurn.into());
    }
    let mut request_text = COMPACT_REQUEST.to_string();
    if let Some(extra) = instructions
        .map(str::trim)
        .filter(|extra| !extra.is_empty())
    {
        request_text.push_str("\n\nThe user adds, for this summary: ");
        request_text.push_str(extra);
    }
    let mut messages = history.clone();
    messages.push(Message::user(request_text));
    let request = Request {
        system: &core.system,
        messages: &messages,
        tools: &core.specs,
        max_tokens: core.config.max_tokens,
        stream: core.config.stream,
        // A summary needs no thinking (and its blocks are left out of the history sent).
        thinking: None,
    };
    // The summary is returned, not shown as an answer: only retries reach the interface.
    let mut forward = |event: StreamEvent| {
        if let StreamEvent::Retrying {
            attempt,
            delay_ms,
            reason,
        } = event
        {
            events(AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            });
        }
    };
    let response = core.provider.send(request, &mut forward).await?;
    if let Ok(mut usage) = core.usage.lock() {
        usage.add(response.usage);
    }
    events(AgentEvent::Usage(response.usage));
    let mut failure: Option<String> = None;
    let mut record = |event: &TranscriptEvent| {
        if let Some(transcript) = transcript.as_mut()
            && let Err(error) = transcript.record(event)
        {
            failure.get_or_insert_with(|| error.to_string());
        }
    };
    record(&TranscriptEvent::Usage {
        usage: response.usage,
    });
    let summary = response.message.text().trim().to_string();
    let result = if response.stop_reason == StopReason::MaxTokens {
        Err(CompactError::Cut {
            max_tokens: core.config.max_tokens,
        })
    } else if summary.is_empty() {
        Err(CompactError::NoSummary {
            calls: response.message.tool_uses().count(),
        })
    } else {
        Ok(())
    };
    if let Err(error) = result {
        record(&TranscriptEvent::Error {
            message: error.to_string(),
        });
        finish(transcript, failure, events);
        return Err(error.into());
    }
    let compacted = compacted_history(&summary, &loaded_skills(history));
    let outcome = CompactOutcome {
        messages_before: history.len(),
        tokens_before: estimate_tokens(history),
        tokens_after: estimate_tokens(&compacted),
        usage: response.usage,
        summary,
    };
    record(&TranscriptEvent::Compacted {
        messages: compacted.clone(),
    });
    *history = compacted;
    finish(transcript, failure, events);
    Ok(outcome)
}

/// Makes the transcript durable; a failure to write it is told as a notice.
fn finish(
    transcript: &mut Option<Transcript>,
    mut failure: Option<String>,
    events: &mut (dyn FnMut(AgentEvent) + Send),
) {
    if let Some(transcript) = transcript.as_mut()
        && let Err(error) = transcript.sync()
    {
        failure.get_or_insert_with(|| error.to_string());
    }
    if let Some(failure) = failure {
        events(AgentEvent::Notice(format!(
            "{failure}; the transcript may not hold the compaction"
        )));
    }
}

/// The tokens one image is counted as (Anthropic sizes an image at width × height / 750
/// tokens, about 1,600 at most once scaled down).
const IMAGE_TOKENS: usize = 1_600;

/// The tokens of `messages`, estimated at [`CHARS_PER_TOKEN`] characters each: text, tool
/// names and arguments, tool results.
pub fn estimate_tokens(messages: &[Message]) -> usize {
    let chars: usize = messages
        .iter()
        .flat_map(|message| &message.content)
        .map(|block| match block {
            ContentBlock::Text { text } => text.chars().count(),
            ContentBlock::ToolUse { name, input, .. } => {
                name.chars().count() + input.to_string().chars().count()
            }
            ContentBlock::ToolResult { content, .. } => content.chars().count(),
            // Counted whole, though the API leaves out the thinking of turns before the last
            // (an estimate that errs on the large side compacts early, never too late).
            ContentBlock::Thinking { thinking, .. } => thinking.chars().count(),
            ContentBlock::RedactedThinking { data } => data.len(),
            // Anthropic's upper bound for one image (about 1,600 tokens, however large).
            ContentBlock::Image { .. } => IMAGE_TOKENS * CHARS_PER_TOKEN,
        })
        .sum();
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// The history a compaction leaves: the summary, then a short answer, so the next user message
/// follows an assistant one (some chat templates, served by llama.cpp, vLLM or Ollama, refuse
/// two user messages in a row).
fn compacted_history(summary: &str, skills: &[String]) -> Vec<Message> {
    // The model's words: they may quote skills or the kept-skills header, which must not pass
    // for the real ones at the next compaction.
    let summary =
        skillet_skills::neutralize_wrapper(&summary.replace(KEPT_SKILLS_HEADER, "")).into_owned();
    let mut text = format!("{SUMMARY_HEADER}\n\n{summary}");
    if !skills.is_empty() {
        text.push_str("\n\n");
        text.push_str(KEPT_SKILLS_HEADER);
        for skill in skills {
            text.push_str("\n\n");
            text.push_str(skill);
        }
    }
    vec![
        Message {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
        },
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(SUMMARY_ACKNOWLEDGED)],
        },
    ]
}

/// The skills loaded in `history`, as the model received them (`<skill name="…">…</skill>`, a
/// body inside never holding the tags: Layer 2 neutralises them): `load_skill` results and
/// skills the user invoked (text that starts with the block), and those a compaction kept (after
/// [`KEPT_SKILLS_HEADER`] in its summary; the summary's own words are not looked into); each once
/// (its latest), the most recent first, each cut to [`MAX_KEPT_SKILL_CHARS`] (closed again), as
/// many as fit in [`MAX_KEPT_SKILLS_CHARS`].
pub fn loaded_skills(history: &[Message]) -> Vec<String> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut calls = std::collections::HashSet::new();
    for message in history {
        for block in &message.content {
            let text = match block {
                ContentBlock::ToolUse { id, name, .. } if name == "load_skill" => {
                    calls.insert(id.clone());
                    continue;
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error: false,
                } if calls.contains(tool_use_id) => content.as_str(),
                ContentBlock::Text { text } if message.role == Role::User => text.as_str(),
                _ => continue,
            };
            let blocks = if text.starts_with(SUMMARY_HEADER) {
                text.split_once(KEPT_SKILLS_HEADER)
                    .map(|(_, kept)| skill_blocks(kept))
                    .unwrap_or_default()
            } else if text.starts_with("<skill name=\"") {
                skill_blocks(text).into_iter().take(1).collect()
            } else {
                Vec::new()
            };
            for skill in blocks {
                if let Some(name) = skill_name(skill) {
                    found.retain(|(seen, _)| *seen != name);
                    found.push((name, skill.to_string()));
                }
            }
        }
    }
    let mut kept = Vec::new();
    let mut room = MAX_KEPT_SKILLS_CHARS;
    for (_, skill) in found.iter().rev() {
        let skill = cut_chars(skill, MAX_KEPT_SKILL_CHARS);
        let size = skill.chars().count();
        if size > room {
            break;
        }
        room -= size;
        kept.push(skill);
    }
    kept
}

/// The `<skill name="…">…</skill>` blocks of a text, each whole.
fn skill_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<skill name=\"") {
        let Some(length) = rest[start..].find("</skill>") else {
            break;
        };
        let end = start + length + "</skill>".len();
        blocks.push(&rest[start..end]);
        rest = &rest[end..];
    }
    blocks
}

/// The name in a skill block's opening tag.
fn skill_name(block: &str) -> Option<String> {
    let rest = block.strip_prefix("<skill name=\"")?;
    rest.find('"').map(|end| rest[..end].to_string())
}

/// A skill block of at most about `limit` characters: when cut, the cut is said and the block
/// closed again, so it stays one block.
fn cut_chars(block: &str, limit: usize) -> String {
    match block.char_indices().nth(limit) {
        None => block.to_string(),
        Some((at, _)) => format!(
            "{}\n[… cut at {limit} characters; load the skill again for all of it]\n</skill>",
            &block[..at]
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_estimated_from_every_block() {
        let messages = vec![
            Message::user("abcd"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "c".into(),
                    name: "ls".into(),
                    input: serde_json::json!({}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "c".into(),
                    content: "é".into(),
                    is_error: false,
                }],
            },
        ];
        // 4 + (2 + 2) + 1 = 9 characters: 3 tokens rounded up.
        assert_eq!(estimate_tokens(&messages), 3);
        assert_eq!(estimate_tokens(&[]), 0);
    }

    #[test]
    fn loaded_skills_are_kept_latest_first_each_and_all_capped() {
        let skill = |name: &str, size: usize| {
            format!("<skill name=\"{name}\">\n{}\n</skill>", "x".repeat(size))
        };
        let call = |id: &str, name: &str| Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "load_skill".into(),
                input: serde_json::json!({ "name": name }),
            }],
        };
        let result = |id: &str, text: String| Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: text,
                is_error: false,
            }],
        };
        let history = vec![
            call("1", "a"),
            result("1", skill("a", 100)),
            Message::user(skill("typed", 50)),
            call("2", "big"),
            result("2", skill("big", 20_000)),
            call("3", "a"),
            result("3", skill("a", 200)),
            // A file's text that looks like a skill is not one.
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "4".into(),
                    name: "read_file".into(),
                    input: serde_json::json!({}),
                }],
            },
            result("4", skill("fake", 10)),
        ];
        let kept = loaded_skills(&history);
        let names: Vec<Option<String>> = kept.iter().map(|skill| skill_name(skill)).collect();
        assert_eq!(
            names,
            [Some("a".into()), Some("big".into()), Some("typed".into())]
        );
        assert!(kept[0].contains(&"x".repeat(200)), "the latest load of a");
        assert!(kept[1].chars().count() < MAX_KEPT_SKILL_CHARS + 100);
        assert!(kept[1].contains("cut at 8000 characters"));
        assert!(kept[1].ends_with("</skill>"), "closed again");
        // Kept by a compaction, found again whole; the summary's own words are not looked into.
        let summary = Message::user(format!(
            "{SUMMARY_HEADER}\n\nWe discussed <skill name=\"quoted\">x</skill>.\n\n{KEPT_SKILLS_HEADER}\n\n{}\n\n{}",
            kept[1], kept[0]
        ));
        let again: Vec<Option<String>> = loaded_skills(&[summary])
            .iter()
            .map(|skill| skill_name(skill))
            .collect();
        assert_eq!(again, [Some("a".into()), Some("big".into())]);
        // Past the total, older skills are left out.
        let many: Vec<Message> = (0..5)
            .flat_map(|i| {
                let id = i.to_string();
                [call(&id, &id), result(&id, skill(&id, 7_000))]
            })
            .collect();
        assert_eq!(loaded_skills(&many).len(), 3);
    }
}
