//! Tests of [`super`].

use super::*;
use pretty_assertions::assert_eq;

fn plain(text: &str) -> String {
    let mut markdown = Markdown::new(Style::plain());
    let mut out = markdown.push(text);
    out.push_str(&markdown.finish());
    out
}

fn coloured(text: &str) -> String {
    let mut markdown = Markdown::new(Style::new(true));
    let mut out = markdown.push(text);
    out.push_str(&markdown.finish());
    out
}

#[test]
fn an_endless_table_or_line_is_not_held_back_without_bound() {
    let mut markdown = Markdown::new(Style::plain());
    let mut shown = markdown.push("| a | b |\n|---|---|\n");
    for row in 0..MAX_HELD_TABLE_ROWS + 10 {
        shown.push_str(&markdown.push(&format!("| {row} | x |\n")));
    }
    assert!(shown.contains("| 0 ") || shown.contains(" 0 "), "{shown}");
    let mut markdown = Markdown::new(Style::plain());
    let long = "é".repeat(MAX_HELD_LINE_BYTES);
    let shown = markdown.push(&long);
    assert!(!shown.is_empty() && shown.len() <= long.len() + 1);
}

#[test]
fn headings_are_bold_and_keep_their_marks_without_colour() {
    assert_eq!(
        coloured("# Plan\n## Step *one*\n"),
        "\u{1b}[1;4mPlan\u{1b}[0m\n\u{1b}[1mStep \u{1b}[0m\u{1b}[1;3mone\u{1b}[0m\n"
    );
    assert_eq!(plain("# Plan\n### Three ###\n"), "# Plan\n### Three\n");
    // Not headings: no space after the marks, or seven of them.
    assert_eq!(plain("#hashtag\n####### x\n"), "#hashtag\n####### x\n");
}

#[test]
fn inline_styles_code_and_links() {
    assert_eq!(
        coloured("run `cargo test` **now**, ~~not~~ *later*"),
        "run \u{1b}[36mcargo test\u{1b}[0m \u{1b}[1mnow\u{1b}[0m, \u{1b}[9mnot\u{1b}[0m \u{1b}[3mlater\u{1b}[0m\n"
    );
    assert_eq!(
        plain("run `cargo test` **now**, *later*"),
        "run `cargo test` now, later\n"
    );
    assert_eq!(
        plain("see [the docs](https://x.dev/a) or <https://y.dev>"),
        "see the docs (https://x.dev/a) or https://y.dev\n"
    );
    assert_eq!(plain("![logo](img.png)"), "image: logo (img.png)\n");
    // Emphasis markers that are not emphasis stay.
    assert_eq!(
        plain("2 * 3 * 4 and snake_case_name"),
        "2 * 3 * 4 and snake_case_name\n"
    );
}

#[test]
fn lists_get_bullets_numbers_and_nesting() {
    let text = "- one\n- two\n  - nested\n    - deeper\n  - back\n- three\n\n1. first\n2) second\n   - under\n";
    assert_eq!(
        plain(text),
        "• one\n• two\n  ◦ nested\n    ▪ deeper\n  ◦ back\n• three\n\n1. first\n2) second\n  ◦ under\n"
    );
    assert_eq!(plain("- [ ] todo\n- [x] done\n"), "• ☐ todo\n• ☑ done\n");
    // A continuation line goes under its item's text; a plain line ends the list.
    assert_eq!(
        plain("- item\n  more of it\nafter\n  indented\n"),
        "• item\n  more of it\nafter\n  indented\n"
    );
    // Bold at the start of a line is not a bullet.
    assert_eq!(plain("**Note**: x\n"), "Note: x\n");
}

#[test]
fn quotes_and_rules() {
    assert_eq!(
        plain("> said\n> > twice\n---\n"),
        format!("│ said\n│ │ twice\n{}\n", "─".repeat(RULE_WIDTH))
    );
}

#[test]
fn code_fences_are_set_apart_and_shown_line_by_line() {
    let mut markdown = Markdown::new(Style::plain());
    assert_eq!(
        markdown.push("Here:\n```rust\nfn main() {\n"),
        "Here:\n╭─ rust\n│ fn main() {\n"
    );
    // Markdown inside code is code.
    assert_eq!(
        markdown.push("\t# not a heading **x**\n}\n"),
        "│     # not a heading **x**\n│ }\n"
    );
    assert_eq!(markdown.push("```\nafter\n"), "╰─\nafter\n");
    assert_eq!(markdown.finish(), "");
    // A longer fence holds a shorter one; tildes work too.
    assert_eq!(
        plain("````md\n```\ninner\n```\n````\n~~~\nx\n~~~\n"),
        "╭─ md\n│ ```\n│ inner\n│ ```\n╰─\n╭─\n│ x\n╰─\n"
    );
    // Inline triple backticks are not a fence.
    assert_eq!(plain("```x``` y\n"), "`x` y\n");
}

#[test]
fn an_unclosed_fence_is_closed_at_the_end_of_the_answer() {
    let mut markdown = Markdown::new(Style::plain());
    assert_eq!(markdown.push("```sh\nls -la"), "╭─ sh\n");
    assert_eq!(markdown.finish(), "│ ls -la\n╰─\n");
    // The renderer starts afresh after finish.
    assert_eq!(markdown.push("# x\n"), "# x\n");
}

#[test]
fn fenced_code_inside_a_list_keeps_its_indentation() {
    assert_eq!(
        plain("1. run:\n   ```\n   make\n   ```\n"),
        "1. run:\n   ╭─\n   │ make\n   ╰─\n"
    );
}

#[test]
fn tables_are_aligned_by_display_width() {
    let text =
        "| name | qty | note |\n|:-----|----:|:----:|\n| 苹果 | 3 | **ok** |\n| pear | 12 |\n";
    assert_eq!(
        plain(text),
        "┌──────┬─────┬──────┐\n\
         │ name │ qty │ note │\n\
         ├──────┼─────┼──────┤\n\
         │ 苹果 │   3 │  ok  │\n\
         │ pear │  12 │      │\n\
         └──────┴─────┴──────┘\n"
    );
    // A line with a pipe that is not followed by a delimiter row is text.
    assert_eq!(plain("a | b\nnext\n"), "a | b\nnext\n");
    // Escaped pipes stay in their cell; the table ends at a line without a pipe.
    assert_eq!(
        plain("|a|\n|-|\n|x \\| y|\nafter\n"),
        "┌───────┐\n│ a     │\n├───────┤\n│ x | y │\n└───────┘\nafter\n"
    );
}

#[test]
fn a_table_wider_than_the_terminal_is_not_boxed() {
    let text = "| key | value |\n|---|---|\n| a | a long value |\n";
    let mut markdown = Markdown::new(Style::plain());
    markdown.set_width(Some(21));
    let mut out = markdown.push(text);
    out.push_str(&markdown.finish());
    assert_eq!(out, "key │ value\na │ a long value\n");
    // One column more and it fits: `│ a   │ a long value │` is 22 wide.
    markdown.set_width(Some(22));
    let mut out = markdown.push(text);
    out.push_str(&markdown.finish());
    assert!(out.starts_with("┌─────┬──────────────┐\n"), "{out}");
    assert!(out.lines().all(|line| line.chars().count() <= 22), "{out}");
}

#[test]
fn a_table_is_held_until_it_ends() {
    let mut markdown = Markdown::new(Style::plain());
    assert_eq!(markdown.push("| a |\n"), "");
    assert_eq!(markdown.push("|---|\n| 1 |\n"), "");
    assert_eq!(markdown.push("\n"), "┌───┐\n│ a │\n├───┤\n│ 1 │\n└───┘\n\n");
    // At the end of the answer too.
    assert_eq!(markdown.push("| b |\n|---|"), "");
    assert_eq!(markdown.finish(), "┌───┐\n│ b │\n├───┤\n└───┘\n");
}

#[test]
fn the_model_cannot_write_escape_sequences() {
    let hostile = "# \u{1b}[2J title\n- \u{1b}]0;pwned\u{7}\n`\u{1b}[31m`\n&#27;[31m &#x9b;31m\n| \u{1b}[8m |\n|---|\n```\n\u{1b}[1A\r\n```\n\u{202e}txt\n";
    for style in [Style::plain(), Style::new(true)] {
        let mut markdown = Markdown::new(style);
        let mut out = markdown.push(hostile);
        out.push_str(&markdown.finish());
        // With colour, the only escapes are the renderer's own SGR sequences.
        let without_sgr = strip_sgr(&out);
        assert!(
            !without_sgr.contains(['\u{1b}', '\u{7}', '\u{9b}', '\r', '\u{202e}']),
            "{out:?}"
        );
        assert!(without_sgr.contains("\\e[2J title"), "{without_sgr}");
        assert!(without_sgr.contains("\\e[31m \\u{9b}31m"), "{without_sgr}");
    }
}

#[test]
fn any_split_into_chunks_renders_the_same_as_the_whole() {
    let text = "# Title\r\nSome **bold** and `code` text with é and 语言.\n\n- a\n  - b\n\n```rs\nlet x = 1;\n```\n| h | i |\n|---|---|\n| 1 | 2 |\nend without newline";
    for style in [Style::plain(), Style::new(true)] {
        let whole = {
            let mut markdown = Markdown::new(style);
            let mut out = markdown.push(text);
            out.push_str(&markdown.finish());
            out
        };
        let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
        // Every single split point, then splits into many small pieces.
        for &cut in &boundaries {
            let mut markdown = Markdown::new(style);
            let mut out = markdown.push(&text[..cut]);
            out.push_str(&markdown.push(&text[cut..]));
            out.push_str(&markdown.finish());
            assert_eq!(out, whole, "split at {cut}");
        }
        for step in 1..8 {
            let mut markdown = Markdown::new(style);
            let mut out = String::new();
            let mut start = 0;
            for &end in boundaries.iter().step_by(step) {
                out.push_str(&markdown.push(&text[start..end]));
                start = end;
            }
            out.push_str(&markdown.push(&text[start..]));
            out.push_str(&markdown.finish());
            assert_eq!(out, whole, "pieces of {step}");
        }
    }
}

/// The text without SGR sequences (`ESC [ digits ; m`), which only the style adds.
fn strip_sgr(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("\u{1b}[") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[end..].starts_with('m') {
            rest = &after[end + 1..];
        } else {
            out.push('\u{1b}');
            rest = &rest[start + 1..];
        }
    }
    out.push_str(rest);
    out
}
