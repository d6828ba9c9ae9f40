//! The one error type of the provider layer. Each message is one line a user can act on, with a
//! `hint:` where there is a next step.

use std::time::Duration;

use crate::history::HistoryError;

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
    /// Nothing, or not enough, arrived in time.
    #[error("{provider} {}", .awaiting.describe(*.after))]
    Timeout {
        /// Which provider.
        provider: &'static str,
        /// How long it waited.
        after: Duration,
        /// What it was waiting for.
        awaiting: Awaiting,
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
    /// The history breaks a rule every provider enforces, so it was not sent: a bug in the
    /// caller (the agent), never the user's doing.
    #[error(
        "skillet bug: the conversation history is invalid, so it was not sent: {error}\nhint: please report this bug"
    )]
    InvalidHistory {
        /// The rule broken.
        error: HistoryError,
    },
}

/// What a timed-out request was waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Awaiting {
    /// The start of a streamed answer.
    Start,
    /// The next part of a streamed answer.
    NextEvent,
    /// The whole of a non-streamed answer.
    WholeAnswer,
}

impl Awaiting {
    /// `sent nothing for 5 min after the request; gave up`, with a hint.
    fn describe(self, after: Duration) -> String {
        let after = duration_text(after);
        match self {
            Self::Start => format!(
                "sent nothing for {after} after the request; gave up\nhint: the server may be overloaded or stuck; try again"
            ),
            Self::NextEvent => format!(
                "went silent for {after} in the middle of its answer; gave up\nhint: the server may be overloaded or stuck; try again"
            ),
            Self::WholeAnswer => format!(
                "did not finish its answer within {after}; gave up\nhint: a slow model answers in parts when streaming (without --no-stream), which has no limit on the whole answer"
            ),
        }
    }
}

/// `250 ms`, `30 s`, `5 min`, `24 h`.
pub(crate) fn duration_text(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds == 0 {
        format!("{} ms", duration.as_millis())
    } else if seconds >= 3600 && seconds.is_multiple_of(3600) {
        format!("{} h", seconds / 3600)
    } else if seconds >= 60 && seconds.is_multiple_of(60) {
        format!("{} min", seconds / 60)
    } else {
        format!("{seconds} s")
    }
}
