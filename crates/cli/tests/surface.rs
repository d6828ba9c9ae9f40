//! The command line as the README describes it: each place where they once disagreed, run with
//! the real binary (against the scripted mock model server where a model is needed), and
//! snapshots of the reworded errors.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use assert_cmd::Command;
use common::{Sandbox, run, write_skill};
use serde_json::json;
use skillet_test_support::{MockServer, Turn};

/// The API key skillet is given for the mock server.
const API_KEY: &str = "sk-test-secret";

/// A project (a git root) with one skill in `.claude/skills`, and an empty home.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::empty();
    std::fs::create_dir_all(sandbox.project.join(".git")).unwrap();
    write_skill(
        &sandbox.project.join(".claude/skills"),
        "pdf",
        "---\nname: pdf\ndescription: Fill PDF forms\n---\nUse references/forms.md.\n",
    );
    sandbox
}

/// `skillet` in the project with a clean environment (no model, no hub) and nothing on stdin,
/// pointed at the mock server when there is one.
fn skillet(sandbox: &Sandbox, server: Option<&MockServer>) -> Command {
    let mut command = common::skillet(sandbox, server.map(|server| (server, API_KEY)));
    command.write_stdin("");
    command
}

/// Text with the sandbox's paths made stable for snapshots.
fn redact(text: &str, sandbox: &Sandbox) -> String {
    text.replace(&sandbox.root.display().to_string(), "[TMP]")
}

/// Every request's messages, as one string to search.
fn sent(server: &MockServer) -> String {
    server
        .requests()
        .iter()
        .map(|request| request.body["messages"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

// --- Input: prompts, stdin, bare `skillet` ---------------------------------------------------

#[test]
fn run_reads_the_prompt_from_stdin_when_none_is_given_or_it_is_a_dash() {
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("one"));
    server.push_turn(Turn::text("two"));
    let out = run(skillet(&sandbox, Some(&server))
        .arg("run")
        .write_stdin("summarise from stdin\n"));
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "one\n"),
        "{}",
        out.stderr
    );
    let out = run(skillet(&sandbox, Some(&server))
        .args(["run", "-"])
        .write_stdin("dash means stdin"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = sent(&server);
    assert!(
        sent.contains("summarise from stdin") && sent.contains("dash means stdin"),
        "{sent}"
    );
}

#[test]
fn run_appends_piped_text_to_a_prompt_argument() {
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("reviewed"));
    server.push_turn(Turn::text("plain"));
    let out = run(skillet(&sandbox, Some(&server))
        .args(["run", "review this diff"])
        .write_stdin("-old\n+new\n"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = common::first_text(&server, 0);
    assert!(
        first.starts_with("review this diff\n\n<stdin>\n-old\n+new\n</stdin>"),
        "{first}"
    );
    // Nothing piped in (an empty pipe): the prompt alone.
    let out = run(skillet(&sandbox, Some(&server))
        .args(["run", "just this"])
        .write_stdin(""));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let second = common::first_text(&server, 1);
    assert!(second.starts_with("just this"), "{second}");
    assert!(!second.contains("<stdin>"), "{second}");
}

#[test]
fn an_empty_prompt_is_refused_before_any_request() {
    let sandbox = sandbox();
    let server = MockServer::start();
    for args in [&["run", ""][..], &["run", "  \n"], &["run"], &["run", "-"]] {
        let out = run(skillet(&sandbox, Some(&server))
            .args(args)
            .write_stdin(" \n"));
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("the prompt is empty"), "{}", out.stderr);
    }
    let out = run(skillet(&sandbox, Some(&server)).arg(" "));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(server.requests().is_empty());
    let sessions = sandbox.sessions_dir();
    assert!(!sessions.exists(), "no session is started for nothing");
}

#[test]
fn bare_skillet_takes_every_chat_flag_and_a_first_message() {
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("Hello from the mock."));
    let out = run(skillet(&sandbox, Some(&server))
        .args([
            "--model",
            "claude-test",
            "--no-stream",
            "--max-steps",
            "3",
            "--skill-match",
            "off",
            "--catalog",
            "both",
            "say hello",
        ])
        .write_stdin("/exit\n"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("Hello from the mock."),
        "{}",
        out.stdout
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "claude-test");
    assert_eq!(requests[0].body["stream"], json!(false));
    assert!(
        requests[0].body["messages"]
            .to_string()
            .contains("say hello")
    );
    // After `--`, a command's name is a first message like any other.
    server.push_turn(Turn::text("Running."));
    let out = run(skillet(&sandbox, Some(&server))
        .args(["--", "run"])
        .write_stdin("/exit\n"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let messages = server.requests()[1].body["messages"].clone();
    assert_eq!(messages[0]["content"][0]["text"], "run", "{messages}");
}

#[test]
fn chat_flags_before_a_command_are_refused_not_ignored() {
    let sandbox = sandbox();
    let out = run(skillet(&sandbox, None).args(["--model", "x", "run", "hi"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    insta::assert_snapshot!("chat_flag_before_a_command", out.stderr);
}

// --- Sessions -------------------------------------------------------------------------------

#[test]
fn resume_followed_by_a_prompt_continues_the_latest_with_that_prompt() {
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("first answer"));
    assert_eq!(
        run(skillet(&sandbox, Some(&server)).args(["run", "first question"])).code,
        0
    );
    server.push_turn(Turn::text("second answer"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--resume", "follow up"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("resumed session"), "{}", out.stderr);
    let last = server.requests()[1].body["messages"].to_string();
    assert!(
        last.contains("first question") && last.contains("follow up"),
        "{last}"
    );
    // -c / --continue is the same, on run.
    server.push_turn(Turn::text("third answer"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "-c", "and more"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let last = server.requests()[2].body["messages"].to_string();
    assert!(
        last.contains("follow up") && last.contains("and more"),
        "{last}"
    );
    // --continue and --resume together make no sense.
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "-c", "--resume", "x", "y"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn an_empty_session_left_by_clear_is_not_the_one_continued() {
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("noted"));
    let out = run(skillet(&sandbox, Some(&server))
        .arg("chat")
        .write_stdin("remember the word teapot\n/clear\n/exit\n"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The session /clear started had nothing in it: no file was written for it.
    let sessions = std::fs::read_dir(sandbox.sessions_dir()).unwrap().count();
    assert_eq!(sessions, 1, "the chat only");
    server.push_turn(Turn::text("teapot"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--continue", "which word?"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let last = server.requests()[1].body["messages"].to_string();
    assert!(last.contains("remember the word teapot"), "{last}");
}

#[test]
fn sessions_lists_this_projects_sessions_newest_first() {
    let sandbox = sandbox();
    let server = MockServer::start();
    let out = run(skillet(&sandbox, None).arg("sessions"));
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert!(
        out.stderr.contains("no sessions of this project"),
        "{}",
        out.stderr
    );
    server.push_turn(Turn::text("a"));
    server.push_turn(Turn::text("b"));
    server.push_turn(Turn::text("c"));
    run(skillet(&sandbox, Some(&server)).args(["run", "the first\nsession"]));
    std::thread::sleep(std::time::Duration::from_millis(20));
    run(skillet(&sandbox, Some(&server)).args(["run", "the second session"]));
    std::thread::sleep(std::time::Duration::from_millis(20));
    run(skillet(&sandbox, Some(&server)).args(["run", "-c", "its second turn"]));
    // Another project's session is not listed.
    let other = sandbox.root.join("other");
    std::fs::create_dir_all(&other).unwrap();
    server.push_turn(Turn::text("d"));
    run(skillet(&sandbox, Some(&server))
        .current_dir(&other)
        .args(["run", "elsewhere"]));
    let out = run(skillet(&sandbox, None).arg("sessions"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(lines[0].starts_with("ID  ") && lines[0].ends_with("FIRST MESSAGE"));
    assert!(
        lines[1].ends_with("    2  the second session"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].ends_with("    1  the first session"),
        "{}",
        lines[2]
    );
    let out = run(skillet(&sandbox, None).args(["sessions", "--json"]));
    let listed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(listed[0]["turns"], 2);
    assert_eq!(listed[1]["first_message"], "the first session");
    assert!(listed[0]["started"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn an_unknown_session_is_a_usage_error() {
    let sandbox = sandbox();
    let server = MockServer::start();
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--resume",
        "20200101-000000-abcd",
        "hi",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    insta::assert_snapshot!("unknown_session", redact(&out.stderr, &sandbox));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--continue", "hi"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    insta::assert_snapshot!("no_session_to_continue", redact(&out.stderr, &sandbox));
    assert!(server.requests().is_empty());
}

// --- Usage errors exit 2 --------------------------------------------------------------------

#[test]
fn usage_errors_exit_2() {
    let sandbox = sandbox();
    let server = MockServer::start();
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--max-steps", "0", "hi"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--base-url", "not a url", "hi"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    insta::assert_snapshot!("bad_base_url", out.stderr);
    let out = run(skillet(&sandbox, None).args(["--cwd", "missing", "skills", "list"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    insta::assert_snapshot!("missing_cwd", out.stderr);
    let out = run(skillet(&sandbox, None).args(["skills", "validate", "missing"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run(skillet(&sandbox, None).args(["skills", "new", "Bad_Name"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    std::fs::write(sandbox.project.join("skillet.toml"), "max_steps = 0\n").unwrap();
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "hi"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(server.requests().is_empty());
}

// --- Settings: which source won ---------------------------------------------------------------

#[test]
fn the_environment_overriding_a_project_file_is_said_and_typos_are_caught() {
    let sandbox = sandbox();
    let server = MockServer::start();
    std::fs::write(
        sandbox.project.join("skillet.toml"),
        "model = \"claude-from-file\"\n",
    )
    .unwrap();
    server.push_turn(Turn::text("ok"));
    let out = run(skillet(&sandbox, Some(&server))
        .env("MODEL_ID", "claude-from-env")
        .args(["run", "hi"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(server.requests()[0].body["model"], "claude-from-env");
    assert!(
        redact(&out.stderr, &sandbox).contains(
            "note: MODEL_ID from the environment overrides model = \"claude-from-file\" in [TMP]/project/skillet.toml"
        ),
        "{}",
        out.stderr
    );
    // A typo in a value a flag overrides, and an unknown key, are still errors.
    std::fs::write(
        sandbox.project.join("skillet.toml"),
        "catalog = \"sytem\"\n",
    )
    .unwrap();
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--catalog", "tool", "hi"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    insta::assert_snapshot!("config_value_typo", redact(&out.stderr, &sandbox));
    std::fs::write(
        sandbox.project.join("skillet.toml"),
        "model = \"m\"\nmodle = \"typo\"\n",
    )
    .unwrap();
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "hi"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    insta::assert_snapshot!("config_unknown_key", redact(&out.stderr, &sandbox));
    std::fs::write(
        sandbox.project.join("skillet.toml"),
        "max_steps = \"ten\"\n",
    )
    .unwrap();
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "hi"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    insta::assert_snapshot!("config_wrong_type", redact(&out.stderr, &sandbox));
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_missing_skills_dir_is_warned_about() {
    let sandbox = sandbox();
    let out = run(skillet(&sandbox, None).args(["skills", "list", "--skills-dir", "nowhere"]));
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.starts_with(
            "warning: --skills-dir nowhere: no such folder; no skills are read from it\n"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn semantic_matching_without_the_model_is_an_error_that_says_how_to_get_it() {
    let sandbox = sandbox();
    let out = run(skillet(&sandbox, None).args(["skills", "match", "--mode", "semantic", "pdf"]));
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    insta::assert_snapshot!("semantic_without_the_model", out.stderr);
    // By words it needs no model; hybrid falls back to words, saying so.
    let out = run(skillet(&sandbox, None).args(["skills", "match", "--mode", "lexical", "pdf"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("pdf"), "{}", out.stdout);
}

#[test]
fn a_named_model_folder_without_the_model_is_a_usage_error() {
    let sandbox = sandbox();
    let missing = sandbox.root.join("no-model");
    for args in [
        vec!["skills", "index", "--embed-model"],
        vec![
            "skills",
            "match",
            "--mode",
            "semantic",
            "pdf",
            "--embed-model",
        ],
    ] {
        let out = run(skillet(&sandbox, None).args(&args).arg(&missing));
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("no-model"), "{}", out.stderr);
    }
}

#[test]
fn skills_index_does_not_tell_you_to_run_skills_index() {
    let sandbox = sandbox();
    let out = run(skillet(&sandbox, None).args(["skills", "index"]));
    assert_eq!(out.code, 1);
    assert!(!out.stderr.contains("skills index"), "{}", out.stderr);
    insta::assert_snapshot!("index_without_the_model", out.stderr);
}

#[test]
fn glob_and_grep_search_a_hidden_folder_they_name() {
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "g1",
        "glob",
        json!({"pattern": ".claude/skills/**/SKILL.md"}),
    ));
    server.push_turn(Turn::tool(
        "g2",
        "grep",
        json!({"pattern": "Fill PDF", "path": ".claude/skills"}),
    ));
    server.push_turn(Turn::tool("g3", "glob", json!({"pattern": "**/SKILL.md"})));
    server.push_turn(Turn::text("found it"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "find the skills"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = server.requests();
    let result = |index: usize| {
        let messages = requests[index].body["messages"].as_array().unwrap();
        messages.last().unwrap()["content"][0]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(result(1), ".claude/skills/pdf/SKILL.md");
    assert_eq!(
        result(2),
        ".claude/skills/pdf/SKILL.md:3: description: Fill PDF forms\n"
    );
    // Not named, a hidden folder is still skipped.
    assert_eq!(result(3), "no files match **/SKILL.md");
}

// --- Seeing the setup -----------------------------------------------------------------------

#[test]
fn skills_catalog_shows_what_the_model_gets() {
    let sandbox = sandbox();
    let server = MockServer::start();
    // 30 skills of ~120 characters: over the 2,000 an unknown model gets, under Claude's 8,000.
    let root = sandbox.project.join(".agents/skills");
    for index in 0..30 {
        write_skill(
            &root,
            &format!("skill-{index:02}"),
            &format!(
                "---\nname: skill-{index:02}\ndescription: Skill number {index} does one thing well and says when to use it, in a sentence of some length.\n---\nBody.\n"
            ),
        );
    }
    let catalog = |model: &str| {
        run(skillet(&sandbox, Some(&server))
            .env("MODEL_ID", model)
            .args(["skills", "catalog"]))
    };
    let small = catalog("local-model");
    assert_eq!(small.code, 0, "{}", small.stderr);
    assert!(
        small.stderr.contains("over its budget of 2000")
            && small.stderr.contains("1% of local-model's context window"),
        "{}",
        small.stderr
    );
    let large = catalog("claude-sonnet-4-5");
    assert_eq!((large.code, large.stderr.as_str()), (0, ""));
    assert!(large.stdout.len() > small.stdout.len() && small.stdout.len() <= 2000);
    // Exactly what `run` puts in the system prompt for that model.
    server.push_turn(Turn::text("ok"));
    let out = run(skillet(&sandbox, Some(&server))
        .env("MODEL_ID", "local-model")
        .args(["run", "--skill-match", "off", "hi"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let system = server.requests()[0].body["system"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains(small.stdout.trim_end()),
        "{system}\n---\n{}",
        small.stdout
    );
    // --budget and --model still choose.
    let out = run(skillet(&sandbox, None).args(["skills", "catalog", "--model", "claude-opus-4"]));
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let out = run(skillet(&sandbox, None).args(["skills", "catalog", "--budget", "500"]));
    assert!(
        out.stderr.contains("over its budget of 500"),
        "{}",
        out.stderr
    );
}

#[test]
fn config_shows_the_setup_and_why_but_never_the_key() {
    let sandbox = sandbox();
    let user_dir = sandbox.home.join(".config/skillet");
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::write(user_dir.join("skillet.toml"), "max_steps = 9\n").unwrap();
    let out = run(skillet(&sandbox, None)
        .env("ANTHROPIC_API_KEY", "sk-ant-very-secret")
        .env("MODEL_ID", "claude-sonnet-4-5")
        .args(["config", "--base-url", "http://127.0.0.1:9/"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("very-secret"), "{}", out.stdout);
    let text = redact(&out.stdout, &sandbox);
    let text = text.replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
    let text: String = text
        .lines()
        .map(|line| {
            if line.starts_with("skillet [VERSION]") {
                "skillet [VERSION] (commit …)"
            } else if line.starts_with("embedding model:") {
                "embedding model: …"
            } else if line.starts_with("sandbox mode:") {
                // Namespaces, or Landlock alone and why: this machine's.
                "sandbox mode:    …"
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("config", text);
    // Nothing configured: what can be shown is, then what to set, as a note (showing the
    // setup is the command's job: exit 0).
    let out = run(skillet(&sandbox, None).arg("config"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("provider:        (not set up"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("note: no model provider is configured"),
        "{}",
        out.stderr
    );
    // A file that is wrong is an error: exit 2, naming the file.
    std::fs::write(sandbox.project.join("skillet.toml"), "model = [\n").unwrap();
    let out = run(skillet(&sandbox, None).arg("config"));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stdout.contains("provider:        (none"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("error: ") && out.stderr.contains("skillet.toml"),
        "{}",
        out.stderr
    );
    std::fs::remove_file(sandbox.project.join("skillet.toml")).unwrap();
}

#[test]
fn version_says_the_commit_and_features_and_completions_are_generated() {
    let sandbox = sandbox();
    let out = run(skillet(&sandbox, None).arg("--version"));
    assert_eq!(out.code, 0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], format!("skillet {}", env!("CARGO_PKG_VERSION")));
    assert!(lines[1].starts_with("commit: ") && lines[1].len() > "commit: ".len());
    assert!(lines[2].starts_with("features: "), "{}", out.stdout);
    assert!(lines[2].contains("embeddings"), "{}", out.stdout);
    let out = run(skillet(&sandbox, None).arg("-V"));
    assert!(
        out.stdout
            .starts_with(&format!("skillet {} (", env!("CARGO_PKG_VERSION")))
    );
    for shell in ["bash", "zsh", "fish"] {
        let out = run(skillet(&sandbox, None).args(["completions", shell]));
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout.contains("sessions") && out.stdout.contains("continue"),
            "{shell}"
        );
    }
    let out = run(skillet(&sandbox, None).args(["completions", "tcsh"]));
    assert_eq!(out.code, 2);
}

// --- Skills ---------------------------------------------------------------------------------

#[test]
fn skills_new_uses_claude_skills_where_that_is_the_projects_root() {
    let sandbox = sandbox();
    let out = run(skillet(&sandbox, None).args(["skills", "new", "release-notes"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let file = sandbox
        .project
        .join(".claude/skills/release-notes/SKILL.md");
    assert!(file.is_file(), "{}", out.stdout);
    // Its placeholder description is flagged, with the field and line.
    let out =
        run(skillet(&sandbox, None).args(["skills", "validate", ".claude/skills/release-notes"]));
    assert_eq!(out.code, 0, "{}", out.stdout);
    insta::assert_snapshot!("validate_placeholder", redact(&out.stdout, &sandbox));
    // With .agents/skills there, that one is used.
    std::fs::create_dir_all(sandbox.project.join(".agents/skills")).unwrap();
    let out = run(skillet(&sandbox, None).args(["skills", "new", "second"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        sandbox
            .project
            .join(".agents/skills/second/SKILL.md")
            .is_file()
    );
}

#[test]
fn reworded_errors() {
    let sandbox = sandbox();
    let server = MockServer::start();
    // An unclosed bracket is not about `: `; one of one is singular.
    write_skill(
        &sandbox.project.join(".claude/skills"),
        "broken",
        "---\nname: broken\ndescription: [unclosed\n---\nBody.\n",
    );
    let out = run(skillet(&sandbox, None).args(["skills", "validate", ".claude/skills/broken"]));
    assert_eq!(out.code, 1);
    insta::assert_snapshot!("yaml_unclosed_bracket", redact(&out.stdout, &sandbox));
    // An unknown skill is said once, not `Error: Error:`.
    let out = run(skillet(&sandbox, None).args(["skills", "show", "pfd"]));
    assert_eq!(out.code, 1);
    insta::assert_snapshot!("unknown_skill", out.stderr);
    server.push_turn(Turn::tool("l1", "load_skill", json!({"name": "pfd"})));
    server.push_turn(Turn::text("sorry"));
    let out =
        run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "fill it"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stderr.to_lowercase().contains("error: error"),
        "{}",
        out.stderr
    );
    let result = server.requests()[1].body["messages"].to_string();
    assert!(!result.to_lowercase().contains("error: error"), "{result}");
    assert!(result.contains("Unknown skill 'pfd'"), "{result}");
}

#[test]
fn instruction_files_are_listed_by_run_and_config_and_left_out_on_request() {
    let sandbox = sandbox();
    std::fs::write(
        sandbox.project.join("AGENTS.md"),
        "Run tests with make check.\n",
    )
    .unwrap();
    let server = MockServer::start();
    server.push_turn(Turn::text("ok"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "hi"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("instructions: AGENTS.md"),
        "{}",
        out.stderr
    );
    let system = server.requests()[0].body["system"].to_string();
    assert!(system.contains("Run tests with make check."), "{system}");
    // Left out on request: not read, not listed.
    server.push_turn(Turn::text("ok"));
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--skill-match",
        "off",
        "--no-instructions",
        "hi",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("instructions:"), "{}", out.stderr);
    let system = server.requests()[1].body["system"].to_string();
    assert!(!system.contains("make check"), "{system}");
    // `skillet config` says which files a session here would read.
    let out = run(skillet(&sandbox, Some(&server)).arg("config"));
    assert!(
        out.stdout.contains("project instructions"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("AGENTS.md"), "{}", out.stdout);
}

#[test]
fn catalog_for_a_first_message_lists_the_closest_skills_first_as_a_session_does() {
    let sandbox = sandbox();
    let root = sandbox.project.join(".agents/skills");
    for (name, description) in [
        ("alpha-notes", "Keep meeting notes tidy and dated."),
        ("beta-charts", "Draw bar and line charts from CSV files."),
        ("gamma-pdf", "Fill PDF forms and merge PDF documents."),
    ] {
        write_skill(
            &root,
            name,
            &format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
        );
    }
    // Room for about one entry: without --for the first in order is kept; with it, the closest.
    let plain = run(skillet(&sandbox, None).args(["skills", "catalog", "--budget", "60"]));
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(plain.stdout.contains("alpha-notes"), "{}", plain.stdout);
    assert!(plain.stderr.contains("search_skills"), "{}", plain.stderr);
    let ranked = run(skillet(&sandbox, None).args([
        "skills",
        "catalog",
        "--budget",
        "60",
        "--for",
        "merge these PDF forms",
    ]));
    assert_eq!(ranked.code, 0, "{}", ranked.stderr);
    assert!(ranked.stdout.contains("gamma-pdf"), "{}", ranked.stdout);
    assert!(!ranked.stdout.contains("alpha-notes"), "{}", ranked.stdout);
}

#[test]
fn a_session_whose_folder_is_gone_is_a_usage_error() {
    let sandbox = sandbox();
    let server = MockServer::start();
    let sessions = sandbox.sessions_dir();
    std::fs::create_dir_all(&sessions).unwrap();
    let header = json!({"type": "session", "id": "20261130-042927-29b8", "created": 0,
        "cwd": sandbox.root.join("gone"), "provider": "anthropic", "model": "m",
        "system": "s", "tools": []});
    let message = json!({"type": "message", "message": {"role": "user",
        "content": [{"type": "text", "text": "hi"}]}});
    std::fs::write(
        sessions.join("20261130-042927-29b8.jsonl"),
        format!("{header}\n{message}\n"),
    )
    .unwrap();
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--resume",
        "20261130-042927-29b8",
        "go on",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("which is gone"), "{}", out.stderr);
    assert!(server.requests().is_empty());
}
