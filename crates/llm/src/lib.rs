//! Model providers for skillet: the Anthropic Messages API and OpenAI-compatible Chat
//! Completions (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter), streaming and not, over one
//! HTTP [`Transport`] (timeouts, retries with backoff and jitter, `retry-after`, SSE framing).
//!
//! Each provider maps its wire format to the same [`Message`]/[`Response`] types and reports
//! text as it streams through [`StreamEvent`]s. Errors are [`LlmError`]s worded for the user
//! (a bad key names the variable to check; a 404 names the model and URL).
//!
//! It does not hold conversation state, run tools, or read configuration: the agent does.

mod anthropic;
mod error;
mod openai;
mod provider;
mod transport;
mod types;

pub use anthropic::{ANTHROPIC_VERSION, Anthropic};
pub use error::LlmError;
pub use openai::OpenAi;
pub use provider::{DEFAULT_CONTEXT_WINDOW, Provider, ProviderKind, context_window};
pub use transport::{
    CONNECT_TIMEOUT, IDLE_TIMEOUT, RETRY_STATUSES, RetryPolicy, Transport, error_message,
};
pub use types::{
    ContentBlock, Message, Request, Response, Role, StopReason, StreamEvent, ToolSpec, Usage,
};

/// Default base URLs.
pub mod defaults {
    pub use crate::anthropic::DEFAULT_BASE_URL as ANTHROPIC_BASE_URL;
    pub use crate::openai::DEFAULT_BASE_URL as OPENAI_BASE_URL;
}
