//! One request and its answer, whichever dialect: post, read the answer whole or as it
//! streams, and retry an error the provider reports inside the stream before any content
//! (Anthropic's `overloaded_error`) as an HTTP 529 would be, within the same retry budget.
//! Once text or a tool call has been reported to the caller, an error ends the request.

use serde_json::Value;

use crate::error::LlmError;
use crate::transport::{Attempts, Post, Transport};
use crate::types::{Response, StreamEvent};

/// A dialect's reader of a streamed answer.
pub(crate) trait StreamReader: Default {
    /// Handles one server-sent event; true once the answer is complete.
    fn event(
        &mut self,
        event: &str,
        data: &str,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, LlmError>;

    /// Whether the answer is whole when the stream ends without the completing event; the
    /// error says what is missing.
    fn ended(&self) -> Result<(), LlmError>;

    /// The answer.
    fn finish(self) -> Result<Response, LlmError>;
}

/// Sends one request and returns the whole answer; `parse` reads a non-streamed answer, `R`
/// a streamed one.
pub(crate) async fn exchange<R: StreamReader>(
    transport: &Transport,
    post: &Post<'_>,
    stream: bool,
    parse: fn(&Value) -> Result<Response, LlmError>,
    events: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<Response, LlmError> {
    let mut attempts = Attempts::default();
    if !stream {
        let json = transport.post_json(post, &mut attempts, events).await?;
        return parse(&json);
    }
    loop {
        let mut stream = transport.post_stream(post, &mut attempts, events).await?;
        let mut shown = false;
        let result = {
            let mut watch = |event: StreamEvent| {
                if matches!(
                    event,
                    StreamEvent::TextDelta(_) | StreamEvent::ToolUseStart { .. }
                ) {
                    shown = true;
                }
                events(event);
            };
            read::<R>(&mut stream, &mut watch).await
        };
        match result {
            Err(error)
                if !shown
                    && transport
                        .retry_stream_error(&attempts, &error, events)
                        .await => {}
            result => return result,
        }
    }
}

async fn read<R: StreamReader>(
    stream: &mut crate::transport::EventStream,
    events: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<Response, LlmError> {
    let mut reader = R::default();
    while let Some(event) = stream.next().await {
        let event = event?;
        if reader.event(&event.event, &event.data, events)? {
            return reader.finish();
        }
    }
    reader.ended()?;
    reader.finish()
}
