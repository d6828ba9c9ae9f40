//! stdio with every line checked before the SDK sees it: a line that is not UTF-8 gets a
//! JSON-RPC parse error (-32700) and a line over [`MAX_MESSAGE_BYTES`] an invalid-request error
//! (-32600), both with a null id as JSON-RPC says, where the SDK alone would drop them without a
//! word; every other line is checked as a message ([`crate::jsonrpc`]), and a request whose id
//! is still in flight is refused (-32600 with the id). The session goes on either way.
//! Everything else passes through unchanged (a leading byte-order mark removed, as the SDK
//! would), and the SDK's answers and the errors reach stdout a whole line at a time.

use bytes::{Buf as _, BytesMut};
use futures_util::StreamExt as _;
use tokio::io::{AsyncWriteExt as _, DuplexStream};
use tokio::task::JoinHandle;
use tokio_util::codec::{Decoder, FramedRead, LinesCodec};

/// The longest message taken from stdin.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// The buffer between this layer and the SDK, each way.
const PIPE_BYTES: usize = 64 * 1024;
/// Errors waiting to be written; past it (a client flooding garbage without reading) more are
/// dropped rather than kept.
const MAX_PENDING_ERRORS: usize = 64;

/// One line of stdin, as checked.
enum Line {
    /// A line of text (without its newline).
    Text(String),
    /// A line that is not UTF-8.
    NotUtf8,
    /// A line over [`MAX_MESSAGE_BYTES`] (skipped to its end).
    TooLong,
}

/// Splits stdin into [`Line`]s without ever failing on what a line holds.
#[derive(Default)]
struct CheckedLines {
    /// Skipping the rest of a line that was too long.
    discarding: bool,
}

impl Decoder for CheckedLines {
    type Item = Line;
    type Error = std::io::Error;

    fn decode(&mut self, buffer: &mut BytesMut) -> Result<Option<Line>, std::io::Error> {
        loop {
            let newline = buffer.iter().position(|&byte| byte == b'\n');
            if self.discarding {
                let Some(at) = newline else {
                    buffer.clear();
                    return Ok(None);
                };
                buffer.advance(at + 1);
                self.discarding = false;
                return Ok(Some(Line::TooLong));
            }
            match newline {
                Some(at) if at > MAX_MESSAGE_BYTES => {
                    buffer.advance(at + 1);
                    return Ok(Some(Line::TooLong));
                }
                Some(at) => {
                    let line = buffer.split_to(at + 1);
                    let line = &line[..at];
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    return Ok(Some(match std::str::from_utf8(line) {
                        Ok(text) => Line::Text(text.to_string()),
                        Err(_) => Line::NotUtf8,
                    }));
                }
                None if buffer.len() > MAX_MESSAGE_BYTES => {
                    buffer.clear();
                    self.discarding = true;
                }
                None => return Ok(None),
            }
        }
    }
}

fn error_line(code: i64, message: &str) -> String {
    crate::jsonrpc::error(&serde_json::Value::Null, code, message).to_string()
}

/// The ids of the requests passed to the SDK and not answered yet, each `resources/read` with
/// its permit ([`MAX_READS_UNANSWERED`]).
type InFlight = std::sync::Arc<
    std::sync::Mutex<std::collections::HashMap<String, Option<tokio::sync::OwnedSemaphorePermit>>>,
>;

/// The most `resources/read` requests passed to the SDK and not yet answered on stdout (each
/// answer may be tens of MB: a 20 MiB file, base64, JSON); past it stdin is not read until one
/// is written, so a client that sends reads without reading the answers holds at most this
/// many in memory.
pub const MAX_READS_UNANSWERED: usize = 4;

/// What of a line says which request it is or ends: its id and method (params ignored, so a
/// key repeated inside them does not hide what the line is).
#[derive(serde::Deserialize)]
struct Head {
    id: Option<serde_json::Value>,
    method: Option<String>,
}

/// The request a cancellation names.
#[derive(serde::Deserialize)]
struct Cancelled {
    params: CancelledParams,
}

#[derive(serde::Deserialize)]
struct CancelledParams {
    #[serde(rename = "requestId")]
    request_id: serde_json::Value,
}

/// An id as the SDK reads it, as one key: a number written `1.0` is the request `1`.
fn id_key(id: &serde_json::Value) -> String {
    match id {
        serde_json::Value::Number(number) => number
            .as_i64()
            .map(|whole| whole.to_string())
            .or_else(|| {
                number
                    .as_f64()
                    .filter(|value| value.fract() == 0.0 && value.abs() < 9.0e15)
                    .map(|value| format!("{value:.0}"))
            })
            .unwrap_or_else(|| number.to_string()),
        other => other.to_string(),
    }
}

/// Checks a line of text: `Ok(true)` to pass it to the SDK, `Ok(false)` to drop it unanswered,
/// or the error to answer with. A request is recorded in flight (a read with its permit). A
/// cancellation of a read is dropped: the read is bounded work, and its answer, once written,
/// is what frees the permit (a cancelled read the SDK never answers would hold it for good).
/// Other cancellations end the request they name.
fn admit(
    text: &str,
    in_flight: &InFlight,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) -> Result<bool, String> {
    match crate::jsonrpc::check(text) {
        crate::jsonrpc::Checked::Invalid(answer) => Err(answer.to_string()),
        crate::jsonrpc::Checked::Request(id) => {
            let key = serde_json::from_str(&id).map_or(id.clone(), |id| id_key(&id));
            let mut ids = in_flight
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let taken = ids.contains_key(&key);
            if ids.len() >= MAX_IN_FLIGHT || taken {
                let why = if taken {
                    format!("Invalid request: id {id} is already in use by a request in flight")
                } else {
                    format!("Invalid request: {MAX_IN_FLIGHT} requests are in flight")
                };
                let id: serde_json::Value =
                    serde_json::from_str(&id).unwrap_or(serde_json::Value::Null);
                return Err(crate::jsonrpc::error(&id, -32600, &why).to_string());
            }
            ids.insert(key, permit);
            Ok(true)
        }
        crate::jsonrpc::Checked::Ignored => Ok(false),
        crate::jsonrpc::Checked::Other => {
            let cancelled = serde_json::from_str::<Head>(text)
                .is_ok_and(|head| head.method.as_deref() == Some("notifications/cancelled"));
            if !cancelled {
                return Ok(true);
            }
            let Ok(Cancelled {
                params: CancelledParams { request_id },
            }) = serde_json::from_str::<Cancelled>(text)
            else {
                return Ok(true);
            };
            let mut ids = in_flight
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let key = id_key(&request_id);
            if matches!(ids.get(&key), Some(Some(_))) {
                return Ok(false);
            }
            ids.remove(&key);
            Ok(true)
        }
    }
}

/// Whether a line is a `resources/read` request.
fn is_read(text: &str) -> bool {
    serde_json::from_str::<Head>(text)
        .is_ok_and(|head| head.id.is_some() && head.method.as_deref() == Some("resources/read"))
}

/// An answer on its way out: the request it answers is no longer in flight.
fn answered(line: &str, in_flight: &InFlight) {
    if let Ok(Head {
        id: Some(id),
        method: None,
    }) = serde_json::from_str::<Head>(line)
    {
        in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&id_key(&id));
    }
}

/// The most requests in flight at once on stdio; past it more are refused (-32600) until some
/// are answered.
pub const MAX_IN_FLIGHT: usize = 1_024;

/// The SDK's end of a checked stdio (what it reads, where it writes), and the task writing to
/// stdout: await it after the session, so the last answers reach stdout whole.
pub fn checked() -> ((DuplexStream, DuplexStream), JoinHandle<()>) {
    let (sdk_in, mut to_sdk) = tokio::io::duplex(PIPE_BYTES);
    let (sdk_out, from_sdk) = tokio::io::duplex(PIPE_BYTES);
    let (errors, mut error_lines) = tokio::sync::mpsc::channel::<String>(MAX_PENDING_ERRORS);
    let in_flight = InFlight::default();
    let requests = std::sync::Arc::clone(&in_flight);
    let reads = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_READS_UNANSWERED));
    tokio::spawn(async move {
        let mut lines = FramedRead::new(tokio::io::stdin(), CheckedLines::default());
        while let Some(line) = lines.next().await {
            let error = match line {
                Ok(Line::Text(text)) => {
                    let text = text.trim_start_matches('\u{feff}');
                    if text.trim().is_empty() {
                        continue;
                    }
                    // A read waits for a permit: the answers not yet written stay bounded.
                    let permit = if is_read(text) {
                        match std::sync::Arc::clone(&reads).acquire_owned().await {
                            Ok(permit) => Some(permit),
                            Err(_) => break,
                        }
                    } else {
                        None
                    };
                    match admit(text, &requests, permit) {
                        Ok(false) => continue,
                        Ok(true) => {
                            let written = async {
                                to_sdk.write_all(text.as_bytes()).await?;
                                to_sdk.write_all(b"\n").await
                            };
                            if written.await.is_err() {
                                break;
                            }
                            continue;
                        }
                        Err(error) => error,
                    }
                }
                Ok(Line::NotUtf8) => error_line(-32700, "Parse error: the line is not UTF-8"),
                Ok(Line::TooLong) => error_line(
                    -32600,
                    &format!("Invalid request: a message over {MAX_MESSAGE_BYTES} bytes"),
                ),
                Err(_) => break,
            };
            let _ = errors.try_send(error);
        }
        // stdin ended: the SDK sees its input end too, and ends the session.
        let _ = to_sdk.shutdown().await;
    });
    let writer = tokio::spawn(async move {
        let mut answers = FramedRead::new(from_sdk, LinesCodec::new());
        let mut stdout = tokio::io::stdout();
        loop {
            let line = tokio::select! {
                answer = answers.next() => match answer {
                    Some(Ok(line)) => {
                        answered(&line, &in_flight);
                        line
                    }
                    _ => break,
                },
                Some(error) = error_lines.recv() => error,
            };
            let written = async {
                stdout.write_all(line.as_bytes()).await?;
                stdout.write_all(b"\n").await?;
                stdout.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
        // Errors for lines read just before the end.
        while let Ok(error) = error_lines.try_recv() {
            let _ = stdout.write_all(format!("{error}\n").as_bytes()).await;
        }
        let _ = stdout.flush().await;
    });
    ((sdk_in, sdk_out), writer)
}

#[cfg(test)]
mod tests {
    use super::{InFlight, MAX_IN_FLIGHT, admit, answered};

    fn request(id: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
    }

    fn refusal(error: &str) -> serde_json::Value {
        serde_json::from_str(error).unwrap()
    }

    #[test]
    fn an_id_in_flight_is_refused_with_its_id_until_answered() {
        let in_flight = InFlight::default();
        assert_eq!(admit(&request("93"), &in_flight, None), Ok(true));
        // The same id: refused, the answer carrying the id.
        let error = refusal(&admit(&request("93"), &in_flight, None).unwrap_err());
        assert_eq!(error["error"]["code"], -32600, "{error}");
        assert_eq!(error["id"], 93, "{error}");
        // A string "93" is another id.
        assert_eq!(admit(&request("\"93\""), &in_flight, None), Ok(true));
        answered(r#"{"jsonrpc":"2.0","id":93,"result":{}}"#, &in_flight);
        assert_eq!(admit(&request("93"), &in_flight, None), Ok(true));
    }

    #[test]
    fn past_the_cap_requests_are_refused_until_some_are_answered() {
        let in_flight = InFlight::default();
        for id in 0..MAX_IN_FLIGHT {
            assert_eq!(admit(&request(&id.to_string()), &in_flight, None), Ok(true));
        }
        let error = refusal(&admit(&request("-1"), &in_flight, None).unwrap_err());
        assert_eq!(error["error"]["code"], -32600, "{error}");
        assert_eq!(error["id"], -1, "{error}");
        answered(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#, &in_flight);
        assert_eq!(admit(&request("-1"), &in_flight, None), Ok(true));
    }

    #[test]
    fn a_cancellation_ends_the_request_it_names_under_any_spelling() {
        let in_flight = InFlight::default();
        assert_eq!(admit(&request("5"), &in_flight, None), Ok(true));
        let cancel =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5.0}}"#;
        assert_eq!(admit(cancel, &in_flight, None), Ok(true));
        assert_eq!(admit(&request("5"), &in_flight, None), Ok(true));
    }
}
