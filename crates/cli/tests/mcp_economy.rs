//! The token economy of other servers' tools, measured as the skills' is: sixty tools of
//! realistic size on one real server (`fixtures/mcp/many_tools.py`, the official Python SDK).
//! With `search_tools` standing in, the first request grows by at most 15% of what the
//! definitions cost inline; every request of a session extends the one before byte for byte;
//! and `search_tools` finds the right tool for held-out requests (`tool_requests.json`, written
//! before anything was measured), by words alone and, with the embedding model, by meaning too.
//! The figures are printed (`--nocapture`) and recorded in docs/evaluation.md.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::path::{Path, PathBuf};

use common::{Sandbox, run, skillet_at, tool_result};
use serde_json::{Value, json};
use skillet_test_support::{MockServer, Turn};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp")
}

/// A sandbox whose user config runs the sixty-tool server (none: `search` is `None`).
fn sandbox_with(python: &Path, search: Option<&str>) -> Sandbox {
    let sandbox = Sandbox::empty();
    let dir = sandbox.home.join(".config/skillet");
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(search) = search {
        std::fs::write(
            dir.join("skillet.toml"),
            format!(
                "[mcp_servers.many]\ncommand = {:?}\nargs = [{:?}, \"many\"]\n[mcp]\ntool_search = {search:?}\n",
                python.display().to_string(),
                fixtures().join("server.py").display().to_string()
            ),
        )
        .unwrap();
    }
    sandbox
}

/// The first request of a one-turn `run`: its tools and system prompt, as sent.
fn first_request(sandbox: &Sandbox) -> Value {
    let server = MockServer::start();
    server.push_turn(Turn::text("hello"));
    let out = run(skillet_at(sandbox, Some(&server)).args(["run", "hi"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    server.requests()[0].body.clone()
}

fn size(request: &Value) -> usize {
    request["tools"].to_string().len() + request["system"].to_string().len()
}

#[test]
fn sixty_tools_cost_little_up_front_and_the_cache_holds() {
    let Some(python) = common::mcp_python() else {
        return;
    };
    let base = size(&first_request(&sandbox_with(&python, None)));
    let inline = size(&first_request(&sandbox_with(&python, Some("off"))));
    let searched_request = first_request(&sandbox_with(&python, Some("on")));
    let searched = size(&searched_request);
    let inline_cost = inline - base;
    let growth = searched - base;
    #[expect(clippy::cast_precision_loss, reason = "byte counts")]
    let share = growth as f64 / inline_cost as f64;
    eprintln!(
        "figures: first request {base} bytes without the server; +{inline_cost} with its 60 tools inline; +{growth} with search_tools ({:.1}% of inline)",
        share * 100.0
    );
    assert!(
        share <= 0.15,
        "search mode adds {growth} bytes, over 15% of the {inline_cost} inline"
    );
    assert!(
        searched_request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|tool| !tool["name"].as_str().unwrap().starts_with("mcp__"))
    );
}

/// A request's messages with the provider's cache markers left out (where they sit moves as
/// the conversation grows; what is cached is the content).
fn content(messages: &Value) -> Value {
    match messages {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| *key != "cache_control")
                .map(|(key, value)| (key.clone(), content(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(content).collect()),
        other => other.clone(),
    }
}

/// Runs every held-out request through `search_tools` (3 results) in one session; the rank of
/// the right tool in each (`None`: not among the three), and the session's requests.
fn searched_ranks(
    sandbox: &Sandbox,
    requests: &[(String, String)],
    model: Option<&Path>,
) -> (Vec<Option<usize>>, Vec<Value>) {
    let server = MockServer::start();
    for (index, (request, _)) in requests.iter().enumerate() {
        server.push_turn(Turn::tool(
            &format!("s{index}"),
            "search_tools",
            json!({"query": request, "limit": 3}),
        ));
    }
    server.push_turn(Turn::text("done"));
    let mut skillet = skillet_at(sandbox, Some(&server));
    if let Some(model) = model {
        skillet.env("SKILLET_EMBED_MODEL", model);
    }
    let out = run(skillet.args(["run", "find the tools"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ranks = requests
        .iter()
        .enumerate()
        .map(|(index, (_, expected))| {
            let result = tool_result(&server, index + 1);
            let found: Vec<&str> = result
                .lines()
                .filter_map(|line| line.strip_prefix("mcp__many__"))
                .filter_map(|line| line.split_whitespace().next())
                .collect();
            found.iter().position(|name| name == expected)
        })
        .collect();
    (
        ranks,
        server
            .requests()
            .into_iter()
            .map(|request| request.body)
            .collect(),
    )
}

#[test]
fn search_tools_finds_the_right_tool_for_held_out_requests() {
    let Some(python) = common::mcp_python() else {
        return;
    };
    let held_out: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("tool_requests.json")).unwrap(),
    )
    .unwrap();
    let requests: Vec<(String, String)> = held_out["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            (
                pair[0].as_str().unwrap().to_string(),
                pair[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut runs = vec![("words", sandbox_with(&python, Some("on")), None)];
    if let Some(model) = skillet_test_support::embedding_model_dir() {
        runs.push((
            "words and meaning",
            sandbox_with(&python, Some("on")),
            Some(model),
        ));
    } else {
        skillet_test_support::skip(
            "SKIPPED (part): search_tools by meaning: no embedding model (SKILLET_EMBED_MODEL)",
        );
    }
    for (mode, sandbox, model) in runs {
        let (ranks, session) = searched_ranks(&sandbox, &requests, model.as_deref());
        let at = |k: usize| {
            ranks
                .iter()
                .filter(|rank| rank.is_some_and(|r| r < k))
                .count()
        };
        let total = ranks.len();
        eprintln!(
            "figures: search_tools by {mode}: recall@1 {}/{total}, recall@3 {}/{total}; missed: {:?}",
            at(1),
            at(3),
            requests
                .iter()
                .zip(&ranks)
                .filter(|(_, rank)| rank.is_none_or(|r| r > 0))
                .map(|((request, expected), rank)| format!("{request} -> {expected} ({rank:?})"))
                .collect::<Vec<_>>()
        );
        // Floors well under what was measured (docs/evaluation.md): a regression guard.
        assert!(
            at(3) * 10 >= total * 7,
            "recall@3 by {mode}: {}/{total}",
            at(3)
        );
        // Every request of the session extends the one before, byte for byte.
        for pair in session.windows(2) {
            assert_eq!(pair[0]["tools"], pair[1]["tools"]);
            assert_eq!(pair[0]["system"], pair[1]["system"]);
            let before = content(&pair[0]["messages"]);
            let after = content(&pair[1]["messages"]);
            let before = before.as_array().unwrap();
            assert_eq!(before[..], after.as_array().unwrap()[..before.len()]);
        }
    }
}
