//! The session's MCP servers, each connected on a thread of their own (a runtime the hub
//! drives, so servers are served while the user types), started together and each given its
//! startup timeout. A server that fails to start, hangs or dies is marked so and said once;
//! the session goes on without it. Dropping the hub ends every server (stdio ones with their
//! process group).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;

use crate::catalog::{ToolDef, tool_defs};
use crate::config::ServerConfig;
use crate::connect::{Connection, connect, list_tools, short};

/// The most characters of a server's `instructions` put in the system prompt.
pub const MAX_INSTRUCTIONS_CHARS: usize = 1024;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Starting.
    Starting,
    /// Connected, its tools listed.
    Ready,
    /// It could not be started or reached, or it stopped: why.
    Failed(String),
}

impl Status {
    /// One word for listings: `starting`, `ready`, `failed`.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Failed(_) => "failed",
        }
    }
}

struct Live {
    status: Status,
    tools: Vec<ToolDef>,
    instructions: Option<String>,
    peer: Option<Peer<RoleClient>>,
    /// Kept so the connection (and its process) lives as long as the server is used.
    connection: Option<Connection>,
    /// What was left out of its tools, one line each.
    problems: Vec<String>,
    /// Its prompts and resources, as listed at the start.
    prompts: Vec<crate::extras::PromptDef>,
    resources: Vec<crate::extras::ResourceDef>,
}

/// One server of the session.
pub struct Server {
    /// Its config.
    pub config: ServerConfig,
    live: Mutex<Live>,
    /// Its failure has been told to the model's side once.
    told: AtomicBool,
}

/// What `skillet mcp list` and `/mcp` show of a server.
#[derive(Debug, Clone)]
pub struct ServerReport {
    /// Its name.
    pub name: String,
    /// How it is started or reached.
    pub describe: String,
    /// Whose config named it.
    pub origin: crate::config::Origin,
    /// Where it stands.
    pub status: Status,
    /// Its tools' names as the model calls them.
    pub tools: Vec<String>,
    /// What was left out of its tools.
    pub problems: Vec<String>,
}

impl Server {
    fn lock(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Where it stands now.
    pub fn status(&self) -> Status {
        self.lock().status.clone()
    }

    /// Its tools as last listed.
    pub fn tools(&self) -> Vec<ToolDef> {
        self.lock().tools.clone()
    }

    /// Its instructions, cleaned and capped.
    pub fn instructions(&self) -> Option<String> {
        self.lock().instructions.clone()
    }

    fn fail(&self, why: String) {
        let mut live = self.lock();
        live.status = Status::Failed(why);
        live.peer = None;
        live.connection = None;
    }

    /// A failure not told yet, once: `Some(why)` the first time it is asked after failing.
    pub fn tell_failure_once(&self) -> Option<String> {
        match self.status() {
            Status::Failed(why) if !self.told.swap(true, Ordering::SeqCst) => Some(why),
            _ => None,
        }
    }
}

/// Reads a variable of skillet's environment (what stdio servers may inherit and
/// `${VAR}` reads).
pub type Environment = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The session's MCP servers.
pub struct Hub {
    handle: tokio::runtime::Handle,
    servers: Vec<Arc<Server>>,
    started: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Why a call failed: what the model is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallError(pub String);

impl Hub {
    /// Starts every server in `configs` (at most [`crate::config::MAX_SERVERS`]) on the hub's
    /// own thread; stdio servers run in `cwd` with variables from `environment`. Returns at
    /// once: [`Hub::wait_started`] waits for them.
    pub fn start(
        configs: Vec<ServerConfig>,
        cwd: &std::path::Path,
        environment: &Environment,
    ) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("skillet-mcp-client".into())
            .spawn(move || {
                runtime.block_on(async {
                    let _ = stopped.await;
                });
                // Tasks still running (a call, a server's pipes) end here; connections are
                // dropped with the servers.
                runtime.shutdown_background();
            })?;
        let servers: Vec<Arc<Server>> = configs
            .into_iter()
            .take(crate::config::MAX_SERVERS)
            .map(|config| {
                Arc::new(Server {
                    config,
                    live: Mutex::new(Live {
                        status: Status::Starting,
                        tools: Vec::new(),
                        instructions: None,
                        peer: None,
                        connection: None,
                        problems: Vec::new(),
                        prompts: Vec::new(),
                        resources: Vec::new(),
                    }),
                    told: AtomicBool::new(false),
                })
            })
            .collect();
        // Ended by a signal that would kill skillet without unwinding (the terminal closed,
        // `kill`), the servers end first: each with its process group.
        #[cfg(unix)]
        {
            let servers: Vec<Arc<Server>> = servers.iter().map(Arc::clone).collect();
            handle.spawn(async move {
                use tokio::signal::unix::{SignalKind, signal};
                // The signals whose default is to end the process (SIGINT is the interface's).
                let kinds = [
                    (SignalKind::terminate(), 15),
                    (SignalKind::hangup(), 1),
                    (SignalKind::quit(), 3),
                    (SignalKind::user_defined1(), 10),
                    (SignalKind::user_defined2(), 12),
                    (SignalKind::alarm(), 14),
                ];
                let mut listeners = Vec::new();
                for (kind, number) in kinds {
                    if let Ok(listener) = signal(kind) {
                        listeners.push((listener, number));
                    }
                }
                if listeners.is_empty() {
                    return;
                }
                let waits = listeners.iter_mut().map(|(listener, number)| {
                    let number = *number;
                    Box::pin(async move {
                        listener.recv().await;
                        number
                    })
                });
                let (number, _, _) = futures_util::future::select_all(waits).await;
                let code = 128 + number;
                for server in &servers {
                    drop(server.lock().connection.take());
                }
                std::process::exit(code);
            });
        }
        let (done, started) = std::sync::mpsc::channel();
        for server in &servers {
            let server = Arc::clone(server);
            let done = done.clone();
            let cwd = cwd.to_path_buf();
            let environment = Arc::clone(environment);
            handle.spawn(async move {
                start_one(&server, &cwd, environment.as_ref()).await;
                let _ = done.send(());
            });
        }
        Ok(Self {
            handle,
            servers,
            started: Mutex::new(Some(started)),
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Waits until every server has started or failed (each within its startup timeout).
    pub fn wait_started(&self) {
        let Some(started) = self.started.lock().ok().and_then(|mut s| s.take()) else {
            return;
        };
        let longest = self
            .servers
            .iter()
            .map(|server| server.config.startup_timeout)
            .max()
            .unwrap_or_default();
        let deadline = Instant::now() + longest + Duration::from_secs(1);
        for _ in 0..self.servers.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            if started.recv_timeout(left).is_err() {
                break;
            }
        }
    }

    /// The servers, in config order.
    pub fn servers(&self) -> &[Arc<Server>] {
        &self.servers
    }

    /// What each server looks like now.
    pub fn reports(&self) -> Vec<ServerReport> {
        self.servers
            .iter()
            .map(|server| {
                let live = server.lock();
                ServerReport {
                    name: server.config.name.clone(),
                    describe: server.config.describe(),
                    origin: server.config.origin.clone(),
                    status: live.status.clone(),
                    tools: live
                        .tools
                        .iter()
                        .map(|tool| tool.qualified.clone())
                        .collect(),
                    problems: live.problems.clone(),
                }
            })
            .collect()
    }

    /// Every ready server's tools as last listed, in config order.
    pub fn tools(&self) -> Vec<ToolDef> {
        self.servers
            .iter()
            .filter(|server| server.status() == Status::Ready)
            .flat_map(|server| server.tools())
            .collect()
    }

    /// Lists the ready servers' tools again (a server may change them mid-session): what
    /// `search_tools` searches. A server that does not answer within its startup timeout keeps
    /// its last list.
    pub async fn refresh(&self) {
        let mut tasks = Vec::new();
        for server in &self.servers {
            let Some(peer) = server.lock().peer.clone() else {
                continue;
            };
            let server = Arc::clone(server);
            tasks.push(self.handle.spawn(async move {
                let timeout = server.config.startup_timeout;
                if let Ok(Ok((tools, _))) = tokio::time::timeout(timeout, list_tools(&peer)).await {
                    let mut problems = Vec::new();
                    let defs = tool_defs(&server.config.name, tools, &mut problems);
                    let mut live = server.lock();
                    live.tools = defs;
                    live.problems = problems;
                }
            }));
        }
        for task in tasks {
            let _ = task.await;
        }
    }

    /// Calls `tool` (the server's own name for it) of server `index` with `arguments`,
    /// within the server's tool timeout; the result as JSON (`CallToolResult`).
    pub async fn call(
        &self,
        index: usize,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Value, CallError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        self.request(index, Request::Tool(params)).await
    }

    /// Gets prompt `name` of server `index` with `arguments` (`GetPromptResult` as JSON).
    pub async fn get_prompt(
        &self,
        index: usize,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Value, CallError> {
        let params =
            serde_json::from_value(serde_json::json!({"name": name, "arguments": arguments}))
                .map_err(|error| {
                    CallError(format!("the prompt request could not be made: {error}"))
                })?;
        self.request(index, Request::Prompt(params)).await
    }

    /// Reads resource `uri` of server `index` (`ReadResourceResult` as JSON).
    pub async fn read_resource(&self, index: usize, uri: &str) -> Result<Value, CallError> {
        let params = serde_json::from_value(serde_json::json!({"uri": uri})).map_err(|error| {
            CallError(format!("the resource request could not be made: {error}"))
        })?;
        self.request(index, Request::Resource(params)).await
    }

    /// Sends `request` to server `index` on the hub's thread, within its tool timeout; a
    /// server that stopped is marked failed.
    async fn request(&self, index: usize, request: Request) -> Result<Value, CallError> {
        let Some(server) = self.servers.get(index).map(Arc::clone) else {
            return Err(CallError("no such server".into()));
        };
        let name = server.config.name.clone();
        let peer = {
            let live = server.lock();
            match (&live.status, &live.peer) {
                (Status::Ready, Some(peer)) => peer.clone(),
                (Status::Failed(why), _) => {
                    return Err(CallError(format!(
                        "the MCP server `{name}` is not running ({why}); do the task another way or tell the user"
                    )));
                }
                _ => {
                    return Err(CallError(format!("the MCP server `{name}` is not ready")));
                }
            }
        };
        // What it says on stderr from here on explains this call's failure, if it fails.
        if let Some(connection) = server.lock().connection.as_ref()
            && let Ok(mut said) = connection.stderr.lock()
        {
            said.clear();
        }
        let timeout = server.config.tool_timeout;
        let task = self.handle.spawn(async move {
            let sent = async {
                match request {
                    Request::Tool(params) => peer.call_tool(params).await.map(|r| serde_json::to_value(&r)),
                    Request::Prompt(params) => peer.get_prompt(params).await.map(|r| serde_json::to_value(&r)),
                    Request::Resource(params) => {
                        peer.read_resource(params).await.map(|r| serde_json::to_value(&r))
                    }
                }
            };
            match tokio::time::timeout(timeout, sent).await {
                Err(_) => Err(CallError(format!(
                    "the MCP server `{name}` did not answer within {} seconds; the call was cancelled",
                    timeout.as_secs_f64()
                ))),
                Ok(Ok(result)) => result
                    .map_err(|error| CallError(format!("its result could not be read: {error}"))),
                Ok(Err(error)) => {
                    let closed = peer.is_transport_closed();
                    let why = server
                        .lock()
                        .connection
                        .as_ref()
                        .map(Connection::why_ended)
                        .unwrap_or_default();
                    if closed {
                        server.fail(why.clone());
                        Err(CallError(format!(
                            "the MCP server `{name}` stopped during the call ({why})"
                        )))
                    } else {
                        Err(CallError(format!(
                            "the MCP server `{name}` answered with an error: {}",
                            short(&error.to_string())
                        )))
                    }
                }
            }
        });
        task.await
            .unwrap_or_else(|_| Err(CallError("the call was interrupted".into())))
    }

    /// Every ready server's prompts, in config order.
    pub fn prompts(&self) -> Vec<crate::extras::PromptDef> {
        self.servers
            .iter()
            .filter(|server| server.status() == Status::Ready)
            .flat_map(|server| server.lock().prompts.clone())
            .collect()
    }

    /// Every ready server's resources, in config order.
    pub fn resources(&self) -> Vec<crate::extras::ResourceDef> {
        self.servers
            .iter()
            .filter(|server| server.status() == Status::Ready)
            .flat_map(|server| server.lock().resources.clone())
            .collect()
    }
}

/// What is sent to a server.
enum Request {
    Tool(CallToolRequestParams),
    Prompt(rmcp::model::GetPromptRequestParams),
    Resource(rmcp::model::ReadResourceRequestParams),
}

impl Hub {
    /// `skillet mcp list` and `/mcp`: each server, where it stands and its tools, a block each.
    pub fn describe(&self) -> String {
        use std::fmt::Write as _;
        let mut text = String::new();
        for server in self.reports() {
            let status = match &server.status {
                Status::Failed(why) => format!("failed: {why}"),
                other => other.word().to_string(),
            };
            let _ = writeln!(
                text,
                "{} ({status}): {}
  from {}",
                server.name,
                server.describe,
                server.origin.path().display()
            );
            if !server.tools.is_empty() {
                let _ = writeln!(text, "  tools: {}", server.tools.join(", "));
            }
            if let Some(live) = self.servers.iter().find(|s| s.config.name == server.name) {
                let live = live.lock();
                if !live.prompts.is_empty() {
                    let commands: Vec<String> = live
                        .prompts
                        .iter()
                        .map(|p| format!("/{}", p.qualified))
                        .collect();
                    let _ = writeln!(text, "  prompts: {}", commands.join(", "));
                }
                if !live.resources.is_empty() {
                    let _ = writeln!(
                        text,
                        "  resources: {} (read_resource)",
                        live.resources.len()
                    );
                }
            }
            for problem in &server.problems {
                let _ = writeln!(text, "  {problem}");
            }
        }
        text
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        for server in &self.servers {
            let mut live = server.lock();
            live.peer = None;
            live.connection = None;
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Connects `server` and lists its tools within its startup timeout.
async fn start_one(
    server: &Server,
    cwd: &std::path::Path,
    environment: &(dyn Fn(&str) -> Option<String> + Send + Sync),
) {
    let timeout = server.config.startup_timeout;
    let started = tokio::time::timeout(timeout, async {
        let connection = connect(&server.config, cwd, environment).await?;
        let listed = list_tools(&connection.service).await;
        let extras = crate::extras::list(&server.config.name, &connection.service).await;
        Ok::<_, crate::connect::ConnectError>((connection, listed, extras))
    })
    .await;
    match started {
        Err(_) => server.fail(format!(
            "it did not start and list its tools within {} seconds (startup_timeout_sec)",
            timeout.as_secs_f64()
        )),
        Ok(Err(error)) => server.fail(error.0),
        Ok(Ok((connection, Err(error), _))) => {
            let why = format!("{} ({})", error.0, connection.why_ended());
            server.fail(why);
        }
        Ok(Ok((connection, Ok((tools, cut)), (prompts, resources)))) => {
            let mut problems = Vec::new();
            if cut {
                problems.push(format!(
                    "MCP server `{}`: it lists more than {} tools or {} pages; the rest are left out",
                    server.config.name,
                    crate::connect::MAX_TOOLS_PER_SERVER,
                    crate::connect::MAX_TOOL_PAGES
                ));
            }
            let defs = tool_defs(&server.config.name, tools, &mut problems);
            let instructions = connection
                .service
                .peer_info()
                .and_then(|info| info.instructions.clone())
                .filter(|text| !text.trim().is_empty())
                .map(|text| crate::catalog::clean(&text, MAX_INSTRUCTIONS_CHARS));
            let mut live = server.lock();
            live.prompts = prompts;
            live.resources = resources;
            live.peer = Some(connection.service.peer().clone());
            live.connection = Some(connection);
            live.tools = defs;
            live.instructions = instructions;
            live.problems = problems;
            live.status = Status::Ready;
        }
    }
}
