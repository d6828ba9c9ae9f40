//! Claude Code's custom commands (`.claude/commands/NAME.md`, `~/.claude/commands/NAME.md`) as
//! `/NAME`, end to end on the mock provider: `$ARGUMENTS` and `$1`, namespaced folders, a skill
//! of the same name winning, a project's commands only in a trusted project, and trust pinned to
//! the command's file alone.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::path::Path;

use common::{Sandbox, first_text, run, skillet_at as skillet, write_skill};
use skillet_test_support::{MockServer, Turn};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The user's own commands: one with `$ARGUMENTS` and `$1`/`$2`, one in a subfolder, one
/// without any frontmatter.
fn users_commands(sandbox: &Sandbox) {
    let commands = sandbox.home.join(".claude/commands");
    write(
        &commands.join("fix-issue.md"),
        "---\ndescription: Fix an issue by number\nargument-hint: [number] [priority]\n---\nFix issue #$1 with priority $2. All: $ARGUMENTS. Not an argument: $0.\n",
    );
    write(
        &commands.join("frontend/component.md"),
        "---\ndescription: Make a component\n---\nMake a component named $ARGUMENTS.\n",
    );
    write(
        &commands.join("bare.md"),
        "Say what the bare command says.\n",
    );
}

#[test]
fn the_users_commands_are_slash_commands_with_claude_codes_placeholders() {
    let sandbox = Sandbox::empty();
    users_commands(&sandbox);
    let server = MockServer::start();
    server.push_turn(Turn::text("fixed"));
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--skill-match",
        "off",
        "/fix-issue 123 high",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = first_text(&server, 0);
    assert!(
        sent.contains("Fix issue #123 with priority high. All: 123 high. Not an argument: $0."),
        "{sent}"
    );
    // A command has no folder of its own: its file is named, no sibling is listed as its file.
    assert!(sent.contains("Command file: "), "{sent}");
    assert!(!sent.contains("bare.md"), "{sent}");
    assert!(!sent.contains("Files in the skill folder"), "{sent}");
    // In a subfolder: the name is the file's, the folder a namespace.
    server.push_turn(Turn::text("made"));
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--skill-match",
        "off",
        "/component Button",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        first_text(&server, 1).contains("Make a component named Button."),
        "{}",
        first_text(&server, 1)
    );
    // Without frontmatter: the first line describes it, and nothing is reported about it.
    let out = run(skillet(&sandbox, None).args(["skills", "list"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.lines().any(|line| line.starts_with("bare")
            && line.contains("user command")
            && line.contains("Say what the bare command says.")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .lines()
            .any(|line| line.starts_with("component") && line.contains("user command:frontend")),
        "{}",
        out.stdout
    );
    assert!(!out.stderr.contains("bare.md"), "{}", out.stderr);
    // Commands are not Agent Skills: the specification's checks leave them be.
    let out = run(skillet(&sandbox, None).args(["skills", "validate"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_skill_of_the_same_name_wins_over_a_command() {
    let sandbox = Sandbox::empty();
    write(
        &sandbox.home.join(".claude/commands/deploy.md"),
        "Deploy as the command says.\n",
    );
    write_skill(
        &sandbox.home.join(".claude/skills"),
        "deploy",
        "---\nname: deploy\ndescription: Deploy the service\n---\nDeploy as the skill says.\n",
    );
    let server = MockServer::start();
    server.push_turn(Turn::text("deployed"));
    let out =
        run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "/deploy"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = first_text(&server, 0);
    assert!(sent.contains("Deploy as the skill says."), "{sent}");
    assert!(!sent.contains("the command says"), "{sent}");
}

/// A git project with one plain command and one that runs a command before it is sent.
fn project_with_commands() -> Sandbox {
    let sandbox = Sandbox::empty();
    std::fs::create_dir_all(sandbox.project.join(".git")).unwrap();
    let commands = sandbox.project.join(".claude/commands");
    write(
        &commands.join("review.md"),
        "---\ndescription: Review the change\n---\nReview $ARGUMENTS carefully.\n",
    );
    write(
        &commands.join("status.md"),
        "---\ndescription: Report the status\nallowed-tools: Bash(echo:*)\n---\nThe mark: !`echo mark-$1`\nReport it.\n",
    );
    sandbox
}

#[test]
fn a_projects_commands_are_used_only_once_it_is_trusted_and_trust_pins_the_file() {
    let sandbox = project_with_commands();
    let server = MockServer::start();
    // Untrusted: `/review` is refused, not sent as text; nothing reached the model.
    let out =
        run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "/review x"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("/review is a custom command of this project"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--trust-project"), "{}", out.stderr);
    assert!(server.requests().is_empty());
    // Nor does the model see it in its catalog.
    server.push_turn(Turn::text("hello"));
    let out = run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "hello"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("2 custom commands (.claude/commands) cannot be used"),
        "{}",
        out.stderr
    );
    let system = server.requests()[0].body["system"].to_string();
    assert!(!system.contains("review"), "{system}");
    // The trust question lists both: the plain one by name, the acting one with what it runs.
    let out = run(skillet(&sandbox, None).args(["trust", "--yes"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("- command /review ("), "{}", out.stderr);
    assert!(out.stderr.contains("- command /status ("), "{}", out.stderr);
    assert!(out.stderr.contains("echo mark-$1"), "{}", out.stderr);
    // Trusted: both work, the acting one runs its command first.
    server.push_turn(Turn::text("reviewed"));
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--skill-match",
        "off",
        "/review the diff",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        first_text(&server, 1).contains("Review the diff carefully."),
        "{}",
        first_text(&server, 1)
    );
    server.push_turn(Turn::text("reported"));
    let out =
        run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "/status 7"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        first_text(&server, 2).contains("The mark: mark-7\nReport it."),
        "{}",
        first_text(&server, 2)
    );
    // Editing another command of the folder leaves the acting one trusted: its pin is its
    // file alone.
    write(
        &sandbox.project.join(".claude/commands/review.md"),
        "Review $ARGUMENTS quickly.\n",
    );
    server.push_turn(Turn::text("reported again"));
    let out =
        run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "/status 8"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        first_text(&server, 3).contains("mark-8"),
        "{}",
        first_text(&server, 3)
    );
    // Editing the acting command itself drops trust: refused, nothing run.
    let status = sandbox.project.join(".claude/commands/status.md");
    let text = std::fs::read_to_string(&status).unwrap();
    std::fs::write(&status, text.replace("Report it.", "Report it now.")).unwrap();
    let requests = server.requests().len();
    let out =
        run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "/status 9"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(server.requests().len(), requests);
    let out = run(skillet(&sandbox, None).args(["trust", "--list"]));
    assert!(
        out.stdout.contains(".claude/commands/status.md: changed"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_command_reads_no_file_but_its_own() {
    let sandbox = Sandbox::empty();
    users_commands(&sandbox);
    // The model asked to read a file beside the commands, which is no command: refused; a
    // command's own file is readable.
    let server = MockServer::start();
    let sibling = sandbox.home.join(".claude/commands/private.txt");
    write(&sibling, "not a command\n");
    let own = sandbox.home.join(".claude/commands/fix-issue.md");
    server.push_turn(Turn::tool(
        "t1",
        "read_file",
        serde_json::json!({"path": sibling.display().to_string()}),
    ));
    server.push_turn(Turn::tool(
        "t2",
        "read_file",
        serde_json::json!({"path": own.display().to_string()}),
    ));
    server.push_turn(Turn::text("done"));
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--skill-match",
        "off",
        "/fix-issue 1 low",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let refused = common::tool_result(&server, 1);
    assert!(refused.contains("outside"), "{refused}");
    let read = common::tool_result(&server, 2);
    assert!(read.contains("Fix issue #$1"), "{read}");
}

#[test]
fn a_project_cannot_take_the_name_of_the_users_own_command() {
    let sandbox = project_with_commands();
    write(
        &sandbox.home.join(".claude/commands/review.md"),
        "Review as I always do: $ARGUMENTS.\n",
    );
    let server = MockServer::start();
    // Untrusted, and trusted: `/review` is the user's.
    server.push_turn(Turn::text("reviewed"));
    let out =
        run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "/review x"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        first_text(&server, 0).contains("Review as I always do: x."),
        "{}",
        first_text(&server, 0)
    );
    server.push_turn(Turn::text("reviewed again"));
    let out = run(skillet(&sandbox, Some(&server)).args([
        "run",
        "--trust-project",
        "--skill-match",
        "off",
        "/review y",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        first_text(&server, 1).contains("Review as I always do: y."),
        "{}",
        first_text(&server, 1)
    );
    // A project's skill of that name still comes first (skills before commands, as in Claude
    // Code), and whoever invokes it is told what it hides.
    write_skill(
        &sandbox.project.join(".agents/skills"),
        "review",
        "---\nname: review\ndescription: The project's review\n---\nThe project's way.\n",
    );
    server.push_turn(Turn::text("the project's"));
    let out =
        run(skillet(&sandbox, Some(&server)).args(["run", "--skill-match", "off", "/review z"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("note: /review runs "), "{}", out.stderr);
    assert!(
        out.stderr.contains("it hides 2 others of the same name"),
        "{}",
        out.stderr
    );
}
