//! A tool call as one line (`bash(git status)`), and the first lines of its result.

use serde_json::Value;
use unicode_width::UnicodeWidthChar as _;
use unicode_width::UnicodeWidthStr as _;

use super::style::{Attrs, Style};
use skillet_skills::terminal_safe;

/// The widest a call's main argument is shown (display columns), then cut with `…`.
pub const CALL_MAX_WIDTH: usize = 72;
/// Lines of a result shown under its call; the rest is counted (`… +12 lines`).
pub const RESULT_LINES: usize = 3;
/// The widest a result line is shown (display columns), then cut with `…`; narrower on a
/// narrower terminal.
pub const RESULT_MAX_WIDTH: usize = 120;
/// Tab stops in results.
const TAB_WIDTH: usize = 4;
/// Shown for an empty result.
pub const NO_OUTPUT: &str = "(no output)";

/// `bash(git status)`: the tool's name (bold) and its main argument (the command, path,
/// pattern, skill, …), each made safe, the argument cut to `width` columns. A command of
/// several lines shows its first line then ` …`. The live view puts it after `> `.
pub fn call_summary(name: &str, input: &Value, width: usize, style: Style) -> String {
    let argument = main_argument(name, input, width);
    let name = terminal_safe(name, false);
    format!("{}({argument})", style.paint(Attrs::BOLD, &name))
}

fn main_argument(name: &str, input: &Value, width: usize) -> String {
    let field = |key: &str| input.get(key).and_then(Value::as_str);
    let text = match name {
        "bash" => field("command").map(str::to_string),
        "read_file" | "write_file" | "edit_file" => field("path").map(str::to_string),
        "glob" => field("pattern").map(str::to_string),
        "grep" => field("pattern").map(|pattern| match field("path") {
            Some(path) => format!("{} in {}", first_line(pattern), first_line(path)),
            None => pattern.to_string(),
        }),
        "load_skill" => field("name").map(str::to_string),
        "search_skills" => field("query").map(str::to_string),
        "task" => field("description")
            .or_else(|| field("prompt"))
            .map(str::to_string),
        "todo_write" => input.get("items").and_then(Value::as_array).map(|items| {
            let count = items.len();
            format!("{count} item{}", if count == 1 { "" } else { "s" })
        }),
        // Another tool: its first text argument.
        _ => input
            .as_object()
            .and_then(|object| object.values().find_map(Value::as_str))
            .map(str::to_string),
    };
    text.map_or_else(String::new, |text| one_line(&text, width))
}

fn first_line(text: &str) -> &str {
    text.trim().lines().next().unwrap_or("")
}

/// The first line of `text` (with ` …` when more lines follow), made safe (a carriage return
/// or an escape shows as `\r`, `\e`), cut to `width` columns.
pub fn one_line(text: &str, width: usize) -> String {
    let text = text.trim();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").trim_end();
    let more = lines.any(|line| !line.trim().is_empty());
    let safe = terminal_safe(first, false);
    let mut shown = cut(&safe, width);
    if more && !shown.ends_with('…') {
        shown.push_str(" …");
    }
    shown
}

/// `text` cut to `width` display columns, ending in `…` when cut.
pub fn cut(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// The first [`RESULT_LINES`] lines of a result that are not blank, tabs expanded, made safe,
/// each cut to `width` columns, then `… +N lines` for the lines after them (blank lines at the
/// end not counted); or [`NO_OUTPUT`].
pub fn result_lines(content: &str, width: usize) -> Vec<String> {
    let lines: Vec<&str> = content.lines().collect();
    let Some(end) = lines.iter().rposition(|line| !line.trim().is_empty()) else {
        return vec![NO_OUTPUT.to_string()];
    };
    let lines = &lines[..=end];
    let mut shown = Vec::new();
    let mut last = 0;
    for (index, line) in lines.iter().enumerate() {
        if shown.len() == RESULT_LINES {
            break;
        }
        if !line.trim().is_empty() {
            shown.push(cut(
                &terminal_safe(&expand_tabs(line.trim_end()), false),
                width,
            ));
            last = index;
        }
    }
    let rest = lines.len() - 1 - last;
    if rest > 0 {
        shown.push(format!(
            "… +{rest} line{}",
            if rest == 1 { "" } else { "s" }
        ));
    }
    shown
}

fn expand_tabs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut column = 0;
    for c in text.chars() {
        if c == '\t' {
            let spaces = TAB_WIDTH - column % TAB_WIDTH;
            out.push_str(&" ".repeat(spaces));
            column += spaces;
        } else {
            out.push(c);
            column += c.width().unwrap_or(0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary(name: &str, input: &Value) -> String {
        call_summary(name, input, CALL_MAX_WIDTH, Style::plain())
    }

    #[test]
    fn each_tool_shows_its_main_argument() {
        assert_eq!(
            summary("bash", &json!({"command": "git status"})),
            "bash(git status)"
        );
        assert_eq!(
            summary("read_file", &json!({"path": "src/main.rs", "offset": 3})),
            "read_file(src/main.rs)"
        );
        assert_eq!(
            summary(
                "write_file",
                &json!({"path": "notes.txt", "content": "x\ny"})
            ),
            "write_file(notes.txt)"
        );
        assert_eq!(
            summary(
                "edit_file",
                &json!({"path": "a.rs", "old_text": "a", "new_text": "b"})
            ),
            "edit_file(a.rs)"
        );
        assert_eq!(
            summary("glob", &json!({"pattern": "**/*.rs"})),
            "glob(**/*.rs)"
        );
        assert_eq!(summary("grep", &json!({"pattern": "TODO"})), "grep(TODO)");
        assert_eq!(
            summary("grep", &json!({"pattern": "fn main", "path": "src"})),
            "grep(fn main in src)"
        );
        assert_eq!(
            summary("load_skill", &json!({"name": "pdf"})),
            "load_skill(pdf)"
        );
        assert_eq!(
            summary("search_skills", &json!({"query": "fill forms"})),
            "search_skills(fill forms)"
        );
        assert_eq!(
            summary(
                "task",
                &json!({"description": "look around", "prompt": "long"})
            ),
            "task(look around)"
        );
        assert_eq!(
            summary(
                "todo_write",
                &json!({"items": [{"content": "a", "status": "pending"}]})
            ),
            "todo_write(1 item)"
        );
        assert_eq!(
            summary("mcp_fetch", &json!({"limit": 3, "url": "https://x.dev"})),
            "mcp_fetch(https://x.dev)"
        );
        // Arguments the model got wrong still give a line.
        assert_eq!(summary("bash", &json!({})), "bash()");
        assert_eq!(summary("read_file", &json!("oops")), "read_file()");
    }

    #[test]
    fn long_and_multi_line_commands_are_cut() {
        let long = format!("echo {}", "x".repeat(200));
        let shown = summary("bash", &json!({"command": long}));
        assert_eq!(shown.chars().count(), "bash()".len() + CALL_MAX_WIDTH);
        assert!(shown.ends_with("x…)"), "{shown}");
        assert_eq!(
            summary("bash", &json!({"command": "cd src\nrm -rf build\n"})),
            "bash(cd src …)"
        );
        // Wide characters count two columns.
        assert_eq!(cut("语言语言", 5), "语言…");
        assert_eq!(cut("short", 5), "short");
    }

    #[test]
    fn what_a_command_would_draw_is_shown_not_done() {
        assert_eq!(
            summary("bash", &json!({"command": "echo safe\r\u{1b}[2Krm -rf ~"})),
            "bash(echo safe\\r\\e[2Krm -rf ~)"
        );
        assert_eq!(summary("bash\u{1b}[2J", &json!({})), "bash\\e[2J()");
    }

    #[test]
    fn with_colour_only_the_name_is_bold() {
        assert_eq!(
            call_summary(
                "bash",
                &json!({"command": "git status"}),
                CALL_MAX_WIDTH,
                Style::new(true)
            ),
            "\u{1b}[1mbash\u{1b}[0m(git status)"
        );
    }

    #[test]
    fn results_show_their_first_lines() {
        assert_eq!(result_lines("", RESULT_MAX_WIDTH), ["(no output)"]);
        assert_eq!(result_lines("\n  \n", RESULT_MAX_WIDTH), ["(no output)"]);
        assert_eq!(result_lines("\none\n\n", RESULT_MAX_WIDTH), ["one"]);
        assert_eq!(
            result_lines("     1\tone\n     2\ttwo\n", RESULT_MAX_WIDTH),
            ["     1  one", "     2  two"]
        );
        assert_eq!(
            result_lines("a\nb\nc\nd\ne\n", RESULT_MAX_WIDTH),
            ["a", "b", "c", "… +2 lines"]
        );
        assert_eq!(result_lines("a\nb\nc\nd", 10), ["a", "b", "c", "… +1 line"]);
        // Blank lines are not shown, but counted after the last line shown.
        assert_eq!(
            result_lines("<skill>\nUse it.\n\nMore.\n\nEnd.\n\n", 10),
            ["<skill>", "Use it.", "More.", "… +2 lines"]
        );
        assert_eq!(result_lines(&"y".repeat(50), 10), ["yyyyyyyyy…"]);
        assert_eq!(result_lines("\u{1b}[31mred", 10), ["\\e[31mred"]);
    }
}
