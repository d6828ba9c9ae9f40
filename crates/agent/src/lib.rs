//! The skillet agent: a loop over a model provider with tools, permissions and a transcript.
//!
//! [`Agent`] holds a session: the system prompt (preamble + the skill catalog, Layer 1) and the
//! tool definitions are built once and never change; the history is append-only, so the
//! provider's prompt cache keeps hitting. [`Agent::run_turn`] sends, streams, runs every tool
//! call of the answer in order, answers them in one message, and repeats until the model stops
//! calling tools. Tools ([`tool::Tool`], one file each under `tools/`) are confined to the
//! working directory, plus read-only access to skill folders (Layer 3); their failures go back to
//! the model. Writes and commands pass a [`permission::Gate`].
//!
//! The project's `AGENTS.md` files ([`instructions`]) go into a new session's system prompt;
//! [`Agent::compact`] replaces the history with a summary ([`compact`]), the prompt unchanged.

mod agent;
mod catalog;
pub mod compact;
mod config;
mod error;
mod event;
pub mod grants;
pub mod guard;
mod hook_run;
pub mod hooks;
pub mod instructions;
pub mod invoke;
pub mod mentions;
pub mod paths;
pub mod permission;
mod prompt;
pub mod reload;
mod repair;
pub mod rules;
pub mod sandbox;
mod shell;
mod state;
mod suggest;
pub mod tool;
pub mod tools;
pub mod transcript;
mod turn;

pub use agent::Agent;
pub use catalog::{CATALOG_BUDGET_BOUNDS, catalog_budget, session_catalog};
pub use compact::CompactOutcome;
pub use config::{
    AUTO_LOAD_SCORE, AgentConfig, DEFAULT_MAX_STEPS, DEFAULT_MAX_TOKENS, MAX_SUGGESTIONS,
    SkillMatch,
};
pub use error::AgentError;
pub use error::CompactError;
pub use event::{AgentEvent, PREVIEW_CHARS, TurnOutcome, preview};
pub use instructions::{InstructionFile, Instructions, init_prompt};
pub use prompt::system_prompt;
pub use turn::{CANCELLED_CALL, CONTINUE, CUT_CALL, INTERRUPTED_CALL};
