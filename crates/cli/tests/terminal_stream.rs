//! The answer in a real terminal (tmux), as a daily user of Claude Code or Codex expects it: text
//! shown as it arrives, not held until its line ends, and wrapped at words, at 60 and at 120
//! columns.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::collections::HashSet;

use common::terminal::{Terminal, sandbox, tmux_missing, wait_for_requests};
use skillet_test_support::{MockServer, Reply, Turn};

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
