//! `skillet mcp` spoken to over stdio as a client would: the built binary is spawned and sent
//! JSON-RPC lines; every answer is read back and checked (initialize and its instructions, each
//! tool and its errors, prompts, paged resources, the Skills extension's manifests against the
//! files on disk, a malformed message).

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::needless_pass_by_value,
    reason = "tests"
)]

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::Stdio;
use std::time::Duration;

use common::mcp_client::{mcp_command, spawn, start, text};
use common::{Sandbox, write_skill};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// A library: a form-filling skill with references and a binary asset, a deploy skill only the
/// user may invoke, a skill whose name breaks the spec, and a file that is not a skill.
fn library() -> (Sandbox, std::path::PathBuf) {
    let sandbox = Sandbox::empty();
    let skills = sandbox.root.join("skills");
    write_skill(
        &skills,
        "pdf-forms",
        "---\nname: pdf-forms\ndescription: Fill in PDF forms and extract their fields\nlicense: MIT\nmetadata:\n  version: \"2\"\n---\nFill $ARGUMENTS carefully. See references/fields.md.\n",
    );
    std::fs::create_dir_all(skills.join("pdf-forms/references")).unwrap();
    std::fs::write(
        skills.join("pdf-forms/references/fields.md"),
        "# Fields\nName, date.\n",
    )
    .unwrap();
    std::fs::create_dir_all(skills.join("pdf-forms/assets")).unwrap();
    std::fs::write(
        skills.join("pdf-forms/assets/logo.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0binary",
    )
    .unwrap();
    std::fs::write(skills.join("pdf-forms/.secret"), "hidden").unwrap();
    write_skill(
        &skills,
        "deploy",
        "---\nname: deploy\ndescription: Deploy the service to production\ndisable-model-invocation: true\n---\nDeploy steps for $ARGUMENTS.\n",
    );
    write_skill(
        &skills,
        "Bad Name",
        "---\nname: Bad Name\ndescription: A skill whose name breaks the rules\n---\nbody\n",
    );
    std::fs::create_dir_all(skills.join("broken")).unwrap();
    std::fs::write(
        skills.join("broken/SKILL.md"),
        "---\nname: broken\ndescription: [unclosed\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(sandbox.root.join("outside.txt"), "TOP-SECRET-OUTSIDE").unwrap();
    std::fs::create_dir_all(skills.join("pdf-forms/.git")).unwrap();
    std::fs::write(skills.join("pdf-forms/.git/config"), "[remote]\n").unwrap();
    std::os::unix::fs::symlink(".git", skills.join("pdf-forms/vcs")).unwrap();
    std::os::unix::fs::symlink(
        sandbox.root.join("outside.txt"),
        skills.join("pdf-forms/references/link.md"),
    )
    .unwrap();
    (sandbox, skills)
}

#[test]
fn the_tools_are_listed_read_only_with_short_descriptions() {
    let (sandbox, skills) = library();
    let mut server = start(&sandbox, &skills);
    let tools = server.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "search_skills",
            "load_skill",
            "read_skill_file",
            "list_skills"
        ]
    );
    for tool in &tools {
        assert!(tool["description"].as_str().unwrap().chars().count() < 2_000);
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
    }
    // The model-invocable names are load_skill's enum (deploy is the user's only).
    let names = tools[1]["inputSchema"]["properties"]["name"]["enum"]
        .as_array()
        .unwrap();
    assert!(names.iter().any(|n| n == "pdf-forms"), "{names:?}");
    assert!(!names.iter().any(|n| n == "deploy"), "{names:?}");
    assert!(tools[0]["outputSchema"].is_object());
}

#[test]
fn the_first_initialize_carries_instructions_and_the_skills_extension() {
    let (sandbox, skills) = library();
    let mut child = spawn(&sandbox, &skills);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    )
    .unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let init: Value = serde_json::from_str(&line).unwrap();
    let result = &init["result"];
    let instructions = result["instructions"].as_str().unwrap();
    assert!(
        instructions.chars().count() <= 2_000,
        "{}",
        instructions.len()
    );
    assert!(
        instructions.contains("library of 3 skills"),
        "{instructions}"
    );
    assert!(
        instructions.contains("- pdf-forms: Fill in PDF forms"),
        "{instructions}"
    );
    let capabilities = &result["capabilities"];
    for capability in ["tools", "prompts", "resources"] {
        assert!(capabilities[capability].is_object(), "{capabilities}");
    }
    assert!(
        capabilities["extensions"]["io.modelcontextprotocol/skills"].is_object(),
        "{capabilities}"
    );
}

#[test]
fn the_tools_search_load_read_and_list() {
    let (sandbox, skills) = library();
    let mut server = start(&sandbox, &skills);
    // Search: by words here (no model), and it says so.
    let found = server.call("search_skills", json!({"query": "fill a pdf form"}));
    assert_eq!(found["isError"], false, "{found}");
    let results = found["structuredContent"]["results"].as_array().unwrap();
    assert_eq!(results[0]["name"], "pdf-forms", "{found}");
    assert!(results[0]["score"].is_number() && results[0]["relevant"].is_boolean());
    assert_eq!(found["structuredContent"]["ranking"], "words");
    assert!(text(&found).contains("ranked by words only"), "{found}");
    // Load: Layer 2, with the arguments in place of $ARGUMENTS.
    let loaded = server.call(
        "load_skill",
        json!({"name": "pdf-forms", "arguments": "form.pdf"}),
    );
    assert_eq!(loaded["isError"], false, "{loaded}");
    let body = text(&loaded);
    assert!(body.starts_with("<skill name=\"pdf-forms\">"), "{body}");
    assert!(body.contains("Fill form.pdf carefully"), "{body}");
    assert!(body.contains("- references/fields.md"), "{body}");
    // An unknown name: a tool error naming the close names only.
    let unknown = server.call("load_skill", json!({"name": "pdf-form"}));
    assert_eq!(unknown["isError"], true);
    assert!(
        text(&unknown).contains("did you mean 'pdf-forms'?"),
        "{unknown}"
    );
    assert!(!text(&unknown).contains("deploy"), "{unknown}");
    // A user-only skill is not the model's.
    let user_only = server.call("load_skill", json!({"name": "deploy"}));
    assert_eq!(user_only["isError"], true, "{user_only}");
    // Layer 3: a reference, a path that leaves the skill, a binary file.
    let file = server.call(
        "read_skill_file",
        json!({"name": "pdf-forms", "path": "references/fields.md"}),
    );
    assert_eq!(text(&file), "# Fields\nName, date.\n");
    for escape in [
        "../../outside.txt",
        "/etc/passwd",
        "references/../../deploy/SKILL.md",
    ] {
        let refused = server.call(
            "read_skill_file",
            json!({"name": "pdf-forms", "path": escape}),
        );
        assert_eq!(refused["isError"], true, "{escape}: {refused}");
        assert!(!text(&refused).contains("TOP-SECRET"), "{refused}");
        // Neither the raw path nor where the skill lives is echoed back whole.
        assert!(
            !text(&refused).contains(sandbox.root.to_str().unwrap()),
            "{refused}"
        );
    }
    // An absolute path to the skill's own file (as Layer 2's folder line gives it): served.
    let absolute = skills.join("pdf-forms/references/fields.md");
    let file = server.call(
        "read_skill_file",
        json!({"name": "pdf-forms", "path": absolute.to_str().unwrap()}),
    );
    assert_eq!(text(&file), "# Fields\nName, date.\n", "{file}");
    // A link inside the skill to a hidden folder of it is that folder: refused, and not listed.
    let linked = server.call(
        "read_skill_file",
        json!({"name": "pdf-forms", "path": "vcs/config"}),
    );
    assert_eq!(linked["isError"], true, "{linked}");
    let layer2 = text(&server.call("load_skill", json!({"name": "pdf-forms"})));
    assert!(!layer2.contains("vcs/"), "{layer2}");
    // A link inside the skill that leads out of it, and a hidden file: refused too.
    for path in ["references/link.md", ".secret"] {
        let refused = server.call(
            "read_skill_file",
            json!({"name": "pdf-forms", "path": path}),
        );
        assert_eq!(refused["isError"], true, "{path}: {refused}");
        assert!(!text(&refused).contains("TOP-SECRET") && !text(&refused).contains("hidden\n"));
    }
    // Without arguments, Layer 2 as `skills show` prints it: the placeholder stays.
    let plain = server.call("load_skill", json!({"name": "pdf-forms"}));
    assert!(
        text(&plain).contains("Fill $ARGUMENTS carefully"),
        "{plain}"
    );
    let binary = server.call(
        "read_skill_file",
        json!({"name": "pdf-forms", "path": "assets/logo.png"}),
    );
    assert!(
        text(&binary).starts_with("binary file (a PNG image, 17 bytes)"),
        "{binary}"
    );
    // Bad arguments are tool errors the model can correct.
    let bad = server.call("search_skills", json!({"query": 3}));
    assert_eq!(bad["isError"], true);
    assert!(text(&bad).contains("'query' must be a string"), "{bad}");
    // List: paged, with the problems counted.
    let page = server.call("list_skills", json!({"limit": 1}));
    let listed = &page["structuredContent"];
    assert_eq!(listed["total"], 3, "{page}");
    assert_eq!(listed["skills"].as_array().unwrap().len(), 1);
    assert_eq!(listed["next_offset"], 1);
    assert!(listed["problems"].as_u64().unwrap() >= 1, "{page}");
    assert!(text(&page).contains("skill://diagnostics"), "{page}");
    // An unknown tool is a protocol error.
    let response = server.request("tools/call", json!({"name": "rm_rf", "arguments": {}}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
}

#[test]
fn prompts_take_arguments_like_chat_does() {
    let (sandbox, skills) = library();
    write_skill(
        &skills,
        "named",
        "---\nname: named\ndescription: Uses named arguments\narguments: [file, mode]\n---\nfile=$file mode=$mode all=$ARGUMENTS\n",
    );
    let mut server = start(&sandbox, &skills);
    // A skill that names its arguments offers each as a prompt argument, in order.
    let listed = server.request("prompts/list", json!({}));
    let with_names = listed["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "named")
        .unwrap()
        .clone();
    let argument_names: Vec<&str> = with_names["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(argument_names, ["file", "mode", "arguments"]);
    let prompt = server.request(
        "prompts/get",
        json!({"name": "named", "arguments": {"file": "it's a.pdf", "mode": "fast"}}),
    );
    let text = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("file=it's a.pdf mode=fast all='it'\\''s a.pdf' 'fast'\n"),
        "{text}"
    );
    let prompts = server.request("prompts/list", json!({}));
    let names: Vec<&str> = prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    // The user may invoke disable-model-invocation skills by hand.
    assert!(
        names.contains(&"deploy") && names.contains(&"pdf-forms"),
        "{names:?}"
    );
    let prompt = server.request(
        "prompts/get",
        json!({"name": "deploy", "arguments": {"arguments": "staging"}}),
    );
    let message = &prompt["result"]["messages"][0];
    assert_eq!(message["role"], "user");
    let text = message["content"]["text"].as_str().unwrap();
    assert!(text.contains("Deploy steps for staging."), "{text}");
    // One rule for every entry point: the prompt and the model's load_skill give the same text.
    let prompt = server.request(
        "prompts/get",
        json!({"name": "pdf-forms", "arguments": {"arguments": "'tax form.pdf'"}}),
    );
    let by_prompt = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let by_tool = self::text(&server.call(
        "load_skill",
        json!({"name": "pdf-forms", "arguments": "'tax form.pdf'"}),
    ));
    assert_eq!(by_prompt, by_tool);
    assert!(
        by_tool.contains("Fill 'tax form.pdf' carefully."),
        "{by_tool}"
    );
    let unknown = server.request("prompts/get", json!({"name": "nope"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[test]
fn resources_page_and_read_and_diagnostics_say_what_was_skipped() {
    let (sandbox, skills) = library();
    // Enough files for a second page.
    std::fs::create_dir_all(skills.join("pdf-forms/references/many")).unwrap();
    for index in 0..120 {
        std::fs::write(
            skills.join(format!("pdf-forms/references/many/{index:03}.md")),
            format!("note {index}\n"),
        )
        .unwrap();
    }
    let mut server = start(&sandbox, &skills);
    let mut uris = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = cursor
            .as_ref()
            .map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let page = server.request("resources/list", params);
        pages += 1;
        for resource in page["result"]["resources"].as_array().unwrap() {
            uris.push(resource["uri"].as_str().unwrap().to_string());
            if resource["uri"] == "skill://pdf-forms/SKILL.md" {
                assert_eq!(resource["mimeType"], "text/markdown");
                assert!(resource["size"].as_u64().unwrap() > 0);
            }
        }
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert!(pages >= 2, "{pages}");
    assert_eq!(uris[0], "skill://diagnostics");
    assert!(uris.contains(&"skill://pdf-forms/references/many/119.md".to_string()));
    assert!(uris.contains(&"skill://pdf-forms/assets/logo.png".to_string()));
    assert!(
        !uris.iter().any(|u| u.contains(".secret")),
        "hidden files are not served"
    );
    let unique: std::collections::HashSet<_> = uris.iter().collect();
    assert_eq!(unique.len(), uris.len(), "no resource twice across pages");
    let read = server.request(
        "resources/read",
        json!({"uri": "skill://pdf-forms/SKILL.md"}),
    );
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Fill $ARGUMENTS")
    );
    let png = server.request(
        "resources/read",
        json!({"uri": "skill://pdf-forms/assets/logo.png"}),
    );
    assert!(png["result"]["contents"][0]["blob"].is_string(), "{png}");
    for bad in [
        "skill://pdf-forms/../deploy/SKILL.md",
        "skill://pdf-forms/.secret",
        "skill://pdf-forms/references/link.md",
        "file:///etc/passwd",
    ] {
        let refused = server.request("resources/read", json!({"uri": bad}));
        assert!(refused["error"].is_object(), "{bad}: {refused}");
    }
    // A cursor this server never gave.
    for cursor in ["9999:0", "x"] {
        let stale = server.request("resources/list", json!({"cursor": cursor}));
        assert_eq!(stale["error"]["code"], -32602, "{cursor}: {stale}");
    }
    let stale = server.request("skills/list", json!({"cursor": "99999"}));
    assert_eq!(stale["error"]["code"], -32602, "{stale}");
    let diagnostics = server.request("resources/read", json!({"uri": "skill://diagnostics"}));
    let text = diagnostics["result"]["contents"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("broken"), "{text}");
    assert!(
        text.contains("link.md: a link that leads out of the skill's folder"),
        "{text}"
    );
    assert!(
        text.contains("'Bad Name' is not in the Skills extension's listing"),
        "{text}"
    );
}

#[test]
fn the_skills_extension_lists_complete_manifests_whose_digests_match_the_files() {
    let (sandbox, skills) = library();
    let mut server = start(&sandbox, &skills);
    let listed = server.request("skills/list", json!({}));
    let entries = listed["result"]["skills"].as_array().unwrap().clone();
    let names: Vec<&str> = entries
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap())
        .collect();
    // The skill whose name cannot be a URI and the one that does not parse are left out (and
    // said so in the diagnostics), never listed broken.
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.contains(&"pdf-forms") && names.contains(&"deploy"),
        "{names:?}"
    );
    let pdf = entries
        .iter()
        .find(|s| s["frontmatter"]["name"] == "pdf-forms")
        .unwrap();
    assert_eq!(pdf["uri"], "skill://pdf-forms/SKILL.md");
    // The frontmatter as written, every field.
    assert_eq!(pdf["frontmatter"]["license"], "MIT");
    assert_eq!(pdf["frontmatter"]["metadata"]["version"], "2");
    let resources = pdf["resources"].as_array().unwrap();
    assert_eq!(
        resources.len(),
        3,
        "SKILL.md, the reference and the asset: {resources:?}"
    );
    for resource in resources {
        let uri = resource["uri"].as_str().unwrap();
        let relative = uri.strip_prefix("skill://pdf-forms/").unwrap();
        let bytes = std::fs::read(skills.join("pdf-forms").join(relative)).unwrap();
        let digest = format!("sha256:{:x}", Sha256::digest(&bytes));
        assert_eq!(resource["digest"], digest.as_str(), "{uri}");
        assert_eq!(resource["size"], bytes.len(), "{uri}");
    }
    let got = server.request("skills/get", json!({"uri": "skill://pdf-forms/SKILL.md"}));
    assert_eq!(
        got["result"]["skill"]["uri"], "skill://pdf-forms/SKILL.md",
        "{got}"
    );
    let unknown = server.request("skills/get", json!({"uri": "skill://nope/SKILL.md"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[test]
fn a_malformed_message_gets_an_error_and_the_server_goes_on() {
    let (sandbox, skills) = library();
    let mut server = start(&sandbox, &skills);
    writeln!(server.stdin, "this is not json").unwrap();
    server.stdin.flush().unwrap();
    // A line that is not JSON: a parse error, with a null id (it has none).
    let error = server.response(&Value::Null);
    assert_eq!(error["error"]["code"], -32700, "{error}");
    // Well-formed JSON-RPC with bad parameters: an error for that request.
    server.send(&json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": "bad"}));
    let bad = server.response_or_anonymous_error(&json!(900));
    assert!(bad["error"]["code"].is_i64(), "{bad}");
    // Not UTF-8, and over the size limit: errors too, and the session goes on.
    server.stdin.write_all(b"\xff\xfe{}\n").unwrap();
    server.stdin.flush().unwrap();
    let error = server.response(&Value::Null);
    assert_eq!(error["error"]["code"], -32700, "{error}");
    let huge = format!("{{\"pad\": \"{}\"}}\n", "x".repeat(5 * 1024 * 1024));
    server.stdin.write_all(huge.as_bytes()).unwrap();
    server.stdin.flush().unwrap();
    let error = server.response(&Value::Null);
    assert_eq!(error["error"]["code"], -32600, "{error}");
    // A byte-order mark before a request is no error.
    server
        .stdin
        .write_all(b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":901,\"method\":\"tools/list\"}\n")
        .unwrap();
    server.stdin.flush().unwrap();
    let listed = server.response(&json!(901));
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let unknown = server.request("no/such/method", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // Still answering.
    let tools = server.request("tools/list", json!({}));
    assert!(tools["result"]["tools"].is_array(), "{tools}");
}

#[test]
fn a_skill_made_on_disk_is_announced_and_served() {
    let (sandbox, skills) = library();
    let mut server = start(&sandbox, &skills);
    let before = server.call("list_skills", json!({}));
    assert_eq!(before["structuredContent"]["total"], 3);
    // Reading is no change: nothing is announced.
    server.call("load_skill", json!({"name": "pdf-forms"}));
    server.request(
        "resources/read",
        json!({"uri": "skill://pdf-forms/SKILL.md"}),
    );
    assert_eq!(
        server.notifications_within(Duration::from_millis(1_500)),
        Vec::<String>::new()
    );
    write_skill(
        &skills,
        "csv-cleaner",
        "---\nname: csv-cleaner\ndescription: Clean messy CSV files\n---\nSteps.\n",
    );
    // All three lists are announced (tools, prompts, resources), in any order.
    let mut seen = server.notification("notifications/tools/list_changed");
    for method in [
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    ] {
        if !seen.iter().any(|m| m == method) {
            seen.extend(server.notification(method));
        }
    }
    let after = server.call("list_skills", json!({}));
    assert_eq!(after["structuredContent"]["total"], 4, "{after}");
    let tools = server.request("tools/list", json!({}));
    let names = &tools["result"]["tools"][1]["inputSchema"]["properties"]["name"]["enum"];
    assert!(
        names.as_array().unwrap().iter().any(|n| n == "csv-cleaner"),
        "{names}"
    );
    // A changed body is served fresh at once, without a notification.
    std::fs::write(
        skills.join("csv-cleaner/SKILL.md"),
        "---\nname: csv-cleaner\ndescription: Clean messy CSV files\n---\nNew steps.\n",
    )
    .unwrap();
    let loaded = server.call("load_skill", json!({"name": "csv-cleaner"}));
    assert!(text(&loaded).contains("New steps."), "{loaded}");
}

#[test]
fn bad_settings_are_usage_errors_before_anything_is_served() {
    let (sandbox, skills) = library();
    let run = |extra: &[&str], log: Option<&str>| {
        let mut command = mcp_command(&sandbox, &skills);
        command.args(extra).stdin(Stdio::null());
        if let Some(log) = log {
            command.env("SKILLET_LOG", log);
        }
        command.output().unwrap()
    };
    let remote = run(&["--http", "0.0.0.0:0"], None);
    assert_eq!(remote.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&remote.stderr);
    assert!(stderr.contains("not a loopback address"), "{stderr}");
    let bad = run(&["--http", "nowhere"], None);
    assert_eq!(bad.status.code(), Some(2));
    let loud = run(&[], Some("loud"));
    assert_eq!(loud.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&loud.stderr).contains("SKILLET_LOG=loud: not a log level"),
        "{}",
        String::from_utf8_lossy(&loud.stderr)
    );
    // Nothing but protocol on stdout, whatever happens.
    assert!(remote.stdout.is_empty() && loud.stdout.is_empty());
}

#[test]
fn a_skill_over_the_extensions_limits_is_reported_not_listed() {
    let (sandbox, skills) = library();
    std::fs::create_dir_all(skills.join("pdf-forms/references/many")).unwrap();
    for index in 0..520 {
        std::fs::write(
            skills.join(format!("pdf-forms/references/many/{index:03}.md")),
            "x\n",
        )
        .unwrap();
    }
    let mut server = start(&sandbox, &skills);
    let listed = server.request("skills/list", json!({}));
    let names: Vec<&str> = listed["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["deploy"], "{listed}");
    let got = server.request("skills/get", json!({"uri": "skill://pdf-forms/SKILL.md"}));
    assert_eq!(got["error"]["code"], -32602, "{got}");
    let diagnostics = server.request("resources/read", json!({"uri": "skill://diagnostics"}));
    let text = diagnostics["result"]["contents"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("'pdf-forms' is not in the Skills extension's listing"),
        "{text}"
    );
    assert!(text.contains("over the extension's 512"), "{text}");
    // The tools still serve it.
    let loaded = server.call("load_skill", json!({"name": "pdf-forms"}));
    assert_eq!(loaded["isError"], false);
}

#[test]
fn answers_written_as_the_client_leaves_reach_stdout_whole() {
    let (sandbox, skills) = library();
    let mut child = spawn(&sandbox, &skills);
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "load_skill", "arguments": {"name": "pdf-forms"}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    // The client leaves at once: stdin closes with requests still being answered.
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for id in [1, 2, 3] {
        assert!(
            answers
                .iter()
                .any(|answer| answer["id"] == id && answer["result"].is_object()),
            "no whole answer to {id}: {answers:?}"
        );
    }
}

/// Without the model (offline on purpose, so nothing is downloaded or said by the lookup), the
/// server's log still says at its default level that skills are ranked by words only, and why.
#[test]
fn the_log_says_when_ranking_is_by_words_only() {
    let (sandbox, skills) = library();
    let log = sandbox.root.join("mcp.log");
    let child = mcp_command(&sandbox, &skills)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut server = common::mcp_client::Server::start(child);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let answer = server.call("search_skills", json!({"query": "csv"}));
        let note = answer["structuredContent"]["note"].as_str().unwrap_or("");
        if note.contains("not available") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{answer}");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(server);
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.contains("no embedding model, so skills are ranked by words only"),
        "{said}"
    );
}

/// With the embedding cache and the body facts warm (one server ran before), the first search
/// of a new server ranks as every later one: by words and meaning, not by words while the model
/// loads.
#[test]
fn a_warm_start_ranks_its_first_search_by_meaning_too() {
    let Some(model) = skillet_test_support::embedding_model_or_skip("the warm MCP start") else {
        return;
    };
    let (sandbox, skills) = library();
    let ranking_of_first_search = || {
        let mut command = mcp_command(&sandbox, &skills);
        command.env("SKILLET_EMBED_MODEL", &model);
        let child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut server = common::mcp_client::Server::start(child);
        let found = server.call("search_skills", json!({"query": "fill a pdf form"}));
        found["structuredContent"]["ranking"].clone()
    };
    // The first server embeds the skills and keeps the facts (a small library: well within the
    // wait); the second starts warm.
    let _ = ranking_of_first_search();
    assert_eq!(ranking_of_first_search(), "hybrid");
}
