//! Permissions in a real terminal (tmux, the strict mock model): "always" covers what was
//! approved and nothing else, "no" carries a reason to the model, the trust question keeps a
//! message typed at it, plan mode ends with a plan to approve, and `/mode` and `/add-dir`.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use common::terminal::{EXITED, Terminal, acting_skill, sandbox, tmux_missing, wait_for_requests};
use common::tool_result;
use serde_json::json;
use skillet_test_support::{MockServer, Turn};

#[test]
fn always_covers_one_prefix_only_and_no_carries_a_reason() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    for (id, command) in [
        ("a", "echo one"),
        ("b", "echo two && echo three"),
        ("c", "rm -f app.py.bak"),
    ] {
        server.push_turn(Turn::tool(id, "bash", json!({ "command": command })));
    }
    server.push_turn(Turn::text("kept it"));
    std::fs::write(sandbox.project.join("app.py.bak"), "old\n").unwrap();
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("tidy up");
    // The question names what "always" covers, as a rule would say it.
    terminal.wait_for("[a]lways allow Bash(echo:*) (new options ask again) this session: ");
    terminal.answer(&["a"]);
    // `echo` again runs unasked; `rm` is asked about: the case, where "always" on
    // `echo one` let `rm -f app.py.bak` run unasked.
    let screen = terminal.wait_for("$ rm -f app.py.bak");
    assert!(!screen.contains("$ echo two"), "{screen}");
    assert!(
        screen.contains("[a]lways allow Bash(rm:*) (new options ask again) this session"),
        "{screen}"
    );
    // A reason typed at once, starting with any letter but y or a, is kept whole.
    terminal.answer(&["k"]);
    terminal.wait_for("no, because: k");
    terminal.type_text("eep the backup, it is mine");
    terminal.press(&["Enter"]);
    terminal.wait_for("kept it");
    assert!(sandbox.project.join("app.py.bak").exists());
    wait_for_requests(&server, 4);
    assert_eq!(tool_result(&server, 2), "two\nthree\n");
    assert_eq!(
        tool_result(&server, 3),
        "error: denied: the user refused this call and said: keep the backup, it is mine"
    );
    // `/mode` lists what "always" allowed.
    terminal.line("/mode");
    terminal.wait_for("always allowed this session: Bash(echo:*)");
    terminal.line("/exit");
    terminal.wait_for(&format!("{EXITED} 0]"));
}

#[test]
fn the_trust_question_keeps_a_message_typed_at_it_and_records_nothing_until_answered() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    acting_skill(&sandbox, "Bash(touch:*)");
    let server = MockServer::start();
    server.push_turn(Turn::text("Answered the kept message."));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("trust this project? [y]es / [n]o");
    // A message typed at the question, as if it were the prompt: kept, nothing recorded.
    terminal.answer(&["what does this repo do?", "Enter"]);
    terminal.wait_for("(kept as your first message, sent once you answer)");
    let trust_file = sandbox.home.join(".config/skillet/trusted-projects.toml");
    assert!(!trust_file.exists(), "recorded before an answer");
    terminal.press(&["n", "Enter"]);
    terminal.wait_for("Answered the kept message.");
    wait_for_requests(&server, 1);
    let sent = server.requests()[0].body["messages"][0].to_string();
    assert!(sent.contains("what does this repo do?"), "{sent}");
    terminal.line("/exit");
    terminal.wait_for(&format!("{EXITED} 0]"));
    let recorded = std::fs::read_to_string(&trust_file).unwrap_or_default();
    assert!(recorded.contains("trusted = false"), "{recorded}");
}

#[test]
fn plan_mode_ends_with_a_plan_to_approve_then_carries_it_out() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    // In plan mode a write is refused; the model then answers with its plan.
    server.push_turn(Turn::tool(
        "w",
        "write_file",
        json!({ "path": "plan.txt", "content": "x\n" }),
    ));
    server.push_turn(Turn::text("1. Write plan.txt"));
    // Approved: default mode, the write is asked about and made.
    server.push_turn(Turn::tool(
        "w2",
        "write_file",
        json!({ "path": "plan.txt", "content": "done\n" }),
    ));
    server.push_turn(Turn::text("Written."));
    let terminal = Terminal::start(&sandbox, &server, &["chat", "--permission-mode", "plan"]);
    terminal.wait_for("plan mode · /help for commands");
    terminal.line("make plan.txt");
    terminal.wait_for("approve this plan and carry it out");
    assert!(!sandbox.project.join("plan.txt").exists());
    assert!(
        tool_result(&server, 1).contains("plan mode"),
        "{}",
        tool_result(&server, 1)
    );
    let asked = server.requests()[0].body["messages"][0].to_string();
    assert!(asked.contains("The session is in plan mode"), "{asked}");
    terminal.press(&["y", "Enter"]);
    terminal.wait_for("permission mode: default");
    terminal.wait_for("wants to change plan.txt");
    terminal.answer(&["y"]);
    terminal.wait_for("Written.");
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("plan.txt")).unwrap(),
        "done\n"
    );
    let approved = server.requests()[2].body["messages"].to_string();
    assert!(approved.contains("approved your plan"), "{approved}");
    // `/mode` switches, and says what it is.
    terminal.line("/mode accept-edits");
    terminal.wait_for("permission mode: accept-edits");
    terminal.line("/mode");
    terminal.wait_for("permission mode: accept-edits (others:");
    terminal.line("/exit");
    terminal.wait_for(&format!("{EXITED} 0]"));
}
