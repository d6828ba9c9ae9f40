//! The HTTP layer every provider shares: POST with timeouts, retries with exponential backoff and
//! jitter (honouring `retry-after`), error statuses mapped to [`LlmError`], and server-sent-event
//! framing with an idle timeout. It knows no provider's wire format.
//!
//! Timeouts: a streamed answer must start, and then send each event, within
//! [`Transport::idle_timeout`]; a non-streamed answer must arrive whole within
//! [`Transport::request_timeout`] (sized for slow local servers); the body of an error status
//! within [`Transport::body_timeout`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tokio::time::Instant;

use crate::error::{Awaiting, LlmError, duration_text};
use crate::retry_after;
use crate::sse::{Event, Parser};
use crate::types::StreamEvent;

/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a streamed answer may take to start, or stay silent between events.
pub const IDLE_TIMEOUT: Duration = Duration::from_mins(5);
/// How long a non-streamed answer may take, whole: a slow local model writes all of it
/// before the first byte arrives.
pub const REQUEST_TIMEOUT: Duration = Duration::from_mins(10);
/// How long the body of an error status may take to arrive.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a streamed answer may go on, whole (a server that keeps sending pings or empty
/// chunks never goes silent); sized for slow local models writing long answers.
pub const STREAM_TIMEOUT: Duration = Duration::from_hours(1);
/// The most bytes one answer may take, streamed or whole (a bigger one is an error, not a
/// memory exhaustion).
pub const MAX_ANSWER_BYTES: u64 = 64 * 1024 * 1024;
/// Statuses worth retrying: rate limits, server errors, Anthropic's "overloaded".
pub const RETRY_STATUSES: [u16; 5] = [429, 500, 502, 503, 529];
/// Error types worth retrying when a provider reports them inside a stream, before any
/// content: Anthropic's (`overloaded_error`, `api_error`, `rate_limit_error`) and OpenAI's
/// (`server_error`, `rate_limit_exceeded`).
pub const RETRY_ERROR_TYPES: [&str; 5] = [
    "overloaded_error",
    "api_error",
    "rate_limit_error",
    "server_error",
    "rate_limit_exceeded",
];
/// How often a request whose connection could not be made (refused, no such host) is tried
/// again: such a failure rarely passes in seconds, and the user should hear of it at once.
/// Other failures are retried as [`RetryPolicy`] says.
pub const MAX_CONNECT_RETRIES: u32 = 1;
/// The longest `retry-after` honoured; longer waits fail instead.
pub const MAX_RETRY_AFTER: Duration = Duration::from_mins(2);

/// How failed requests are retried.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt, counting HTTP errors and in-stream errors alike.
    pub max_retries: u32,
    /// The first backoff delay; each retry doubles it.
    pub base_delay: Duration,
    /// The longest backoff delay.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The backoff before retry number `retry` (1-based): doubling, capped, with ±25% jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponent = retry.saturating_sub(1).min(16);
        let base = self
            .base_delay
            .saturating_mul(1 << exponent)
            .min(self.max_delay);
        let jitter = 0.75 + 0.5 * pseudo_random_unit();
        base.mul_f64(jitter)
    }
}

/// A number in [0, 1), different on each call; good enough for jitter.
fn pseudo_random_unit() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    let mut x = u64::from(nanos) ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    #[expect(
        clippy::cast_precision_loss,
        reason = "a jitter fraction needs no precision"
    )]
    let unit = (x % 1_000_000) as f64 / 1_000_000.0;
    unit
}

/// Which provider a request is for, to word its errors.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ErrorContext<'a> {
    /// The provider's display name.
    pub provider: &'static str,
    /// The variable that holds its key.
    pub key_env: &'static str,
    /// The model asked for.
    pub model: &'a str,
}

/// One POST to a provider.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Post<'a> {
    /// Where.
    pub url: &'a str,
    /// Extra headers (the key, the API version).
    pub headers: &'a [(&'a str, String)],
    /// The JSON body.
    pub body: &'a Value,
    /// How to word errors.
    pub context: ErrorContext<'a>,
}

/// The attempts one request has made. HTTP retries and in-stream retries draw from the same
/// budget, [`RetryPolicy::max_retries`].
#[derive(Debug, Default)]
pub(crate) struct Attempts {
    made: u32,
}

impl Attempts {
    /// ` after N attempts` once there was more than one, else nothing.
    fn retried(&self) -> String {
        if self.made > 1 {
            format!(" after {} attempts", self.made)
        } else {
            String::new()
        }
    }
}

/// The shared HTTP client.
#[derive(Debug, Clone)]
pub struct Transport {
    client: reqwest::Client,
    /// How failures are retried.
    pub retry: RetryPolicy,
    /// How long a streamed answer may take to start, or stay silent between events.
    pub idle_timeout: Duration,
    /// How long a non-streamed answer may take, whole.
    pub request_timeout: Duration,
    /// How long the body of an error status may take.
    pub body_timeout: Duration,
    /// How long a streamed answer may go on, whole.
    pub stream_timeout: Duration,
    /// The most bytes one answer may take.
    pub max_answer_bytes: u64,
}

impl Transport {
    /// A transport with the default timeouts and retry policy.
    pub fn new() -> Result<Self, LlmError> {
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("skillet/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| LlmError::Connect {
                url: String::new(),
                message: format!("cannot build the HTTP client: {error}"),
                retried: String::new(),
            })?;
        Ok(Self {
            client,
            retry: RetryPolicy::default(),
            idle_timeout: IDLE_TIMEOUT,
            request_timeout: REQUEST_TIMEOUT,
            body_timeout: BODY_TIMEOUT,
            stream_timeout: STREAM_TIMEOUT,
            max_answer_bytes: MAX_ANSWER_BYTES,
        })
    }

    /// POSTs and reads the whole JSON answer, headers and body within the request timeout
    /// (per attempt), retrying what is worth retrying.
    pub(crate) async fn post_json(
        &self,
        post: &Post<'_>,
        attempts: &mut Attempts,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Value, LlmError> {
        let provider = post.context.provider;
        let timeout = self.request_timeout;
        let (response, started) = self
            .post(post, attempts, Awaiting::WholeAnswer, events)
            .await?;
        let late = || LlmError::Timeout {
            provider,
            after: timeout,
            awaiting: Awaiting::WholeAnswer,
        };
        let text = tokio::time::timeout_at(
            started + timeout,
            capped_text(response, self.max_answer_bytes),
        )
        .await
        .map_err(|_| late())?
        .map_err(|error| LlmError::StreamCut {
            provider,
            message: error_chain(&error),
        })?;
        serde_json::from_str(&text).map_err(|error| LlmError::Protocol {
            provider,
            message: format!("the answer is not JSON ({error}): {}", excerpt(&text)),
        })
    }

    /// POSTs and returns the answer's server-sent events once it starts (within the idle
    /// timeout), retrying what is worth retrying.
    pub(crate) async fn post_stream(
        &self,
        post: &Post<'_>,
        attempts: &mut Attempts,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<EventStream, LlmError> {
        let (response, started) = self.post(post, attempts, Awaiting::Start, events).await?;
        let limit = self.max_answer_bytes;
        let mut seen: u64 = 0;
        let bytes = response.bytes_stream().map(move |chunk| {
            let chunk = chunk.map_err(|error| BodyError::Http(error_chain(&error)))?;
            seen = seen.saturating_add(u64::try_from(chunk.len()).unwrap_or(u64::MAX));
            if seen > limit {
                return Err(BodyError::TooLarge(limit));
            }
            Ok(chunk)
        });
        Ok(EventStream {
            inner: Box::pin(bytes),
            parser: Parser::default(),
            ready: std::collections::VecDeque::new(),
            idle: self.idle_timeout,
            deadline: started + self.stream_timeout,
            total: self.stream_timeout,
            provider: post.context.provider,
        })
    }

    /// Whether an error reported inside a stream, before any content, is retried: if it is of
    /// a retryable type and the budget allows, the retry is announced, waited for, and true.
    pub(crate) async fn retry_stream_error(
        &self,
        attempts: &Attempts,
        error: &LlmError,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> bool {
        let LlmError::Provider { kind, message, .. } = error else {
            return false;
        };
        if !is_retryable_kind(kind) || attempts.made > self.retry.max_retries {
            return false;
        }
        let delay = self.retry.backoff(attempts.made);
        announce(events, attempts.made, delay, format!("{kind}: {message}"));
        tokio::time::sleep(delay).await;
        true
    }

    /// POSTs until a successful response or an error worth no retry; returns the response and
    /// when its attempt started. Its headers must arrive within the timeout of what is awaited
    /// (the start of a stream, or the whole answer), per attempt.
    async fn post(
        &self,
        post: &Post<'_>,
        attempts: &mut Attempts,
        awaiting: Awaiting,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(reqwest::Response, Instant), LlmError> {
        let timeout = match awaiting {
            Awaiting::WholeAnswer => self.request_timeout,
            Awaiting::Start | Awaiting::NextEvent => self.idle_timeout,
        };
        loop {
            attempts.made += 1;
            let attempt = attempts.made;
            let can_retry = attempt <= self.retry.max_retries;
            let mut request = self.client.post(post.url).json(post.body);
            for (name, value) in post.headers {
                request = request.header(*name, value);
            }
            let started = Instant::now();
            let response = match tokio::time::timeout(timeout, request.send()).await {
                Err(_) => {
                    return Err(LlmError::Timeout {
                        provider: post.context.provider,
                        after: timeout,
                        awaiting,
                    });
                }
                Ok(Err(error)) => {
                    let transient = error.is_connect() || error.is_request() || error.is_timeout();
                    let unreachable = error.is_connect() && attempt > MAX_CONNECT_RETRIES;
                    if transient && can_retry && !unreachable {
                        self.wait(
                            events,
                            attempt,
                            self.retry.backoff(attempt),
                            root_cause(&error),
                        )
                        .await;
                        continue;
                    }
                    return Err(LlmError::Connect {
                        url: post.url.to_string(),
                        message: root_cause(&error),
                        retried: attempts.retried(),
                    });
                }
                Ok(Ok(response)) => response,
            };
            if response.status().is_success() {
                return Ok((response, started));
            }
            let status = response.status().as_u16();
            let asked = retry_after(&response);
            let mut message = self.error_body(response).await;
            if RETRY_STATUSES.contains(&status) && can_retry {
                let delay = asked.unwrap_or_else(|| self.retry.backoff(attempt));
                if delay <= MAX_RETRY_AFTER {
                    self.wait(events, attempt, delay, format!("HTTP {status}: {message}"))
                        .await;
                    continue;
                }
            }
            if let Some(asked) = asked.filter(|asked| *asked > MAX_RETRY_AFTER) {
                message = format!(
                    "{message} (it asked to wait {} before retrying; skillet waits at most {})",
                    duration_text(asked),
                    duration_text(MAX_RETRY_AFTER)
                );
            }
            return Err(status_error(status, message, post, attempts.retried()));
        }
    }

    /// Announces a retry and waits for it.
    async fn wait(
        &self,
        events: &mut (dyn FnMut(StreamEvent) + Send),
        attempt: u32,
        delay: Duration,
        reason: String,
    ) {
        announce(events, attempt, delay, reason);
        tokio::time::sleep(delay).await;
    }

    /// The provider's message from an error status's body, read within the body timeout.
    async fn error_body(&self, response: reqwest::Response) -> String {
        match tokio::time::timeout(self.body_timeout, response.text()).await {
            Ok(Ok(text)) => error_message(&text),
            Ok(Err(error)) => format!(
                "(the error body could not be read: {})",
                error_chain(&error)
            ),
            Err(_) => format!(
                "(the error body did not arrive within {})",
                duration_text(self.body_timeout)
            ),
        }
    }
}

/// Whether an in-stream error type is worth a retry: one of [`RETRY_ERROR_TYPES`], or a
/// retryable status given as the type (some OpenAI-compatible servers do).
fn is_retryable_kind(kind: &str) -> bool {
    RETRY_ERROR_TYPES.contains(&kind)
        || kind
            .parse::<u16>()
            .is_ok_and(|status| RETRY_STATUSES.contains(&status))
}

/// Why an answer's bytes stopped.
#[derive(Debug, thiserror::Error)]
enum BodyError {
    /// The connection failed.
    #[error("{0}")]
    Http(String),
    /// The answer outgrew [`MAX_ANSWER_BYTES`].
    #[error("the answer passed {0} bytes, the most skillet reads; gave up")]
    TooLarge(u64),
}

/// A whole answer's text, at most `limit` bytes.
async fn capped_text(mut response: reqwest::Response, limit: u64) -> Result<String, BodyError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| BodyError::Http(error_chain(&error)))?
    {
        if u64::try_from(bytes.len() + chunk.len()).unwrap_or(u64::MAX) > limit {
            return Err(BodyError::TooLarge(limit));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

type RawBytes = std::pin::Pin<Box<dyn Stream<Item = Result<bytes::Bytes, BodyError>> + Send>>;

/// Server-sent events, each waited for at most the idle timeout, all of them within the stream
/// timeout.
pub struct EventStream {
    inner: RawBytes,
    parser: Parser,
    ready: std::collections::VecDeque<Event>,
    idle: Duration,
    deadline: tokio::time::Instant,
    total: Duration,
    provider: &'static str,
}

impl EventStream {
    /// The next event; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Result<Event, LlmError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            let idle_end = tokio::time::Instant::now() + self.idle;
            let (end, whole) = if self.deadline < idle_end {
                (self.deadline, true)
            } else {
                (idle_end, false)
            };
            match tokio::time::timeout_at(end, self.inner.next()).await {
                Err(_) if whole => {
                    return Some(Err(LlmError::StreamCut {
                        provider: self.provider,
                        message: format!(
                            "the answer went on for over {}; gave up",
                            crate::error::duration_text(self.total)
                        ),
                    }));
                }
                Err(_) => {
                    return Some(Err(LlmError::Timeout {
                        provider: self.provider,
                        after: self.idle,
                        awaiting: Awaiting::NextEvent,
                    }));
                }
                // An event the stream did not end with a blank line is not whole: dropped.
                Ok(None) => return None,
                Ok(Some(Ok(chunk))) => self.ready.extend(self.parser.feed(&chunk)),
                Ok(Some(Err(error))) => {
                    return Some(Err(LlmError::StreamCut {
                        provider: self.provider,
                        message: error.to_string(),
                    }));
                }
            }
        }
    }
}

fn announce(
    events: &mut (dyn FnMut(StreamEvent) + Send),
    attempt: u32,
    delay: Duration,
    reason: String,
) {
    events(StreamEvent::Retrying {
        attempt: attempt + 1,
        delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        reason,
    });
}

fn status_error(status: u16, message: String, post: &Post<'_>, retried: String) -> LlmError {
    let context = post.context;
    match status {
        401 | 403 => LlmError::Auth {
            provider: context.provider,
            status,
            message,
            key_env: context.key_env,
        },
        404 => LlmError::NotFound {
            provider: context.provider,
            url: post.url.to_string(),
            model: context.model.to_string(),
            message,
        },
        400 => LlmError::BadRequest {
            provider: context.provider,
            message,
        },
        _ => LlmError::Http {
            provider: context.provider,
            status,
            message,
            retried,
        },
    }
}

/// The delay `retry-after` asks for, if it is a value the header allows ([`retry_after`]).
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get("retry-after")?.to_str().ok()?;
    retry_after::parse(value, SystemTime::now())
}

/// The provider's own message from an error body (`{"error": {"message": …}}` in both
/// dialects), else the body itself, shortened.
pub fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|json| {
            let error = json.get("error")?;
            error
                .get("message")
                .and_then(Value::as_str)
                .or_else(|| error.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| {
            let trimmed = excerpt(body);
            if trimmed.is_empty() {
                "(empty body)".to_string()
            } else {
                trimmed
            }
        })
}

/// The first 300 characters of a text, on one line.
pub(crate) fn excerpt(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 300 {
        format!("{}…", one_line.chars().take(300).collect::<String>())
    } else {
        one_line
    }
}

/// An error with its causes, on one line.
/// What failed at the bottom of an error's chain (`Connection refused (os error 111)`), the
/// client's layers around it left out; the whole chain when the bottom says nothing.
fn root_cause(error: &dyn std::error::Error) -> String {
    let mut cause = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    let text = cause.to_string();
    if text.trim().is_empty() {
        error_chain(error)
    } else {
        text
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_a_cap() {
        let policy = RetryPolicy::default();
        for retry in 1..=8 {
            let delay = policy.backoff(retry);
            let base = policy
                .base_delay
                .saturating_mul(1 << (retry - 1))
                .min(policy.max_delay);
            assert!(
                delay >= base.mul_f64(0.75) && delay <= base.mul_f64(1.25),
                "{retry}: {delay:?}"
            );
        }
    }

    #[test]
    fn error_messages_from_both_dialects() {
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}"#
            ),
            "max_tokens: too big"
        );
        assert_eq!(
            error_message(r#"{"error":{"message":"model not found"}}"#),
            "model not found"
        );
        assert_eq!(error_message("plain text\nbody"), "plain text body");
        assert_eq!(error_message(""), "(empty body)");
    }
}
