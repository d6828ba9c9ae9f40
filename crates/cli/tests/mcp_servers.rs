//! skillet's agent as an MCP client, against real servers written with the official Python SDK
//! (`fixtures/mcp/server.py`): tools offered natively and through `search_tools`/`call_tool`,
//! the prompt and tools fixed for the session, calls approved as actions, a project's
//! `.mcp.json` started only once trusted, and hostile servers (a crash, a hang, a flood, a
//! death mid-call, hidden text, a slow call) leaving the session working. The Python is
//! `SKILLET_MCP_PYTHON`; without it the tests skip, saying so, unless
//! `SKILLET_REQUIRE_MCP_CLIENT` is set (CI), where they fail.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::path::{Path, PathBuf};

use common::{Sandbox, run, skillet_at, tool_result};
use serde_json::{Value, json};
use skillet_test_support::{MockServer, Turn};

fn server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/server.py")
}

/// A `[mcp_servers.NAME]` table running the test server in `mode`, with `extra` lines.
fn server_table(python: &Path, name: &str, mode: &str, extra: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = {:?}\nargs = [{:?}, {mode:?}]\n{extra}\n",
        python.display().to_string(),
        server_script().display().to_string()
    )
}

/// The user's own `skillet.toml` in the sandbox's home.
fn user_config(sandbox: &Sandbox, text: &str) {
    let dir = sandbox.home.join(".config/skillet");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("skillet.toml"), text).unwrap();
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_real_servers_tools_are_offered_by_name_and_their_calls_are_actions() {
    let Some(python) = common::mcp_python() else {
        return;
    };
    let sandbox = Sandbox::empty();
    user_config(&sandbox, &server_table(&python, "t", "basic", ""));
    let server = MockServer::start();
    server.push_turn(Turn::tool("c1", "mcp__t__add", json!({"a": 2, "b": 40})));
    server.push_turn(Turn::tool(
        "c2",
        "mcp__t__env_var",
        json!({"name": "ANTHROPIC_API_KEY"}),
    ));
    server.push_turn(Turn::tool("c3", "mcp__t__add", json!({"a": "two"})));
    server.push_turn(Turn::text("done"));
    let out = run(skillet_at(&sandbox, Some(&server)).args(["run", "--yes", "add them"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = server.requests();
    let first = &requests[0].body;
    let names = tool_names(first);
    assert!(names.contains(&"mcp__t__add".to_string()), "{names:?}");
    let add = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "mcp__t__add")
        .unwrap();
    assert_eq!(add["input_schema"]["required"], json!(["a", "b"]));
    let system = first["system"].to_string();
    assert!(
        system.contains("# MCP servers") && system.contains("- t (8 tools)"),
        "{system}"
    );
    let added = tool_result(&server, 1);
    assert!(
        added.starts_with("<mcp_result server=\"t\" tool=\"add\">"),
        "{added}"
    );
    assert!(added.contains("42"), "{added}");
    // Only the variables every program needs, and those named, reach a server.
    assert!(tool_result(&server, 2).contains("(unset)"));
    // Arguments are checked against the schema before anything is sent.
    let wrong = tool_result(&server, 3);
    assert!(
        wrong.contains("arguments.a: expected integer, got string"),
        "{wrong}"
    );
    assert!(wrong.contains("arguments.b: required, missing"), "{wrong}");
    // Every request sent the same tools and prompt, byte for byte.
    for request in &requests[1..] {
        assert_eq!(request.body["tools"], first["tools"]);
        assert_eq!(request.body["system"], first["system"]);
    }

    // Without --yes nobody can approve an action: refused, the model told.
    let server = MockServer::start();
    server.push_turn(Turn::tool("c1", "mcp__t__add", json!({"a": 1, "b": 1})));
    server.push_turn(Turn::text("done"));
    let out = run(skillet_at(&sandbox, Some(&server)).args(["run", "add them"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let refused = tool_result(&server, 1);
    assert!(!refused.contains("mcp_result"), "{refused}");

    // A standing rule allows one server's tools, another denies one tool, even under --yes.
    user_config(
        &sandbox,
        &format!(
            "{}[permissions]\nallow = [\"mcp__t\"]\ndeny = [\"mcp__t__echo\"]\n",
            server_table(&python, "t", "basic", "")
        ),
    );
    let server = MockServer::start();
    server.push_turn(Turn::tool("c1", "mcp__t__add", json!({"a": 1, "b": 1})));
    server.push_turn(Turn::tool("c2", "mcp__t__echo", json!({"text": "hi"})));
    server.push_turn(Turn::text("done"));
    let out = run(skillet_at(&sandbox, Some(&server)).args(["run", "--yes", "go"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(tool_result(&server, 1).contains("mcp_result"));
    let denied = tool_result(&server, 2);
    assert!(
        denied.contains("mcp__t__echo") && denied.contains("deny"),
        "{denied}"
    );
}

#[test]
fn with_tool_search_two_tools_stand_in_and_find_the_right_one() {
    let Some(python) = common::mcp_python() else {
        return;
    };
    let sandbox = Sandbox::empty();
    user_config(
        &sandbox,
        &format!(
            "{}[mcp]\ntool_search = \"on\"\n",
            server_table(&python, "t", "basic", "")
        ),
    );
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "c1",
        "search_tools",
        json!({"query": "add two integers", "limit": 3}),
    ));
    server.push_turn(Turn::tool(
        "c2",
        "call_tool",
        json!({"name": "mcp__t__add", "arguments": {"a": 20, "b": 22}}),
    ));
    server.push_turn(Turn::tool(
        "c3",
        "call_tool",
        json!({"name": "mcp__t__nothing"}),
    ));
    // The server adds a tool mid-session: search finds it, the prompt and tools stay.
    server.push_turn(Turn::tool(
        "c4",
        "call_tool",
        json!({"name": "mcp__t__grow"}),
    ));
    server.push_turn(Turn::tool(
        "c5",
        "search_tools",
        json!({"query": "weather forecast for a city"}),
    ));
    server.push_turn(Turn::tool(
        "c6",
        "call_tool",
        json!({"name": "mcp__t__weather_forecast", "arguments": {"city": "Oslo"}}),
    ));
    server.push_turn(Turn::text("done"));
    let out = run(skillet_at(&sandbox, Some(&server)).args(["run", "--yes", "add"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = server.requests();
    let names = tool_names(&requests[0].body);
    assert!(
        names.contains(&"search_tools".to_string()) && names.contains(&"call_tool".to_string())
    );
    assert!(
        !names.iter().any(|name| name.starts_with("mcp__")),
        "{names:?}"
    );
    let system = requests[0].body["system"].to_string();
    assert!(
        system.contains("search_tools") && system.contains("add, echo"),
        "{system}"
    );
    let found = tool_result(&server, 1);
    assert!(found.starts_with("mcp__t__add (server t)"), "{found}");
    assert!(found.contains("input schema: {"), "{found}");
    assert!(tool_result(&server, 2).contains("42"));
    assert!(tool_result(&server, 3).contains("no MCP tool is named"));
    assert!(tool_result(&server, 4).contains("grown"));
    let found = tool_result(&server, 5);
    assert!(found.starts_with("mcp__t__weather_forecast"), "{found}");
    assert!(tool_result(&server, 6).contains("sunny in Oslo"));
    for request in &requests[1..] {
        assert_eq!(request.body["tools"], requests[0].body["tools"]);
        assert_eq!(request.body["system"], requests[0].body["system"]);
    }
}

#[test]
fn a_projects_mcp_json_starts_nothing_until_the_project_is_trusted() {
    let Some(python) = common::mcp_python() else {
        return;
    };
    let sandbox = Sandbox::empty();
    let marker = sandbox.root.join("started");
    std::fs::write(
        sandbox.project.join(".mcp.json"),
        json!({"mcpServers": {"proj": {
            "command": python.display().to_string(),
            "args": [server_script().display().to_string(), "basic", marker.display().to_string()]
        }}})
        .to_string(),
    )
    .unwrap();
    let server = MockServer::start();
    server.push_turn(Turn::text("hello"));
    let out = run(skillet_at(&sandbox, Some(&server)).args(["run", "--yes", "hi"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!marker.exists(), "an untrusted project's server started");
    assert!(
        out.stderr.contains(".mcp.json names MCP servers"),
        "{}",
        out.stderr
    );
    assert!(
        !tool_names(&server.requests()[0].body)
            .iter()
            .any(|n| n.starts_with("mcp__"))
    );
    let list = run(skillet_at(&sandbox, None).args(["mcp", "list"]));
    assert!(
        !marker.exists(),
        "`skillet mcp list` started an untrusted project's server"
    );
    assert!(list.stdout.contains("no MCP servers"), "{}", list.stdout);

    // Trusted for this run: it starts, and its tools are the model's.
    let server = MockServer::start();
    server.push_turn(Turn::tool("c1", "mcp__proj__add", json!({"a": 1, "b": 2})));
    server.push_turn(Turn::text("done"));
    let out =
        run(skillet_at(&sandbox, Some(&server)).args(["run", "--yes", "--trust-project", "hi"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(marker.exists());
    assert!(tool_result(&server, 1).contains('3'));
}

#[test]
fn hostile_servers_leave_the_session_working_and_are_told_once() {
    let Some(python) = common::mcp_python() else {
        return;
    };
    let sandbox = Sandbox::empty();
    user_config(
        &sandbox,
        &[
            server_table(&python, "crash", "crash", ""),
            server_table(&python, "hang", "hang", "startup_timeout_sec = 2"),
            server_table(&python, "flood", "flood", ""),
            server_table(&python, "poison", "poison", ""),
            server_table(&python, "t", "basic", "tool_timeout_sec = 1"),
        ]
        .concat(),
    );
    let server = MockServer::start();
    server.push_turn(Turn::tool("c1", "mcp__flood__flood", json!({})));
    server.push_turn(Turn::tool("c2", "mcp__t__sleepy", json!({})));
    server.push_turn(Turn::tool("c3", "mcp__poison__lookup", json!({"key": "k"})));
    server.push_turn(Turn::tool("c4", "mcp__t__die", json!({})));
    server.push_turn(Turn::tool("c5", "mcp__t__add", json!({"a": 1, "b": 1})));
    server.push_turn(Turn::text("done"));
    let started = std::time::Instant::now();
    let out = run(skillet_at(&sandbox, Some(&server)).args(["run", "--yes", "go"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        // Not a speed target: a guard that no call waited for the default tool timeout (60 s)
        // (the flood's answer is dropped at 4 MiB and its server killed, not waited out).
        started.elapsed() < std::time::Duration::from_mins(1),
        "took {:?}",
        started.elapsed()
    );
    // Start failures are said once, with why.
    assert!(
        out.stderr.contains("MCP server `crash` did not start")
            && out.stderr.contains("not reachable"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("MCP server `hang` did not start") && out.stderr.contains("2 seconds"),
        "{}",
        out.stderr
    );
    let flood = tool_result(&server, 1);
    assert!(flood.contains("over 4194304 bytes"), "{flood}");
    assert_eq!(
        out.stderr.matches("MCP server `flood` failed").count(),
        1,
        "{}",
        out.stderr
    );
    let slow = tool_result(&server, 2);
    assert!(slow.contains("did not answer within 1 seconds"), "{slow}");
    // Hidden text in a description is shown, never passed on hidden; a result cannot close
    // its wrapper.
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(
        !tools.contains('\u{202e}') && !tools.contains('\u{e0041}'),
        "{tools}"
    );
    assert!(tools.contains("\\\\u{202e}"), "{tools}");
    let poisoned = tool_result(&server, 3);
    assert_eq!(poisoned.matches("</mcp_result>").count(), 1, "{poisoned}");
    assert!(!poisoned.contains('\u{200b}'), "{poisoned}");
    assert!(tool_result(&server, 4).contains("stopped during the call"));
    assert!(tool_result(&server, 5).contains("is not running"));
}

#[test]
fn a_streamable_http_server_and_skillet_mcp_itself_serve_the_agent() {
    let Some(python) = common::mcp_python() else {
        return;
    };
    let sandbox = Sandbox::empty();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut http = std::process::Command::new(&python)
        .arg(server_script())
        .arg("basic")
        .env("MCP_TEST_HTTP_PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let skills = sandbox.root.join("skills");
    common::write_skill(
        &skills,
        "pdf-forms",
        "---\nname: pdf-forms\ndescription: Fill in PDF forms and read their fields.\n---\nUse pdftk.\n",
    );
    user_config(
        &sandbox,
        &format!(
            "[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"Bearer t0k\" }}\n\
             [mcp_servers.skills]\ncommand = {:?}\nargs = [\"mcp\", \"--skills-dir\", {:?}]\n",
            env!("CARGO_BIN_EXE_skillet"),
            skills.display().to_string()
        ),
    );
    let server = MockServer::start();
    server.push_turn(Turn::tool("c1", "mcp__web__add", json!({"a": 40, "b": 2})));
    server.push_turn(Turn::tool(
        "c2",
        "mcp__skills__search_skills",
        json!({"query": "fill in a pdf form"}),
    ));
    server.push_turn(Turn::text("done"));
    let out = run(skillet_at(&sandbox, Some(&server)).args(["run", "--yes", "go"]));
    let _ = http.kill();
    let _ = http.wait();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let added = tool_result(&server, 1);
    assert!(
        added.contains("<mcp_result server=\"web\"") && added.contains("42"),
        "{added}"
    );
    let found = tool_result(&server, 2);
    assert!(found.contains("pdf-forms"), "{found}");
}

#[test]
fn a_servers_resources_are_read_by_a_tool_and_its_prompts_are_commands() {
    let Some(python) = common::mcp_python() else {
        return;
    };
    let sandbox = Sandbox::empty();
    user_config(&sandbox, &server_table(&python, "t", "basic", ""));
    let server = MockServer::start();
    server.push_turn(Turn::tool("c1", "read_resource", json!({"server": "t"})));
    server.push_turn(Turn::tool(
        "c2",
        "read_resource",
        json!({"server": "t", "uri": "notes://today"}),
    ));
    server.push_turn(Turn::text("done"));
    let out = run(skillet_at(&sandbox, Some(&server)).args([
        "run",
        "--yes",
        "/mcp__t__review the release notes, gently",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The prompt's message was sent as the user's: the whole text its first argument.
    let first = common::first_text(&server, 0);
    assert!(
        first.contains("Please review the release notes, gently carefully, in a kind tone."),
        "{first}"
    );
    let listed = tool_result(&server, 1);
    assert!(listed.contains("notes://today"), "{listed}");
    let read = tool_result(&server, 2);
    assert!(read.contains("buy milk\\u{200b}"), "{read}");
    let system = server.requests()[0].body["system"].to_string();
    assert!(system.contains("read_resource"), "{system}");

    // Named arguments, and a missing one.
    let paired = MockServer::start();
    paired.push_turn(Turn::text("ok"));
    let out = run(skillet_at(&sandbox, Some(&paired)).args([
        "run",
        "--yes",
        "/mcp__t__review topic=the notes tone=stern",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = common::first_text(&paired, 0);
    assert!(
        text.contains("Please review the notes carefully, in a stern tone."),
        "{text}"
    );
    let out = run(skillet_at(&sandbox, Some(&MockServer::start())).args([
        "run",
        "--yes",
        "/mcp__t__review",
    ]));
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("needs topic"), "{}", out.stderr);

    // Without --yes, reading asks, and nobody can answer: refused.
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "c1",
        "read_resource",
        json!({"server": "t", "uri": "notes://today"}),
    ));
    server.push_turn(Turn::text("done"));
    let out = run(skillet_at(&sandbox, Some(&server)).args(["run", "read it"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!tool_result(&server, 1).contains("buy milk"));
}

#[test]
fn the_reference_server_everything_works_through_the_agent() {
    let Some(entry) = std::env::var_os("SKILLET_MCP_EVERYTHING") else {
        assert!(
            std::env::var_os("SKILLET_REQUIRE_MCP_CLIENT").is_none(),
            "SKILLET_REQUIRE_MCP_CLIENT is set but SKILLET_MCP_EVERYTHING is not"
        );
        skillet_test_support::skip(
            "SKIPPED: the MCP reference server test: set SKILLET_MCP_EVERYTHING (scripts/fetch-mcp-everything.sh)",
        );
        return;
    };
    let sandbox = Sandbox::empty();
    user_config(
        &sandbox,
        &format!(
            "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
            PathBuf::from(entry).display().to_string()
        ),
    );
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "c1",
        "mcp__everything__get-sum",
        json!({"a": 2, "b": 40}),
    ));
    server.push_turn(Turn::tool("c2", "mcp__everything__get-env", json!({})));
    server.push_turn(Turn::tool(
        "c3",
        "mcp__everything__get-tiny-image",
        json!({}),
    ));
    server.push_turn(Turn::tool(
        "c4",
        "read_resource",
        json!({"server": "everything"}),
    ));
    server.push_turn(Turn::text("done"));
    let out = run(skillet_at(&sandbox, Some(&server)).args([
        "run",
        "--yes",
        "/mcp__everything__simple-prompt",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        tool_result(&server, 1).contains("42"),
        "{}",
        tool_result(&server, 1)
    );
    // The server sees no key: only the variables every program needs.
    let env = tool_result(&server, 2);
    assert!(
        !env.contains(common::API_KEY) && !env.contains("ANTHROPIC"),
        "{env}"
    );
    assert!(env.contains("PATH"), "{env}");
    let image = tool_result(&server, 3);
    assert!(image.contains("[image (image/png"), "{image}");
    assert!(
        tool_result(&server, 4).contains("://"),
        "{}",
        tool_result(&server, 4)
    );
    assert!(!common::first_text(&server, 0).starts_with("/mcp__"));
}
