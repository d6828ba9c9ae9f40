//! The screen's tests: piped and on a fake terminal.
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::ProgressDrawTarget;
use serde_json::json;

use super::super::fake_term::FakeTerm;
use super::super::spinner::NoPadding;
use super::*;

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Both streams piped: no colour, no spinner, the answer as it comes.
fn piped() -> (Screen, Capture, Capture) {
    let (out, err) = (Capture::default(), Capture::default());
    let screen = Screen::new(Output {
        out: Box::new(out.clone()),
        err: Box::new(err.clone()),
        out_style: Style::plain(),
        err_style: Style::plain(),
        markdown: false,
        thinking: false,
        spinner: Spinner::disabled(),
        columns: || None,
        rows: || None,
    });
    (screen, out, err)
}

/// Both streams on one terminal, without colour so the test reads the text, and a spinner
/// whose clock stands at 2 s.
fn terminal() -> (Screen, FakeTerm) {
    let term = FakeTerm::new(50);
    let target = term.clone();
    let spinner = Spinner::new(
        Box::new(move || ProgressDrawTarget::term_like(Box::new(NoPadding(target.clone())))),
        None,
        Style::plain(),
    )
    .with_clock(|_| Duration::from_secs(2));
    let screen = Screen::new(Output {
        out: Box::new(term.clone()),
        err: Box::new(term.clone()),
        out_style: Style::plain(),
        err_style: Style::plain(),
        markdown: true,
        thinking: true,
        spinner,
        columns: || Some(50),
        rows: || Some(20),
    });
    (screen, term)
}

#[test]
fn piped_the_answer_is_as_written_and_each_call_shows_before_its_result() {
    let (screen, out, err) = piped();
    screen.begin_turn();
    screen.text("Removing **it**");
    screen.tool_call("bash", &json!({"command": "rm -rf .git"}), 0);
    screen.tool_result("", false, 0);
    screen.text("Done.");
    screen.end_turn();
    screen.end_turn();
    assert_eq!(out.text(), "Removing **it**\nDone.\n");
    assert_eq!(err.text(), "> bash(rm -rf .git)\n  ⎿ (no output)\n");
}

#[test]
fn subagent_calls_are_indented_and_notices_end_the_open_line() {
    let (screen, out, err) = piped();
    screen.begin_turn();
    screen.tool_call("task", &json!({"description": "look", "prompt": "p"}), 0);
    screen.tool_call("read_file", &json!({"path": "notes.txt"}), 1);
    screen.tool_result("     1\tone\n", false, 1);
    screen.notice("note: read\u{1b}[2J", Attrs::NONE, 1);
    screen.tool_result("one", false, 0);
    screen.text("So");
    screen.notice("retrying (attempt 2) in 5 ms: overloaded", Attrs::YELLOW, 0);
    screen.text(" it says one.");
    screen.end_turn();
    assert_eq!(
        err.text(),
        "> task(look)\n    > read_file(notes.txt)\n      ⎿      1  one\n    note: read\\e[2J\n  ⎿ one\nretrying (attempt 2) in 5 ms: overloaded\n"
    );
    assert_eq!(out.text(), "So\n it says one.\n");
}

#[test]
fn a_prompt_starts_on_its_own_line() {
    let (screen, out, err) = piped();
    screen.begin_turn();
    screen.text("Let me run it:");
    screen.pause();
    screen.ask("allow? ");
    screen.resume();
    screen.end_turn();
    assert_eq!(out.text(), "Let me run it:\n");
    assert_eq!(err.text(), "allow? ");
}

#[test]
fn on_a_terminal_the_spinner_never_mixes_with_text_and_goes_at_the_end() {
    let (screen, term) = terminal();
    screen.begin_turn();
    assert_eq!(term.lines(), ["⠴ thinking… 2s"]);
    screen.text("# Plan\n- one");
    // The line still coming shows as it comes, the spinner under it.
    assert_eq!(
        term.lines(),
        ["# Plan", "• one", "⠴ writing… 2s · ↓ 3 tokens"]
    );
    screen.usage(40);
    // The answer's last line is shown, then a blank line sets the call apart.
    screen.tool_call("bash", &json!({"command": "git status\ngit log"}), 0);
    let call = ["# Plan", "• one", "", "> bash(git status …)"];
    assert_eq!(
        term.lines(),
        [&call[..], &["⠴ running bash… 2s · ↓ 40 tokens"]].concat()
    );
    // An approval: the spinner goes, the question is on its own line, then it comes back.
    screen.pause();
    screen.ask("allow? [y]es / [n]o: ");
    assert_eq!(
        term.lines(),
        [&call[..], &["allow? [y]es / [n]o:"]].concat()
    );
    term.feed("y\n");
    screen.resume();
    screen.tool_result("On branch main\n", false, 0);
    screen.tool_call("read_file", &json!({"path": "a.rs"}), 0);
    screen.tool_result("", false, 0);
    screen.text("All clean.");
    screen.end_turn();
    assert_eq!(
        term.lines(),
        [
            &call[..],
            &[
                "allow? [y]es / [n]o: y",
                "  ⎿ On branch main",
                "> read_file(a.rs)",
                "  ⎿ (no output)",
                "",
                "All clean."
            ]
        ]
        .concat()
    );
    assert_eq!(term.cursor(), (10, 0));
}

#[test]
fn calls_and_results_fit_the_terminal() {
    let (screen, term) = terminal();
    screen.begin_turn();
    let command = format!("echo {}", "word ".repeat(30));
    screen.tool_call("bash", &json!({ "command": command }), 1);
    screen.tool_result(&command, false, 1);
    screen.end_turn();
    let lines = term.lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("    > bash(echo word"), "{lines:?}");
    assert!(
        lines[0].ends_with("…)") && lines[1].ends_with('…'),
        "{lines:?}"
    );
    assert!(
        lines.iter().all(|line| line.chars().count() == 50),
        "{lines:?}"
    );
}

#[test]
fn a_paragraph_shows_as_it_streams_wrapped_at_words_and_is_laid_out_again_when_it_ends() {
    let (screen, term) = terminal();
    screen.begin_turn();
    let paragraph = "Streaming text should be visible while it arrives, and **whether** \
                     a line is complete or not, no word is ever broken at the edge of the \
                     terminal, however narrow it is.";
    let mut shown_before_the_end = false;
    for chunk in paragraph.as_bytes().chunks(7) {
        screen.text(std::str::from_utf8(chunk).unwrap());
        let lines = term.lines();
        let (spinner, text) = lines.split_last().unwrap();
        assert!(spinner.contains("writing"), "{lines:?}");
        shown_before_the_end |= text.concat().contains("visible");
        for line in text {
            assert!(line.chars().count() <= 50, "{lines:?}");
        }
    }
    assert!(shown_before_the_end);
    screen.text("\n");
    screen.end_turn();
    let lines = term.lines();
    // Every word whole, on lines that fit; `**` rendered once the line was complete.
    let words: Vec<String> = lines
        .iter()
        .flat_map(|line| line.split_whitespace().map(str::to_string))
        .collect();
    let expected: Vec<String> = paragraph
        .replace("**", "")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert_eq!(words, expected, "{lines:?}");
    assert!(lines.len() >= 3, "{lines:?}");
    assert!(
        lines.iter().all(|line| line.chars().count() <= 50),
        "{lines:?}"
    );
}

#[test]
fn a_message_written_around_the_screen_goes_above_the_line_still_coming() {
    let (screen, term) = terminal();
    screen.begin_turn();
    screen.text("Half a line");
    screen.suspend(|| term.clone().feed("note: from elsewhere\n"));
    screen.text(" and the rest.\n");
    screen.end_turn();
    assert_eq!(
        term.lines(),
        ["note: from elsewhere", "Half a line and the rest."]
    );
}

#[test]
fn a_notice_while_a_line_streams_goes_above_it() {
    let (screen, term) = terminal();
    screen.begin_turn();
    screen.text("Half a line");
    screen.notice("retrying (attempt 2)", Attrs::YELLOW, 0);
    screen.text(" and the rest.\n");
    screen.end_turn();
    assert_eq!(
        term.lines(),
        ["retrying (attempt 2)", "Half a line and the rest."]
    );
}

#[test]
fn cancelling_erases_the_spinner_and_keeps_what_was_written() {
    let (screen, term) = terminal();
    screen.begin_turn();
    screen.text("partial li");
    // The terminal echoes Ctrl-C where the cursor is: after the spinner's text.
    term.feed("^C");
    assert_eq!(term.lines(), ["partial li", "⠴ writing… 2s · ↓ 2 tokens^C"]);
    screen.end_turn();
    assert_eq!(term.lines(), ["partial li"]);
    assert_eq!(term.cursor(), (1, 0));
}

#[test]
fn thinking_shows_dimmed_before_the_answer_and_apart_from_it() {
    let (screen, term) = terminal();
    screen.begin_turn();
    screen.thinking("The user wants the notes read; ");
    screen.thinking("I should read them before I answer anything.");
    // The whole rows show while it streams; the spinner says thinking.
    assert_eq!(
        term.lines(),
        [
            "✻ thinking",
            "  The user wants the notes read; I should read",
            "⠴ thinking… 2s · ↓ 18 tokens"
        ]
    );
    screen.tool_call("read_file", &json!({"path": "notes.txt"}), 0);
    screen.tool_result("one", false, 0);
    screen.thinking("Done.");
    screen.text("They say one.");
    screen.end_turn();
    assert_eq!(
        term.lines(),
        [
            "✻ thinking",
            "  The user wants the notes read; I should read",
            "  them before I answer anything.",
            "",
            "> read_file(notes.txt)",
            "  ⎿ one",
            "",
            "✻ thinking",
            "  Done.",
            "",
            "They say one.",
        ]
    );
}

#[test]
fn piped_thinking_is_counted_not_shown() {
    let (screen, out, err) = piped();
    screen.begin_turn();
    screen.thinking("secret plan");
    screen.text("Hi.");
    screen.end_turn();
    assert_eq!(out.text(), "Hi.\n");
    assert_eq!(err.text(), "");
}
