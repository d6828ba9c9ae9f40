//! The one error type of the provider layer. Each message is one line a user can act on, with a
//! `hint:` where there is a next step.

use std::time::Duration;

/// A provider request that failed for good (after any retries).
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// 401/403: the key is missing, wrong or lacks access.
    #[error("{provider} refused the API key (HTTP {status}): {message}\nhint: check {key_env}")]
    Auth {
        /// Which provider.
        provider: &'static str,
        /// 401 or 403.
        status: u16,
        /// What it said.
        message: String,
        /// The variable that holds the key.
        key_env: &'static str,
    },
    /// 404: wrong model or base URL.
    #[error(
        "{provider} answered 404 Not Found for {url}: {message}\nhint: check the model name (--model, now '{model}') and the base URL"
    )]
    NotFound {
        /// Which provider.
        provider: &'static str,
        /// The URL requested.
        url: String,
        /// The model asked for.
        model: String,
        /// What it said.
        message: String,
    },
    /// 400: the provider rejected the request; its message says why.
    #[error("{provider} rejected the request (HTTP 400): {message}")]
    BadRequest {
        /// Which provider.
        provider: &'static str,
        /// What it said.
        message: String,
    },
    /// Any other HTTP error, after retries where they apply.
    #[error("{provider} answered HTTP {status}{retried}: {message}")]
    Http {
        /// Which provider.
        provider: &'static str,
        /// The status.
        status: u16,
        /// What it said.
        message: String,
        /// ` after N attempts` when retried.
        retried: String,
    },
    /// The server could not be reached.
    #[error(
        "cannot reach {url}{retried}: {message}\nhint: check the base URL and that the server is running"
    )]
    Connect {
        /// The URL.
        url: String,
        /// What failed.
        message: String,
        /// ` after N attempts` when retried.
        retried: String,
    },
    /// Nothing arrived for too long.
    #[error("{provider} sent nothing for {} s; gave up", .after.as_secs())]
    Timeout {
        /// Which provider.
        provider: &'static str,
        /// How long it waited.
        after: Duration,
    },
    /// The answer stream ended or broke before the model finished.
    #[error("the answer from {provider} was cut off before it finished: {message}")]
    StreamCut {
        /// Which provider.
        provider: &'static str,
        /// What happened.
        message: String,
    },
    /// The provider sent an error event in the stream (overloaded, …).
    #[error("{provider} reported an error ({kind}): {message}")]
    Provider {
        /// Which provider.
        provider: &'static str,
        /// Its error type.
        kind: String,
        /// Its message.
        message: String,
    },
    /// The provider answered something we cannot read.
    #[error("unexpected answer from {provider}: {message}")]
    Protocol {
        /// Which provider.
        provider: &'static str,
        /// What was wrong.
        message: String,
    },
}
