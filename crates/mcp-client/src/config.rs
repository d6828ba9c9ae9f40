//! Where MCP servers come from: `[mcp_servers.NAME]` tables in `skillet.toml` (Codex's
//! spelling) and a project's `.mcp.json` (Claude Code's `mcpServers`), each read into one
//! [`ServerConfig`]. Nothing here starts anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The project file Claude Code reads its shared servers from.
pub const MCP_JSON: &str = ".mcp.json";
/// The largest `.mcp.json` read.
pub const MAX_MCP_JSON_BYTES: u64 = 1024 * 1024;
/// The most servers a session starts (past it, the rest are left out, said).
pub const MAX_SERVERS: usize = 32;
/// The longest server name: the tools' names (`mcp__SERVER__TOOL`) must stay within the
/// providers' 64 characters.
pub const MAX_SERVER_NAME: usize = 24;
/// How long a server has to start and list its tools, unless its config says otherwise
/// (Codex's default).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one tool call may take, unless the server's config says otherwise (Codex's
/// default).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_mins(1);
/// The longest timeout a config may set, either kind.
pub const MAX_TIMEOUT: Duration = Duration::from_mins(10);

/// One `[mcp_servers.NAME]` table of `skillet.toml`. Unknown keys are errors.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Option<Vec<String>>,
    /// Variables it gets besides the few every program needs (`PATH`, `HOME`, …): only what is
    /// named here reaches it.
    pub env: Option<BTreeMap<String, String>>,
    /// Where it runs (default: the session's working directory).
    pub cwd: Option<PathBuf>,
    /// The address of a streamable HTTP server.
    pub url: Option<String>,
    /// Headers sent to it (`Authorization = "Bearer …"`).
    pub headers: Option<BTreeMap<String, String>>,
    /// Seconds to start and list tools.
    pub startup_timeout_sec: Option<f64>,
    /// Seconds one call may take.
    pub tool_timeout_sec: Option<f64>,
    /// `false` keeps it configured but not started.
    pub enabled: Option<bool>,
    /// Tools the server marks read-only run without asking (default false: a server's word
    /// is not the user's).
    pub trust_read_only: Option<bool>,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A program speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// The variables named for it.
        env: BTreeMap<String, String>,
        /// Where it runs (none: the session's working directory).
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The address.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
}

/// Whose config named a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The user's own `skillet.toml`: started in every session.
    User(PathBuf),
    /// A project's file (`.mcp.json`, or its `skillet.toml`): the repository chose the command,
    /// so it starts only once the project is trusted.
    Project(PathBuf),
}

impl Origin {
    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            Self::User(path) | Self::Project(path) => path,
        }
    }
}

/// One server, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// Its name: `[A-Za-z0-9-]`, at most [`MAX_SERVER_NAME`] characters.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// How long it has to start.
    pub startup_timeout: Duration,
    /// How long a call may take.
    pub tool_timeout: Duration,
    /// Where it was configured.
    pub origin: Origin,
    /// Its read-only tools run without asking.
    pub trust_read_only: bool,
    /// How it is shown when that is not [`ServerConfig::describe`]'s own: a project's server
    /// as its file writes it, `${VAR}` unexpanded (so no value read from the environment is
    /// printed).
    pub shown: Option<String>,
}

/// A server's config that cannot be used, naming the file and the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: MCP server `{server}`: {message}")]
pub struct ConfigError {
    /// The file.
    pub file: String,
    /// The server's name as written.
    pub server: String,
    /// What is wrong, with a hint.
    pub message: String,
}

impl ServerConfig {
    /// A `[mcp_servers.NAME]` table read from `origin`'s file; `Ok(None)` when it is disabled.
    pub fn from_file(
        name: &str,
        file: &ServerFile,
        origin: Origin,
    ) -> Result<Option<Self>, ConfigError> {
        let error = |message: String| ConfigError {
            file: origin.path().display().to_string(),
            server: name.to_string(),
            message,
        };
        check_name(name).map_err(error)?;
        let user = matches!(origin, Origin::User(_));
        if file.enabled == Some(false) {
            return Ok(None);
        }
        let transport = match (&file.command, &file.url) {
            (Some(command), None) => {
                if file.headers.is_some() {
                    return Err(error(
                        "`headers` are for a `url` server; a stdio server takes `env`".into(),
                    ));
                }
                stdio(
                    command,
                    file.args.clone(),
                    file.env.clone(),
                    file.cwd.clone(),
                )
                .map_err(error)?
            }
            (None, Some(url)) => {
                if file.env.is_some() || file.args.is_some() || file.cwd.is_some() {
                    return Err(error(
                        "`env`, `args` and `cwd` are for a `command` server; a `url` server takes `headers`".into(),
                    ));
                }
                http(url, file.headers.clone().unwrap_or_default()).map_err(error)?
            }
            (Some(_), Some(_)) => {
                return Err(error(
                    "both `command` and `url`: a server is one or the other".into(),
                ));
            }
            (None, None) => {
                return Err(error(
                    "neither `command` (a program speaking MCP on stdio) nor `url` (a streamable HTTP server)".into(),
                ));
            }
        };
        Ok(Some(Self {
            name: name.to_string(),
            transport,
            startup_timeout: timeout(file.startup_timeout_sec, DEFAULT_STARTUP_TIMEOUT)
                .map_err(|why| error(format!("startup_timeout_sec {why}")))?,
            tool_timeout: timeout(file.tool_timeout_sec, DEFAULT_TOOL_TIMEOUT)
                .map_err(|why| error(format!("tool_timeout_sec {why}")))?,
            origin,
            // A server's own word that a tool only reads lets it run unasked: the user's file
            // may say so, a project's may not.
            trust_read_only: file.trust_read_only.unwrap_or(false) && user,
            shown: None,
        }))
    }

    /// How it is started or reached, on one line: `npx -y server-github`, or the address.
    pub fn describe(&self) -> String {
        if let Some(shown) = &self.shown {
            return shown.clone();
        }
        match &self.transport {
            Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .map(quoted)
                .collect::<Vec<_>>()
                .join(" "),
            Transport::Http { url, .. } => url.clone(),
        }
    }
}

/// A word as a shell would need it to read it back (for showing only).
fn quoted(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Whether `name` may name a server: the tools' names are built from it.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > MAX_SERVER_NAME
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return Err(format!(
            "not a server name: use 1 to {MAX_SERVER_NAME} letters, digits and hyphens (its tools are called mcp__NAME__TOOL)"
        ));
    }
    Ok(())
}

fn stdio(
    command: &str,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<PathBuf>,
) -> Result<Transport, String> {
    if command.trim().is_empty() {
        return Err("`command` is empty".into());
    }
    let env = env.unwrap_or_default();
    if let Some(key) = env
        .keys()
        .find(|key| key.is_empty() || key.contains(['=', '\0']))
    {
        return Err(format!("`env` names `{key}`, which is not a variable name"));
    }
    let args = args.unwrap_or_default();
    if [command]
        .into_iter()
        .chain(args.iter().map(String::as_str))
        .chain(env.values().map(String::as_str))
        .any(|text| text.contains('\0'))
    {
        return Err("a NUL character in `command`, `args` or `env`".into());
    }
    Ok(Transport::Stdio {
        command: command.to_string(),
        args,
        env,
        cwd,
    })
}

fn http(url: &str, headers: BTreeMap<String, String>) -> Result<Transport, String> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(format!(
            "`url` {url:?} is not an http:// or https:// address"
        ));
    }
    if let Some((key, _)) = headers.iter().find(|(key, value)| {
        key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            || value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0)
    }) {
        return Err(format!(
            "the header `{key}` is not a valid HTTP header name or value"
        ));
    }
    Ok(Transport::Http {
        url: url.to_string(),
        headers,
    })
}

fn timeout(seconds: Option<f64>, default: Duration) -> Result<Duration, String> {
    match seconds {
        None => Ok(default),
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => {
            if seconds > MAX_TIMEOUT.as_secs_f64() {
                Err(format!("is over {} seconds", MAX_TIMEOUT.as_secs()))
            } else {
                Ok(Duration::from_secs_f64(seconds))
            }
        }
        Some(_) => Err("must be a positive number of seconds".into()),
    }
}

/// One server of `.mcp.json` as Claude Code writes it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<String>,
    url: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    /// Claude Code's other keys (`alwaysLoad`, `oauth`, `headersHelper`, …): said, not used.
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

/// What `.mcp.json` holds.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct McpJson {
    #[serde(default)]
    mcp_servers: BTreeMap<String, serde_json::Value>,
}

/// A project's `.mcp.json`, read: the servers it names that can be used, and one line for each
/// that cannot (or each key skillet does not use).
#[derive(Debug, Default)]
pub struct McpJsonServers {
    /// The servers.
    pub servers: Vec<ServerConfig>,
    /// What was left out, and why.
    pub problems: Vec<String>,
}

/// Reads `path` (a project's `.mcp.json`; none there: `Ok(None)`) as [`parse_mcp_json`] does.
pub fn read_mcp_json(
    path: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<McpJsonServers>, String> {
    match read_capped(path) {
        Ok(Some(text)) => parse_mcp_json(path, &text, lookup).map(Some),
        Ok(None) => Ok(None),
        Err(why) => Err(format!("{}: {why}", path.display())),
    }
}

/// The servers of `text` (read from `path`, a project's `.mcp.json`), with `${VAR}` and
/// `${VAR:-default}` in commands, arguments, variables, addresses and headers read from
/// `lookup`. A server using an unset variable without a default is left out, said (Claude Code
/// refuses the whole file). Text that is not JSON is an error.
pub fn parse_mcp_json(
    path: &Path,
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<McpJsonServers, String> {
    let file: McpJson = serde_json::from_str(text).map_err(|error| {
        format!(
            "{}: line {}, column {}: {error}",
            path.display(),
            error.line(),
            error.column()
        )
    })?;
    let mut read = McpJsonServers::default();
    for (name, value) in file.mcp_servers {
        match json_server(path, &name, value, lookup) {
            Ok((server, ignored)) => {
                if !ignored.is_empty() {
                    read.problems.push(format!(
                        "{}: MCP server `{name}`: {} not used by skillet",
                        path.display(),
                        ignored.join(", ")
                    ));
                }
                read.servers.push(server);
            }
            Err(error) => read.problems.push(error.to_string()),
        }
    }
    Ok(read)
}

/// Each server of `.mcp.json`'s `text` as it would start, one line each, as written (no
/// variable expanded): what the trust question shows. Text that is not JSON is one line
/// saying so (the file is still pinned by its bytes).
pub fn mcp_json_lines(text: &str) -> Vec<String> {
    let file: McpJson = match serde_json::from_str(text) {
        Ok(file) => file,
        Err(error) => return vec![format!("(not valid JSON: {error}; nothing in it starts)")],
    };
    file.mcp_servers
        .into_iter()
        .map(
            |(name, value)| match serde_json::from_value::<JsonServer>(value) {
                Ok(server) => format!("{name}: {}", raw_line(&server)),
                Err(error) => format!("{name}: (not a server: {error}; it does not start)"),
            },
        )
        .collect()
}

/// Variables a project's file may never read: skillet's own keys and where its credentials
/// go. A server that names one does not start.
pub const NEVER_EXPANDED: [&str; 3] = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "SKILLET_REGISTRY_URL",
];

/// A server of `.mcp.json` as written, on one line: what it runs or reaches, every header and
/// variable with its value unexpanded, where it runs, and each variable of the user's
/// environment it reads. The trust question and `skillet mcp list` show this.
fn raw_line(server: &JsonServer) -> String {
    use std::fmt::Write as _;
    let mut line = match (&server.url, &server.command) {
        (Some(url), _) if server.kind.as_deref() != Some("stdio") => {
            format!("reaches {url}")
        }
        (_, Some(command)) => format!(
            "runs {}",
            std::iter::once(command.as_str())
                .chain(server.args.iter().flatten().map(String::as_str))
                .map(quoted)
                .collect::<Vec<_>>()
                .join(" ")
        ),
        _ => "(no command or url)".to_string(),
    };
    for (label, map) in [("headers", &server.headers), ("env", &server.env)] {
        if let Some(map) = map.as_ref().filter(|map| !map.is_empty()) {
            let pairs: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = write!(line, " ({label}: {})", pairs.join(", "));
        }
    }
    if let Some(cwd) = &server.cwd {
        let _ = write!(line, " (in {cwd})");
    }
    let mut read: Vec<String> = std::iter::once(server.command.clone().unwrap_or_default())
        .chain(server.url.clone())
        .chain(server.args.iter().flatten().cloned())
        .chain(server.headers.iter().flatten().map(|(_, v)| v.clone()))
        .chain(server.env.iter().flatten().map(|(_, v)| v.clone()))
        .flat_map(|text| variables_named(&text))
        .collect();
    read.sort();
    read.dedup();
    if !read.is_empty() {
        let _ = write!(line, " (reads from your environment: {})", read.join(", "));
    }
    line
}

/// The variables `${NAME}` and `${NAME:-default}` in `text` name.
fn variables_named(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let inner = &after[..end];
        names.push(
            inner
                .split_once(":-")
                .map_or(inner, |(name, _)| name)
                .to_string(),
        );
        rest = &after[end + 1..];
    }
    names
}

/// The file's text, if it is a regular file of at most [`MAX_MCP_JSON_BYTES`].
pub fn read_capped(path: &Path) -> Result<Option<String>, String> {
    use std::io::Read as _;
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.to_string()),
    };
    if !metadata.is_file() {
        return Err("not a regular file".into());
    }
    if metadata.len() > MAX_MCP_JSON_BYTES {
        return Err(format!(
            "{} bytes, over the {MAX_MCP_JSON_BYTES}-byte limit",
            metadata.len()
        ));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_MCP_JSON_BYTES).read_to_string(&mut text))
        .map_err(|error| error.to_string())?;
    Ok(Some(text))
}

fn json_server(
    path: &Path,
    name: &str,
    value: serde_json::Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(ServerConfig, Vec<String>), ConfigError> {
    let error = |message: String| ConfigError {
        file: path.display().to_string(),
        server: name.to_string(),
        message,
    };
    let server: JsonServer = serde_json::from_value(value).map_err(|why| error(why.to_string()))?;
    if let Some(name) = [&server.command, &server.url]
        .into_iter()
        .flatten()
        .cloned()
        .chain(server.args.iter().flatten().cloned())
        .chain(server.headers.iter().flatten().map(|(_, v)| v.clone()))
        .chain(server.env.iter().flatten().map(|(_, v)| v.clone()))
        .flat_map(|text| variables_named(&text))
        .find(|name| NEVER_EXPANDED.contains(&name.as_str()))
    {
        return Err(error(format!(
            "it reads {name}, which is skillet's own credential: a project's file may not; it does not start"
        )));
    }
    let shown = raw_line(&server);
    let expand_all = |texts: Option<Vec<String>>| -> Result<Option<Vec<String>>, ConfigError> {
        texts
            .map(|texts| {
                texts
                    .iter()
                    .map(|text| expand(text, lookup).map_err(&error))
                    .collect()
            })
            .transpose()
    };
    let expand_map = |map: Option<BTreeMap<String, String>>| {
        map.map(|map| {
            map.into_iter()
                .map(|(key, value)| Ok((key, expand(&value, lookup).map_err(&error)?)))
                .collect::<Result<BTreeMap<_, _>, ConfigError>>()
        })
        .transpose()
    };
    let kind = server.kind.as_deref().unwrap_or(if server.url.is_some() {
        "http"
    } else {
        "stdio"
    });
    let mixed = match kind {
        "stdio" => server.url.is_some() || server.headers.is_some(),
        _ => {
            server.command.is_some()
                || server.args.is_some()
                || server.env.is_some()
                || server.cwd.is_some()
        }
    };
    if mixed {
        return Err(error(format!(
            "`type: {kind}` with fields of the other kind (command, args, env, cwd for stdio; url, headers for http): which one would run is unclear, so it does not start"
        )));
    }
    let file = match kind {
        "stdio" => ServerFile {
            command: server
                .command
                .as_deref()
                .map(|command| expand(command, lookup).map_err(&error))
                .transpose()?,
            args: expand_all(server.args)?,
            env: expand_map(server.env)?,
            cwd: server.cwd.map(PathBuf::from),
            ..ServerFile::default()
        },
        "http" | "streamable-http" => ServerFile {
            url: server
                .url
                .as_deref()
                .map(|url| expand(url, lookup).map_err(&error))
                .transpose()?,
            headers: expand_map(server.headers)?,
            ..ServerFile::default()
        },
        "sse" => {
            return Err(error(
                "`type: sse` is the legacy HTTP+SSE transport, which skillet does not speak; ask for the server's streamable HTTP address (`type: http`)".into(),
            ));
        }
        other => {
            return Err(error(format!(
                "`type: {other}` is not a transport skillet knows (stdio or http)"
            )));
        }
    };
    let mut config = ServerConfig::from_file(name, &file, Origin::Project(path.to_path_buf()))?
        .ok_or_else(|| error("disabled".into()))?;
    config.shown = Some(shown);
    Ok((config, server.other.into_keys().collect()))
}

/// `text` with `${VAR}` and `${VAR:-default}` replaced from `lookup`; an unset variable
/// without a default is an error naming it.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("`{text}`: `${{` without a closing `}}`"));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`${{{inner}}}` does not name a variable"));
        }
        match (lookup(name).filter(|value| !value.is_empty()), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "the variable {name} is not set (write `${{{name}:-default}}` for a default)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin::User(PathBuf::from("/home/u/.config/skillet/skillet.toml"))
    }

    #[test]
    fn a_stdio_and_an_http_server_are_read() {
        let stdio = ServerFile {
            command: Some("npx".into()),
            args: Some(vec![
                "-y".into(),
                "@modelcontextprotocol/server-github".into(),
            ]),
            env: Some(BTreeMap::from([("GITHUB_TOKEN".into(), "t".into())])),
            ..ServerFile::default()
        };
        let server = ServerConfig::from_file("github", &stdio, origin())
            .unwrap()
            .unwrap();
        assert_eq!(
            server.describe(),
            "npx -y @modelcontextprotocol/server-github"
        );
        assert_eq!(server.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        let http = ServerFile {
            url: Some("https://example.com/mcp".into()),
            headers: Some(BTreeMap::from([(
                "Authorization".into(),
                "Bearer x".into(),
            )])),
            tool_timeout_sec: Some(2.5),
            ..ServerFile::default()
        };
        let server = ServerConfig::from_file("docs", &http, origin())
            .unwrap()
            .unwrap();
        assert_eq!(server.tool_timeout, Duration::from_millis(2500));
        assert!(matches!(server.transport, Transport::Http { .. }));
    }

    #[test]
    fn bad_servers_are_errors_naming_the_file_and_server() {
        let cases = [
            (
                "bad__name",
                ServerFile {
                    command: Some("x".into()),
                    ..ServerFile::default()
                },
                "not a server name",
            ),
            (
                "both",
                ServerFile {
                    command: Some("x".into()),
                    url: Some("https://a".into()),
                    ..ServerFile::default()
                },
                "both",
            ),
            ("neither", ServerFile::default(), "neither"),
            (
                "ftp",
                ServerFile {
                    url: Some("ftp://a".into()),
                    ..ServerFile::default()
                },
                "not an http",
            ),
            (
                "slow",
                ServerFile {
                    command: Some("x".into()),
                    tool_timeout_sec: Some(-1.0),
                    ..ServerFile::default()
                },
                "positive",
            ),
            (
                "header",
                ServerFile {
                    url: Some("https://a".into()),
                    headers: Some(BTreeMap::from([("X".into(), "a\r\nB: c".into())])),
                    ..ServerFile::default()
                },
                "header",
            ),
        ];
        for (name, file, expected) in cases {
            let error = ServerConfig::from_file(name, &file, origin()).unwrap_err();
            let text = error.to_string();
            assert!(
                text.contains("skillet.toml") && text.contains(name),
                "{text}"
            );
            assert!(text.contains(expected), "{name}: {text}");
        }
        let disabled = ServerFile {
            command: Some("x".into()),
            enabled: Some(false),
            ..ServerFile::default()
        };
        assert_eq!(
            ServerConfig::from_file("off", &disabled, origin()),
            Ok(None)
        );
    }

    #[test]
    fn variables_expand_with_defaults_and_unset_ones_are_errors() {
        let lookup = |name: &str| (name == "HOST").then(|| "example.com".to_string());
        assert_eq!(
            expand("https://${HOST}/${PATH_PART:-mcp}", &lookup).unwrap(),
            "https://example.com/mcp"
        );
        assert!(
            expand("${MISSING}", &lookup)
                .unwrap_err()
                .contains("MISSING")
        );
        assert!(expand("${A", &lookup).is_err());
        assert!(expand("${A B}", &lookup).is_err());
        assert_eq!(expand("no variables", &lookup).unwrap(), "no variables");
    }

    #[test]
    fn mcp_json_is_read_as_claude_code_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MCP_JSON);
        std::fs::write(
            &path,
            r#"{"mcpServers": {
                "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"DEBUG": "${DEBUG:-false}"}},
                "api": {"type": "http", "url": "${API:-https://api.example.com}/mcp", "alwaysLoad": true},
                "old": {"type": "sse", "url": "https://mcp.example.com/sse"},
                "needs": {"command": "x", "env": {"K": "${UNSET_FOR_TEST}"}}
            }}"#,
        )
        .unwrap();
        let read = read_mcp_json(&path, &|_| None).unwrap().unwrap();
        let names: Vec<&str> = read.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["api", "git"]);
        assert!(
            matches!(&read.servers[0].transport, Transport::Http { url, .. } if url == "https://api.example.com/mcp")
        );
        assert!(matches!(read.servers[1].origin, Origin::Project(_)));
        let problems = read.problems.join("\n");
        assert!(problems.contains("alwaysLoad"), "{problems}");
        assert!(
            problems.contains("`old`") && problems.contains("legacy"),
            "{problems}"
        );
        assert!(problems.contains("UNSET_FOR_TEST"), "{problems}");
        assert!(
            read_mcp_json(&dir.path().join("none.json"), &|_| None)
                .unwrap()
                .is_none()
        );
        std::fs::write(&path, "{ not json").unwrap();
        assert!(
            read_mcp_json(&path, &|_| None)
                .unwrap_err()
                .contains("line 1")
        );
    }

    #[test]
    fn a_projects_servers_are_shown_as_written_and_never_read_skillets_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MCP_JSON);
        let text = r#"{"mcpServers": {
            "docs": {"type": "http", "url": "https://x.example/${ANTHROPIC_API_KEY}"},
            "mixed": {"type": "http", "command": "npx", "url": "https://x.example/mcp"},
            "git": {"command": "uvx", "args": ["s"], "env": {"TOKEN": "${GH_TOKEN}"}, "cwd": "sub"},
            "web": {"type": "http", "url": "https://${HOST:-x.example}/mcp", "headers": {"Authorization": "Bearer ${WEB_KEY}"}}
        }}"#;
        std::fs::write(&path, text).unwrap();
        let lines = mcp_json_lines(text).join("\n");
        assert!(
            lines.contains("docs: reaches https://x.example/${ANTHROPIC_API_KEY}"),
            "{lines}"
        );
        assert!(
            lines.contains(
                "(env: TOKEN=${GH_TOKEN}) (in sub) (reads from your environment: GH_TOKEN)"
            ),
            "{lines}"
        );
        assert!(
            lines.contains("(headers: Authorization=Bearer ${WEB_KEY})"),
            "{lines}"
        );
        assert!(
            lines.contains("reads from your environment: HOST, WEB_KEY"),
            "{lines}"
        );
        let lookup = |name: &str| Some(format!("value-of-{name}"));
        let read = parse_mcp_json(&path, text, &lookup).unwrap();
        let names: Vec<&str> = read.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["git", "web"]);
        let problems = read.problems.join("\n");
        assert!(
            problems.contains("ANTHROPIC_API_KEY") && problems.contains("skillet's own credential"),
            "{problems}"
        );
        assert!(
            problems.contains("`mixed`") && problems.contains("other kind"),
            "{problems}"
        );
        // Shown unexpanded: no value read from the environment is printed.
        let web = &read.servers[1];
        assert!(!web.describe().contains("value-of-"), "{}", web.describe());
        assert!(
            matches!(&web.transport, Transport::Http { headers, .. } if headers["Authorization"] == "Bearer value-of-WEB_KEY")
        );
    }

    #[test]
    fn only_the_users_file_trusts_a_servers_read_only_tools() {
        let file = ServerFile {
            command: Some("x".into()),
            trust_read_only: Some(true),
            ..ServerFile::default()
        };
        let user = ServerConfig::from_file("a", &file, origin())
            .unwrap()
            .unwrap();
        assert!(user.trust_read_only);
        let project = ServerConfig::from_file(
            "a",
            &file,
            Origin::Project(PathBuf::from("/p/skillet.toml")),
        )
        .unwrap()
        .unwrap();
        assert!(!project.trust_read_only);
    }
}
