//! Model providers for skillet: the Anthropic Messages API and OpenAI-compatible Chat
//! Completions (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter), streaming and not, over one
//! HTTP [`Transport`] (timeouts, retries with backoff and jitter, `retry-after`, SSE framing).
//!
//! Each provider maps its wire format to the same [`Message`]/[`Response`] types and reports
//! text as it streams through [`StreamEvent`]s. Errors are [`LlmError`]s worded for the user
//! (a bad key names the variable to check; a 404 names the model and URL).
//!
//! Before sending, [`history::check`] holds a history to the rules every provider enforces, so
//! a broken history is refused with the rule it breaks instead of a provider's 400. A tool call
//! whose arguments did not arrive whole is kept with input `{}` and listed in
//! [`Response::malformed_calls`] for the caller to answer with an error.
//!
//! It does not hold conversation state, run tools, or read configuration: the agent does.

mod answer;
mod anthropic;
mod error;
mod exchange;
pub mod history;
mod openai;
mod provider;
mod retry_after;
pub mod sse;
mod transport;
mod types;

pub use anthropic::{ANTHROPIC_VERSION, Anthropic};
pub use error::{Awaiting, LlmError};
pub use history::HistoryError;
pub use openai::{OpenAi, REASONING_MODEL_PREFIXES, takes_max_completion_tokens};
pub use provider::{DEFAULT_CONTEXT_WINDOW, Provider, ProviderKind, context_window};
pub use retry_after::RETRY_AFTER_CEILING;
pub use transport::{
    BODY_TIMEOUT, CONNECT_TIMEOUT, IDLE_TIMEOUT, MAX_RETRY_AFTER, REQUEST_TIMEOUT,
    RETRY_ERROR_TYPES, RETRY_STATUSES, RetryPolicy, Transport, error_message,
};
pub use types::{
    ContentBlock, IMAGE_MEDIA_TYPES, MAX_IMAGE_BYTES, MAX_THINKING_BUDGET, MIN_THINKING_BUDGET,
    MalformedCall, Message, Request, Response, Role, StopReason, StreamEvent, ToolSpec, Usage,
    image_type,
};

/// Default base URLs.
pub mod defaults {
    pub use crate::anthropic::DEFAULT_BASE_URL as ANTHROPIC_BASE_URL;
    pub use crate::openai::DEFAULT_BASE_URL as OPENAI_BASE_URL;
}
