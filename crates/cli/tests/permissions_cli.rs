//! Standing permission rules end to end: `[permissions]` in the user's `skillet.toml` and in a
//! project's, and Claude Code's `.claude/settings.json`, on `skillet run` with the model's calls
//! scripted on the strict mock provider; `skillet config` lists them.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use common::{Sandbox, run, skillet_at as skillet, tool_result};
use serde_json::json;
use skillet_test_support::{MockServer, Turn};

/// A mock whose model makes each call (tool, arguments) in turn, then ends.
fn scripted(calls: &[(&str, serde_json::Value)]) -> MockServer {
    let server = MockServer::start();
    for (index, (tool, input)) in calls.iter().enumerate() {
        server.push_turn(Turn::tool(&format!("call{index}"), tool, input.clone()));
    }
    server.push_turn(Turn::text("done"));
    server
}

fn user_config(sandbox: &Sandbox, text: &str) {
    let dir = sandbox.home.join(".config/skillet");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("skillet.toml"), text).unwrap();
}

/// What each call returned, after `run --yes --add-dir FOLDER`.
fn with_added(
    sandbox: &Sandbox,
    server: &MockServer,
    calls: usize,
    folder: &std::path::Path,
) -> Vec<String> {
    let folder = folder.display().to_string();
    results(
        sandbox,
        server,
        calls,
        &["run", "--yes", "--add-dir", &folder, "go"],
    )
}

fn bash(command: &str) -> (&'static str, serde_json::Value) {
    ("bash", json!({ "command": command }))
}

/// What each call returned, after `run` with `args`.
fn results(sandbox: &Sandbox, server: &MockServer, calls: usize, args: &[&str]) -> Vec<String> {
    let out = run(skillet(sandbox, Some(server)).args(args));
    assert_eq!(out.code, 0, "{}", out.stderr);
    (1..=calls)
        .map(|index| tool_result(server, index))
        .collect()
}

#[test]
fn allow_rules_let_named_commands_run_without_yes_and_nothing_else() {
    let sandbox = Sandbox::empty();
    user_config(
        &sandbox,
        "[permissions]\nallow = [\"Bash(echo:*)\", \"Edit(notes/**)\"]\n",
    );
    let server = scripted(&[
        bash("echo allowed-by-rule"),
        bash("echo a && ls"),
        (
            "write_file",
            json!({"path": "notes/a.md", "content": "x\n"}),
        ),
        ("write_file", json!({"path": "other.md", "content": "x\n"})),
    ]);
    let results = results(&sandbox, &server, 4, &["run", "go"]);
    assert!(results[0].contains("allowed-by-rule"), "{}", results[0]);
    assert!(
        results[1].contains("not allowed in `skillet run` without --yes"),
        "{}",
        results[1]
    );
    assert!(
        sandbox.project.join("notes/a.md").is_file(),
        "{}",
        results[2]
    );
    assert!(!sandbox.project.join("other.md").exists(), "{}", results[3]);
}

#[test]
fn deny_rules_hold_under_yes_reads_included_and_ask_rules_refuse_where_nobody_can_be_asked() {
    let sandbox = Sandbox::empty();
    std::fs::write(sandbox.project.join(".env"), "KEY=secret\n").unwrap();
    std::os::unix::fs::symlink(".env", sandbox.project.join("envlink")).unwrap();
    user_config(
        &sandbox,
        "[permissions]\ndeny = [\"Bash(curl:*)\", \"Read(.env)\"]\nask = [\"Bash(git push:*)\"]\n",
    );
    let server = scripted(&[
        bash("echo before && 'curl' http://127.0.0.1:9 ; echo after"),
        ("read_file", json!({"path": ".env"})),
        bash("sudo git push origin main"),
        bash("echo fine"),
        ("grep", json!({"pattern": "KEY"})),
        ("read_file", json!({"path": "envlink"})),
    ]);
    let results = results(&sandbox, &server, 6, &["run", "--yes", "go"]);
    // A folder-wide search leaves out what a deny rule keeps from reading; a link to it is
    // the file it leads to.
    assert!(!results[4].contains("secret"), "{}", results[4]);
    assert!(!results[5].contains("secret"), "{}", results[5]);
    assert!(
        results[0].contains("the permission rule `Bash(curl:*)` (deny"),
        "{}",
        results[0]
    );
    assert!(
        !results[0].contains("after"),
        "the command ran: {}",
        results[0]
    );
    assert!(results[1].contains("`Read(.env)`"), "{}", results[1]);
    assert!(!results[1].contains("secret"), "{}", results[1]);
    assert!(
        results[2].contains("`Bash(git push:*)` (ask"),
        "{}",
        results[2]
    );
    assert!(results[3].contains("fine"), "{}", results[3]);
}

#[test]
fn an_untrusted_project_may_deny_but_never_allow_and_claude_codes_rules_carry_over() {
    let sandbox = Sandbox::empty();
    std::fs::write(
        sandbox.project.join("skillet.toml"),
        "[permissions]\nallow = [\"Bash(echo:*)\"]\ndeny = [\"Bash(touch:*)\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(sandbox.project.join(".claude")).unwrap();
    std::fs::write(
        sandbox.project.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(ls:*)"]}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(sandbox.home.join(".claude")).unwrap();
    std::fs::write(
        sandbox.home.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(pwd)"]}, "model": "opus"}"#,
    )
    .unwrap();
    std::fs::write(sandbox.project.join("keep.txt"), "x\n").unwrap();
    // Without --yes: the project's allow rules grant nothing; the user's own Claude Code
    // rule does.
    let server = scripted(&[bash("echo from-project"), bash("ls"), bash("pwd")]);
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "go"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`permissions.allow` is ignored: the project is not trusted"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("the allow rule `Bash(ls:*)` is ignored"),
        "{}",
        out.stderr
    );
    assert!(tool_result(&server, 1).contains("without --yes"));
    assert!(tool_result(&server, 2).contains("without --yes"));
    assert!(
        !tool_result(&server, 3).contains("without --yes"),
        "{}",
        tool_result(&server, 3)
    );
    // Under --yes: its deny rules hold.
    let server = scripted(&[bash("touch new.txt"), bash("rm keep.txt")]);
    let results = results(&sandbox, &server, 2, &["run", "--yes", "go"]);
    assert!(results[0].contains("`Bash(touch:*)`"), "{}", results[0]);
    assert!(results[1].contains("`Bash(rm:*)`"), "{}", results[1]);
    assert!(!sandbox.project.join("new.txt").exists());
    assert!(sandbox.project.join("keep.txt").exists());
}

#[test]
fn config_lists_the_rules_where_they_came_from_and_those_that_never_match() {
    let sandbox = Sandbox::empty();
    user_config(
        &sandbox,
        "[permissions]\nallow = [\"Bash(cargo test:*)\", \"WebFetch\"]\ndeny = [\"Read(.env)\"]\n",
    );
    let server = MockServer::start();
    let out = run(skillet(&sandbox, Some(&server)).arg("config"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let config = sandbox.home.join(".config/skillet/skillet.toml");
    assert!(
        out.stdout
            .contains(&format!("  deny  Read(.env)  ({})", config.display())),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("  allow Bash(cargo test:*)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("WebFetch")
            && out
                .stdout
                .contains("never acts: skillet has no tool `WebFetch`"),
        "{}",
        out.stdout
    );
}

#[test]
fn each_mode_end_to_end_on_the_strict_mock() {
    let write = |path: &str| ("write_file", json!({ "path": path, "content": "x\n" }));
    // accept-edits without --yes: an edit runs unasked; a command does not; a protected path
    // is still refused.
    let sandbox = Sandbox::empty();
    let server = scripted(&[write("src/a.rs"), bash("touch ran"), write(".envrc")]);
    let results = self::results(
        &sandbox,
        &server,
        3,
        &["run", "--permission-mode", "accept-edits", "go"],
    );
    assert!(sandbox.project.join("src/a.rs").is_file(), "{}", results[0]);
    assert!(results[1].contains("without --yes"), "{}", results[1]);
    assert!(!sandbox.project.join("ran").exists());
    assert!(results[2].contains("not allowed"), "{}", results[2]);
    assert!(!sandbox.project.join(".envrc").exists());
    // plan, even under --yes: nothing written or run, reading goes on, the model is told.
    let sandbox = Sandbox::empty();
    std::fs::write(sandbox.project.join("notes.md"), "read me\n").unwrap();
    let server = scripted(&[
        ("read_file", json!({ "path": "notes.md" })),
        write("src/a.rs"),
        bash("touch ran"),
    ]);
    let results = self::results(
        &sandbox,
        &server,
        3,
        &["run", "--yes", "--permission-mode", "plan", "go"],
    );
    assert!(results[0].contains("read me"), "{}", results[0]);
    for result in &results[1..] {
        assert!(result.contains("plan mode"), "{result}");
    }
    assert!(!sandbox.project.join("src/a.rs").exists());
    assert!(!sandbox.project.join("ran").exists());
    let first = server.requests()[0].body["messages"][0].to_string();
    assert!(first.contains("The session is in plan mode"), "{first}");
    // default: as before, `--yes` lets both run.
    let sandbox = Sandbox::empty();
    let server = scripted(&[write("src/a.rs"), bash("touch ran")]);
    let _ = self::results(
        &sandbox,
        &server,
        2,
        &["run", "--yes", "--permission-mode", "default", "go"],
    );
    assert!(sandbox.project.join("src/a.rs").is_file() && sandbox.project.join("ran").exists());
    // A mode that does not exist is a usage error naming the choices.
    let out = run(skillet(&sandbox, None).args(["run", "--permission-mode", "yolo", "go"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("accept-edits"), "{}", out.stderr);
}

#[test]
fn add_dir_opens_one_folder_beside_the_project_and_keeps_what_runs_code_there_protected() {
    let sandbox = Sandbox::empty();
    let other = sandbox.temp.path().join("other");
    std::fs::create_dir_all(other.join(".git/hooks")).unwrap();
    std::fs::write(other.join("data.txt"), "beside\n").unwrap();
    let at = |name: &str| other.join(name).display().to_string();
    let server = scripted(&[
        ("read_file", json!({ "path": at("data.txt") })),
        (
            "write_file",
            json!({ "path": at("notes.md"), "content": "x\n" }),
        ),
        (
            "write_file",
            json!({ "path": at(".git/hooks/pre-commit"), "content": "#!/bin/sh\n" }),
        ),
        bash(&format!("cp {} {}", at("data.txt"), at("copy.txt"))),
    ]);
    let results = with_added(&sandbox, &server, 4, &other);
    assert!(results[0].contains("beside"), "{}", results[0]);
    assert!(other.join("notes.md").is_file(), "{}", results[1]);
    assert!(results[2].contains("inside .git"), "{}", results[2]);
    assert!(!other.join(".git/hooks/pre-commit").exists());
    let told = server.requests()[0].body["messages"][0].to_string();
    assert!(told.contains("the user added these folders"), "{told}");
    #[cfg(target_os = "linux")]
    if common::escapes::namespaces(&sandbox) {
        assert!(other.join("copy.txt").is_file(), "{}", results[3]);
    }
    // Without it, the folder is outside.
    let server = scripted(&[("read_file", json!({ "path": at("data.txt") }))]);
    let results = self::results(&sandbox, &server, 1, &["run", "--yes", "go"]);
    assert!(results[0].contains("is outside"), "{}", results[0]);
    // A folder that is not there is a clear error before anything is sent.
    let idle = MockServer::start();
    let out = run(skillet(&sandbox, Some(&idle)).args(["run", "--add-dir", "missing", "go"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--add-dir missing"), "{}", out.stderr);
    assert!(idle.requests().is_empty());
    // Your home, a folder holding it, or a hidden folder in it: your own configuration.
    std::fs::create_dir_all(sandbox.home.join(".config/skillet")).unwrap();
    for home in [
        sandbox.home.display().to_string(),
        sandbox.home.join(".config").display().to_string(),
        "/".to_string(),
    ] {
        let out = run(skillet(&sandbox, Some(&idle)).args(["run", "--add-dir", &home, "go"]));
        assert_eq!(out.code, 2, "{home}: {}", out.stderr);
        assert!(
            out.stderr.contains("your own configuration"),
            "{}",
            out.stderr
        );
    }
    // Skillet's config folder wherever XDG_CONFIG_HOME puts it, hidden or not.
    let config = sandbox.temp.path().join("cfg");
    std::fs::create_dir_all(config.join("skillet")).unwrap();
    let out = run(skillet(&sandbox, Some(&idle))
        .env("XDG_CONFIG_HOME", &config)
        .args(["run", "--add-dir", &config.display().to_string(), "go"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("your own configuration"),
        "{}",
        out.stderr
    );
    // One a config file names is left out, said: it never stops every session.
    user_config(
        &sandbox,
        "[permissions]\nadditional_directories = [\"gone\"]\n",
    );
    let server = scripted(&[]);
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "go"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("left out"), "{}", out.stderr);
}

#[test]
fn run_warns_of_rules_that_never_act() {
    let sandbox = Sandbox::empty();
    user_config(
        &sandbox,
        "[permissions]\nask = [\"Read(.env)\"]\ndeny = [\"WebFetch\"]\n",
    );
    let server = scripted(&[]);
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "go"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    for rule in ["`Read(.env)` (ask", "`WebFetch` (deny"] {
        assert!(
            out.stderr
                .contains(&format!("warning: the permission rule {rule}")),
            "{}",
            out.stderr
        );
    }
    assert!(
        out.stderr.contains("never asks before reading"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_mode_and_added_folders_come_from_config_files_and_claude_codes_settings() {
    let server = MockServer::start();
    let sandbox = Sandbox::empty();
    let shared = sandbox.temp.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    user_config(
        &sandbox,
        &format!(
            "[permissions]\ndefault_mode = \"accept-edits\"\nadditional_directories = [{:?}]\n",
            shared.display().to_string()
        ),
    );
    let config = run(skillet(&sandbox, Some(&server)).arg("config"));
    assert!(
        config.stdout.contains("permission mode: accept-edits"),
        "{}",
        config.stdout
    );
    assert!(config.stdout.contains("added folder:"), "{}", config.stdout);
    // An untrusted project's file may narrow, never widen.
    std::fs::write(
        sandbox.project.join("skillet.toml"),
        "[permissions]\nadditional_directories = [\"/\"]\n",
    )
    .unwrap();
    let untrusted = run(skillet(&sandbox, Some(&server)).arg("config"));
    assert!(
        !untrusted.stdout.contains("added folder:       /\n"),
        "{}",
        untrusted.stdout
    );
    assert!(
        untrusted.stdout.matches("added folder:").count() == 1,
        "{}",
        untrusted.stdout
    );
    // Claude Code's own settings: its defaultMode and additionalDirectories carry over.
    let sandbox = Sandbox::empty();
    std::fs::create_dir_all(sandbox.home.join(".claude")).unwrap();
    std::fs::write(
        sandbox.home.join(".claude/settings.json"),
        r#"{"permissions": {"defaultMode": "plan", "additionalDirectories": ["/tmp"]}}"#,
    )
    .unwrap();
    let config = run(skillet(&sandbox, Some(&server)).arg("config"));
    assert!(
        config.stdout.contains("permission mode: plan"),
        "{}",
        config.stdout
    );
    assert!(
        config.stdout.contains("added folder:    /tmp"),
        "{}",
        config.stdout
    );
    // A bad mode in skillet.toml is an error naming the key.
    user_config(&sandbox, "[permissions]\ndefault_mode = \"yolo\"\n");
    let bad = run(skillet(&sandbox, Some(&server)).arg("config"));
    assert!(
        bad.stderr
            .contains("permissions.default_mode = \"yolo\" is not valid"),
        "{}",
        bad.stderr
    );
}

#[test]
fn plan_mode_runs_no_skill_commands_even_those_a_trusted_skill_allows() {
    let sandbox = Sandbox::empty();
    common::write_skill(
        &sandbox.project.join(".agents/skills"),
        "marker",
        "---\nname: marker\ndescription: Leave a marker\nallowed-tools: Bash(touch:*)\n---\nToday: !`touch ran-in-plan`\n",
    );
    let server = scripted(&[]);
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--trust-project",
        "--permission-mode",
        "plan",
        "/marker",
    ]));
    assert!(
        !sandbox.project.join("ran-in-plan").exists(),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = server.requests()[0].body["messages"][0].to_string();
    assert!(
        sent.contains("[not run: `touch ran-in-plan` (the session is in plan mode"),
        "{sent}"
    );
}

#[test]
fn an_added_repository_keeps_what_runs_code_protected() {
    let sandbox = Sandbox::empty();
    let other = sandbox.temp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let at = |name: &str| other.join(name).display().to_string();
    // What runs code later in the added folder is protected as in the project: from file
    // tools, and from commands nobody reviewed (the review's case: a repository added whole).
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&other)
            .args(args)
            .output()
            .unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    let server = scripted(&[
        (
            "write_file",
            json!({ "path": at(".claude/settings.json"), "content": "{}\n" }),
        ),
        (
            "write_file",
            json!({ "path": at(".vscode/tasks.json"), "content": "{}\n" }),
        ),
        bash(&format!(
            "echo hook > {}; echo x > {}; mkdir -p {}; echo x > {}",
            at(".git/hooks/pre-commit"),
            at(".envrc"),
            at(".husky"),
            at(".husky/pre-commit")
        )),
    ]);
    let results = with_added(&sandbox, &server, 3, &other);
    assert!(results[0].contains("refused"), "{}", results[0]);
    assert!(results[1].contains("refused"), "{}", results[1]);
    assert!(!other.join(".claude/settings.json").exists());
    assert!(!other.join(".vscode/tasks.json").exists());
    #[cfg(target_os = "linux")]
    if common::escapes::namespaces(&sandbox) {
        for protected in [".git/hooks/pre-commit", ".envrc", ".husky/pre-commit"] {
            assert!(
                !other.join(protected).exists(),
                "{protected}: {}",
                results[2]
            );
        }
    }
}
