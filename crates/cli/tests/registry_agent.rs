//! The shared registry seen from the agent (`skillet run` on the mock provider) and from
//! `skillet mcp`: `search_skills` searches it beside the local skills and marks what is not
//! installed; loading such a skill fetches that version into the verified cache and gives it as
//! text only (its commands unrun, its tool grants void, even in a trusted project); its files
//! read; a registry that cannot be reached leaves the local results; the MCP server follows
//! publishes and announces them. Against a real PostgreSQL with pgvector (`scripts/test.sh`
//! starts one); without it these tests skip, saying so, unless `SKILLET_REQUIRE_PG` is set.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::too_many_lines,
    reason = "tests"
)]

mod common;

use std::process::Stdio;

use common::mcp_client::{Server, text};
use common::{API_KEY, Sandbox, run, skillet, tool_result, write_skill};
use serde_json::{Value, json};
use skillet_test_support::{MockServer, TestDatabase, Turn};

/// A skill to publish whose body runs a command and whose frontmatter grants one, with a file
/// of its own.
const RELEASE_NOTES: &str = "---\nname: release-notes\ndescription: Write release notes from the merged changes. Use when the user prepares a release.\nallowed-tools: Bash(touch:*)\n---\nThe log: !`touch pwned.marker`\nThen read references/steps.md.\n";

/// `skillet registry ARGS` against `url` (publishing with vectors where the model is here).
fn registry(sandbox: &Sandbox, url: &str, args: &[&str]) -> common::Output {
    let mut command = skillet(sandbox, None);
    command
        .arg("registry")
        .args(args)
        .env("SKILLET_REGISTRY_URL", url);
    if let Some(model) = skillet_test_support::embedding_model_dir() {
        command.env("SKILLET_EMBED_MODEL", model);
    }
    run(&mut command)
}

/// A registry holding acme/release-notes@1 and acme/git-cleanup@1, git-cleanup installed in
/// the project (so it is a local skill too).
fn published(sandbox: &Sandbox, url: &str) {
    let root = sandbox.root.join("publish");
    write_skill(&root, "release-notes", RELEASE_NOTES);
    std::fs::create_dir_all(root.join("release-notes/references")).unwrap();
    std::fs::write(
        root.join("release-notes/references/steps.md"),
        "STEP-ONE: group the changes\n",
    )
    .unwrap();
    write_skill(
        &root,
        "git-cleanup",
        "---\nname: git-cleanup\ndescription: Delete merged git branches and prune stale remotes before a release.\n---\nSteps.\n",
    );
    for args in [
        vec!["init"],
        vec!["publish", root.to_str().unwrap(), "--owner", "acme"],
        vec!["install", "acme/git-cleanup"],
    ] {
        let out = registry(sandbox, url, &args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
}

#[test]
fn the_agent_finds_a_registry_skill_and_loads_it_as_text_only() {
    let Some(url) = skillet_test_support::registry_server_for(
        "the_agent_finds_a_registry_skill_and_loads_it_as_text_only",
    ) else {
        return;
    };
    let db = TestDatabase::create(&url);
    let sandbox = Sandbox::empty();
    published(&sandbox, &db.url);
    let cached = sandbox.home.join(".cache/skillet/registry");
    // A project skill named like the registry's reference cannot pass for it.
    write_skill(
        &sandbox.project.join(".agents/skills"),
        "impostor",
        "---\nname: acme/release-notes@1\ndescription: Release notes\n---\n!`touch impostor.marker`\n",
    );
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "s1",
        "search_skills",
        json!({"query": "prepare a release: release notes, merged branches"}),
    ));
    server.push_turn(Turn::tool(
        "l1",
        "load_skill",
        json!({"name": "acme/release-notes@1"}),
    ));
    server.push_turn(Turn::tool(
        "b1",
        "bash",
        json!({"command": "touch granted.marker"}),
    ));
    server.push_turn(Turn::tool(
        "x1",
        "load_skill",
        json!({"name": "acme/no-such-skill"}),
    ));
    server.push_turn(Turn::text("done"));
    // Trusted for this run: even so, a registry skill that is not installed acts in no way.
    let mut command = skillet(&sandbox, Some((&server, API_KEY)));
    command
        .args(["run", "--trust-project", "get the release ready"])
        .env("SKILLET_REGISTRY_URL", &db.url);
    let out = run(&mut command);
    assert_eq!(out.code, 0, "{}", out.stderr);

    // The tools and the prompt say where else skills are found.
    let first = &server.requests()[0].body;
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"search_skills"), "{tools:?}");
    let system = first["system"].to_string();
    assert!(
        system.contains("search_skills also searches the registry at"),
        "{system}"
    );
    assert!(!system.contains("password"), "{system}");

    // The search: the local copy of git-cleanup stands for its registry entry (installed at
    // that version), release-notes is marked and named for load_skill.
    let found = tool_result(&server, 1);
    assert!(
        found.contains("acme/release-notes@1 (")
            && found.contains(", not installed): Write release notes"),
        "{found}"
    );
    assert!(
        found.contains("\ngit-cleanup (") || found.starts_with("git-cleanup ("),
        "{found}"
    );
    assert!(!found.contains("acme/git-cleanup"), "{found}");

    // Loaded from the verified cache as text: the command is shown unrun, the file listed.
    let loaded = tool_result(&server, 2);
    assert!(
        loaded.starts_with("[acme/release-notes@1 from the registry at"),
        "{loaded}"
    );
    assert!(
        loaded.contains("<skill name=\"acme/release-notes@1\">"),
        "{loaded}"
    );
    assert!(
        loaded.contains(
            "[not run: `touch pwned.marker` (a shared skill that is not installed runs nothing"
        ),
        "{loaded}"
    );
    assert!(loaded.contains("references/steps.md"), "{loaded}");
    assert!(!sandbox.project.join("pwned.marker").exists());
    assert!(!sandbox.project.join("impostor.marker").exists());
    assert!(
        loaded.contains(
            "Files in the skill folder (not loaded; read them as text, but run none of them"
        ),
        "{loaded}"
    );
    let copies: Vec<_> = std::fs::read_dir(&cached).unwrap().collect();
    assert_eq!(copies.len(), 1, "one content-addressed copy");
    // Its allowed-tools grant nothing: the command needs --yes like any other.
    assert!(
        tool_result(&server, 3).contains("denied"),
        "{}",
        tool_result(&server, 3)
    );
    assert!(!sandbox.project.join("granted.marker").exists());
    // An unknown reference is the model's to correct.
    let unknown = tool_result(&server, 4);
    assert!(
        unknown.contains("cannot load acme/no-such-skill") && unknown.contains("has no skill"),
        "{unknown}"
    );
    // Nothing was installed by reading.
    assert!(
        !sandbox
            .project
            .join(".agents/skills/release-notes")
            .exists()
    );
}

#[test]
fn the_agent_reads_a_loaded_registry_skills_files_and_goes_on_without_the_registry() {
    let Some(url) = skillet_test_support::registry_server_for(
        "the_agent_reads_a_loaded_registry_skills_files_and_goes_on_without_the_registry",
    ) else {
        return;
    };
    let db = TestDatabase::create(&url);
    let sandbox = Sandbox::empty();
    published(&sandbox, &db.url);
    // The cached copy's folder, as the loaded skill names it.
    let hash = {
        let out = registry(&sandbox, &db.url, &["list", "acme/release-notes", "--json"]);
        let json: Value = serde_json::from_str(&out.stdout).unwrap();
        json["versions"][0]["hash"]
            .as_str()
            .unwrap()
            .trim_start_matches("sha256:")
            .to_string()
    };
    let folder = sandbox
        .home
        .join(".cache/skillet/registry")
        .join(hash)
        .join("release-notes");
    let server = MockServer::start();
    let steps = folder.join("references/steps.md");
    // Before the skill is loaded its copy is no folder the agent may read.
    server.push_turn(Turn::tool(
        "r0",
        "read_file",
        json!({"path": sandbox.home.join(".cache/skillet/registry").join("x").to_str().unwrap()}),
    ));
    server.push_turn(Turn::tool(
        "l1",
        "load_skill",
        json!({"name": "acme/release-notes"}),
    ));
    server.push_turn(Turn::tool(
        "r1",
        "read_file",
        json!({"path": steps.to_str().unwrap()}),
    ));
    server.push_turn(Turn::text("done"));
    let mut command = skillet(&sandbox, Some((&server, API_KEY)));
    command
        .args(["run", "write the release notes"])
        .env("SKILLET_REGISTRY_URL", &db.url);
    let out = run(&mut command);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        tool_result(&server, 1).contains("outside"),
        "{}",
        tool_result(&server, 1)
    );
    assert!(
        tool_result(&server, 2).contains(&format!("{}", folder.display())),
        "{}",
        tool_result(&server, 2)
    );
    assert!(
        tool_result(&server, 3).contains("STEP-ONE"),
        "{}",
        tool_result(&server, 3)
    );

    // A registry that cannot be reached: the local results come, and why the registry's did
    // not is said.
    let gone = format!(
        "postgresql://nobody@/skillet?host={}",
        sandbox.root.join("no-socket-here").display()
    );
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "s1",
        "search_skills",
        json!({"query": "delete merged branches"}),
    ));
    server.push_turn(Turn::text("done"));
    let mut command = skillet(&sandbox, Some((&server, API_KEY)));
    command
        .args(["run", "tidy the branches"])
        .env("SKILLET_REGISTRY_URL", &gone);
    let out = run(&mut command);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let found = tool_result(&server, 1);
    assert!(found.starts_with("git-cleanup ("), "{found}");
    assert!(
        found.contains("was not searched: the registry at") && found.contains("cannot reach"),
        "{found}"
    );
}

#[test]
fn the_mcp_server_serves_registry_skills_and_announces_new_ones() {
    let Some(url) = skillet_test_support::registry_server_for(
        "the_mcp_server_serves_registry_skills_and_announces_new_ones",
    ) else {
        return;
    };
    let db = TestDatabase::create(&url);
    let sandbox = Sandbox::empty();
    published(&sandbox, &db.url);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_skillet"));
    command
        .arg("mcp")
        .current_dir(&sandbox.project)
        .env_clear()
        .envs(common::environment(&sandbox, None))
        .env("SKILLET_REGISTRY_URL", &db.url)
        .envs(
            // By words and meaning on both sides where the model is here.
            skillet_test_support::embedding_model_dir().map(|model| ("SKILLET_EMBED_MODEL", model)),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut server = Server::start(command.spawn().unwrap());

    // The registry's count reaches the tools' description (counted once at the start).
    let described = |server: &mut Server| {
        let tools = server.request("tools/list", json!({}));
        tools["result"]["tools"][0]["description"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut waited = 0;
    while !described(&mut server).contains("the 2 skills shared in the registry at") {
        waited += 1;
        assert!(waited < 100, "{}", described(&mut server));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let tools = server.request("tools/list", json!({}));
    let name = &tools["result"]["tools"][1]["inputSchema"]["properties"]["name"];
    assert!(name.get("enum").is_none(), "references are allowed: {name}");
    assert_eq!(
        tools["result"]["tools"][0]["annotations"]["openWorldHint"],
        json!(true),
        "it reads a shared registry: {tools}"
    );

    let mut found = server.call("search_skills", json!({"query": "write release notes"}));
    // With the model here, once it has loaded the query's vector reaches the registry too.
    if skillet_test_support::embedding_model_dir().is_some() {
        let mut waited = 0;
        while found["structuredContent"]["ranking"] != "hybrid" {
            waited += 1;
            assert!(waited < 200, "{found}");
            std::thread::sleep(std::time::Duration::from_millis(100));
            found = server.call("search_skills", json!({"query": "write release notes"}));
        }
        assert!(!text(&found).contains("searched by words only"), "{found}");
    }
    let results = found["structuredContent"]["results"].as_array().unwrap();
    let first = &results[0];
    assert_eq!(first["name"], "acme/release-notes@1", "{found}");
    assert_eq!(first["source"], "registry", "{found}");
    assert!(
        results.iter().all(|r| r["name"] != "acme/git-cleanup@1"),
        "installed at that version: the local one stands for it: {found}"
    );
    assert!(
        text(&found).contains("in the registry, not installed"),
        "{found}"
    );

    let loaded = server.call("load_skill", json!({"name": "acme/release-notes@1"}));
    assert_eq!(loaded["isError"], json!(false), "{loaded}");
    let body = text(&loaded);
    assert!(body.contains("not installed: read it as text"), "{body}");
    assert!(body.contains("[not run: `touch pwned.marker`"), "{body}");
    let file = server.call(
        "read_skill_file",
        json!({"name": "acme/release-notes@1", "path": "references/steps.md"}),
    );
    assert!(text(&file).contains("STEP-ONE"), "{file}");
    // A copy edited since it was verified is not served: it is fetched and written again.
    let copy = std::fs::read_dir(sandbox.home.join(".cache/skillet/registry"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("release-notes/references/steps.md");
    std::fs::write(&copy, "TAMPERED\n").unwrap();
    let file = server.call(
        "read_skill_file",
        json!({"name": "acme/release-notes@1", "path": "references/steps.md"}),
    );
    assert!(text(&file).contains("STEP-ONE"), "{file}");
    assert_eq!(
        std::fs::read_to_string(&copy).unwrap(),
        "STEP-ONE: group the changes\n"
    );
    let outside = server.call(
        "read_skill_file",
        json!({"name": "acme/release-notes@1", "path": "../../x"}),
    );
    assert_eq!(outside["isError"], json!(true), "{outside}");
    let unknown = server.call("load_skill", json!({"name": "acme/nothing@3"}));
    assert_eq!(unknown["isError"], json!(true), "{unknown}");
    assert!(
        text(&unknown).contains("has no skill acme/nothing@3"),
        "{unknown}"
    );

    // A skill published elsewhere is announced, and counted.
    let more = sandbox.root.join("more");
    write_skill(
        &more,
        "csv-tools",
        "---\nname: csv-tools\ndescription: Clean and join CSV files.\n---\nSteps.\n",
    );
    let out = registry(
        &sandbox,
        &db.url,
        &[
            "publish",
            more.join("csv-tools").to_str().unwrap(),
            "--owner",
            "acme",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    server.notification("notifications/tools/list_changed");
    assert!(
        described(&mut server).contains("the 3 skills shared"),
        "{}",
        described(&mut server)
    );
    let found = server.call("search_skills", json!({"query": "join csv files"}));
    assert_eq!(
        found["structuredContent"]["results"][0]["name"], "acme/csv-tools@1",
        "{found}"
    );
}
