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
        "stopped after {steps} steps without a final answer (the limit per turn)\nhint: raise it with --max-steps or max_steps in skillet.toml"
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
    /// The user cancelled the turn.
    #[error("cancelled")]
    Cancelled,
    /// A compaction did not happen (the history is as it was).
    #[error(transparent)]
    Compact(#[from] crate::compact::CompactError),
}
