//! The HTTP layer every provider shares: POST with timeouts, retries with exponential backoff and
//! jitter (honouring `retry-after`), error statuses mapped to [`LlmError`], and server-sent-event
//! framing with an idle timeout. It knows no provider's wire format.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use eventsource_stream::{Event, Eventsource};
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use crate::error::LlmError;
use crate::types::StreamEvent;

/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stream may stay silent, or a plain request take, before giving up.
pub const IDLE_TIMEOUT: Duration = Duration::from_mins(5);
/// Statuses worth retrying: rate limits, server errors, Anthropic's "overloaded".
pub const RETRY_STATUSES: [u16; 5] = [429, 500, 502, 503, 529];
/// The longest `retry-after` honoured; longer waits fail instead.
pub const MAX_RETRY_AFTER: Duration = Duration::from_mins(2);

/// How failed requests are retried.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
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
pub struct ErrorContext<'a> {
    /// The provider's display name.
    pub provider: &'static str,
    /// The variable that holds its key.
    pub key_env: &'static str,
    /// The model asked for.
    pub model: &'a str,
}

/// The shared HTTP client.
#[derive(Debug, Clone)]
pub struct Transport {
    client: reqwest::Client,
    /// How failures are retried.
    pub retry: RetryPolicy,
    /// How long a stream may stay silent.
    pub idle_timeout: Duration,
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
        })
    }

    /// POSTs `body` as JSON and returns the successful response, retrying what is worth
    /// retrying. Retries are announced through `events`.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Value,
        context: ErrorContext<'_>,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<reqwest::Response, LlmError> {
        let mut attempt: u32 = 1;
        loop {
            let mut request = self.client.post(url).json(body);
            for (name, value) in headers {
                request = request.header(*name, value);
            }
            let retried = if attempt > 1 {
                format!(" after {attempt} attempts")
            } else {
                String::new()
            };
            let can_retry = attempt <= self.retry.max_retries;
            match tokio::time::timeout(self.idle_timeout, request.send()).await {
                Err(_) => {
                    return Err(LlmError::Timeout {
                        provider: context.provider,
                        after: self.idle_timeout,
                    });
                }
                Ok(Err(error)) => {
                    let transient = error.is_connect() || error.is_request() || error.is_timeout();
                    if transient && can_retry {
                        let delay = self.retry.backoff(attempt);
                        announce(events, attempt, delay, error_chain(&error));
                        tokio::time::sleep(delay).await;
                        attempt += 1;
                        continue;
                    }
                    return Err(LlmError::Connect {
                        url: url.to_string(),
                        message: error_chain(&error),
                        retried,
                    });
                }
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) => {
                    let status = response.status().as_u16();
                    let retry_after = retry_after(&response);
                    let text = response.text().await.unwrap_or_default();
                    let message = error_message(&text);
                    if RETRY_STATUSES.contains(&status) && can_retry {
                        let delay = retry_after.unwrap_or_else(|| self.retry.backoff(attempt));
                        if delay <= MAX_RETRY_AFTER {
                            announce(events, attempt, delay, format!("HTTP {status}: {message}"));
                            tokio::time::sleep(delay).await;
                            attempt += 1;
                            continue;
                        }
                    }
                    return Err(status_error(status, message, url, context, retried));
                }
            }
        }
    }

    /// Reads a whole JSON answer, within the idle timeout.
    pub async fn json(
        &self,
        response: reqwest::Response,
        provider: &'static str,
    ) -> Result<Value, LlmError> {
        let text = tokio::time::timeout(self.idle_timeout, response.text())
            .await
            .map_err(|_| LlmError::Timeout {
                provider,
                after: self.idle_timeout,
            })?
            .map_err(|error| LlmError::StreamCut {
                provider,
                message: error_chain(&error),
            })?;
        serde_json::from_str(&text).map_err(|error| LlmError::Protocol {
            provider,
            message: format!("the answer is not JSON ({error}): {}", excerpt(&text)),
        })
    }

    /// The server-sent events of a streaming answer.
    pub fn events(&self, response: reqwest::Response, provider: &'static str) -> EventStream {
        EventStream {
            inner: Box::pin(response.bytes_stream().eventsource()),
            idle: self.idle_timeout,
            provider,
        }
    }
}

type RawEvents = std::pin::Pin<
    Box<
        dyn Stream<Item = Result<Event, eventsource_stream::EventStreamError<reqwest::Error>>>
            + Send,
    >,
>;

/// Server-sent events, each waited for at most the idle timeout.
pub struct EventStream {
    inner: RawEvents,
    idle: Duration,
    provider: &'static str,
}

impl EventStream {
    /// The next event; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Result<Event, LlmError>> {
        match tokio::time::timeout(self.idle, self.inner.next()).await {
            Err(_) => Some(Err(LlmError::Timeout {
                provider: self.provider,
                after: self.idle,
            })),
            Ok(None) => None,
            Ok(Some(Ok(event))) => Some(Ok(event)),
            Ok(Some(Err(error))) => Some(Err(LlmError::StreamCut {
                provider: self.provider,
                message: error_chain(&error),
            })),
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

fn status_error(
    status: u16,
    message: String,
    url: &str,
    context: ErrorContext<'_>,
    retried: String,
) -> LlmError {
    match status {
        401 | 403 => LlmError::Auth {
            provider: context.provider,
            status,
            message,
            key_env: context.key_env,
        },
        404 => LlmError::NotFound {
            provider: context.provider,
            url: url.to_string(),
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

/// `retry-after` in seconds (the HTTP-date form is not used by these providers).
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get("retry-after")?.to_str().ok()?;
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s >= 0.0)
        .map(Duration::from_secs_f64)
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
