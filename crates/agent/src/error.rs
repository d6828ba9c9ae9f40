//! The agent's error type: what ends a turn (tool failures do not: they go to the model).

use std::path::PathBuf;

use skillet_llm::LlmError;

/// A failure that ends a turn or a session.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The provider failed for good.
    #[error(transparent)]
    Provider(#[from] LlmError),
    /// The model kept calling tools past the step limit.
    #[error(
        "stopped after {steps} {} without a final answer (the limit per turn)\nhint: raise it with --max-steps or max_steps in skillet.toml",
        if *.steps == 1 { "step" } else { "steps" }
    )]
    StepLimit {
        /// The limit.
        steps: usize,
    },
    /// The transcript could not be written or read.
    #[error("transcript {}: {message}", path.display())]
    Transcript {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// Another skillet is writing to the session (two writers would interleave histories).
    #[error(
        "session {} is open in another skillet; it is continued in one place at a time\n  hint: finish it there, or start a new session (`skillet`, or /clear in a chat)",
        path.file_stem().map(|stem| stem.to_string_lossy()).unwrap_or_default()
    )]
    SessionInUse {
        /// Its transcript.
        path: PathBuf,
    },
    /// A user message with nothing in it (the APIs refuse empty messages).
    #[error("the message is empty; say what to do")]
    EmptyMessage,
    /// A `UserPromptSubmit` hook refused the message (nothing was sent).
    #[error("a UserPromptSubmit hook refused the message, so nothing was sent: {0}")]
    PromptBlocked(String),
    /// The user cancelled the turn.
    #[error("cancelled")]
    Cancelled,
    /// A compaction did not happen (the history is as it was).
    #[error(transparent)]
    Compact(#[from] CompactError),
}

/// Why a compaction did not happen; the history is left as it was in every case.
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    /// No answer from the model to summarise (a new session, or one compacted already and not
    /// continued since).
    #[error(
        "nothing to compact: the conversation has no answer from the model since it started or was last compacted"
    )]
    NothingToCompact,
    /// The last answer's tool calls have no results yet.
    #[error(
        "cannot compact in the middle of a turn: the model's last tool calls have no results yet; finish or cancel the turn first"
    )]
    MidTurn,
    /// The model answered without any text.
    #[error(
        "the model wrote no summary (it answered with {calls} tool call(s) and no text); the conversation was left as it was"
    )]
    NoSummary {
        /// The calls it made instead (not run).
        calls: usize,
    },
    /// The output limit cut the summary off.
    #[error(
        "the summary was cut off by the output limit (max_tokens {max_tokens}); the conversation was left as it was\nhint: raise max_tokens, or compact with instructions asking for a shorter summary"
    )]
    Cut {
        /// The limit.
        max_tokens: u32,
    },
}
