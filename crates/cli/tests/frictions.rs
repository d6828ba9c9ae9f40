//! The small frictions a daily user met, each as they met it: a mistyped command, a provider
//! that cannot be reached, a limit of 0, one step, a skill invoked by hand suggesting itself, an
//! error cut short in a log, `skillet mcp` saying nothing.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::io::Write as _;

use common::{Sandbox, environment, run, skillet_at as skillet, write_skill};
use serde_json::json;
use skillet_test_support::{MockServer, Turn};

#[test]
fn a_mistyped_command_is_named_not_sent_to_the_model() {
    let sandbox = Sandbox::empty();
    let server = MockServer::start();
    let out = run(skillet(&sandbox, Some(&server)).arg("sesions"));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("did you mean `skillet sessions`?"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("skillet chat \"sesions\""),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
    // A word nowhere near a command is a message, as before.
    server.push_turn(Turn::text("Hello."));
    let out = run(skillet(&sandbox, Some(&server))
        .arg("hello")
        .write_stdin("/exit\n"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_unreachable_provider_is_said_in_a_few_lines_and_leaves_no_session() {
    let sandbox = Sandbox::empty();
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = std::time::Instant::now();
    let out = run(skillet(&sandbox, None)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .args(["run", "--skill-match", "off", "hello"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(lines.len() <= 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot reach") && out.stderr.contains("hint:"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("client error (Connect)"),
        "{}",
        out.stderr
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(sandbox.sessions(), Vec::<std::path::PathBuf>::new());
    // In chat too: a session the model never answered is not kept.
    let out = run(skillet(&sandbox, None)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .args(["chat", "--skill-match", "off"])
        .write_stdin("hello\n/exit\n"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(sandbox.sessions(), Vec::<std::path::PathBuf>::new());
}

#[test]
fn limits_and_counts_read_as_a_person_would_write_them() {
    let sandbox = Sandbox::empty();
    let out = run(skillet(&sandbox, None).args(["run", "--max-steps", "0", "x"]));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("must be at least 1"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("18446744073709551615"),
        "{}",
        out.stderr
    );
    let server = MockServer::start();
    server.push_turn(Turn::tool("a", "glob", json!({ "pattern": "*" })));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--max-steps", "1", "x"]));
    assert!(
        out.stderr.contains("stopped after 1 step without"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_skill_invoked_by_hand_does_not_suggest_itself() {
    // Matched by meaning, as users meet it (by words alone the skill's text rarely clears the
    // bar).
    let Some(model) = skillet_test_support::embedding_model_dir() else {
        skillet_test_support::skip(
            "SKIPPED: no embedding model (run scripts/fetch-model.sh, set SKILLET_EMBED_MODEL)",
        );
        return;
    };
    let sandbox = Sandbox::empty();
    let skills = sandbox.project.join(".agents/skills");
    write_skill(
        &skills,
        "pdf",
        "---\nname: pdf\ndescription: Fill PDF forms and their fields with values\n---\nFill the PDF form fields.\n",
    );
    // Other skills, so the words of this one stand out when matched by words alone.
    for (index, topic) in [
        "deploy",
        "review",
        "docker",
        "release",
        "translate",
        "invoice",
    ]
    .iter()
    .enumerate()
    {
        write_skill(
            &skills,
            &format!("{topic}-{index}"),
            &format!(
                "---\nname: {topic}-{index}\ndescription: Help with {topic} work\n---\nSteps.\n"
            ),
        );
    }
    let server = MockServer::start();
    server.push_turn(Turn::text("Filled."));
    let matched = |server: &MockServer| {
        let mut command = skillet(&sandbox, Some(server));
        command
            .env("SKILLET_EMBED_MODEL", &model)
            .env("XDG_CACHE_HOME", sandbox.temp.path());
        command
    };
    let out = run(matched(&server).args(["run", "/pdf fill the pdf form fields"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = server.requests()[0].body["messages"][0].to_string();
    assert!(sent.contains("Fill the PDF form fields."), "{sent}");
    assert!(!sent.contains("skill_suggestions"), "{sent}");
    // A message that is no invocation is still matched.
    let server = MockServer::start();
    server.push_turn(Turn::text("Filled."));
    let out = run(matched(&server).args(["run", "fill the pdf form fields with values"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = server.requests()[0].body["messages"][0].to_string();
    assert!(sent.contains("skill_suggestions"), "{sent}");
}

#[test]
fn a_tool_error_written_to_a_file_is_kept_whole() {
    let sandbox = Sandbox::empty();
    let long = format!("missing-{}.txt", "x".repeat(200));
    let server = MockServer::start();
    server.push_turn(Turn::tool("a", "read_file", json!({ "path": long })));
    server.push_turn(Turn::text("done"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "read it"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains(&long), "{}", out.stderr);
}

#[test]
fn skillet_mcp_says_what_it_serves_at_its_default_level() {
    let sandbox = Sandbox::empty();
    write_skill(
        &sandbox.project.join(".agents/skills"),
        "pdf",
        "---\nname: pdf\ndescription: Fill PDF forms\n---\nBody.\n",
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillet"))
        .arg("mcp")
        .current_dir(&sandbox.project)
        .env_clear()
        .envs(environment(&sandbox, None))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"tester","version":"1.0"}}}}}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("skillet mcp: serving 1 skill over stdio to tester 1.0"),
        "{stderr}"
    );
}
