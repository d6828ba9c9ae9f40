//! Answering one connection of [`crate::MockServer`]: check the request as the real API would,
//! take the next scripted reply, write it in the request's dialect.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::render::{error_body, error_kind, error_status, json_answer, sse_events, stream_error};
use crate::strict::Dialect;
use crate::{RecordedRequest, Reply, STALL_LIMIT, STALLED_BODY_LENGTH, State, read_request};

/// How long reading a request may take.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) fn serve(mut connection: TcpStream, state: &Mutex<State>) {
    let _ = connection.set_read_timeout(Some(READ_TIMEOUT));
    let Some(mut request) = read_request(&connection) else {
        return;
    };
    let dialect = Dialect::of(&request.path);
    let stream = request.body.get("stream").and_then(Value::as_bool) == Some(true);
    let rejection = dialect.and_then(|dialect| {
        dialect
            .check(&request.body)
            .err()
            .map(|rejection| (dialect, rejection))
    });
    request.rejection = rejection.as_ref().map(|(_, r)| r.message.clone());
    // Anthropic thinks only when asked to.
    let thinks =
        dialect != Some(Dialect::Anthropic) || crate::strict::thinking::enabled(&request.body);
    let reply = take_reply(state, request).map(|reply| {
        if thinks {
            reply
        } else {
            without_thinking(reply)
        }
    });
    let result = match rejection {
        Some((dialect, rejection)) => {
            write_json(&mut connection, 400, &rejection.body(dialect), &[])
        }
        None => answer(
            &mut connection,
            reply,
            dialect.unwrap_or(Dialect::OpenAi),
            stream,
        ),
    };
    let _ = result;
}

/// The reply with its turn's thinking taken out.
fn without_thinking(reply: Reply) -> Reply {
    let plain = |mut turn: crate::Turn| {
        turn.thinking = None;
        turn.redacted_thinking = false;
        turn
    };
    match reply {
        Reply::Turn(turn) => Reply::Turn(plain(turn)),
        Reply::CutStream(turn, after) => Reply::CutStream(plain(turn), after),
        Reply::Stall(turn, after) => Reply::Stall(plain(turn), after),
        Reply::Endless(turn) => Reply::Endless(plain(turn)),
        Reply::StreamError {
            turn,
            after,
            kind,
            message,
        } => Reply::StreamError {
            turn: plain(turn),
            after,
            kind,
            message,
        },
        Reply::Delayed(pause, inner) => Reply::Delayed(pause, Box::new(without_thinking(*inner))),
        other @ (Reply::Status { .. }
        | Reply::RetryAfter { .. }
        | Reply::Silent
        | Reply::StalledStatus(_)
        | Reply::HugeEvent(_)) => other,
    }
}

/// Records the request and takes the next reply; a refused request takes none.
fn take_reply(state: &Mutex<State>, request: RecordedRequest) -> Option<Reply> {
    let mut state = state.lock().expect("state");
    let refused = request.rejection.clone();
    if state.recording {
        state.requests.push(request);
    }
    if let Some(message) = refused {
        state.rejections.push(message);
        return None;
    }
    state.script.pop_front().or_else(|| state.fallback.clone())
}

fn answer(
    connection: &mut TcpStream,
    reply: Option<Reply>,
    dialect: Dialect,
    stream: bool,
) -> std::io::Result<()> {
    let mut reply = reply;
    while let Some(Reply::Delayed(pause, inner)) = reply {
        std::thread::sleep(pause);
        reply = Some(*inner);
    }
    let anthropic = dialect == Dialect::Anthropic;
    match reply {
        None => write_json(
            connection,
            500,
            &json!({"error": {"message": "mock server: no reply scripted"}}).to_string(),
            &[],
        ),
        Some(Reply::Status {
            status,
            body,
            retry_after,
        }) => {
            let retry = retry_after.map(|seconds| seconds.to_string());
            let headers: Vec<(&str, &str)> = retry
                .iter()
                .map(|value| ("retry-after", value.as_str()))
                .collect();
            write_json(connection, status, &body, &headers)
        }
        Some(Reply::RetryAfter { status, value }) => {
            let body = error_body(dialect, error_kind(status), "mock server: try again later");
            write_json(connection, status, &body, &[("retry-after", &value)])
        }
        Some(Reply::Turn(turn)) if stream => {
            write_sse(connection, &sse_events(&turn, anthropic), None)
        }
        Some(Reply::Turn(turn)) => write_json(
            connection,
            200,
            &json_answer(&turn, dialect).to_string(),
            &[],
        ),
        Some(Reply::CutStream(turn, after)) => {
            write_sse(connection, &sse_events(&turn, anthropic), Some(after))
        }
        Some(Reply::Stall(turn, after)) if stream => {
            write_sse_head(connection)?;
            write_events(connection, &sse_events(&turn, anthropic), after)?;
            hold_open(connection);
            Ok(())
        }
        Some(Reply::Stall(turn, _)) => {
            let body = json_answer(&turn, dialect).to_string();
            write_head(connection, 200, body.len(), &[])?;
            connection.write_all(&body.as_bytes()[..body.len() / 2])?;
            connection.flush()?;
            hold_open(connection);
            Ok(())
        }
        Some(Reply::Silent) => {
            hold_open(connection);
            Ok(())
        }
        Some(Reply::StalledStatus(status)) => {
            write_head(connection, status, STALLED_BODY_LENGTH, &[])?;
            connection.write_all(br#"{"type":"error","error":{"#)?;
            connection.flush()?;
            hold_open(connection);
            Ok(())
        }
        Some(Reply::StreamError {
            turn,
            after,
            kind,
            message,
        }) if stream => {
            write_sse_head(connection)?;
            write_events(connection, &sse_events(&turn, anthropic), after)?;
            connection.write_all(stream_error(dialect, &kind, &message).as_bytes())?;
            connection.flush()?;
            connection.shutdown(std::net::Shutdown::Both)
        }
        Some(Reply::StreamError { kind, message, .. }) => write_json(
            connection,
            error_status(&kind),
            &error_body(dialect, &kind, &message),
            &[],
        ),
        Some(Reply::Endless(turn)) => endless(connection, &turn, anthropic),
        Some(Reply::HugeEvent(size)) => {
            let turn = crate::Turn::text(&"x".repeat(size));
            write_sse(connection, &sse_events(&turn, anthropic), None)
        }
        Some(Reply::Delayed(..)) => Ok(()),
    }
}

/// The first events of `turn`, then keep-alives (pings, or empty chunks) every 20 ms until the
/// client leaves or [`STALL_LIMIT`].
fn endless(connection: &mut TcpStream, turn: &crate::Turn, anthropic: bool) -> std::io::Result<()> {
    write_sse_head(connection)?;
    write_events(connection, &sse_events(turn, anthropic), 2)?;
    let keep_alive = if anthropic {
        "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    } else {
        "data: {\"id\":\"chatcmpl-mock\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{}}]}\n\n"
    };
    let started = Instant::now();
    while started.elapsed() < STALL_LIMIT {
        if connection
            .write_all(keep_alive.as_bytes())
            .and_then(|()| connection.flush())
            .is_err()
        {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Keeps a connection open, sending nothing, until the client leaves or [`STALL_LIMIT`].
fn hold_open(connection: &mut TcpStream) {
    let started = Instant::now();
    let mut buffer = [0; 1024];
    while let Some(left) = STALL_LIMIT
        .checked_sub(started.elapsed())
        .filter(|left| !left.is_zero())
    {
        let _ = connection.set_read_timeout(Some(left));
        match connection.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

fn write_head(
    connection: &mut TcpStream,
    status: u16,
    length: usize,
    headers: &[(&str, &str)],
) -> std::io::Result<()> {
    let mut extra = String::new();
    for (name, value) in headers {
        extra.push_str(name);
        extra.push_str(": ");
        extra.push_str(value);
        extra.push_str("\r\n");
    }
    write!(
        connection,
        "HTTP/1.1 {status} Status\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n{extra}connection: close\r\n\r\n"
    )
}

fn write_json(
    connection: &mut TcpStream,
    status: u16,
    body: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<()> {
    write_head(connection, status, body.len(), headers)?;
    connection.write_all(body.as_bytes())?;
    connection.flush()
}

fn write_sse_head(connection: &mut TcpStream) -> std::io::Result<()> {
    write!(
        connection,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
    )?;
    connection.flush()
}

/// Writes the first `count` events, flushing each.
fn write_events(
    connection: &mut TcpStream,
    events: &[String],
    count: usize,
) -> std::io::Result<()> {
    for event in events.iter().take(count) {
        connection.write_all(event.as_bytes())?;
        connection.flush()?;
    }
    Ok(())
}

fn write_sse(
    connection: &mut TcpStream,
    events: &[String],
    cut_after: Option<usize>,
) -> std::io::Result<()> {
    write_sse_head(connection)?;
    write_events(connection, events, cut_after.unwrap_or(events.len()))?;
    connection.shutdown(std::net::Shutdown::Both)
}
