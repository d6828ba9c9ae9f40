//! One server reached: a stdio program started with only the variables named for it, or a
//! streamable HTTP endpoint; the handshake, then its tools listed. Every byte a server sends
//! is capped where it is read ([`MAX_MESSAGE_BYTES`]): a larger message ends the connection,
//! so a flood never reaches memory.

use std::collections::BTreeMap;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, PaginatedRequestParams};
use rmcp::service::{RoleClient, RunningService, ServiceExt as _};
use tokio::io::{AsyncRead, AsyncReadExt as _, ReadBuf};

use crate::config::{ServerConfig, Transport};

/// The largest message a server may send (one JSON-RPC line on stdio, one SSE event or JSON
/// body over HTTP): past it the connection ends and the server is reported as failed. Tool
/// results are cut far below this ([`crate::render::MAX_RESULT_CHARS`]); this bounds memory.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// The most pages of `tools/list` read from one server.
pub const MAX_TOOL_PAGES: usize = 20;
/// The most tools kept from one server (past it, the rest are left out, said).
pub const MAX_TOOLS_PER_SERVER: usize = 512;
/// How long a server that failed its handshake is given to finish writing why on stderr.
const STDERR_WAIT: std::time::Duration = std::time::Duration::from_millis(500);
/// The most of a server's stderr kept to explain a failure (its last bytes).
pub const MAX_STDERR_BYTES: usize = 2048;

/// The variables every stdio server gets from skillet's environment (Codex's default list);
/// anything else only when its config names it.
pub const INHERITED_VARIABLES: [&str; 10] = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
];

/// A server connected.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, ClientConfig>,
    /// The program, killed with its process group when the connection is dropped.
    #[expect(
        dead_code,
        reason = "kept for its Drop: the process group ends with the connection"
    )]
    pub(crate) child: Option<ChildGuard>,
    /// Why the connection was ended by skillet's side (a message too large), if it was.
    pub(crate) ended: Arc<Mutex<Option<String>>>,
    /// The last of its stderr.
    pub(crate) stderr: Arc<Mutex<Vec<u8>>>,
}

impl Connection {
    /// What explains the connection's end: skillet's reason, else the server's last words.
    pub(crate) fn why_ended(&self) -> String {
        if let Some(why) = self.ended.lock().ok().and_then(|ended| ended.clone()) {
            return why;
        }
        stderr_tail(&self.stderr).map_or_else(
            || "the connection closed".to_string(),
            |tail| format!("the connection closed; it said: {tail}"),
        )
    }
}

/// The last line or so of what a server wrote on stderr, cleaned for one line.
pub(crate) fn stderr_tail(stderr: &Mutex<Vec<u8>>) -> Option<String> {
    let bytes = stderr.lock().ok()?.clone();
    let text = String::from_utf8_lossy(&bytes);
    let last = text.lines().rev().find(|line| !line.trim().is_empty())?;
    let cut: String = last.trim().chars().take(300).collect();
    Some(skillet_skills::escape_invisible(&cut).into_owned())
}

/// A child process whose whole process group is killed when this is dropped (an `npx` server
/// starts `node`, which would outlive a kill of `npx` alone).
pub(crate) struct ChildGuard {
    child: tokio::process::Child,
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.start_kill();
    }
}

/// Why a server could not be reached.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct ConnectError(pub String);

/// Who skillet says it is in the handshake.
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("skillet", env!("CARGO_PKG_VERSION")),
    )
}

/// Starts or reaches `server` and does the handshake (the caller bounds the time).
pub(crate) async fn connect(
    server: &ServerConfig,
    cwd: &Path,
    environment: &(dyn Fn(&str) -> Option<String> + Send + Sync),
) -> Result<Connection, ConnectError> {
    match &server.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd: own_cwd,
        } => {
            connect_stdio(
                command,
                args,
                &variables(env, environment),
                own_cwd
                    .as_deref()
                    .map_or(cwd.to_path_buf(), |dir| cwd.join(dir))
                    .as_path(),
            )
            .await
        }
        Transport::Http { url, headers } => connect_http(url, headers).await,
    }
}

/// What a stdio server's environment holds: [`INHERITED_VARIABLES`] from skillet's, then the
/// ones its config names.
fn variables(
    named: &BTreeMap<String, String>,
    environment: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut vars: BTreeMap<String, String> = INHERITED_VARIABLES
        .iter()
        .filter_map(|name| Some(((*name).to_string(), environment(name)?)))
        .collect();
    vars.extend(named.iter().map(|(k, v)| (k.clone(), v.clone())));
    vars
}

async fn connect_stdio(
    command: &str,
    args: &[String],
    vars: &BTreeMap<String, String>,
    cwd: &Path,
) -> Result<Connection, ConnectError> {
    let mut process = tokio::process::Command::new(command);
    process
        .args(args)
        .env_clear()
        .envs(vars)
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // Its own process group: the terminal's Ctrl-C is skillet's to handle, and the whole group
    // is killed with the connection.
    #[cfg(unix)]
    process.process_group(0);
    let mut child = process.spawn().map_err(|error| {
        ConnectError(if error.kind() == std::io::ErrorKind::NotFound {
            format!("`{command}` was not found (is it installed and on PATH?)")
        } else {
            format!("`{command}` could not be started: {error}")
        })
    })?;
    let (Some(stdout), Some(stdin), Some(mut stderr_pipe)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        return Err(ConnectError("its pipes could not be made".into()));
    };
    let pid = child.id().and_then(|pid| i32::try_from(pid).ok());
    let child = ChildGuard { child };
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&stderr);
    let reading = tokio::spawn(async move {
        let mut buffer = [0_u8; 4096];
        while let Ok(read) = stderr_pipe.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            if let Ok(mut kept) = kept.lock() {
                kept.extend_from_slice(&buffer[..read]);
                let excess = kept.len().saturating_sub(MAX_STDERR_BYTES);
                kept.drain(..excess);
            }
        }
    });
    let ended = Arc::new(Mutex::new(None));
    let capped = Capped {
        inner: stdout,
        line: 0,
        ended: Arc::clone(&ended),
        pid,
    };
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(capped, stdin)
        // Past ours, so the line ends the connection here rather than being dropped there (a
        // dropped answer would leave its call waiting for the tool timeout).
        .with_max_line_length(2 * MAX_MESSAGE_BYTES);
    match client_info().serve(transport).await {
        Ok(service) => Ok(Connection {
            service,
            child: Some(child),
            ended,
            stderr,
        }),
        Err(error) => {
            // A server that ended says why on stderr: what it wrote is read to its end first
            // (briefly: a server that closed stdout but not stderr is not waited for).
            let _ = tokio::time::timeout(STDERR_WAIT, reading).await;
            let said = stderr_tail(&stderr)
                .map(|tail| format!("; it said: {tail}"))
                .unwrap_or_default();
            let ended = ended.lock().ok().and_then(|ended| ended.clone());
            Err(ConnectError(ended.unwrap_or_else(|| {
                format!(
                    "the MCP handshake failed: {}{said}",
                    short(&error.to_string())
                )
            })))
        }
    }
}

async fn connect_http(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<Connection, ConnectError> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut custom = std::collections::HashMap::new();
    let mut auth = None;
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization") {
            // The SDK adds `Bearer ` itself.
            auth = Some(value.strip_prefix("Bearer ").unwrap_or(value).to_string());
            continue;
        }
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ConnectError(format!("the header `{name}` is not a valid name")))?;
        let value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| ConnectError(format!("the header `{name}` has an invalid value")))?;
        custom.insert(name, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .custom_headers(custom)
        .max_sse_event_size(MAX_MESSAGE_BYTES)
        .max_json_response_size(MAX_MESSAGE_BYTES);
    if let Some(token) = auth {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let service = client_info().serve(transport).await.map_err(|error| {
        ConnectError(format!(
            "the MCP handshake failed: {}",
            short(&error.to_string())
        ))
    })?;
    Ok(Connection {
        service,
        child: None,
        ended: Arc::new(Mutex::new(None)),
        stderr: Arc::new(Mutex::new(Vec::new())),
    })
}

/// An error's text on one line of at most 300 characters, hidden characters shown.
pub(crate) fn short(text: &str) -> String {
    let line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(300)
        .collect();
    skillet_skills::escape_invisible(&line).into_owned()
}

/// Lists every tool of a connected server, following pages up to [`MAX_TOOL_PAGES`] and
/// keeping at most [`MAX_TOOLS_PER_SERVER`]; whether some were left out.
pub(crate) async fn list_tools(
    service: &rmcp::service::Peer<RoleClient>,
) -> Result<(Vec<rmcp::model::Tool>, bool), ConnectError> {
    let mut tools = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_TOOL_PAGES {
        let page = service
            .list_tools(
                cursor
                    .take()
                    .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor))),
            )
            .await
            .map_err(|error| {
                ConnectError(format!("tools/list failed: {}", short(&error.to_string())))
            })?;
        tools.extend(page.tools);
        if tools.len() >= MAX_TOOLS_PER_SERVER {
            tools.truncate(MAX_TOOLS_PER_SERVER);
            return Ok((tools, true));
        }
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok((tools, false)),
        }
    }
    Ok((tools, true))
}

/// A server's stdout, ended with an error once a line passes [`MAX_MESSAGE_BYTES`]: the
/// server is killed, the transport sees the end of the stream, and the reason is kept for the
/// user.
struct Capped<R> {
    inner: R,
    line: usize,
    ended: Arc<Mutex<Option<String>>>,
    /// The server's process (group), ended with the connection: its calls fail at once.
    pid: Option<i32>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Capped<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let mut line = self.line;
            for &byte in &buf.filled()[before..] {
                if byte == b'\n' {
                    line = 0;
                } else {
                    line += 1;
                }
                if line > MAX_MESSAGE_BYTES {
                    if let Ok(mut ended) = self.ended.lock() {
                        ended.get_or_insert_with(|| {
                            format!(
                                "it sent a message over {MAX_MESSAGE_BYTES} bytes, so skillet closed the connection"
                            )
                        });
                    }
                    #[cfg(unix)]
                    if let Some(pid) = self.pid.and_then(rustix::process::Pid::from_raw) {
                        let _ =
                            rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                    }
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "message too large",
                    )));
                }
            }
            self.line = line;
        }
        polled
    }
}
