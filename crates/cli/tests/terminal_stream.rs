//! The chat in a real terminal (tmux), as a daily user of Claude Code or Codex expects it: text
//! shown as it arrives, not held until its line ends, and wrapped at words, at 60 and at 120
//! columns; a status line under the input; messages over several lines; coloured diffs.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::collections::HashSet;

use common::terminal::{
    STATUS_START, Terminal, last_message_text, sandbox, tmux_missing, wait_for_requests,
};
use serde_json::json;
use skillet_test_support::{MockServer, MockUsage, Reply, Turn};

/// One long line of prose, with long words a break would cut in two.
const PARAGRAPH: &str = "Notwithstanding the internationalization requirements, the \
    implementation streams each paragraph immediately, wrapping unconditionally between \
    words, whether the terminal is narrow or comfortably wide, so nothing becomes \
    unreadable halfway through a sentence while the remaining characters arrive.";

/// The words of `text`, whole.
fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

/// Every word of `expected` appears whole among the screen's words (a word cut across two rows
/// would appear as two pieces), and no row is wider than `columns`.
fn assert_whole_words(rows: &str, expected: &[&str], columns: usize) {
    let shown: HashSet<&str> = words(rows).into_iter().collect();
    for word in expected {
        assert!(
            shown.contains(word),
            "{word:?} is not whole on the screen:\n{rows}"
        );
    }
    for row in rows.lines() {
        assert!(row.chars().count() <= columns, "a row is too wide:\n{rows}");
    }
}

fn streams_and_wraps_at(columns: u16) {
    let sandbox = sandbox();
    let server = MockServer::start();
    // The first half of the answer (after `message_start`, a ping and the block's start),
    // then nothing more, as from a slow model: it shows anyway.
    server.push(Reply::Stall(Turn::text(PARAGRAPH), 4));
    let terminal = Terminal::start_sized(&sandbox, &server, &["chat"], columns);
    terminal.wait_for("/help for commands");
    terminal.line("explain the streaming");
    wait_for_requests(&server, 1);
    let half: Vec<&str> = words(PARAGRAPH).into_iter().take(8).collect();
    terminal.wait_until("the first half of the answer while it streams", |_| {
        let rows = terminal.rows();
        half.iter().all(|word| rows.contains(word))
    });
    let rows = terminal.rows();
    // The answer is still coming: the spinner is there, under the text.
    assert!(rows.contains("writing"), "{rows}");
    assert_whole_words(&rows, &half, usize::from(columns));
    terminal.press(&["C-c"]);
    terminal.wait_for("(cancelled)");
    // A whole answer: a paragraph and a list item, wrapped at words.
    server.push_turn(Turn::text(&format!("{PARAGRAPH}\n\n- {PARAGRAPH}\n")));
    terminal.line("again, all of it");
    terminal.wait_until("the whole answer", |screen| {
        screen.matches("arrive.").count() >= 2
    });
    terminal.wait_for_prompt();
    let rows = terminal.rows();
    assert_whole_words(&rows, &words(PARAGRAPH), usize::from(columns));
    // The list item's later rows hang under its text, not under the bullet.
    let item: Vec<&str> = rows
        .lines()
        .skip_while(|row| !row.starts_with("• "))
        .take(2)
        .collect();
    assert_eq!(item.len(), 2, "{rows}");
    assert!(
        item[1].starts_with("  ") && !item[1].starts_with("   "),
        "{rows}"
    );
}

#[test]
fn at_60_columns_text_streams_and_no_word_is_cut() {
    if tmux_missing() {
        return;
    }
    streams_and_wraps_at(60);
}

#[test]
fn at_120_columns_text_streams_and_no_word_is_cut() {
    if tmux_missing() {
        return;
    }
    streams_and_wraps_at(120);
}

#[test]
fn a_status_line_under_the_input_and_messages_over_several_lines() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    // Under the prompt, before anything was asked: the model, an empty context.
    let screen = terminal.wait_for(STATUS_START);
    let status = screen
        .lines()
        .find(|line| line.starts_with(STATUS_START))
        .unwrap();
    assert!(status.contains("context 0% of 200k"), "{screen}");
    let rows: Vec<&str> = screen.trim_end().lines().collect();
    assert_eq!(rows[rows.len() - 2].trim(), "›", "{screen}");
    // A message typed over three lines: `\` then Enter, and Alt-Enter.
    server.push_turn(Turn::text("Got all three.").with_usage(MockUsage {
        input: 50_000,
        output: 10,
        ..MockUsage::default()
    }));
    terminal.wait_for_prompt();
    terminal.type_text("first line \\");
    terminal.press(&["Enter"]);
    terminal.type_text("second line");
    terminal.press(&["M-Enter"]);
    terminal.type_text("third line");
    terminal.press(&["Enter"]);
    terminal.wait_for("Got all three.");
    assert_eq!(
        last_message_text(&server, 0),
        "first line \nsecond line\nthird line"
    );
    // After the answer, the status line says how full the context is, and the price.
    terminal.wait_for_prompt();
    let screen = terminal.wait_for("context 25% of 200k");
    assert!(screen.contains(" · $0."), "{screen}");
    // Accepted lines leave no status line behind in the scrollback: only the last is there.
    assert_eq!(screen.matches(STATUS_START).count(), 1, "{screen}");
}

#[test]
fn a_diff_to_approve_is_coloured() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::tool(
        "e1",
        "edit_file",
        json!({"path": "notes.txt", "old_text": "one", "new_text": "two"}),
    ));
    server.push_turn(Turn::text("Changed."));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("change it");
    terminal.wait_for("allow? [y]es");
    let coloured = terminal.styled();
    // Removed red, added green (SGR 31 and 32), each just before its line.
    assert!(coloured.contains("\u{1b}[31m-one"), "{coloured:?}");
    assert!(coloured.contains("\u{1b}[32m+two"), "{coloured:?}");
    terminal.answer(&["y"]);
    terminal.wait_for("Changed.");
}

#[test]
fn at_completes_a_file_attaches_it_and_an_image_and_a_custom_command_runs() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    std::fs::write(
        sandbox.project.join("shot.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89",
    )
    .unwrap();
    let commands = sandbox.home.join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(commands.join("hello.md"), "Greet $1 warmly.\n").unwrap();
    let server = MockServer::start();
    server.push_turn(Turn::text("It says one."));
    server.push_turn(Turn::text("A pixel."));
    server.push_turn(Turn::text("Hello, world!"));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.wait_for_prompt();
    // Tab completes the file's name after `@`.
    terminal.type_text("what is in @no");
    terminal.press(&["Tab"]);
    terminal.wait_for("what is in @notes.txt");
    terminal.press(&["Enter"]);
    terminal.wait_for("It says one.");
    let request = &server.requests()[0];
    let content = request.body["messages"][0]["content"].to_string();
    assert!(
        content.contains("<file path=\\\"notes.txt\\\">\\none\\n</file>"),
        "{content}"
    );
    terminal.wait_for("attached notes.txt (1 line)");
    // An image.
    terminal.line("and @shot.png?");
    terminal.wait_for("A pixel.");
    let blocks = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .clone();
    assert!(
        blocks
            .as_array()
            .unwrap()
            .iter()
            .any(|block| block["type"] == "image"),
        "{blocks}"
    );
    // A custom command of the user's, by its name.
    terminal.line("/hello world");
    terminal.wait_for("Hello, world!");
    assert!(
        last_message_text(&server, 2).contains("Greet world warmly."),
        "{}",
        last_message_text(&server, 2)
    );
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[test]
fn a_code_block_is_coloured_by_its_language() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text(
        "Here:\n\n```rust\nfn main() { let answer = 42; }\n```\n",
    ));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("show me code");
    terminal.wait_for("let answer = 42;");
    terminal.wait_for_prompt();
    let styled = terminal.styled();
    let code = styled.lines().find(|line| line.contains("answer")).unwrap();
    // More than one colour on the line: keyword, name and number told apart.
    let colours: HashSet<&str> = code
        .split("\u{1b}[")
        .skip(1)
        .filter_map(|sequence| sequence.split('m').next())
        .filter(|sgr| sgr.contains("38;"))
        .collect();
    assert!(colours.len() >= 2, "{code:?}");
}

#[test]
fn what_is_typed_during_a_turn_is_kept_for_the_next_prompt() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push(Reply::Delayed(
        std::time::Duration::from_millis(1500),
        Box::new(Reply::Turn(Turn::text("The first answer."))),
    ));
    server.push_turn(Turn::text("The second answer."));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("a slow question");
    wait_for_requests(&server, 1);
    // Typed while the model is still answering: not drawn over the spinner, not lost.
    terminal.type_text("the next question");
    terminal.press(&["Enter"]);
    terminal.type_text("and a draft");
    let screen = terminal.wait_for("The second answer.");
    assert_eq!(last_message_text(&server, 1), "the next question");
    assert!(screen.contains("› the next question"), "{screen}");
    // What followed the Enter is already typed at the prompt.
    terminal.wait_until("the draft at the prompt", |screen| {
        screen.contains("› and a draft")
    });
}

#[test]
fn thinking_streams_dimmed_and_wrapped_and_can_be_switched_off() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    // The thinking's first half (after `message_start`, a ping and the block's start), then
    // nothing more: it shows while the model still thinks.
    server.push(Reply::Stall(
        Turn::text("Never shown.").with_thinking(PARAGRAPH),
        4,
    ));
    server.push_turn(Turn::text("Here is the answer.").with_thinking(PARAGRAPH));
    server.push_turn(Turn::text("No thinking now.").with_thinking("never asked for"));
    let terminal = Terminal::start_sized(
        &sandbox,
        &server,
        &["chat", "--thinking-budget", "2048"],
        60,
    );
    terminal.wait_for("/help for commands");
    // The status line says so (cut to the width at 60 columns).
    terminal.wait_for("· thinkin");
    terminal.line("think about it");
    wait_for_requests(&server, 1);
    let half: Vec<&str> = words(PARAGRAPH).into_iter().take(6).collect();
    terminal.wait_until("the thinking while it streams", |_| {
        let rows = terminal.rows();
        half.iter().all(|word| rows.contains(word))
    });
    let rows = terminal.rows();
    assert!(rows.contains("✻ thinking"), "{rows}");
    assert_whole_words(&rows, &half, 60);
    // Dimmed (SGR 2), each row.
    let styled = terminal.styled();
    let row = styled.lines().find(|line| line.contains(half[1])).unwrap();
    // tmux writes the row's style as one SGR (`ESC[0;2m`): 2 is among its parameters.
    let dim = row
        .split("\u{1b}[")
        .filter_map(|sequence| sequence.split('m').next())
        .any(|sgr| sgr.split(';').any(|parameter| parameter == "2"));
    assert!(dim, "{row:?}");
    terminal.press(&["C-c"]);
    terminal.wait_for("(cancelled)");
    terminal.line("again");
    terminal.wait_for("Here is the answer.");
    terminal.wait_for_prompt();
    let rows = terminal.rows();
    assert_whole_words(&rows, &words(PARAGRAPH), 60);
    // The thinking comes before the answer, a blank line between.
    let lines: Vec<&str> = rows.lines().collect();
    let answer = lines
        .iter()
        .position(|line| line.contains("Here is the answer."))
        .unwrap();
    assert!(lines[answer - 2].contains("arrive."), "{rows}");
    assert_eq!(lines[answer - 1].trim(), "", "{rows}");
    let body = &server.requests()[1].body;
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    // Off from the next turn: not asked for, not shown, gone from the status line.
    terminal.line("/thinking off");
    terminal.wait_for("thinking: off from the next turn on");
    terminal.line("and now?");
    terminal.wait_for("No thinking now.");
    let screen = terminal.wait_for_prompt();
    assert!(!screen.contains("never asked for"), "{screen}");
    assert_eq!(server.requests()[2].body.get("thinking"), None);
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[test]
fn a_users_hook_refuses_a_call_and_a_prompt_in_the_chat() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    // Claude Code's hooks from the user's own settings: a guard on `bash`, and one on prompts.
    let settings = sandbox.home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "input=$(cat); case \"$input\" in *'rm notes'*) echo 'no rm here' >&2; exit 2;; esac"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command",
                "command": "input=$(cat); case \"$input\" in *secret*) echo 'no secrets in prompts' >&2; exit 2;; esac"}]}],
        }})
        .to_string(),
    )
    .unwrap();
    let server = MockServer::start();
    server.push_turn(Turn::tool("b1", "bash", json!({"command": "rm notes.txt"})));
    server.push_turn(Turn::text("I will not remove it."));
    let terminal = Terminal::start_sized(&sandbox, &server, &["chat"], 60);
    terminal.wait_for("/help for commands");
    terminal.line("tidy up");
    // Refused before anyone is asked: the hook's reason under the call.
    let screen = terminal.wait_for("I will not remove it.");
    assert!(
        screen.contains("a PreToolUse hook refused this call"),
        "{screen}"
    );
    assert!(screen.contains("no rm here"), "{screen}");
    assert!(!screen.contains("allow? [y]es"), "{screen}");
    assert!(sandbox.project.join("notes.txt").exists());
    // A prompt the hook refuses is not sent.
    terminal.wait_for_prompt();
    terminal.line("here is my secret");
    let screen = terminal.wait_for("no secrets in prompts");
    assert_eq!(server.requests().len(), 2, "{screen}");
    assert_eq!(server.rejections(), Vec::<String>::new());
}
