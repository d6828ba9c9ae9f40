//! The session's MCP servers: which are started (the user's own always; a project's only once
//! it is trusted, from the very bytes that were trusted), started together while the rest of
//! the session is built, and their tools handed to the agent.

use std::path::Path;
use std::sync::Arc;

use skillet_library::trust::SkillTrust;
use skillet_mcp_client::{Hub, McpTools, ServerConfig};

use crate::Workspace;
use crate::builder::Report;
use crate::settings::Settings;

/// The servers this session starts: the settings' (the user's file, a trusted project's
/// `skillet.toml`), then the trusted project's `.mcp.json` (a name already taken is the
/// user's). What is left out is said through `report`.
pub fn servers(
    workspace: &Workspace,
    configured: &[ServerConfig],
    trust: &SkillTrust,
    report: &mut dyn Report,
) -> Vec<ServerConfig> {
    let mut servers = configured.to_vec();
    let path = workspace.project_root().join(skillet_mcp_client::MCP_JSON);
    for server in project_servers(&path, trust, report) {
        if servers.iter().any(|known| known.name == server.name) {
            report.note(&format!(
                "note: {}: MCP server `{}` is left out: your own config names a server so",
                path.display(),
                server.name
            ));
        } else {
            servers.push(server);
        }
    }
    if servers.len() > skillet_mcp_client::config::MAX_SERVERS {
        report.note(&format!(
            "warning: {} MCP servers are configured; the first {} start",
            servers.len(),
            skillet_mcp_client::config::MAX_SERVERS
        ));
        servers.truncate(skillet_mcp_client::config::MAX_SERVERS);
    }
    servers
}

/// The servers of the project's `.mcp.json` at `path`: none unless the project is trusted and
/// the file's bytes, read once here, are those trusted (that same read is parsed).
fn project_servers(path: &Path, trust: &SkillTrust, report: &mut dyn Report) -> Vec<ServerConfig> {
    let text = match skillet_mcp_client::config::read_capped(path) {
        Ok(Some(text)) => text,
        Ok(None) => return Vec::new(),
        Err(why) => {
            report.note(&format!(
                "warning: {}: {why}; its MCP servers do not start",
                path.display()
            ));
            return Vec::new();
        }
    };
    if skillet_mcp_client::config::mcp_json_lines(&text).is_empty() {
        return Vec::new();
    }
    let trusted = trust
        .trusted_servers()
        .filter(|(trusted, _)| *trusted == path);
    match trusted {
        Some((_, digest)) if skillet_library::trust::digest_of(text.as_bytes()) == digest => {}
        Some(_) => {
            report.note(&format!(
                "warning: {} changed since the project was trusted; its MCP servers do not start until it is trusted again (`skillet trust`)",
                path.display()
            ));
            return Vec::new();
        }
        None => {
            report.note(&format!(
                "note: {} names MCP servers; they start once you trust the project (`skillet trust` shows what they run)",
                path.display()
            ));
            return Vec::new();
        }
    }
    match skillet_mcp_client::config::parse_mcp_json(path, &text, &crate::env::var) {
        Ok(read) => {
            for problem in read.problems {
                report.note(&format!("warning: {problem}"));
            }
            read.servers
        }
        Err(why) => {
            report.note(&format!("warning: {why}; its MCP servers do not start"));
            Vec::new()
        }
    }
}

/// Starts the servers of a session ([`servers`]) in its working directory.
pub fn start_for(
    workspace: &Workspace,
    settings: &Settings,
    trust: &SkillTrust,
    report: &mut dyn Report,
) -> Option<Arc<Hub>> {
    let servers = servers(workspace, &settings.mcp_servers, trust, report);
    start(servers, &workspace.env.cwd, report)
}

/// Starts `servers` (stdio ones in `cwd`) on the hub's own thread; `None` when there are none
/// or the thread cannot be made (said).
pub fn start(servers: Vec<ServerConfig>, cwd: &Path, report: &mut dyn Report) -> Option<Arc<Hub>> {
    if servers.is_empty() {
        return None;
    }
    let environment: skillet_mcp_client::hub::Environment = Arc::new(crate::env::var);
    match Hub::start(servers, cwd, &environment) {
        Ok(hub) => Some(Arc::new(hub)),
        Err(error) => {
            report.note(&format!(
                "warning: the MCP servers could not be started: {error}"
            ));
            None
        }
    }
}

/// Waits for `hub`'s servers, says which failed and what was left out of their tools, and
/// gives their tools as the settings disclose them.
pub fn tools(hub: Arc<Hub>, settings: &Settings, report: &mut dyn Report) -> Arc<McpTools> {
    hub.wait_started();
    for server in hub.servers() {
        if let Some(why) = server.tell_failure_once() {
            report.note(&format!(
                "warning: MCP server `{}` did not start: {why}",
                server.config.name
            ));
        }
    }
    for server in hub.reports() {
        for problem in server.problems {
            report.note(&format!("note: {problem}"));
        }
    }
    Arc::new(McpTools::new(hub, settings.mcp_disclosure))
}

/// `skillet mcp list`: every server this project's sessions would start (trust as recorded,
/// never asked), started, and where each stands; `None` when there are none.
pub fn list(
    workspace: &Workspace,
    library: &skillet_skills::Library,
    report: &mut dyn Report,
) -> Result<Option<String>, crate::settings::SettingsError> {
    let decided = crate::trust::decide(workspace, library, crate::trust::Asking::Never, report);
    let root = workspace.project_root();
    let configured = crate::settings::mcp_servers(&crate::settings::Sources::of_this_process(
        &root,
        decided.project_trusted,
    ))?;
    let servers = servers(workspace, &configured, &decided.skills, report);
    let Some(hub) = start(servers, &workspace.env.cwd, report) else {
        return Ok(None);
    };
    hub.wait_started();
    Ok(Some(hub.describe()))
}
