//! Skills that act, end to end on the mock provider: trust (`skillet trust`, `--trust-project`,
//! pinned to the skill files), dynamic context (`` !`command` ``), and `allowed-tools` /
//! `disallowed-tools` while a skill is active.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use common::{Sandbox, first_text, run, skillet_at as skillet, tool_result, write_skill};
use serde_json::json;
use skillet_test_support::{MockServer, Turn};

/// A project with three skills: `status` runs a command and allows `touch`; `careful` refuses
/// writes; `plain` does neither.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::empty();
    let skills = sandbox.project.join(".agents/skills");
    write_skill(
        &skills,
        "status",
        "---\nname: status\ndescription: Report the status\nallowed-tools: Bash(touch:*) Bash(echo:*)\n---\nThe mark: !`echo mark-$0 && touch ran.marker`\nReport it.\n",
    );
    write_skill(
        &skills,
        "careful",
        "---\nname: careful\ndescription: Look without writing\ndisallowed-tools: Write Bash(rm:*)\n---\nLook only.\n",
    );
    write_skill(
        &skills,
        "plain",
        "---\nname: plain\ndescription: Plain steps\n---\nStep one.\n",
    );
    std::fs::write(sandbox.project.join("notes.txt"), "one\n").unwrap();
    sandbox
}

#[test]
fn an_untrusted_project_runs_nothing_until_trusted_and_an_edit_drops_trust() {
    let sandbox = sandbox();
    let server = MockServer::start();
    let out = run(skillet(&sandbox, None).args(["trust", "--list"]));
    assert!(out.stdout.contains("not decided"), "{}", out.stdout);
    // `run "/status"` in an untrusted project: refused before anything is sent.
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "/status 1"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(sandbox.sessions(), Vec::<std::path::PathBuf>::new());
    assert!(out.stderr.contains("not trusted"), "{}", out.stderr);
    assert!(out.stderr.contains("--trust-project"), "{}", out.stderr);
    assert!(server.requests().is_empty());
    assert!(!sandbox.project.join("ran.marker").exists());
    // Not on a terminal, nobody can be asked: refused without --yes, nothing recorded.
    let out = run(skillet(&sandbox, None).arg("trust"));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("skillet trust --yes"), "{}", out.stderr);
    // `skillet trust --yes` shows what it unlocks, and records it outside the project.
    let out = run(skillet(&sandbox, None).args(["trust", "--yes"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("runs:\n      echo mark-$0 && touch ran.marker\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("allows without asking: Bash(touch:*), Bash(echo:*)"),
        "{}",
        out.stderr
    );
    assert!(
        sandbox
            .home
            .join(".config/skillet/trusted-projects.toml")
            .is_file()
    );
    // Now the command runs before the body is sent, its output in its place.
    server.push_turn(Turn::text("reported"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "/status 1"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = first_text(&server, 0);
    assert!(sent.contains("The mark: mark-1\nReport it."), "{sent}");
    assert!(!sent.contains("!`"), "{sent}");
    assert!(sandbox.project.join("ran.marker").exists());
    // An edit to the trusted skill drops trust: refused again, and said why.
    std::fs::remove_file(sandbox.project.join("ran.marker")).unwrap();
    let skill = sandbox.project.join(".agents/skills/status/SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    std::fs::write(&skill, text.replace("Report it.", "Report it now.")).unwrap();
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "/status 1"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("changed"), "{}", out.stderr);
    assert!(!sandbox.project.join("ran.marker").exists());
    let out = run(skillet(&sandbox, None).args(["trust", "--list"]));
    assert!(
        out.stdout
            .contains("changed since decided (.agents/skills/status: changed)"),
        "{}",
        out.stdout
    );
    // `--revoke` forgets it.
    run(skillet(&sandbox, None).args(["trust", "--yes"]));
    let out = run(skillet(&sandbox, None).args(["trust", "--revoke"]));
    assert!(out.stdout.contains("forgot"), "{}", out.stdout);
    let out = run(skillet(&sandbox, None).args(["trust", "--list"]));
    assert!(out.stdout.contains("not decided"), "{}", out.stdout);
}

#[test]
fn commands_never_ask_and_a_failing_one_aborts_before_anything_is_sent() {
    let sandbox = sandbox();
    let skills = sandbox.project.join(".agents/skills");
    write_skill(
        &skills,
        "failing",
        "---\nname: failing\ndescription: d\nallowed-tools: Bash\n---\n!`echo partial; exit 3`\n",
    );
    write_skill(
        &skills,
        "unallowed",
        "---\nname: unallowed\ndescription: d\n---\n!`touch unallowed.marker`\n",
    );
    let server = MockServer::start();
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--trust-project", "/failing"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    // Nothing happened in the session: no transcript is left to list or resume.
    assert_eq!(sandbox.sessions(), Vec::<std::path::PathBuf>::new());
    assert!(
        out.stderr.contains("trusted for this run"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("failed"), "{}", out.stderr);
    assert!(out.stderr.contains("exit code 3"), "{}", out.stderr);
    // Not allowed unasked (no allowed-tools, no --yes): never asked, refused.
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--trust-project", "/unallowed"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("would need approval"), "{}", out.stderr);
    assert!(!sandbox.project.join("unallowed.marker").exists());
    assert!(server.requests().is_empty());
    // `--trust-project` recorded nothing.
    let out = run(skillet(&sandbox, None).args(["trust", "--list"]));
    assert!(out.stdout.contains("not decided"), "{}", out.stdout);
    // With `--yes`, a trusted skill's command runs unasked; `--no-skill-shell` leaves a note.
    server.push_turn(Turn::text("ok"));
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--trust-project",
        "--yes",
        "/unallowed",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(sandbox.project.join("unallowed.marker").exists());
    std::fs::remove_file(sandbox.project.join("unallowed.marker")).unwrap();
    server.push_turn(Turn::text("ok"));
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--no-skill-shell",
        "--yes",
        "/unallowed",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = first_text(&server, 1);
    assert!(
        sent.contains("[not run: `touch unallowed.marker` (skill commands are off"),
        "{sent}"
    );
    assert!(!sandbox.project.join("unallowed.marker").exists());
}

#[test]
fn the_model_loading_an_untrusted_skill_gets_a_note_and_its_grants_allow_nothing() {
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "l1",
        "load_skill",
        json!({"name": "status", "arguments": "2"}),
    ));
    server.push_turn(Turn::tool(
        "b1",
        "bash",
        json!({"command": "touch granted.marker"}),
    ));
    server.push_turn(Turn::text("done"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "report"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let loaded = tool_result(&server, 1);
    assert!(
        loaded.contains("[not run: `echo mark-2 && touch ran.marker` (the project is not trusted"),
        "{loaded}"
    );
    assert!(!sandbox.project.join("ran.marker").exists());
    assert!(tool_result(&server, 2).contains("denied"));
    assert!(!sandbox.project.join("granted.marker").exists());
}

#[test]
fn a_trusted_skills_grants_hold_for_its_turn_and_only_for_what_they_name() {
    let sandbox = sandbox();
    run(skillet(&sandbox, None).args(["trust", "--yes"]));
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "l1",
        "load_skill",
        json!({"name": "status", "arguments": "3"}),
    ));
    server.push_turn(Turn::tool(
        "b1",
        "bash",
        json!({"command": "touch granted.marker"}),
    ));
    server.push_turn(Turn::tool(
        "b2",
        "bash",
        json!({"command": "touch a.marker; rm notes.txt"}),
    ));
    server.push_turn(Turn::tool("b3", "bash", json!({"command": "rm notes.txt"})));
    server.push_turn(Turn::text("done"));
    // No --yes: only what the skill allows runs.
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "report"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(tool_result(&server, 1).contains("The mark: mark-3"));
    assert!(sandbox.project.join("ran.marker").exists());
    assert!(sandbox.project.join("granted.marker").exists());
    assert!(
        tool_result(&server, 3).contains("denied"),
        "a compound command is not covered"
    );
    assert!(tool_result(&server, 4).contains("denied"));
    assert!(sandbox.project.join("notes.txt").exists());
    // The next turn (a resumed session) starts with no skill active.
    server.push_turn(Turn::tool(
        "b4",
        "bash",
        json!({"command": "touch later.marker"}),
    ));
    server.push_turn(Turn::text("done"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--continue", "again"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!sandbox.project.join("later.marker").exists());
}

#[test]
fn a_disallowed_tool_is_refused_with_the_skills_name_and_the_tools_stay_the_same() {
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::tool("l1", "load_skill", json!({"name": "careful"})));
    server.push_turn(Turn::tool(
        "w1",
        "write_file",
        json!({"path": "x.txt", "content": "x"}),
    ));
    server.push_turn(Turn::tool(
        "b1",
        "bash",
        json!({"command": "cd . && rm notes.txt"}),
    ));
    server.push_turn(Turn::text("done"));
    // Refused even with --yes, and in an untrusted project: refusing only narrows.
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--yes", "look"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    for index in [2, 3] {
        let result = tool_result(&server, index);
        assert!(result.contains("refused: the skill 'careful'"), "{result}");
    }
    assert!(!sandbox.project.join("x.txt").exists());
    assert!(sandbox.project.join("notes.txt").exists());
    let requests = server.requests();
    let tools = |index: usize| serde_json::to_string(&requests[index].body["tools"]).unwrap();
    assert_eq!(tools(0), tools(3), "the tool list changed");
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[test]
fn a_trusted_projects_config_grants_and_an_untrusted_ones_does_not() {
    let sandbox = sandbox();
    std::fs::write(sandbox.project.join("skillet.toml"), "yes = true\n").unwrap();
    let server = MockServer::start();
    let script = |server: &MockServer| {
        server.push_turn(Turn::tool(
            "b1",
            "bash",
            json!({"command": "touch config.marker"}),
        ));
        server.push_turn(Turn::text("done"));
    };
    script(&server);
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "go"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!sandbox.project.join("config.marker").exists());
    assert!(out.stderr.contains("`yes` is ignored"), "{}", out.stderr);
    let out = run(skillet(&sandbox, None).args(["trust", "--yes"]));
    assert!(
        out.stderr.contains("sets:\n    yes = true"),
        "{}",
        out.stderr
    );
    script(&server);
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "go"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(sandbox.project.join("config.marker").exists());
}

#[test]
fn arguments_reach_commands_as_data_never_as_shell() {
    let sandbox = sandbox();
    write_skill(
        &sandbox.project.join(".agents/skills"),
        "echoer",
        "---\nname: echoer\ndescription: d\nallowed-tools: Bash\n---\nGot: !`echo \"got:$0\"`\n",
    );
    let server = MockServer::start();
    server.push_turn(Turn::text("ok"));
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--trust-project",
        r#"/echoer "\"; touch pwned; \"""#,
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!sandbox.project.join("pwned").exists());
    let sent = first_text(&server, 0);
    assert!(sent.contains(r#"Got: got:"; touch pwned; ""#), "{sent}");
    // Unquoted in the command, a value is still one word, never globbed.
    write_skill(
        &sandbox.project.join(".agents/skills"),
        "lister",
        "---\nname: lister\ndescription: d\nallowed-tools: Bash\n---\nSeen: !`printf '[%s]' $0`\n",
    );
    server.push_turn(Turn::text("ok"));
    let out =
        run(skillet(&sandbox, Some(&server)).args(["run", "--trust-project", "/lister '* x'"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = first_text(&server, 1);
    assert!(sent.contains("Seen: [* x]"), "{sent}");
}

#[test]
fn the_users_own_skills_act_only_in_a_trusted_project_and_a_skills_dir_inside_is_the_projects() {
    let sandbox = sandbox();
    write_skill(
        &sandbox.home.join(".agents/skills"),
        "mine",
        "---\nname: mine\ndescription: d\nallowed-tools: Bash(touch:*) Bash(echo:*)\n---\nNow: !`touch mine.marker && echo mine-ran`\n",
    );
    let server = MockServer::start();
    // Untrusted: even the user's own skill runs nothing here (its commands run this project's
    // files), and `run` says how to trust.
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "/mine"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(!sandbox.project.join("mine.marker").exists());
    let out = run(skillet(&sandbox, None).args(["trust", "--yes"]));
    assert!(out.stderr.contains("- your skill mine"), "{}", out.stderr);
    server.push_turn(Turn::text("ok"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "/mine"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(first_text(&server, 0).contains("Now: mine-ran"));
    // Named with --skills-dir, the project's own folder is still the project's: pinned, so an
    // edit drops trust.
    let skill = sandbox.project.join(".agents/skills/status/SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    std::fs::write(&skill, text.replace("Report it.", "Report it now.")).unwrap();
    let out = run(skillet(&sandbox, Some(&server)).args([
        "--skills-dir",
        ".agents/skills",
        "run",
        "/status 1",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(!sandbox.project.join("ran.marker").exists());
}
