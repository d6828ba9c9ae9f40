//! `skillet mcp`: a skill library served to any MCP client (Claude Code, Claude Desktop, Cursor,
//! VS Code, Codex, Goose, Zed) with skillet's three layers and its ranking, no LLM key needed.
//!
//! - Tools ([`tools`]): `search_skills`, `load_skill`, `read_skill_file`, `list_skills`.
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
pub mod manifest;
mod mime;
pub mod resources;
mod server;
pub mod state;
pub mod tools;
pub mod uri;

use std::io::Write as _;

use rmcp::ServiceExt as _;

pub use http::{MCP_PATH, serve_http};
pub use server::SkilletServer;
pub use state::Shared;

/// Writes one line to the server's log (stderr).
pub fn log(message: &str) {
    let mut stderr = std::io::stderr().lock();
    for line in message.lines() {
        let _ = writeln!(stderr, "skillet mcp: {line}");
    }
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
/// blocking thread once the session is up, so `initialize` is answered at once; searches rank
/// by words until it is ready.
pub async fn serve_stdio(shared: Shared) -> Result<(), ServeError> {
    let server = SkilletServer::new(shared.clone());
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| ServeError::Start(error.to_string()))?;
    let loader = shared.clone();
    tokio::task::spawn_blocking(move || loader.load_model());
    let _watcher = watch(&shared);
    service
        .waiting()
        .await
        .map_err(|error| ServeError::Session(error.to_string()))?;
    Ok(())
}

/// Watches the roots: after each quiet burst of changes the library is discovered again and
/// every session told what changed. `None` (logged) when the roots cannot be watched: the
/// server still answers, from the library as it was at the start.
fn watch(shared: &Shared) -> Option<skillet_library::watch::RootWatcher> {
    let handle = tokio::runtime::Handle::current();
    let state = shared.clone();
    let watched = skillet_library::watch::watch(shared.roots(), move || {
        let changes = state.rediscover();
        let state = state.clone();
        handle.spawn(async move { state.publish(changes).await });
    });
    match watched {
        Ok(root_watcher) => Some(root_watcher),
        Err(error) => {
            log(&format!(
                "{error}; changes to skills are seen after a restart"
            ));
            None
        }
    }
}
