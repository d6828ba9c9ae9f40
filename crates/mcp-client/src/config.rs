//! Where MCP servers come from: `[mcp_servers.NAME]` tables in `skillet.toml` (Codex's
//! spelling) and a project's `.mcp.json` (Claude Code's `mcpServers`), each read into one
//! [`ServerConfig`]. Nothing here starts anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub use crate::mcp_json::{
    McpJsonServers, NEVER_EXPANDED, expand, mcp_json_lines, parse_mcp_json, read_capped,
    read_mcp_json,
};

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
pub(crate) fn quoted(word: &str) -> String {
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
