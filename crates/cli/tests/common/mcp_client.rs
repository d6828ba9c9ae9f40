//! A line-by-line MCP client of `skillet mcp` over stdio, for the tests that drive the server:
//! requests answered by id, notifications waited for.

#![allow(
    clippy::needless_pass_by_value,
    reason = "json!(…) arguments read best in place"
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

/// How long an answer may take before the test fails: long, since a debug build reading
/// 20 MiB files eight at a time on a loaded 2-core machine took over 20 s (it is a bound on
/// a hang, not a timing).
pub const WAIT: Duration = Duration::from_secs(90);

/// `skillet mcp --skills-dir SKILLS` in the sandbox's project, with only its clean environment.
pub fn mcp_command(sandbox: &super::Sandbox, skills: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillet"));
    command
        .args(["mcp", "--skills-dir"])
        .arg(skills)
        .current_dir(&sandbox.project)
        .env_clear()
        .envs(super::environment(sandbox, None));
    command
}

/// [`mcp_command`] started, stdin and stdout piped, the log dropped.
pub fn spawn(sandbox: &super::Sandbox, skills: &Path) -> Child {
    mcp_command(sandbox, skills)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// [`mcp_command`] started and initialized.
pub fn start(sandbox: &super::Sandbox, skills: &Path) -> Server {
    Server::start(spawn(sandbox, skills))
}

/// `skillet mcp` running in a sandbox, spoken to line by line.
pub struct Server {
    child: Child,
    /// The server's stdin, for writing what no well-behaved client sends.
    pub stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Server {
    /// Speaks to `child` (stdin and stdout piped) and initializes the session.
    pub fn start(mut child: Child) -> Self {
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        let init = server.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "skillet", "{init}");
        server.notify("notifications/initialized", json!({}));
        server
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns the response with its id (notifications are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&json!(id))
    }

    pub fn response(&mut self, id: &Value) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no answer to request {id}"));
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|error| {
                panic!("stdout holds a line that is not JSON ({error}): {line}")
            });
            if message.get("id") == Some(id) {
                return message;
            }
        }
    }

    /// The responses to requests `ids`, in any order they come (other messages skipped).
    pub fn responses(&mut self, ids: &[Value]) -> Vec<Value> {
        let mut found = Vec::new();
        while found.len() < ids.len() {
            let line = self
                .lines
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no answer to all of {ids:?}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some_and(|id| ids.contains(id)) {
                found.push(message);
            }
        }
        found
    }

    /// Waits for a notification of `method`; the methods of every notification seen on the way.
    pub fn notification(&mut self, method: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no {method} notification; saw {seen:?}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if let Some(name) = message["method"].as_str() {
                seen.push(name.to_string());
                if name == method {
                    return seen;
                }
            }
        }
    }

    /// The methods of the notifications that arrive within `time`.
    pub fn notifications_within(&mut self, time: Duration) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(time) {
            let message: Value = serde_json::from_str(&line).unwrap();
            if let Some(name) = message["method"].as_str() {
                seen.push(name.to_string());
            }
        }
        seen
    }

    /// The response to request `id`, or an error response without an id (what the SDK sends
    /// when it cannot read the request's id).
    pub fn response_or_anonymous_error(&mut self, id: &Value) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no answer to request {id}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == Some(id)
                || (message.get("error").is_some() && message.get("id").is_none_or(Value::is_null))
            {
                return message;
            }
        }
    }

    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        response["result"].clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Text of a tool result.
pub fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
