//! What the provider tests share: a client that retries fast, and each dialect against the
//! strict mock.

#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "each test file uses a part; test helpers"
)]

use std::time::Duration;

use skillet_llm::{Anthropic, OpenAi, Provider, Transport};
use skillet_test_support::MockServer;

/// A client whose retries wait milliseconds, not seconds.
pub fn transport() -> Transport {
    let mut transport = Transport::new().unwrap();
    transport.retry.base_delay = Duration::from_millis(1);
    transport.retry.max_delay = Duration::from_millis(5);
    transport
}

/// Anthropic's dialect against `server`.
pub fn anthropic(server: &MockServer) -> Provider {
    Provider::Anthropic(Anthropic::new(
        transport(),
        &server.url(),
        "sk-test",
        "claude-test",
    ))
}

/// OpenAI's dialect against `server`, for `model`.
pub fn openai_for(server: &MockServer, model: &str) -> Provider {
    Provider::OpenAi(OpenAi::new(
        transport(),
        &format!("{}/v1", server.url()),
        Some("sk-openai"),
        model,
    ))
}

/// OpenAI's dialect against `server`.
pub fn openai(server: &MockServer) -> Provider {
    openai_for(server, "gpt-test")
}
