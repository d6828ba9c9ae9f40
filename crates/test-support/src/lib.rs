//! Test support: [`MockServer`], a scripted model server speaking real HTTP on loopback.
//!
//! A test pushes dialect-neutral [`Turn`]s (text, tool calls, usage), error replies or faults
//! (stalls, cut streams, in-stream errors); the server renders each for whoever asks — the
//! Anthropic Messages API (`/v1/messages`) or OpenAI-compatible Chat Completions
//! (`/chat/completions`), streamed as server-sent events or whole as JSON, as the request says —
//! and records every request so tests can assert on what the model was sent.
//!
//! The server is strict: before answering, it checks each request the way the real API does
//! ([`strict`]) and refuses what the real API refuses, with HTTP 400 and the real error body, so
//! a history the real service would reject fails the test too. [`MockServer::rejections`] lists
//! what was refused. [`hub::HubServer`] stands in for the Hugging Face hub.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::missing_panics_doc,
    reason = "test support panics on misuse"
)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

pub mod hub;
mod render;
mod serve;
pub mod strict;

pub use render::sse_events;

/// Runs the property `test` on `cases` generated inputs (or `PROPTEST_CASES` when set), the
/// failures saved in `regressions` (a committed file, replayed first); panics with the shrunk
/// input when one fails, and says how many cases ran in how long (`scripts/fuzz.sh` reads it).
#[allow(clippy::print_stderr, clippy::panic, reason = "a test helper")]
pub fn check_property<S>(
    regressions: &'static str,
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> proptest::test_runner::TestCaseResult,
) where
    S: proptest::strategy::Strategy,
    S::Value: std::fmt::Debug,
{
    use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(cases);
    let config = Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        ..Config::default()
    };
    let started = std::time::Instant::now();
    let result = TestRunner::new(config).run(&strategy, test);
    eprintln!(
        "property {name}: {cases} cases in {:.2?}",
        started.elapsed()
    );
    if let Err(error) = result {
        panic!("property {name} failed: {error}");
    }
}

/// Says why a test did not run where the person running the tests sees it: written to the
/// process's stderr directly, which the test harness does not capture (it captures `eprintln!`
/// of passing tests, which would hide the skip).
pub fn skip(message: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}

/// The skills engine's fixture library (`crates/skills/tests/fixtures/library`): a dozen small
/// skills, valid and broken, that many crates' tests read.
pub fn fixture_library() -> std::path::PathBuf {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/tests/fixtures/library");
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// The corpus of real skills for tests, benchmarks and evaluations: `$SKILLET_CORPUS`, else
/// `../shared/corpus` beside the workspace; `None` when it is not a folder (callers skip,
/// saying so).
pub fn corpus_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("SKILLET_CORPUS").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
        std::path::PathBuf::from,
    );
    dir.is_dir().then_some(dir)
}

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

/// [`embedding_model_dir`], or `None` after saying that `what` is skipped and how to get the
/// model (the message in one form for every test that needs it).
pub fn embedding_model_or_skip(what: &str) -> Option<std::path::PathBuf> {
    let dir = embedding_model_dir();
    if dir.is_none() {
        skip(&format!(
            "SKIPPED: {what}: no embedding model (run scripts/fetch-model.sh, or set SKILLET_EMBED_MODEL)"
        ));
    }
    dir
}

/// The PostgreSQL (with pgvector) the registry tests run against: `$SKILLET_TEST_PG_URL`, which
/// `scripts/test.sh` sets after starting one with `scripts/pg.sh`. `None` when unset (callers
/// skip, saying so), except that `SKILLET_REQUIRE_PG` turns a missing server into a failure.
pub fn registry_server() -> Option<String> {
    match std::env::var("SKILLET_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("SKILLET_REQUIRE_PG").is_none(),
                "SKILLET_REQUIRE_PG is set but SKILLET_TEST_PG_URL is not (scripts/pg.sh start DIR prints it)"
            );
            None
        }
    }
}

/// A streaming hot standby of [`registry_server`] (`$SKILLET_TEST_PG_REPLICA_URL`, which
/// `scripts/pg.sh replica` prints): `None` when unset, except that `SKILLET_REQUIRE_PG_REPLICA`
/// turns a missing one into a failure.
pub fn registry_replica() -> Option<String> {
    match std::env::var("SKILLET_TEST_PG_REPLICA_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("SKILLET_REQUIRE_PG_REPLICA").is_none(),
                "SKILLET_REQUIRE_PG_REPLICA is set but SKILLET_TEST_PG_REPLICA_URL is not (scripts/pg.sh replica DIR PRIMARY_DIR prints it)"
            );
            None
        }
    }
}

/// [`registry_server`] for test `test`, saying where the person running the tests sees it that
/// the test is skipped when there is none.
pub fn registry_server_for(test: &str) -> Option<String> {
    let url = registry_server();
    if url.is_none() {
        skip(&format!(
            "SKIPPED {test}: no PostgreSQL with pgvector (SKILLET_TEST_PG_URL unset; scripts/test.sh starts one)"
        ));
    }
    url
}

/// A database of its own for one test on the server at `server_url`, dropped when the value
/// is (`DROP DATABASE … WITH (FORCE)`).
pub struct TestDatabase {
    server_url: String,
    name: String,
    /// The new database's URL.
    pub url: String,
}

impl TestDatabase {
    /// Creates it.
    pub fn create(server_url: &str) -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "skillet_test_{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        run_sql(server_url, &format!("CREATE DATABASE {name}"));
        let url = with_database(server_url, &name);
        Self {
            server_url: server_url.to_string(),
            name,
            url,
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs SQL in it (a test reaching behind the registry's back, as an attacker would).
    pub fn execute(&self, sql: &str) {
        run_sql(&self.url, sql);
    }

    /// The rows a query gives, each column as text ("" for NULL; booleans as "t" and "f").
    pub fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        let sql = sql.to_string();
        on_a_connection(&self.url, move |client| async move {
            client
                .simple_query(&sql)
                .await
                .expect("the query")
                .into_iter()
                .filter_map(|message| match message {
                    tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                        (0..row.len())
                            .map(|i| row.get(i).unwrap_or("").to_string())
                            .collect(),
                    ),
                    _ => None,
                })
                .collect()
        })
        .expect("a connection")
    }

    /// Runs SQL in it, the server's refusal returned rather than failing the test.
    pub fn try_execute(&self, sql: &str) -> Result<(), String> {
        let sql = sql.to_string();
        on_a_connection(&self.url, move |client| async move {
            client.batch_execute(&sql).await.map_err(|error| {
                error
                    .as_db_error()
                    .map_or_else(|| error.to_string(), |db| db.message().to_string())
            })
        })?
    }
}

/// Runs SQL at `url` (as whichever role it names), the server's refusal returned rather than
/// failing the test: an attacker's statements.
pub fn try_sql(url: &str, sql: &str) -> Result<(), String> {
    let sql = sql.to_string();
    on_a_connection(url, move |client| async move {
        client.batch_execute(&sql).await.map_err(|error| {
            error
                .as_db_error()
                .map_or_else(|| error.to_string(), |db| db.message().to_string())
        })
    })?
}

/// `url` (the test server's, naming the `postgres` user) as the login role `role`.
pub fn as_role(url: &str, role: &str) -> String {
    let changed = url.replacen("://postgres@", &format!("://{role}@"), 1);
    assert_ne!(
        changed, url,
        "the test server's URL names the postgres user"
    );
    changed
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        run_sql(
            &self.server_url,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// `url` with its database replaced by `name`.
pub fn with_database(url: &str, name: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgresql", url));
    let (before_query, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let authority = before_query.split('/').next().unwrap_or("");
    let mut out = format!("{scheme}://{authority}/{name}");
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// On a thread of its own, so a test inside a runtime may call it too.
fn run_sql(url: &str, sql: &str) {
    let owned = sql.to_string();
    on_a_connection(url, move |client| async move {
        client
            .batch_execute(&owned)
            .await
            .unwrap_or_else(|error| panic!("{owned}: {error:?}"));
    })
    .unwrap_or_else(|error| panic!("cannot connect to the test server {url}: {error}"));
}

/// Runs `work` with a connection to `url`, on a thread and runtime of its own (so a test may
/// call it from inside another runtime); a panic in `work` is the caller's; the connection's
/// failure is returned.
fn on_a_connection<T, F>(
    url: &str,
    work: impl FnOnce(tokio_postgres::Client) -> F + Send + 'static,
) -> Result<T, String>
where
    T: Send + 'static,
    F: std::future::Future<Output = T>,
{
    let url = url.to_string();
    let joined = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .map_err(|error| error.to_string())?;
            let task = tokio::spawn(connection);
            // The connection ends when the client is dropped; the task is awaited after it.
            let result = work(client).await;
            let _ = task.await;
            Ok(result)
        })
    })
    .join();
    match joined {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Whether process `pid` runs (a zombie, dead but not yet reaped, does not count). Linux only:
/// it reads `/proc`.
pub fn process_runs(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// Whether a running process (not a zombie) has `needle` in its command line: how a test finds
/// a process a sandboxed command started, whose process ids mean nothing outside its PID
/// namespace. Linux only: it reads `/proc`.
pub fn process_with_argument_runs(needle: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.filter_map(Result::ok).any(|entry| {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<i32>().ok())
        else {
            return false;
        };
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle))
            && process_runs(pid)
    })
}

/// One model answer, rendered in whichever dialect the request speaks.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// The text, if any. `Some("")` sends an empty text block (Anthropic streams
    /// `content_block_start` with text `""` and no delta), as the real API sometimes does.
    pub text: Option<String>,
    /// The model's thinking before its answer. Anthropic sends it (signed, as a `thinking`
    /// block first) only when the request asks for thinking; OpenAI-compatible servers stream
    /// it as `reasoning_content` whatever was asked, as DeepSeek and llama.cpp do.
    pub thinking: Option<String>,
    /// Sends a `redacted_thinking` block after the thinking (Anthropic, thinking asked for).
    pub redacted_thinking: bool,
    /// Tool calls: (id, name, input).
    pub tool_calls: Vec<(String, String, Value)>,
    /// A last tool call whose arguments were cut off: (id, name, the arguments' text as sent,
    /// not valid JSON). Anthropic's whole-JSON answer carries the text as a JSON string `input`.
    pub cut_call: Option<(String, String, String)>,
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

/// The usage the constructors report.
const TURN_USAGE: MockUsage = MockUsage {
    input: 100,
    output: 10,
    cache_read: 0,
    cache_write: 0,
};

impl Turn {
    /// A text answer.
    pub fn text(text: &str) -> Self {
        Self {
            text: Some(text.to_string()),
            usage: TURN_USAGE,
            ..Self::default()
        }
    }

    /// An answer calling one tool.
    pub fn tool(id: &str, name: &str, input: Value) -> Self {
        Self {
            tool_calls: vec![(id.to_string(), name.to_string(), input)],
            usage: TURN_USAGE,
            ..Self::default()
        }
    }

    /// An answer the output limit cut inside a tool call: its arguments end as `partial` (not
    /// valid JSON) and the stop reason is `max_tokens`.
    pub fn cut_tool(id: &str, name: &str, partial: &str) -> Self {
        Self {
            cut_call: Some((id.to_string(), name.to_string(), partial.to_string())),
            stop: Some("max_tokens".to_string()),
            usage: TURN_USAGE,
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

    /// Sets the text too (`""` sends an empty text block).
    #[must_use]
    pub fn with_text(mut self, text: &str) -> Self {
        self.text = Some(text.to_string());
        self
    }

    /// Thinks `thinking` first (see [`Turn::thinking`]).
    #[must_use]
    pub fn with_thinking(mut self, thinking: &str) -> Self {
        self.thinking = Some(thinking.to_string());
        self
    }

    /// Sends a redacted thinking block too.
    #[must_use]
    pub fn with_redacted_thinking(mut self) -> Self {
        self.redacted_thinking = true;
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
            None if self.tool_calls.is_empty() && self.cut_call.is_none() => "end_turn",
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
    /// An error status in the dialect's error shape whose `retry-after` header is sent verbatim,
    /// whatever it says: `inf`, `NaN`, `-1`, `1e308`, an HTTP date.
    RetryAfter {
        /// The HTTP status.
        status: u16,
        /// The header's value.
        value: String,
    },
    /// A streamed answer cut off after this many events (the connection closes).
    CutStream(Turn, usize),
    /// A streamed answer that sends this many events, then goes silent with the connection
    /// open (until the client leaves, or [`STALL_LIMIT`]). A non-streamed request gets the
    /// headers and half the JSON body, then silence.
    Stall(Turn, usize),
    /// Reads the request and never answers, not even the status line (until the client
    /// leaves, or [`STALL_LIMIT`]).
    Silent,
    /// An error status whose body never finishes: the headers promise
    /// [`STALLED_BODY_LENGTH`] bytes, a few are sent, then silence.
    StalledStatus(u16),
    /// A streamed answer that sends `after` events of `turn`, then an in-stream error event of
    /// type `kind` (Anthropic's `event: error`, or an OpenAI-style error chunk), and closes. A
    /// non-streamed request gets the matching status (529 for `overloaded_error`) instead.
    StreamError {
        /// The answer whose first events are sent.
        turn: Turn,
        /// How many of its events come before the error.
        after: usize,
        /// The error type (`overloaded_error`).
        kind: String,
        /// The error message.
        message: String,
    },
    /// A streamed answer that never ends: the first events of `turn`, then a ping (Anthropic)
    /// or an empty chunk (OpenAI) every 20 ms until the client leaves or [`STALL_LIMIT`].
    Endless(Turn),
    /// A streamed answer whose one text event carries this many bytes.
    HugeEvent(usize),
    /// Another reply, sent after a pause (to test cancelling and timeouts).
    Delayed(Duration, Box<Reply>),
}

/// The longest a stalled reply holds its connection open.
pub const STALL_LIMIT: Duration = Duration::from_mins(1);
/// The body length a [`Reply::StalledStatus`] promises (and never sends).
pub const STALLED_BODY_LENGTH: usize = 4096;

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

    /// An error status with this `retry-after` header value, sent verbatim.
    pub fn retry_after(status: u16, value: &str) -> Self {
        Self::RetryAfter {
            status,
            value: value.to_string(),
        }
    }

    /// Anthropic's in-stream `overloaded_error` ("Overloaded"), sent right after
    /// `message_start` (the role chunk for OpenAI), before any content.
    pub fn overloaded() -> Self {
        Self::StreamError {
            turn: Turn::text("never sent"),
            after: 1,
            kind: "overloaded_error".to_string(),
            message: "Overloaded".to_string(),
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
    /// Why the strict server refused it (the API's error message); `None` when it was served.
    pub rejection: Option<String>,
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
    /// The messages of refused requests, recorded even when requests are not.
    rejections: Vec<String>,
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

/// A scripted, strict model server on `127.0.0.1`, stopped when dropped.
pub struct MockServer {
    state: Arc<Mutex<State>>,
    listener: Listener,
}

impl MockServer {
    /// Starts a server on a free loopback port. It refuses, as the real APIs do, every request
    /// they would refuse ([`strict`]); a refused request is recorded and takes no scripted reply.
    pub fn start() -> Self {
        let state = Arc::new(Mutex::new(State {
            recording: true,
            ..State::default()
        }));
        let listener = Listener::start(&state, serve::serve);
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

    /// Stops keeping requests (a long benchmark whose memory is measured); refusals are still
    /// kept.
    pub fn stop_recording(&self) {
        self.state.lock().expect("state").recording = false;
    }

    /// Every request received so far, refused ones included.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.lock().expect("state").requests.clone()
    }

    /// The error messages of the requests refused so far (as the real API words them), in
    /// order; empty when every request was one the real API accepts.
    pub fn rejections(&self) -> Vec<String> {
        self.state.lock().expect("state").rejections.clone()
    }

    /// How many replies are still queued.
    pub fn pending(&self) -> usize {
        self.state.lock().expect("state").script.len()
    }
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
        rejection: None,
    })
}
