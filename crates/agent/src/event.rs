//! What a turn tells the user interface ([`AgentEvent`]) and how it ended ([`TurnOutcome`]).

use serde_json::Value;
use skillet_llm::Usage;

/// What happens during a turn, for the user interface.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// Streamed answer text.
    Text(String),
    /// The model's thinking as it streams (untrusted, like the answer: shown, never obeyed).
    Thinking(String),
    /// The model calls a tool.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        input: Value,
    },
    /// A tool returned.
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// What it returned.
        content: String,
        /// Whether it failed.
        is_error: bool,
    },
    /// A request is retried.
    Retrying {
        /// The next attempt.
        attempt: u32,
        /// The wait before it.
        delay_ms: u64,
        /// Why.
        reason: String,
    },
    /// Something the user should know.
    Notice(String),
    /// One request's token counts.
    Usage(Usage),
    /// Something a subagent did (started by the `task` call `call_id`).
    Subagent {
        /// The `task` call that started it.
        call_id: String,
        /// What it did.
        event: Box<AgentEvent>,
    },
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The final answer's text.
    pub text: String,
    /// Model requests made.
    pub steps: usize,
}

/// How many characters of a tool result the previews show.
pub const PREVIEW_CHARS: usize = 200;

/// The first [`PREVIEW_CHARS`] characters of a result, on one line.
pub fn preview(content: &str) -> String {
    let one_line: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > PREVIEW_CHARS {
        let cut: String = one_line.chars().take(PREVIEW_CHARS).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}
