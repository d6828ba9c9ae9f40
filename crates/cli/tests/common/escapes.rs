//! What the sandbox escape tests share: a prepared repository, `skillet run --yes` with the
//! model's `bash` calls scripted on the strict mock provider, and the user's own git afterwards.

use std::path::Path;
use std::process::Command as StdCommand;

use assert_cmd::Command;
use serde_json::json;
use skillet_agent::sandbox::{SandboxPolicy, SandboxStatus, probe};
use skillet_test_support::{MockServer, Turn};

use super::{Sandbox, run, tool_result};

pub use super::API_KEY;

/// Whether commands run in namespaces here; if not, a line saying why these tests cannot show
/// it (or a failure where `SKILLET_REQUIRE_SANDBOX` says they must: CI).
pub fn namespaces(sandbox: &Sandbox) -> bool {
    if std::env::var_os("SKILLET_ESCAPES_ANY_SANDBOX").is_some() {
        return true;
    }
    match probe(&SandboxPolicy::default(), &sandbox.project) {
        SandboxStatus::Enforced => true,
        other if std::env::var_os("SKILLET_REQUIRE_SANDBOX").is_some() => {
            panic!(
                "SKILLET_REQUIRE_SANDBOX is set but commands do not run in namespaces: {other:?}"
            )
        }
        other => {
            skillet_test_support::skip(&format!(
                "SKIPPED: commands cannot run in namespaces here ({other:?}); the escape tests need bubblewrap"
            ));
            false
        }
    }
}

pub fn skillet(sandbox: &Sandbox, server: &MockServer) -> Command {
    let mut command = super::skillet(sandbox, Some((server, API_KEY)));
    if let Some(bwrap) = std::env::var_os("SKILLET_BWRAP") {
        command.env("SKILLET_BWRAP", bwrap);
    }
    command
}

pub fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    let output = StdCommand::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A project that is a git repository with one commit.
pub fn repository() -> Sandbox {
    let sandbox = Sandbox::empty();
    git(&sandbox.project, &["init", "-q", "-b", "main"]);
    std::fs::write(sandbox.project.join("README.md"), "hello\n").unwrap();
    git(&sandbox.project, &["add", "README.md"]);
    git(&sandbox.project, &["commit", "-q", "-m", "first"]);
    sandbox
}

/// Runs `skillet run --yes` in the project with the model calling `bash` with each command in
/// turn; what each call returned.
pub fn attack(sandbox: &Sandbox, commands: &[&str]) -> Vec<String> {
    attack_with(sandbox, commands, &[])
}

pub fn attack_with(sandbox: &Sandbox, commands: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let server = scripted(commands);
    let mut skillet = skillet(sandbox, &server);
    for (name, value) in env {
        skillet.env(name, value);
    }
    attack_through(&server, commands.len(), &mut skillet)
}

/// Runs `run --yes` with the model calling `bash` with each of `commands`; what each call
/// returned, and what skillet printed on stderr.
pub fn attack_told(sandbox: &Sandbox, commands: &[&str]) -> (Vec<String>, String) {
    let server = scripted(commands);
    let out = run(skillet(sandbox, &server).args(["run", "--yes", "tidy up the repository"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = (1..=commands.len())
        .map(|index| tool_result(&server, index))
        .collect();
    (results, out.stderr)
}

/// A strict mock provider whose model calls `bash` with each command in turn, then ends.
pub fn scripted(commands: &[&str]) -> MockServer {
    let server = MockServer::start();
    for (index, command) in commands.iter().enumerate() {
        server.push_turn(Turn::tool(
            &format!("call{index}"),
            "bash",
            json!({ "command": command }),
        ));
    }
    server.push_turn(Turn::text("done"));
    server
}

/// Runs `skillet` (set up against `server`, from [`scripted`]) as `run --yes`; what each of the
/// `calls` returned.
pub fn attack_through(server: &MockServer, calls: usize, skillet: &mut Command) -> Vec<String> {
    let out = run(skillet.args(["run", "--yes", "tidy up the repository"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    (1..=calls)
        .map(|index| tool_result(server, index))
        .collect()
}

/// Runs git's pre-commit path on the host afterwards, as the user would: a hook planted by the
/// command would write `PWNED`.
pub fn user_commits(sandbox: &Sandbox) {
    std::fs::write(sandbox.project.join("user.txt"), "mine\n").unwrap();
    let _ = StdCommand::new("git")
        .args(["-c", "user.email=u@example.com", "-c", "user.name=u"])
        .args(["add", "user.txt"])
        .current_dir(&sandbox.project)
        .output();
    let _ = StdCommand::new("git")
        .args(["-c", "user.email=u@example.com", "-c", "user.name=u"])
        .args(["commit", "-q", "-m", "user"])
        .current_dir(&sandbox.project)
        .output();
    let _ = StdCommand::new("git")
        .arg("status")
        .current_dir(&sandbox.project)
        .output();
}

pub fn assert_not_pwned(sandbox: &Sandbox) {
    user_commits(sandbox);
    assert!(
        !sandbox.project.join("PWNED").exists(),
        "a payload ran outside the sandbox"
    );
    assert!(!sandbox.root.join("PWNED").exists());
}

pub const HOOK: &str = "printf '#!/bin/sh\\ntouch \"$(git rev-parse --show-toplevel)/PWNED\"\\n'";
