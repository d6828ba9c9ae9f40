//! What the command-line tests share: a sandbox (a temp folder with an empty home and a project
//! folder), `skillet` run in its project with a clean environment, and what it printed.

#![allow(dead_code, reason = "each test file uses a part")]

#[cfg(target_os = "linux")]
pub mod escapes;
pub mod mcp_client;
pub mod terminal;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use skillet_test_support::MockServer;

/// The API key the mock provider is given (never a real one).
pub const API_KEY: &str = "sk-test";

/// A temp folder holding an empty home and a project folder, removed when dropped.
pub struct Sandbox {
    /// The temp folder, by the path it was made with.
    pub temp: tempfile::TempDir,
    /// The temp folder, canonical (what skillet sees and prints).
    pub root: PathBuf,
    /// `root/home`: skillet's `HOME`.
    pub home: PathBuf,
    /// `root/project`: where skillet runs.
    pub project: PathBuf,
}

impl Sandbox {
    /// An empty home and an empty project folder.
    pub fn empty() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        let home = root.join("home");
        let project = root.join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        Self {
            temp,
            root,
            home,
            project,
        }
    }

    /// Where skillet keeps its sessions under this home.
    pub fn sessions_dir(&self) -> PathBuf {
        self.home.join(".local/share/skillet/sessions")
    }

    /// The session files, sorted (none when the folder is not there).
    pub fn sessions(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.sessions_dir())
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
    }
}

/// Writes `root/name/SKILL.md`.
pub fn write_skill(root: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(root.join(name)).unwrap();
    std::fs::write(root.join(name).join("SKILL.md"), text).unwrap();
}

/// The whole environment skillet gets (nothing else is passed on): its `HOME` in the sandbox,
/// the `PATH` to run commands with, and `HF_HUB_OFFLINE=1` (no embedding model here and no hub
/// to fetch it from: skills are matched by words, quietly); with a mock server and an API key,
/// Anthropic at that server.
pub fn environment(
    sandbox: &Sandbox,
    provider: Option<(&MockServer, &str)>,
) -> Vec<(&'static str, OsString)> {
    let mut vars = vec![
        ("HOME", sandbox.home.clone().into_os_string()),
        ("PATH", std::env::var_os("PATH").unwrap()),
        ("HF_HUB_OFFLINE", "1".into()),
    ];
    if let Some((server, api_key)) = provider {
        vars.push(("ANTHROPIC_API_KEY", api_key.into()));
        vars.push(("ANTHROPIC_BASE_URL", server.url().into()));
    }
    vars
}

/// `skillet` in the sandbox's project with only [`environment`].
pub fn skillet(sandbox: &Sandbox, provider: Option<(&MockServer, &str)>) -> Command {
    let mut command = Command::cargo_bin("skillet").unwrap();
    command
        .current_dir(&sandbox.project)
        .env_clear()
        .envs(environment(sandbox, provider));
    command
}

/// [`skillet`] pointed at `server` with [`API_KEY`] when there is one.
pub fn skillet_at(sandbox: &Sandbox, server: Option<&MockServer>) -> Command {
    skillet(sandbox, server.map(|server| (server, API_KEY)))
}

/// How a run of skillet ended, and what it wrote.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` to its end; its output must be UTF-8.
pub fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    Output {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// The text of the first message of request `index` to the mock server (what a `run` sent).
pub fn first_text(server: &MockServer, index: usize) -> String {
    server.requests()[index].body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The content of the tool result in request `index` to the mock server (the last message's
/// first block).
pub fn tool_result(server: &MockServer, index: usize) -> String {
    let request = &server.requests()[index];
    let last = request.body["messages"].as_array().unwrap().last().unwrap();
    match &last["content"][0]["content"] {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The Python with the official MCP SDK (`SKILLET_MCP_PYTHON`; `scripts/fetch-mcp-client.sh`
/// makes one); without it, `None` and a line saying the test skips, or a failure where
/// `SKILLET_REQUIRE_MCP_CLIENT` says it must run (CI).
pub fn mcp_python() -> Option<PathBuf> {
    if let Some(python) = std::env::var_os("SKILLET_MCP_PYTHON") {
        return Some(PathBuf::from(python));
    }
    assert!(
        std::env::var_os("SKILLET_REQUIRE_MCP_CLIENT").is_none(),
        "SKILLET_REQUIRE_MCP_CLIENT is set but SKILLET_MCP_PYTHON is not"
    );
    skillet_test_support::skip(
        "SKIPPED: MCP client tests: set SKILLET_MCP_PYTHON to a python with `mcp` 2.x (scripts/fetch-mcp-client.sh)",
    );
    None
}
