//! `skillet` in a real terminal: tmux runs the binary against the scripted mock model server;
//! the tests type with `send-keys` and read the screen with `capture-pane`, as a user would see
//! it. Each test has its own tmux server (its socket in the test's temp folder), killed at the
//! end. Without tmux the tests skip, saying so (`apt-get install tmux`; `.ci/run` installs it).
//!
//! `SKILLET_TERMINAL_BIN` runs another build of skillet (an older one, for a "before" screen),
//! and `SKILLET_TERMINAL_CAPTURE` names a file the session test writes its screen to.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::terminal::{
    EXITED, POLL, Terminal, WAIT, acting_skill, last_line, last_message_text, sandbox,
    tmux_missing, wait_for_requests,
};
use common::write_skill;
use serde_json::{Value, json};
use skillet_test_support::{MockServer, Reply, Turn};

#[test]
fn double_slash_and_a_path_first_line_are_sent_as_messages() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    for answer in ["first answer", "second answer", "third answer"] {
        server.push_turn(Turn::text(answer));
    }
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    // `//` sends the rest of the line, one `/` stripped.
    terminal.line("//help is what I need");
    terminal.wait_for("first answer");
    assert_eq!(last_message_text(&server, 0), "/help is what I need");
    // A first word holding another `/` is a path.
    terminal.line("/etc/hosts looks wrong");
    terminal.wait_for("second answer");
    assert_eq!(last_message_text(&server, 1), "/etc/hosts looks wrong");
    // So is one naming an existing folder that is no command or skill.
    terminal.line("/tmp is full");
    terminal.wait_for("third answer");
    assert_eq!(last_message_text(&server, 2), "/tmp is full");
    let screen = terminal.screen();
    assert!(!screen.contains("unknown command"), "{screen}");
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[test]
fn help_lists_every_command_and_the_rule_for_messages() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("/help");
    let screen = terminal.wait_for("Ctrl-D leaves");
    for command in [
        "/help",
        "/skills",
        "/model [NAME]",
        "/cost",
        "/sessions",
        "/clear",
        "/exit",
    ] {
        assert!(screen.contains(command), "{command} missing:\n{screen}");
    }
    assert!(screen.contains("start a line with //"), "{screen}");
    assert!(screen.contains("Tab completes"), "{screen}");
    assert!(server.requests().is_empty());
}

#[test]
fn an_unknown_command_names_the_closest_matches_only() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("/modle gpt-4o");
    let screen = terminal.wait_for("unknown command or skill /modle");
    let said = screen
        .lines()
        .find(|line| line.contains("unknown command or skill /modle"))
        .unwrap();
    assert!(said.contains("did you mean /mode, /model?"), "{said}");
    // Only the close names, not every skill.
    assert!(
        !said.contains("/pdf") && !said.contains("/deploy"),
        "{said}"
    );
    terminal.line("/reveiw");
    let screen = terminal.wait_for("unknown command or skill /reveiw");
    assert!(screen.contains("did you mean /review?"), "{screen}");
    // Nothing close: no guess.
    terminal.line("/zzzzzzzz");
    let screen = terminal.wait_for("unknown command or skill /zzzzzzzz");
    let said = screen
        .lines()
        .find(|line| line.contains("unknown command or skill /zzzzzzzz"))
        .unwrap();
    assert!(!said.contains("did you mean"), "{said}");
    assert!(server.requests().is_empty());
}

#[test]
fn model_shows_and_switches_the_model_and_cost_prices_each() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("answered by sonnet"));
    server.push_turn(Turn::text("answered by haiku"));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("/model");
    terminal.wait_for("model: claude-sonnet-4-5 (anthropic, http://127.0.0.1:");
    terminal.line("hello");
    terminal.wait_for("answered by sonnet");
    terminal.line("/model claude-haiku-4-5");
    terminal.wait_for("model: claude-haiku-4-5 from the next turn on (was claude-sonnet-4-5)");
    terminal.line("and now?");
    terminal.wait_for("answered by haiku");
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "claude-sonnet-4-5");
    assert_eq!(requests[1].body["model"], "claude-haiku-4-5");
    // The prompt and tools are sent byte for byte as before: the cache keeps hitting.
    assert_eq!(requests[0].body["system"], requests[1].body["system"]);
    assert_eq!(requests[0].body["tools"], requests[1].body["tools"]);
    // 100 input and 10 output tokens each: $0.00045 at Sonnet's price, $0.00015 at Haiku's.
    terminal.line("/cost");
    terminal.wait_for("cost: $0.0006 at the list price of claude-sonnet-4-5, claude-haiku-4-5");
    terminal.line("/model my-local-model");
    terminal.wait_for("price unknown for my-local-model");
    // A subagent asks for the new model too.
    server.push_turn(Turn::tool(
        "t1",
        "task",
        json!({"description": "look", "prompt": "look around"}),
    ));
    server.push_turn(Turn::text("the subagent looked"));
    server.push_turn(Turn::text("all done"));
    terminal.line("delegate");
    terminal.wait_for("all done");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    for request in &requests[2..] {
        assert_eq!(request.body["model"], "my-local-model");
    }
    assert_eq!(
        requests[3].body["messages"][0]["content"][0]["text"],
        "look around"
    );
    terminal.line("/model");
    terminal.wait_for("this session started with claude-sonnet-4-5");
    terminal.line("/model two words");
    terminal.wait_for("is not a model name");
    // The switch is in the transcript; its header keeps the starting model.
    let sessions = sandbox.sessions_dir();
    let transcript = std::fs::read_dir(sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let text = std::fs::read_to_string(transcript.path()).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["model"], "claude-sonnet-4-5");
    assert!(
        text.contains(r#"{"type":"model","model":"claude-haiku-4-5"}"#),
        "{text}"
    );
    // While this chat has the session open, a second skillet may not write to it.
    let second = Terminal::start(&sandbox, &server, &["chat", "--continue"]);
    let screen = second.wait_for(EXITED);
    assert!(screen.contains("is open in another skillet"), "{screen}");
    drop(second);
    // Resumed, the session goes on with the model it last used.
    terminal.line("/exit");
    terminal.wait_for(&format!("{EXITED} 0]"));
    drop(terminal);
    server.push_turn(Turn::text("still local"));
    let resumed = Terminal::start(&sandbox, &server, &["chat", "--continue"]);
    resumed.wait_for("continuing with my-local-model");
    resumed.line("again");
    resumed.wait_for("still local");
    assert_eq!(
        server.requests().last().unwrap().body["model"],
        "my-local-model"
    );
}

#[test]
fn tab_completes_commands_and_skill_names() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("reviewed"));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.wait_for_prompt();
    // One match: completed, with a space after it.
    terminal.type_text("/he");
    terminal.press(&["Tab"]);
    terminal.wait_until("`/help ` completed", |screen| {
        last_line(screen) == "› /help"
    });
    terminal.press(&["Enter"]);
    terminal.wait_for("Tab completes");
    // A skill's name too.
    terminal.wait_for_prompt();
    terminal.type_text("/rev");
    terminal.press(&["Tab"]);
    terminal.wait_until("`/review ` completed", |screen| {
        last_line(screen) == "› /review"
    });
    terminal.type_text("src/main.rs");
    terminal.press(&["Enter"]);
    terminal.wait_for("reviewed");
    let sent = last_message_text(&server, 0);
    assert!(sent.starts_with("<skill name=\"review\">"), "{sent}");
    assert!(
        sent.contains("The review steps.\n\nARGUMENTS: src/main.rs\n"),
        "{sent}"
    );
    // Several matches: a second Tab lists them.
    terminal.wait_for_prompt();
    terminal.type_text("/c");
    terminal.press(&["Tab"]);
    terminal.press(&["Tab"]);
    let screen = terminal.wait_for("/clear");
    assert!(screen.contains("/cost"), "{screen}");
    assert!(!screen.contains("/pdf"), "{screen}");
}

#[test]
fn ctrl_c_at_the_prompt_drops_the_line_and_the_session_goes_on() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("still here"));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.wait_for_prompt();
    terminal.type_text("half a thought");
    terminal.press(&["C-c"]);
    terminal.wait_for("(Ctrl-D or /exit leaves)");
    terminal.line("hello");
    terminal.wait_for("still here");
    assert_eq!(last_message_text(&server, 0), "hello");
    // Ctrl-D at an empty prompt leaves, with a clean exit.
    terminal.wait_for_prompt();
    terminal.press(&["C-d"]);
    terminal.wait_for(&format!("{EXITED} 0]"));
}

#[test]
fn ctrl_c_cancels_a_slow_answer_and_a_running_command() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push(Reply::Delayed(
        Duration::from_secs(30),
        Box::new(Reply::Turn(Turn::text("too late"))),
    ));
    server.push_turn(Turn::tool(
        "long",
        "bash",
        json!({"command": "touch started.marker && sleep 60"}),
    ));
    server.push_turn(Turn::text("after both"));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    // While the model is slow to answer.
    terminal.line("a slow question");
    wait_for_requests(&server, 1);
    std::thread::sleep(Duration::from_millis(200));
    terminal.press(&["C-c"]);
    terminal.wait_for("(cancelled)");
    // While a command runs (after its approval).
    terminal.line("run the long thing");
    // One key answers: no Enter.
    terminal.wait_for("allow? [y]es");
    terminal.answer(&["y"]);
    let started = Instant::now();
    while !sandbox.project.join("started.marker").exists() {
        assert!(started.elapsed() < WAIT, "the command never started");
        std::thread::sleep(POLL);
    }
    std::thread::sleep(Duration::from_millis(200));
    terminal.press(&["C-c"]);
    let screen = terminal.wait_until("a second (cancelled)", |screen| {
        screen.matches("(cancelled)").count() >= 2
    });
    assert!(!screen.contains("too late"), "{screen}");
    terminal.line("are you there?");
    let screen = terminal.wait_for("after both");
    assert!(!screen.contains(EXITED), "{screen}");
    assert_eq!(last_message_text(&server, 2), "are you there?");
    // At an approval prompt: the command does not run, the turn ends, the chat goes on.
    server.push_turn(Turn::tool(
        "never",
        "bash",
        json!({"command": "touch never.marker"}),
    ));
    server.push_turn(Turn::text("fine, I will not"));
    terminal.line("make a marker");
    terminal.wait_for("touch never.marker");
    // This call's question, not the one above it still on the screen.
    terminal.wait_until("the second question", |screen| {
        screen.matches("allow? [y]es").count() >= 2
    });
    let requests = server.requests().len();
    terminal.press(&["C-c"]);
    terminal.wait_until("a third (cancelled)", |screen| {
        screen.matches("(cancelled)").count() >= 3
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!sandbox.project.join("never.marker").exists());
    // No request went out after the Ctrl-C.
    assert_eq!(server.requests().len(), requests);
    terminal.line("ok?");
    terminal.wait_for("fine, I will not");
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[test]
fn resume_picks_a_session_and_replays_it() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(
        Turn::tool("r1", "read_file", json!({"path": "notes.txt"})).with_text("Reading it."),
    );
    server.push_turn(Turn::text("The notes say one."));
    let first = Terminal::start(&sandbox, &server, &["chat"]);
    first.wait_for("/help for commands");
    first.line("what do the notes say?");
    first.wait_for("The notes say one.");
    first.line("/exit");
    first.wait_for(&format!("{EXITED} 0]"));
    drop(first);
    // `--resume` without an id lists this project's sessions; Enter takes the newest.
    server.push_turn(Turn::text("Yes, still one."));
    let second = Terminal::start(&sandbox, &server, &["chat", "--resume"]);
    let screen = second.wait_for("continue which?");
    assert!(screen.contains("1 turn"), "{screen}");
    assert!(screen.contains("what do the notes say?"), "{screen}");
    second.press(&["Enter"]);
    let screen = second.wait_for_prompt();
    // The conversation so far, before the prompt.
    for shown in [
        "› what do the notes say?",
        "Reading it.",
        "> read_file(notes.txt)",
        "The notes say one.",
    ] {
        assert!(screen.contains(shown), "{shown} missing:\n{screen}");
    }
    second.line("still?");
    second.wait_for("Yes, still one.");
    let sent = server.requests().last().unwrap().body["messages"].to_string();
    assert!(sent.contains("what do the notes say?"), "{sent}");
}

#[test]
fn a_session_with_a_tool_call_and_a_markdown_answer() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("Hello! What shall we do?"));
    server.push_turn(
        Turn::tool("w1", "bash", json!({"command": "wc -l notes.txt"}))
            .and_tool("w2", "bash", json!({"command": "touch second.marker"}))
            .with_text("Let me count the lines."),
    );
    server.push_turn(Turn::text(
        "## Result\n\n`notes.txt` has **one** line:\n\n- counted with `wc -l`\n- nothing else changed\n\n```sh\nwc -l notes.txt\n```\n",
    ));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("hi");
    terminal.wait_for("What shall we do?");
    terminal.line("how many lines has notes.txt?");
    // `y` and Enter out of habit: the Enter is not taken as the answer to the next question.
    terminal.wait_for("allow? [y]es");
    terminal.answer(&["y", "Enter"]);
    terminal.wait_until("the second question", |screen| {
        screen.matches("allow? [y]es").count() == 2
    });
    std::thread::sleep(Duration::from_millis(300));
    let screen = terminal.wait_for("touch second.marker");
    assert!(
        last_line(&screen).starts_with("allow? [y]es"),
        "the second question was answered by the Enter:\n{screen}"
    );
    terminal.answer(&["y"]);
    terminal.wait_for("nothing else changed");
    assert!(sandbox.project.join("second.marker").exists());
    let screen = terminal.wait_for_prompt();
    if let Some(path) = std::env::var_os("SKILLET_TERMINAL_CAPTURE") {
        std::fs::write(Path::new(&path), format!("{}\n", screen.trim_end())).unwrap();
    }
    // The approval question starts on a line of its own, not after the streamed text.
    assert!(
        screen
            .lines()
            .any(|line| line.starts_with("bash wants to run:")),
        "{screen}"
    );
    // The call is shown as the call, then its result.
    assert!(screen.contains("> bash(wc -l notes.txt)"), "{screen}");
    // Markdown is rendered: no heading marks, emphasis marks, list dashes or fences left.
    assert!(
        screen.lines().any(|line| line.trim() == "Result"),
        "{screen}"
    );
    assert!(!screen.contains("## Result"), "{screen}");
    assert!(!screen.contains("**one**"), "{screen}");
    assert!(!screen.contains("- counted"), "{screen}");
    assert!(screen.contains("counted with wc -l"), "{screen}");
    assert!(!screen.contains("```"), "{screen}");
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[test]
fn the_spinner_shows_while_the_model_is_awaited_and_goes() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push(Reply::Delayed(
        Duration::from_secs(2),
        Box::new(Reply::Turn(Turn::text("worth the wait"))),
    ));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("take your time");
    terminal.wait_until("the spinner (`thinking… 0s`)", |screen| {
        screen
            .lines()
            .filter_map(|line| line.split_once("thinking… ").map(|(_, rest)| rest))
            .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()) && rest.contains('s'))
    });
    terminal.wait_for("worth the wait");
    let screen = terminal.wait_for_prompt();
    assert!(
        !screen.contains("thinking…") && !screen.contains("writing…"),
        "the spinner was left behind:\n{screen}"
    );
}

#[test]
fn compact_summarises_on_demand_and_says_how_much_it_freed() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("Hello, Ada."));
    server.push_turn(Turn::text(
        "The user, Ada, said hello; nothing else happened.",
    ));
    server.push_turn(Turn::text("Still Ada."));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    // Nothing to compact yet.
    terminal.line("/compact");
    terminal.wait_for("nothing to compact");
    terminal.line("hi, I am Ada");
    terminal.wait_for("Hello, Ada.");
    terminal.line("/compact keep my name");
    let screen = terminal.wait_for("compacted 2 messages into a summary: about");
    assert!(screen.contains("tokens before"), "{screen}");
    let asked = last_message_text(&server, 1);
    assert!(asked.contains("keep my name"), "{asked}");
    terminal.line("who am I?");
    terminal.wait_for("Still Ada.");
    // The next turn starts from the summary.
    let messages = server.requests()[2].body["messages"].to_string();
    assert!(messages.contains("nothing else happened"), "{messages}");
    assert!(!messages.contains("Hello, Ada."), "{messages}");
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[test]
fn instructions_are_listed_at_the_start_and_init_asks_for_agents_md() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    std::fs::write(
        sandbox.project.join("AGENTS.md"),
        "Run `make test` before you finish.\n",
    )
    .unwrap();
    let server = MockServer::start();
    server.push_turn(Turn::text("I will look around first."));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.wait_for("instructions: AGENTS.md");
    terminal.line("/init");
    terminal.wait_for("I will look around first.");
    let sent = last_message_text(&server, 0);
    assert!(sent.starts_with("Write the project's AGENTS.md"), "{sent}");
    assert!(sent.contains("improve it"), "{sent}");
    let system = server.requests()[0].body["system"].to_string();
    assert!(system.contains("make test"), "{system}");
}

#[test]
fn sessions_lists_the_others_and_continues_the_one_picked() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("About the weather: sunny."));
    server.push_turn(Turn::text("About lunch: soup."));
    server.push_turn(Turn::text("Back to the weather."));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.wait_for("/help for commands");
    terminal.line("/sessions");
    terminal.wait_for("no other session of this project to continue");
    terminal.line("what is the weather?");
    terminal.wait_for("About the weather: sunny.");
    terminal.line("/clear");
    terminal.wait_for("new session");
    terminal.line("what is for lunch?");
    terminal.wait_for("About lunch: soup.");
    // The current session is not offered; the other one is.
    terminal.line("/sessions");
    let screen = terminal.wait_for("continue which?");
    let listed: Vec<&str> = screen
        .lines()
        .skip_while(|line| !line.contains("sessions of this project"))
        .skip(1)
        .take_while(|line| !line.contains("continue which?"))
        .collect();
    assert_eq!(listed.len(), 1, "{screen}");
    assert!(listed[0].contains("what is the weather?"), "{screen}");
    terminal.type_text("1");
    terminal.press(&["Enter"]);
    terminal.wait_for("resumed session");
    terminal.line("and now?");
    terminal.wait_for("Back to the weather.");
    let sent = server.requests()[2].body["messages"].to_string();
    assert!(sent.contains("what is the weather?"), "{sent}");
    assert!(!sent.contains("lunch"), "{sent}");
}

#[test]
fn a_prompt_argument_starts_the_chat_and_continue_takes_it_up() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("Hi there."));
    server.push_turn(Turn::text("Going on."));
    let first = Terminal::start(&sandbox, &server, &["say hi"]);
    // The first message is shown as if typed, answered, and the chat goes on.
    first.wait_for("› say hi");
    first.wait_for("Hi there.");
    first.wait_for_prompt();
    assert_eq!(last_message_text(&server, 0), "say hi");
    first.line("/exit");
    first.wait_for(&format!("{EXITED} 0]"));
    drop(first);
    // `--continue` takes up this project's latest without asking.
    let second = Terminal::start(&sandbox, &server, &["--continue"]);
    let screen = second.wait_for_prompt();
    assert!(!screen.contains("continue which?"), "{screen}");
    assert!(
        screen.contains("› say hi") && screen.contains("Hi there."),
        "{screen}"
    );
    second.line("and?");
    second.wait_for("Going on.");
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(sent.contains("say hi"), "{sent}");
}

#[test]
fn chat_asks_to_trust_a_project_whose_skills_act_and_then_its_grants_need_no_prompt() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    acting_skill(&sandbox, "Bash(touch:*) Bash(echo:*)");
    let script = |server: &MockServer, file: &str| {
        server.push_turn(Turn::tool("l", "load_skill", json!({"name": "marker"})));
        server.push_turn(Turn::tool(
            "t",
            "bash",
            json!({"command": format!("touch {file}")}),
        ));
        server.push_turn(Turn::text("marked"));
    };
    // Asked on first use, with what trust unlocks; declined.
    let server = MockServer::start();
    script(&server, "declined.marker");
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    let screen = terminal.wait_for("trust this project? [y]es / [n]o");
    assert!(
        screen.contains("runs:\n      echo dynamic-context-ran"),
        "{screen}"
    );
    assert!(
        screen.contains("allows without asking: Bash(touch:*), Bash(echo:*)"),
        "{screen}"
    );
    terminal.answer(&["n", "Enter"]);
    terminal.line("leave a marker");
    // Untrusted: the command is a note, and the grant grants nothing: asked.
    terminal.wait_for("touch declined.marker");
    terminal.wait_for("allow? [y]es");
    terminal.answer(&["n", "Enter"]);
    terminal.wait_for("marked");
    assert!(!sandbox.project.join("declined.marker").exists());
    let loaded = server.requests()[1].body["messages"].to_string();
    assert!(
        loaded.contains("[not run: `echo dynamic-context-ran`"),
        "{loaded}"
    );
    terminal.line("/exit");
    terminal.wait_for(&format!("{EXITED} 0]"));
    drop(terminal);
    // Declined is remembered: not asked again, said. Trusted now: the grant needs no prompt.
    let server = MockServer::start();
    script(&server, "trusted.marker");
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    let screen = terminal.wait_for("/help for commands");
    assert!(
        screen.contains("you declined to trust this project"),
        "{screen}"
    );
    assert!(!screen.contains("trust this project?"), "{screen}");
    terminal.line("/exit");
    terminal.wait_for(&format!("{EXITED} 0]"));
    drop(terminal);
    let trusted = Command::new(env!("CARGO_BIN_EXE_skillet"))
        .args(["trust", "--yes"])
        .current_dir(&sandbox.project)
        .env_clear()
        .envs(common::environment(&sandbox, None))
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.line("leave a marker");
    let screen = terminal.wait_for("marked");
    assert!(!screen.contains("allow? [y]es"), "{screen}");
    assert!(sandbox.project.join("trusted.marker").exists());
    let loaded = server.requests()[1].body["messages"].to_string();
    assert!(loaded.contains("Today: dynamic-context-ran"), "{loaded}");
    assert_eq!(server.rejections(), Vec::<String>::new());
}

#[test]
fn a_skill_written_during_a_chat_is_announced_with_the_next_message() {
    if tmux_missing() {
        return;
    }
    let sandbox = sandbox();
    let server = MockServer::start();
    server.push_turn(Turn::text("first answer"));
    server.push_turn(Turn::text("second answer"));
    let terminal = Terminal::start(&sandbox, &server, &["chat"]);
    terminal.line("hi");
    terminal.wait_for("first answer");
    write_skill(
        &sandbox.project.join(".agents/skills"),
        "fresh",
        "---\nname: fresh\ndescription: Brand new steps\n---\nDo the new thing.\n",
    );
    // The watcher waits for the writes to settle (300 ms), then marks the skills changed.
    std::thread::sleep(Duration::from_millis(1200));
    terminal.line("and now?");
    let screen = terminal.wait_for("second answer");
    assert!(
        screen.contains("note: skills changed: added fresh"),
        "{screen}"
    );
    let requests = server.requests();
    assert_eq!(requests[1].body["system"], requests[0].body["system"]);
    assert_eq!(requests[1].body["tools"], requests[0].body["tools"]);
    let sent = requests[1].body["messages"].to_string();
    assert!(sent.contains("- added: fresh: Brand new steps"), "{sent}");
    // Typed by hand at the next prompt, it completes and runs as a skill (a Tab typed while
    // the turn still ends is typed ahead, and completes nothing).
    terminal.wait_for_prompt();
    terminal.type_text("/fre");
    terminal.press(&["Tab"]);
    terminal.wait_for("/fresh");
}
