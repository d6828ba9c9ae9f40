//! The provider a session talks to, whichever dialect it speaks.

use crate::anthropic::Anthropic;
use crate::error::LlmError;
use crate::history;
use crate::openai::OpenAi;
use crate::types::{Request, Response, StreamEvent};

/// Which dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// The Anthropic Messages API.
    Anthropic,
    /// OpenAI-compatible Chat Completions.
    OpenAi,
}

impl ProviderKind {
    /// `anthropic` or `openai`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
        }
    }
}

/// A configured provider.
#[derive(Debug, Clone)]
pub enum Provider {
    /// Anthropic.
    Anthropic(Anthropic),
    /// OpenAI-compatible.
    OpenAi(OpenAi),
}

impl Provider {
    /// Sends one request and returns the whole answer; text is reported through `events` as it
    /// streams in (when the request streams). A history that breaks a rule every provider
    /// enforces ([`history::check`]) is refused with [`LlmError::InvalidHistory`] before
    /// anything is sent.
    pub async fn send(
        &self,
        request: Request<'_>,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Response, LlmError> {
        history::check(request.messages).map_err(|error| LlmError::InvalidHistory { error })?;
        match self {
            Self::Anthropic(provider) => provider.send(request, events).await,
            Self::OpenAi(provider) => provider.send(request, events).await,
        }
    }

    /// The dialect.
    pub fn kind(&self) -> ProviderKind {
        match self {
            Self::Anthropic(_) => ProviderKind::Anthropic,
            Self::OpenAi(_) => ProviderKind::OpenAi,
        }
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        match self {
            Self::Anthropic(provider) => provider.model(),
            Self::OpenAi(provider) => provider.model(),
        }
    }

    /// Asks for another model from the next request on (same dialect, server and key).
    pub fn set_model(&mut self, model: &str) {
        match self {
            Self::Anthropic(provider) => provider.set_model(model),
            Self::OpenAi(provider) => provider.set_model(model),
        }
    }
}

/// A model's context window in tokens, as far as its name tells; local and unknown models get
/// a conservative default. Used to size the skill catalog.
pub fn context_window(model: &str) -> u64 {
    let model = model.to_ascii_lowercase();
    if model.contains("claude") {
        200_000
    } else if model.starts_with("gpt-4.1") || model.starts_with("gpt-5") {
        400_000
    } else if model.starts_with("gpt-4o")
        || model.starts_with("o1")
        || model.starts_with("o3")
        || model.starts_with("o4")
    {
        128_000
    } else {
        DEFAULT_CONTEXT_WINDOW
    }
}

/// The context window assumed for a model we do not know (many local models run at 32k).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 32_768;
