//! A project's `.mcp.json` as Claude Code writes it (`mcpServers`): read capped, parsed into
//! [`ServerConfig`]s with `${VAR}` expanded, and shown as written for the trust question, from
//! the same parse.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::{ConfigError, MAX_MCP_JSON_BYTES, Origin, ServerConfig, ServerFile, quoted};

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
    use crate::config::{MCP_JSON, Transport};

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
}
