//! A resumed session's conversation so far (its last turns), shown before the prompt as a turn
//! is shown.

use std::io::Write as _;

use skillet_agent::compact::SUMMARY_HEADER;
use skillet_llm::{ContentBlock, Message, Role};

use super::{PROMPT, cut};
use crate::output::{terminal_safe, warn};
use crate::plural;

/// A resumed chat shows at most this many of its last turns before the prompt.
const REPLAY_TURNS: usize = 10;
/// The most characters of a replayed message or a tool call's argument shown.
const REPLAY_LINE_CHARS: usize = 300;

/// The words of a user message that is a turn's start: its first text block (what follows it
/// is skillet's, such as skill suggestions); `None` for tool results.
fn user_text(message: &Message) -> Option<&str> {
    if message.role != Role::User {
        return None;
    }
    message.content.iter().find_map(|block| match block {
        ContentBlock::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
        _ => None,
    })
}

/// Shows a resumed session's conversation so far, before the prompt, as a turn is shown: the
/// user's messages, the answers (Markdown rendered on a terminal) and one line per tool call,
/// for the last [`REPLAY_TURNS`] turns.
pub(super) fn replay(history: &[Message]) {
    let starts: Vec<usize> = history
        .iter()
        .enumerate()
        .filter(|(_, message)| user_text(message).is_some())
        .map(|(index, _)| index)
        .collect();
    let earlier = starts.len().saturating_sub(REPLAY_TURNS);
    let from = starts.get(earlier).copied().unwrap_or(0);
    if earlier > 0 {
        warn(&format!("… {} earlier", plural(earlier, "turn")));
    }
    let screen = crate::ui::screen();
    for message in &history[from..] {
        match message.role {
            Role::User => {
                let Some(said) = user_text(message) else {
                    continue;
                };
                // The answer before it is shown whole, its line ended.
                screen.end_turn();
                if said.starts_with(SUMMARY_HEADER) {
                    warn("(the conversation before this point was compacted into a summary)");
                    continue;
                }
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "{PROMPT}{}",
                    terminal_safe(&cut(said.trim(), REPLAY_LINE_CHARS), true)
                );
                let _ = out.flush();
            }
            Role::Assistant => {
                for block in &message.content {
                    match block {
                        ContentBlock::Text { text } => screen.text(text),
                        ContentBlock::ToolUse { name, input, .. } => {
                            screen.tool_call(name, input, 0);
                        }
                        // Thinking is shown as it comes, not again on resuming.
                        ContentBlock::ToolResult { .. }
                        | ContentBlock::Image { .. }
                        | ContentBlock::Thinking { .. }
                        | ContentBlock::RedactedThinking { .. } => {}
                    }
                }
            }
        }
    }
    screen.end_turn();
}
