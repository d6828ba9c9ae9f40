//! What the agent's integration tests share: a client that retries fast, and both dialects
//! against one strict mock server.

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

/// Both dialects, against one server.
pub fn providers(server: &MockServer) -> [Provider; 2] {
    [
        Provider::Anthropic(Anthropic::new(
            transport(),
            &server.url(),
            "sk-ant",
            "claude-test",
        )),
        Provider::OpenAi(OpenAi::new(
            transport(),
            &format!("{}/v1", server.url()),
            Some("sk-oa"),
            "gpt-test",
        )),
    ]
}

/// Every request was accepted by the strict mock.
pub fn all_accepted(server: &MockServer) {
    assert_eq!(server.rejections(), Vec::<String>::new());
}
