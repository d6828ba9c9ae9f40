//! `skillet mcp`: a skill library served to any MCP client (Claude Code, Claude Desktop, Cursor,
//! VS Code, Codex, Goose, Zed) with skillet's three layers and its ranking, no LLM key needed.
//!
//! - Tools ([`tools`]): `search_skills`, `load_skill`, `read_skill_file`, `list_skills`; with a
//!   skill source (the shared registry, [`Shared::with_source`]) `search_skills` searches it
//!   too and its skills load by `OWNER/NAME@SEQ` as text only, its changes followed.
//! - Instructions at initialize ([`instructions`]): how to use them and as much of the catalog as
//!   fits in 2,000 characters.
//! - Prompts: each skill the user may invoke, with an `arguments` argument.
//! - Resources ([`resources`]): each skill's files as `skill://NAME/PATH`, and
//!   `skill://diagnostics`.
//! - The MCP Skills extension (SEP-2640, [`manifest`]): `skills/list` and `skills/get`.
//!
//! It depends on the skills engine and the shared library crate, never on the agent. Nothing but
//! protocol goes to stdout; logs go to stderr ([`log`]).

mod diagnostics;
mod http;
pub mod instructions;
pub mod jsonrpc;
pub mod manifest;
mod mime;
mod remote;
pub mod resources;
mod server;
pub mod sessions;
pub mod state;
mod stdio;
pub mod tools;
pub mod uri;

use std::io::Write as _;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::ServiceExt as _;

pub use http::{MCP_PATH, serve_http};
pub use server::SkilletServer;
pub use state::Shared;

/// How much the server logs on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Nothing.
    Off = 0,
    /// Only what stops the server or a part of it.
    Error = 1,
    /// Also what it does once: listening, the model loading or missing, watching (the default).
    Info = 2,
    /// Also each request's method (and a tool call's tool).
    Debug = 3,
}

impl LogLevel {
    /// `off`, `error`, `info` or `debug` (any case); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => Some(Self::Off),
            "error" => Some(Self::Error),
            "info" => Some(Self::Info),
            "debug" | "trace" => Some(Self::Debug),
            _ => None,
        }
    }
}

static LOG_LEVEL: AtomicU8 = AtomicU8::new(LogLevel::Info as u8);

/// Sets how much is logged (the CLI reads `SKILLET_LOG`).
pub fn set_log_level(level: LogLevel) {
    LOG_LEVEL.store(level as u8, Ordering::Relaxed);
}

/// Writes `message` to the server's log (stderr) when `level` is logged.
pub fn log_at(level: LogLevel, message: &str) {
    if level as u8 > LOG_LEVEL.load(Ordering::Relaxed) || level == LogLevel::Off {
        return;
    }
    let mut stderr = std::io::stderr().lock();
    for line in message.lines() {
        let _ = writeln!(stderr, "skillet mcp: {line}");
    }
}

/// Logs at [`LogLevel::Info`].
pub fn log(message: &str) {
    log_at(LogLevel::Info, message);
}

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The session could not start (the client went away before initializing, or sent
    /// something that is not MCP).
    #[error("the MCP session did not start: {0}")]
    Start(String),
    /// The session ended in an error.
    #[error("the MCP session failed: {0}")]
    Session(String),
    /// `--http` named an address other machines can reach, without `--allow-remote`.
    #[error(
        "{0} is not a loopback address: the server would be reachable from other machines\n  hint: bind 127.0.0.1 (the default), or pass --allow-remote and put it behind a proxy that checks who connects"
    )]
    Remote(std::net::SocketAddr),
    /// The address could not be bound.
    #[error("cannot listen on {0}: {1}")]
    Bind(std::net::SocketAddr, String),
}

/// Serves `shared` on stdin and stdout until the client leaves. The embedding model loads on a
/// blocking thread from the start, so `initialize` is answered at once; a search that comes
/// before it is ready waits for it (at most [`state::RANKING_WAIT`]), then ranks by words.
pub async fn serve_stdio(shared: Shared) -> Result<(), ServeError> {
    let loader = shared.clone();
    tokio::task::spawn_blocking(move || loader.load_model());
    let server = SkilletServer::new(shared.clone());
    let (transport, writer) = stdio::checked();
    let service = server
        .serve(transport)
        .await
        .map_err(|error| ServeError::Start(error.to_string()))?;
    // The client's name is its own to choose: shown escaped and cut.
    let client = service.peer().peer_info().map_or_else(
        || "a client".to_string(),
        |info| {
            tools::echoed(&format!(
                "{} {}",
                info.client_info.name, info.client_info.version
            ))
        },
    );
    log(&format!(
        "serving {} over stdio to {client}",
        plural(shared.snapshot().library.skills().len(), "skill")
    ));
    let _watcher = watch(&shared).await;
    let following = tokio::spawn(remote::follow(shared.clone()));
    let waited = service.waiting().await;
    following.abort();
    // The last answers reach stdout whole before the process ends.
    let _ = tokio::time::timeout(FLUSH_AT_END, writer).await;
    waited.map_err(|error| ServeError::Session(error.to_string()))?;
    Ok(())
}

/// `1 skill`, `2 skills`.
fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// How long the answers still on their way may take to reach stdout once the client has gone.
const FLUSH_AT_END: std::time::Duration = std::time::Duration::from_secs(5);

/// Watches the roots: after each quiet burst of changes the library is discovered again and
/// every session told what changed. `None` (logged) when the roots cannot be watched: the
/// server still answers, from the library as it was at the start. The watches are set on a
/// blocking thread (thousands of folders take a while), never holding up an answer.
async fn watch(shared: &Shared) -> Option<skillet_library::watch::RootWatcher> {
    let handle = tokio::runtime::Handle::current();
    let state = shared.clone();
    let roots = shared.roots().to_vec();
    let library = std::sync::Arc::clone(&shared.snapshot().library);
    let watched = tokio::task::spawn_blocking(move || {
        skillet_library::watch::watch(&roots, &library, move |library| {
            let changes = state.rediscovered(library);
            let state = state.clone();
            handle.spawn(async move { state.publish(changes) });
        })
    })
    .await
    .ok()?;
    match watched {
        Ok(root_watcher) => {
            for failure in &root_watcher.failures {
                log_at(
                    LogLevel::Error,
                    &format!(
                        "cannot watch {failure}; changes there are seen only when a change elsewhere makes skillet look again, or after a restart"
                    ),
                );
            }
            Some(root_watcher)
        }
        Err(error) => {
            log(&format!(
                "{error}; changes to skills are seen after a restart"
            ));
            None
        }
    }
}
