//! Test support: [`MockServer`], a scripted model server speaking real HTTP on loopback.
//!
//! A test pushes dialect-neutral [`Turn`]s (text, tool calls, usage) or error replies; the server
//! renders each for whoever asks — the Anthropic Messages API (`/v1/messages`) or
//! OpenAI-compatible Chat Completions (`/chat/completions`), streamed as server-sent events or
//! whole as JSON, as the request says — and records every request so tests can assert on what
//! the model was sent. [`hub::HubServer`] stands in for the Hugging Face hub.

#![allow(
    clippy::expect_used,
    clippy::missing_panics_doc,
    reason = "test support panics on misuse"
)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

pub mod hub;

/// The embedding model for tests, benchmarks and evaluations: `$SKILLET_EMBED_MODEL`, else the
/// folder `scripts/fetch-model.sh` caches it in (`~/.cache/skillet-ci/all-MiniLM-L6-v2`);
/// `None` when that folder holds no `model.safetensors` (callers skip, saying so).
pub fn embedding_model_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("SKILLET_EMBED_MODEL")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| {
                std::path::PathBuf::from(home).join(".cache/skillet-ci/all-MiniLM-L6-v2")
            })
        })?;
    dir.join("model.safetensors").is_file().then_some(dir)
}

/// One model answer, rendered in whichever dialect the request speaks.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// The text, if any.
    pub text: Option<String>,
    /// Tool calls: (id, name, input).
    pub tool_calls: Vec<(String, String, Value)>,
    /// Overrides the stop reason (`max_tokens`); by default `tool_use` when there are calls,
    /// else `end_turn`.
    pub stop: Option<String>,
    /// Token counts reported.
    pub usage: MockUsage,
}

/// Token counts a [`Turn`] reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct MockUsage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from cache.
    pub cache_read: u64,
    /// Input tokens written to cache.
    pub cache_write: u64,
}

impl Turn {
    /// A text answer.
    pub fn text(text: &str) -> Self {
        Self {
            text: Some(text.to_string()),
            usage: MockUsage {
                input: 100,
                output: 10,
                cache_read: 0,
                cache_write: 0,
            },
            ..Self::default()
        }
    }

    /// An answer calling one tool.
    pub fn tool(id: &str, name: &str, input: Value) -> Self {
        Self {
            tool_calls: vec![(id.to_string(), name.to_string(), input)],
            usage: MockUsage {
                input: 100,
                output: 10,
                cache_read: 0,
                cache_write: 0,
            },
            ..Self::default()
        }
    }

    /// Adds another tool call.
    #[must_use]
    pub fn and_tool(mut self, id: &str, name: &str, input: Value) -> Self {
        self.tool_calls
            .push((id.to_string(), name.to_string(), input));
        self
    }

    /// Sets the text too.
    #[must_use]
    pub fn with_text(mut self, text: &str) -> Self {
        self.text = Some(text.to_string());
        self
    }

    /// Sets the usage reported.
    #[must_use]
    pub fn with_usage(mut self, usage: MockUsage) -> Self {
        self.usage = usage;
        self
    }

    fn stop_reason(&self) -> &str {
        match &self.stop {
            Some(stop) => stop,
            None if self.tool_calls.is_empty() => "end_turn",
            None => "tool_use",
        }
    }
}

/// What the server answers to the next request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A model answer.
    Turn(Turn),
    /// An error status with a body (and a `retry-after` header when set).
    Status {
        /// The HTTP status.
        status: u16,
        /// The body.
        body: String,
        /// `retry-after` in seconds.
        retry_after: Option<u64>,
    },
    /// A streamed answer cut off after this many events (the connection closes).
    CutStream(Turn, usize),
    /// Another reply, sent after a pause (to test cancelling and timeouts).
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    /// An error in the provider's JSON shape.
    pub fn error(status: u16, message: &str) -> Self {
        Self::Status {
            status,
            body: json!({"type": "error", "error": {"type": "error", "message": message}})
                .to_string(),
            retry_after: None,
        }
    }
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// The path (`/v1/messages`, `/v1/chat/completions`, …).
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`null` when it was not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    /// Answered when the script is empty (benchmarks).
    fallback: Option<Reply>,
    /// Whether requests are recorded (benchmarks turn it off).
    recording: bool,
    requests: Vec<RecordedRequest>,
}

/// A server on a free `127.0.0.1` port answering each connection on its own thread with
/// `serve`; stopped when dropped.
struct Listener {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    fn start<S: Send + Sync + 'static>(state: &Arc<S>, serve: fn(TcpStream, &S)) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("local addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let state = Arc::clone(state);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for connection in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(connection) = connection else { continue };
                    let state = Arc::clone(&state);
                    std::thread::spawn(move || serve(connection, &state));
                }
            })
        };
        Self {
            port,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A scripted model server on `127.0.0.1`, stopped when dropped.
pub struct MockServer {
    state: Arc<Mutex<State>>,
    listener: Listener,
}

impl MockServer {
    /// Starts a server on a free loopback port.
    pub fn start() -> Self {
        let state = Arc::new(Mutex::new(State {
            recording: true,
            ..State::default()
        }));
        let listener = Listener::start(&state, serve);
        Self { state, listener }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.listener.url()
    }

    /// Queues a reply.
    pub fn push(&self, reply: Reply) {
        self.state.lock().expect("state").script.push_back(reply);
    }

    /// Queues a model answer.
    pub fn push_turn(&self, turn: Turn) {
        self.push(Reply::Turn(turn));
    }

    /// Answers with this whenever the script is empty, and stops recording requests (for
    /// benchmarks that send thousands).
    pub fn answer_always(&self, reply: Reply) {
        let mut state = self.state.lock().expect("state");
        state.fallback = Some(reply);
        state.recording = false;
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.lock().expect("state").requests.clone()
    }

    /// How many replies are still queued.
    pub fn pending(&self) -> usize {
        self.state.lock().expect("state").script.len()
    }
}

fn serve(mut connection: TcpStream, state: &Mutex<State>) {
    let _ = connection.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(request) = read_request(&connection) else {
        return;
    };
    let reply = {
        let mut state = state.lock().expect("state");
        if state.recording {
            state.requests.push(request.clone());
        }
        state.script.pop_front().or_else(|| state.fallback.clone())
    };
    let anthropic = request.path.ends_with("/messages");
    let stream = request.body.get("stream").and_then(Value::as_bool) == Some(true);
    let mut reply = reply;
    while let Some(Reply::Delayed(pause, inner)) = reply {
        std::thread::sleep(pause);
        reply = Some(*inner);
    }
    let result = match reply {
        None => write_json(
            &mut connection,
            500,
            &json!({"error": {"message": "mock server: no reply scripted"}}).to_string(),
            None,
        ),
        Some(Reply::Status {
            status,
            body,
            retry_after,
        }) => write_json(&mut connection, status, &body, retry_after),
        Some(Reply::Turn(turn)) if stream => {
            write_sse(&mut connection, &sse_events(&turn, anthropic), None)
        }
        Some(Reply::Turn(turn)) => {
            let body = if anthropic {
                anthropic_json(&turn)
            } else {
                openai_json(&turn)
            };
            write_json(&mut connection, 200, &body.to_string(), None)
        }
        Some(Reply::CutStream(turn, after)) => {
            write_sse(&mut connection, &sse_events(&turn, anthropic), Some(after))
        }
        Some(Reply::Delayed(..)) => Ok(()),
    };
    let _ = result;
}

fn read_request(connection: &TcpStream) -> Option<RecordedRequest> {
    let mut reader = BufReader::new(connection);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim().to_string();
            if name == "content-length" {
                length = value.parse().unwrap_or(0);
            }
            headers.push((name, value));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(RecordedRequest {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn write_json(
    connection: &mut TcpStream,
    status: u16,
    body: &str,
    retry_after: Option<u64>,
) -> std::io::Result<()> {
    let retry = retry_after.map_or_else(String::new, |s| format!("retry-after: {s}\r\n"));
    write!(
        connection,
        "HTTP/1.1 {status} Status\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{retry}connection: close\r\n\r\n{body}",
        body.len()
    )?;
    connection.flush()
}

fn write_sse(
    connection: &mut TcpStream,
    events: &[String],
    cut_after: Option<usize>,
) -> std::io::Result<()> {
    write!(
        connection,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
    )?;
    for (index, event) in events.iter().enumerate() {
        if cut_after == Some(index) {
            break;
        }
        connection.write_all(event.as_bytes())?;
        connection.flush()?;
    }
    connection.shutdown(std::net::Shutdown::Both)
}

/// The SSE frames of a turn in either dialect.
pub fn sse_events(turn: &Turn, anthropic: bool) -> Vec<String> {
    if anthropic {
        anthropic_sse(turn)
    } else {
        openai_sse(turn)
    }
}

fn frame(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// Splits text in two, to exercise deltas.
fn halves(text: &str) -> (String, String) {
    let middle = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(text.len(), |(i, _)| i);
    (text[..middle].to_string(), text[middle..].to_string())
}

fn anthropic_sse(turn: &Turn) -> Vec<String> {
    let mut events = vec![frame(
        "message_start",
        &json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message", "role": "assistant", "content": [], "usage": {
            "input_tokens": turn.usage.input, "output_tokens": 1,
            "cache_read_input_tokens": turn.usage.cache_read, "cache_creation_input_tokens": turn.usage.cache_write}}}),
    )];
    events.push(frame("ping", &json!({"type": "ping"})));
    // Each block: its start, its content in two deltas, its stop.
    let mut blocks: Vec<(Value, Value, &str, String)> = Vec::new();
    if let Some(text) = &turn.text {
        blocks.push((
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta"}),
            "text",
            text.clone(),
        ));
    }
    for (id, name, input) in &turn.tool_calls {
        blocks.push((
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta"}),
            "partial_json",
            input.to_string(),
        ));
    }
    for (index, (start, delta, field, content)) in blocks.into_iter().enumerate() {
        events.push(frame(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        let (first, second) = halves(&content);
        for piece in [first, second] {
            let mut delta = delta.clone();
            delta[field] = json!(piece);
            events.push(frame(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push(frame(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(frame("message_delta", &json!({"type": "message_delta", "delta": {"stop_reason": turn.stop_reason()}, "usage": {"output_tokens": turn.usage.output}})));
    events.push(frame("message_stop", &json!({"type": "message_stop"})));
    events
}

fn anthropic_json(turn: &Turn) -> Value {
    let mut content = Vec::new();
    if let Some(text) = &turn.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for (id, name, input) in &turn.tool_calls {
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    json!({"id": "msg_mock", "type": "message", "role": "assistant", "content": content,
        "stop_reason": turn.stop_reason(),
        "usage": {"input_tokens": turn.usage.input, "output_tokens": turn.usage.output,
            "cache_read_input_tokens": turn.usage.cache_read, "cache_creation_input_tokens": turn.usage.cache_write}})
}

fn openai_finish(turn: &Turn) -> &str {
    match turn.stop_reason() {
        "tool_use" => "tool_calls",
        "max_tokens" => "length",
        _ => "stop",
    }
}

fn openai_usage(turn: &Turn) -> Value {
    json!({"prompt_tokens": turn.usage.input + turn.usage.cache_read, "completion_tokens": turn.usage.output,
        "total_tokens": turn.usage.input + turn.usage.cache_read + turn.usage.output,
        "prompt_tokens_details": {"cached_tokens": turn.usage.cache_read}})
}

fn openai_sse(turn: &Turn) -> Vec<String> {
    let chunk = |delta: Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    if let Some(text) = &turn.text {
        let (first, second) = halves(text);
        for piece in [first, second] {
            events.push(chunk(json!({"content": piece}), None));
        }
    }
    for (index, (id, name, input)) in turn.tool_calls.iter().enumerate() {
        events.push(chunk(json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), None));
        let (first, second) = halves(&input.to_string());
        for piece in [first, second] {
            events.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    events.push(chunk(json!({}), Some(openai_finish(turn))));
    events.push(format!("data: {}\n\n", json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "choices": [], "usage": openai_usage(turn)})));
    events.push("data: [DONE]\n\n".to_string());
    events
}

fn openai_json(turn: &Turn) -> Value {
    let calls: Vec<Value> = turn
        .tool_calls
        .iter()
        .map(|(id, name, input)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": turn.text});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({"id": "chatcmpl-mock", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": openai_finish(turn)}],
        "usage": openai_usage(turn)})
}
