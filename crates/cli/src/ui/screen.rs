//! The screen during a turn: stdout for the answer, stderr for the calls, notices and the
//! spinner, and the state they share (the answer's open line or pending Markdown, the spinner,
//! the turn's token count). The event view and the approval prompt both go through it, so a
//! prompt can stop the spinner and end the answer's line before it asks.

use std::io::{IsTerminal as _, Write};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use serde_json::Value;
use unicode_width::UnicodeWidthStr as _;

use super::calls::{CALL_MAX_WIDTH, RESULT_MAX_WIDTH, call_summary, result_lines};
use super::markdown::Markdown;
use super::spinner::{CHARS_PER_TOKEN, SPINNER_INTERVAL, Spinner, stderr_target};
use super::style::{Attrs, Style, TERM, colour_wanted};
use super::thinking::Thinking;
use skillet_skills::terminal_safe;

/// Indentation of each level of subagent (`task`) output.
const SUBAGENT_INDENT: &str = "    ";
/// What comes before a call: `> bash(git status)`.
const CALL_MARK: &str = ">";
/// Before a result's first line, and before its other lines.
const RESULT_MARK: &str = "  ⎿ ";
const RESULT_MORE: &str = "    ";
/// Call arguments and result lines are never cut narrower than this, however narrow the
/// terminal.
const MIN_WIDTH: usize = 20;
/// What the spinner says while waiting for the model, while text streams, and while a tool runs
/// (`running bash`).
const THINKING: &str = "thinking";
const WRITING: &str = "writing";
const RUNNING: &str = "running";

/// Where a screen writes, and how.
pub struct Output {
    /// The answer.
    pub out: Box<dyn Write + Send>,
    /// Everything else.
    pub err: Box<dyn Write + Send>,
    /// Colour on stdout (Markdown).
    pub out_style: Style,
    /// Colour on stderr (calls, results, notices, the spinner).
    pub err_style: Style,
    /// Whether the answer is rendered as Markdown (stdout is a terminal) or written as it comes.
    pub markdown: bool,
    /// The spinner (disabled unless stderr is a terminal).
    pub spinner: Spinner,
    /// Whether the model's thinking is shown (on stderr, when it is a terminal).
    pub thinking: bool,
    /// The terminal's width, when stdout or stderr is one.
    pub columns: fn() -> Option<usize>,
    /// The terminal's height, when stdout is one.
    pub rows: fn() -> Option<usize>,
}

impl Output {
    /// The process's stdout and stderr, each styled as its kind and the environment say.
    pub fn terminal() -> Self {
        let var = |name: &str| crate::env::var(name);
        let out_terminal = std::io::stdout().is_terminal();
        let err_terminal = std::io::stderr().is_terminal();
        let err_style = Style::new(colour_wanted(err_terminal, &var));
        let spins = err_terminal && var(TERM).as_deref() != Some("dumb");
        Self {
            out: Box::new(std::io::stdout()),
            err: Box::new(std::io::stderr()),
            out_style: Style::new(colour_wanted(out_terminal, &var)),
            err_style,
            markdown: out_terminal,
            thinking: spins,
            spinner: if spins {
                Spinner::new(Box::new(stderr_target), Some(SPINNER_INTERVAL), err_style)
            } else {
                Spinner::disabled()
            },
            columns: || {
                console::Term::stdout()
                    .size_checked()
                    .or_else(|| console::Term::stderr().size_checked())
                    .map(|(_, columns)| usize::from(columns))
            },
            rows: || {
                console::Term::stdout()
                    .size_checked()
                    .map(|(rows, _)| usize::from(rows))
            },
        }
    }
}

/// The process's screen, shared by the event view and the approval prompt.
pub fn screen() -> &'static Screen {
    static SCREEN: OnceLock<Screen> = OnceLock::new();
    SCREEN.get_or_init(|| Screen::new(Output::terminal()))
}

/// See the module's documentation.
pub struct Screen {
    state: Mutex<State>,
}

struct State {
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    err_style: Style,
    /// The renderer, when the answer is shown as Markdown.
    markdown: Option<Markdown>,
    /// Written as it comes: whether the answer's last line is open.
    line_open: bool,
    /// Rendered: what was shown last, for the blank line between an answer and tool calls.
    last: Last,
    spinner: Spinner,
    columns: fn() -> Option<usize>,
    rows: fn() -> Option<usize>,
    /// Rows the answer's line still coming takes on the screen ([`Markdown::preview`]), just
    /// above the cursor: erased before anything else is written, and drawn again after.
    preview_rows: usize,
    /// The turn under way.
    turn: Option<Turn>,
    /// Whether thinking is shown.
    show_thinking: bool,
    /// The model's thinking under way, when shown.
    thinking: Option<Thinking>,
}

/// What the screen showed last (on a terminal, a blank line sets answers and calls apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Nothing,
    /// Answer text, and whether its last line was blank.
    Answer {
        blank: bool,
    },
    /// A call or its result.
    Tool,
}

struct Turn {
    /// What the spinner says.
    label: String,
    /// Output tokens the provider counted this turn.
    counted: u64,
    /// Characters streamed since its last count.
    streamed: usize,
}

impl Turn {
    fn tokens(&self) -> u64 {
        self.counted + u64::try_from(self.streamed / CHARS_PER_TOKEN).unwrap_or(u64::MAX)
    }
}

impl Screen {
    /// A screen writing to `output`.
    pub fn new(output: Output) -> Self {
        Self {
            state: Mutex::new(State {
                markdown: output.markdown.then(|| Markdown::new(output.out_style)),
                out: output.out,
                err: output.err,
                err_style: output.err_style,
                line_open: false,
                last: Last::Nothing,
                spinner: output.spinner,
                columns: output.columns,
                rows: output.rows,
                preview_rows: 0,
                turn: None,
                show_thinking: output.thinking,
                thinking: None,
            }),
        }
    }

    /// How stderr is styled (colour or not).
    pub fn err_style(&self) -> Style {
        self.state().err_style
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A turn begins: the spinner shows (`thinking…`), the clock and the token count start.
    pub fn begin_turn(&self) {
        let mut state = self.state();
        state.turn = Some(Turn {
            label: THINKING.to_string(),
            counted: 0,
            streamed: 0,
        });
        state.last = Last::Nothing;
        let columns = (state.columns)();
        if let Some(markdown) = &mut state.markdown {
            markdown.set_width(columns);
        }
        state.spinner.restart_clock();
        state.refresh_spinner();
    }

    /// Streamed answer text (untrusted: made safe here, before any styling).
    pub fn text(&self, text: &str) {
        let mut state = self.state();
        let thought = state.close_thinking();
        state.write("", &thought);
        state.count(text, Some(WRITING));
        let shown = if let Some(markdown) = &mut state.markdown {
            let shown = markdown.push(text);
            state.set_apart(shown)
        } else {
            let safe = terminal_safe(text, true).into_owned();
            if !safe.is_empty() {
                state.line_open = !safe.ends_with('\n');
            }
            safe
        };
        state.write(&shown, "");
        state.refresh_spinner();
    }

    /// The model's thinking as it streams (untrusted: made safe before styling), dimmed on
    /// stderr when shown ([`super::thinking`]); counted either way.
    pub fn thinking(&self, text: &str) {
        let mut state = self.state();
        state.count(text, Some(THINKING));
        if state.show_thinking {
            // Whatever answer came before ends first.
            let answer = state.close_answer();
            let gap = if state.thinking.is_none() && state.last == Last::Tool {
                "\n"
            } else {
                ""
            };
            let (width, style) = ((state.columns)(), state.err_style);
            let rows = state
                .thinking
                .get_or_insert_with(Thinking::default)
                .push(text, width, style);
            state.write(&answer, &format!("{gap}{rows}"));
        }
        state.refresh_spinner();
    }

    /// Text a subagent wrote: not shown, but counted.
    pub fn subagent_text(&self, text: &str) {
        let mut state = self.state();
        state.count(text, None);
        state.refresh_spinner();
    }

    /// The provider's count of one response's output tokens.
    pub fn usage(&self, output_tokens: u64) {
        let mut state = self.state();
        if let Some(turn) = &mut state.turn {
            turn.counted += output_tokens;
            turn.streamed = 0;
        }
        state.refresh_spinner();
    }

    /// A call, as the model made it: `> bash(git status)`; `depth` levels of subagent in.
    pub fn tool_call(&self, name: &str, input: &Value, depth: usize) {
        let mut state = self.state();
        let style = state.err_style;
        let indent = SUBAGENT_INDENT.repeat(depth);
        let safe_name = terminal_safe(name, false);
        // `> name(` and `)` around the argument, which gets the rest of the line.
        let around = indent.len() + CALL_MARK.len() + 1 + safe_name.width() + 2;
        let width = (state.columns)().map_or(CALL_MAX_WIDTH, |columns| {
            columns
                .saturating_sub(around)
                .clamp(MIN_WIDTH, CALL_MAX_WIDTH)
        });
        let line = format!(
            "{indent}{} {}\n",
            style.paint(Attrs::DIM, CALL_MARK),
            call_summary(name, input, width, style),
        );
        let thought = state.close_thinking();
        state.write("", &thought);
        let answer = state.close_answer();
        let gap = if state.markdown.is_some() && state.last == (Last::Answer { blank: false }) {
            "\n"
        } else {
            ""
        };
        state.last = Last::Tool;
        state.write(&answer, &format!("{gap}{line}"));
        if depth == 0
            && let Some(turn) = &mut state.turn
        {
            turn.label = format!("{RUNNING} {safe_name}");
        }
        state.refresh_spinner();
    }

    /// A call's result, under it: `  ⎿ (no output)` or its first lines (red when it failed).
    pub fn tool_result(&self, content: &str, is_error: bool, depth: usize) {
        let mut state = self.state();
        let style = state.err_style;
        let indent = SUBAGENT_INDENT.repeat(depth);
        // Cut to the terminal's width; written to a file or a pipe, lines are kept whole (a
        // failure's message is what a log reader needs).
        let width = (state.columns)().map_or(usize::MAX, |columns| {
            columns
                .saturating_sub(indent.len() + RESULT_MARK.chars().count())
                .clamp(MIN_WIDTH, RESULT_MAX_WIDTH)
        });
        let attrs = if is_error { Attrs::RED } else { Attrs::DIM };
        let mut text = String::new();
        for (index, line) in result_lines(content, width).iter().enumerate() {
            let mark = if index == 0 { RESULT_MARK } else { RESULT_MORE };
            text.push_str(&indent);
            text.push_str(&style.paint(Attrs::DIM, mark));
            text.push_str(&style.paint(attrs, line));
            text.push('\n');
        }
        let answer = state.close_answer();
        state.last = Last::Tool;
        state.write(&answer, &text);
        if depth == 0
            && let Some(turn) = &mut state.turn
        {
            turn.label = THINKING.to_string();
        }
        state.refresh_spinner();
    }

    /// A line (or lines) for the user on stderr: `note: …`, `retrying …` (untrusted: made safe
    /// here). Pending Markdown stays pending (a notice does not end a code block); an open
    /// line of plain answer text is ended first.
    pub fn notice(&self, text: &str, attrs: Attrs, depth: usize) {
        let mut state = self.state();
        let style = state.err_style;
        let indent = SUBAGENT_INDENT.repeat(depth);
        let thought = state.close_thinking();
        let mut lines = thought;
        for line in terminal_safe(text, true).lines() {
            lines.push_str(&indent);
            lines.push_str(&style.paint(attrs, line));
            lines.push('\n');
        }
        let open = if std::mem::take(&mut state.line_open) {
            "\n"
        } else {
            ""
        };
        state.write(open, &lines);
        state.refresh_spinner();
    }

    /// Before a question: the spinner stops and the answer's line ends, so the question starts
    /// on a line of its own. [`Screen::resume`] after the answer.
    pub fn pause(&self) {
        let mut state = self.state();
        state.spinner.hide();
        let thought = state.close_thinking();
        let answer = state.close_answer();
        state.write(&answer, &thought);
    }

    /// Writes a question on stderr as it is (trusted text: the caller made what it quotes safe).
    pub fn ask(&self, question: &str) {
        let mut state = self.state();
        state.write("", question);
    }

    /// After the question: the spinner goes on, if a turn is under way.
    pub fn resume(&self) {
        self.state().refresh_spinner();
    }

    /// Runs `write` (which writes to stderr or stdout directly: [`crate::output::warn`]) with
    /// the spinner erased; it is drawn again after.
    pub fn suspend<R>(&self, write: impl FnOnce() -> R) -> R {
        let mut state = self.state();
        // The answer's line still coming goes too, and comes back under what is written.
        if state.preview_rows == 0 {
            return state.spinner.suspend(write);
        }
        let erase = state.erase_preview();
        let State { out, spinner, .. } = &mut *state;
        let result = spinner.suspend(|| {
            let _ = out.write_all(erase.as_bytes());
            let _ = out.flush();
            write()
        });
        state.write("", "");
        result
    }

    /// The turn ended (or was cancelled): the answer's last line is shown and ended, the
    /// spinner erased. Safe to call twice.
    pub fn end_turn(&self) {
        let mut state = self.state();
        state.spinner.hide();
        state.turn = None;
        let thought = state.close_thinking();
        let answer = state.close_answer();
        state.write(&answer, &thought);
    }
}

impl State {
    fn count(&mut self, text: &str, label: Option<&str>) {
        if let Some(turn) = &mut self.turn {
            turn.streamed += text.chars().count();
            if let Some(label) = label {
                label.clone_into(&mut turn.label);
            }
        }
    }

    /// Writes to stdout then stderr with the spinner and the answer's line still coming erased;
    /// both are drawn again after (below what was written).
    fn write(&mut self, stdout: &str, stderr: &str) {
        let erase = self.erase_preview();
        let (preview, rows) = self.preview();
        self.preview_rows = rows;
        if stdout.is_empty() && stderr.is_empty() && erase.is_empty() && preview.is_empty() {
            return;
        }
        let Self {
            out, err, spinner, ..
        } = self;
        spinner.suspend(|| {
            if !erase.is_empty() || !stdout.is_empty() {
                let _ = out.write_all(erase.as_bytes());
                let _ = out.write_all(stdout.as_bytes());
                let _ = out.flush();
            }
            if !stderr.is_empty() {
                let _ = err.write_all(stderr.as_bytes());
                let _ = err.flush();
            }
            if !preview.is_empty() {
                let _ = out.write_all(preview.as_bytes());
                let _ = out.flush();
            }
        });
    }

    /// What erases the answer's line still coming (above the cursor), now counted as gone.
    fn erase_preview(&mut self) -> String {
        match std::mem::take(&mut self.preview_rows) {
            0 => String::new(),
            // Up to the preview's first row, then everything below it cleared.
            rows => format!("\r\x1b[{rows}A\x1b[J"),
        }
    }

    /// The answer's line still coming as it shows now, and the rows it takes: only on a
    /// terminal whose size is known (rows are counted to be erased), and at most the screen's
    /// height less two rows (the spinner's and one to spare), its last rows when it is taller.
    fn preview(&self) -> (String, usize) {
        let Some(markdown) = &self.markdown else {
            return (String::new(), 0);
        };
        let (Some(_), Some(height)) = ((self.columns)(), (self.rows)()) else {
            return (String::new(), 0);
        };
        let Some(text) = markdown.preview() else {
            return (String::new(), 0);
        };
        let gap = if self.last == Last::Tool { "\n" } else { "" };
        let text = format!("{gap}{text}");
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let keep = lines.len().min(height.saturating_sub(2).max(1));
        let shown: String = lines[lines.len() - keep..].concat();
        (shown, keep)
    }

    /// Rendered answer text, after a blank line when it follows a call.
    fn set_apart(&mut self, shown: String) -> String {
        if shown.is_empty() {
            return shown;
        }
        let gap = self.last == Last::Tool;
        self.last = Last::Answer {
            blank: shown == "\n" || shown.ends_with("\n\n"),
        };
        if gap { format!("\n{shown}") } else { shown }
    }

    /// What ends the thinking under way (for stderr): its last row and a blank line.
    fn close_thinking(&mut self) -> String {
        let Some(thinking) = self.thinking.take() else {
            return String::new();
        };
        self.last = Last::Answer { blank: true };
        thinking.finish((self.columns)(), self.err_style)
    }

    /// What ends the answer so far: the Markdown still pending, or a newline for an open line.
    fn close_answer(&mut self) -> String {
        match &mut self.markdown {
            Some(markdown) => {
                let shown = markdown.finish();
                self.set_apart(shown)
            }
            None if std::mem::take(&mut self.line_open) => "\n".to_string(),
            None => String::new(),
        }
    }

    fn refresh_spinner(&mut self) {
        if let Some(turn) = &self.turn {
            let tokens = turn.tokens();
            let label = turn.label.clone();
            self.spinner.show(&label, tokens);
        }
    }
}

#[cfg(test)]
mod tests;
