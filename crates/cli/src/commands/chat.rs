//! `skillet chat` (and plain `skillet`): a line editor with Tab completion, streamed answers,
//! chat commands and skills invoked by hand; Ctrl-C cancels the current turn without ending the
//! session.
//!
//! A line is a chat command or a skill (`/name args`), or a message. A line whose first word is
//! a path (`/etc/hosts looks wrong`: it holds another `/`, or names an existing file and no
//! command or skill) is a message, and `//` sends the rest of the line as it is typed.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::sync::Arc;

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use skillet_agent::compact::SUMMARY_HEADER;
use skillet_agent::permission::Permissions;
use skillet_agent::{Agent, init_prompt};
use skillet_llm::{ContentBlock, Message, Role, Usage};
use skillet_skills::{Library, render_skill};

use super::Context;
use super::pricing::{cost, price_of};
use super::session::{TextView, find_resumed, library, runtime, settings, start};
use super::sessions::{SessionSummary, project_sessions};
use crate::args::{AgentArgs, LATEST};
use crate::output::{terminal_safe, warn};
use crate::settings::{Settings, user_data_dir};
use crate::ui::TerminalApprover;
use crate::{EXIT_USAGE, plural};

/// The prompt shown for each line.
const PROMPT: &str = "› ";
/// The most lines kept in the chat history file.
const HISTORY_LINES: usize = 1_000;
/// A resumed chat shows at most this many of its last turns before the prompt.
const REPLAY_TURNS: usize = 10;
/// The most characters of a replayed message or a tool call's argument shown.
const REPLAY_LINE_CHARS: usize = 300;
/// The most sessions the picker lists.
const PICKER_SESSIONS: usize = 20;
/// The most "did you mean" names an unknown command gets.
const MAX_CLOSEST: usize = 3;
/// Names longer than this (in characters) are not compared for "did you mean", and an unknown
/// name is repeated cut to it: the work stays bounded whatever is typed.
const MAX_COMPARED_NAME_CHARS: usize = 128;
/// The longest model name `/model` takes.
const MAX_MODEL_NAME_CHARS: usize = 256;

/// What a chat command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Help,
    Skills,
    Model,
    Cost,
    Compact,
    Init,
    Sessions,
    Clear,
    Exit,
}

/// A chat command: its name, its arguments and its line in `/help`. The one table `/help`,
/// Tab completion and "did you mean" read.
struct ChatCommand {
    action: Action,
    name: &'static str,
    args: &'static str,
    help: &'static str,
}

const COMMANDS: &[ChatCommand] = &[
    ChatCommand {
        action: Action::Help,
        name: "help",
        args: "",
        help: "this text",
    },
    ChatCommand {
        action: Action::Skills,
        name: "skills",
        args: "",
        help: "the skills and where they come from",
    },
    ChatCommand {
        action: Action::Model,
        name: "model",
        args: "[NAME]",
        help: "the model in use; with NAME, use that model from the next turn on",
    },
    ChatCommand {
        action: Action::Cost,
        name: "cost",
        args: "",
        help: "tokens used in this session, and their price where the model's is known",
    },
    ChatCommand {
        action: Action::Compact,
        name: "compact",
        args: "[INSTRUCTIONS]",
        help: "summarise the conversation so far, to free the context (INSTRUCTIONS: what to keep)",
    },
    ChatCommand {
        action: Action::Init,
        name: "init",
        args: "",
        help: "have the model draft an AGENTS.md for this project (or improve the one here)",
    },
    ChatCommand {
        action: Action::Sessions,
        name: "sessions",
        args: "",
        help: "this project's sessions; pick one to continue it",
    },
    ChatCommand {
        action: Action::Clear,
        name: "clear",
        args: "",
        help: "start a new session",
    },
    ChatCommand {
        action: Action::Exit,
        name: "exit",
        args: "",
        help: "leave (also /quit, Ctrl-D)",
    },
];

/// Other names of commands.
const ALIASES: &[(&str, Action)] = &[("quit", Action::Exit)];

/// The chat command called `name`.
fn command(name: &str) -> Option<Action> {
    COMMANDS
        .iter()
        .find(|command| command.name == name)
        .map(|command| command.action)
        .or_else(|| {
            ALIASES
                .iter()
                .find(|(alias, _)| *alias == name)
                .map(|(_, action)| *action)
        })
}

/// `/help`: every command from [`COMMANDS`], then skills, messages and keys.
fn help_text() -> String {
    let mut text = String::new();
    let usage = |command: &ChatCommand| {
        if command.args.is_empty() {
            format!("/{}", command.name)
        } else {
            format!("/{} {}", command.name, command.args)
        }
    };
    let width = COMMANDS
        .iter()
        .map(|command| usage(command).chars().count())
        .max()
        .unwrap_or(0)
        .max("/NAME [ARGS]".len());
    for command in COMMANDS {
        let _ = writeln!(text, "{:width$}  {}", usage(command), command.help);
    }
    let _ = writeln!(
        text,
        "{:width$}  invoke a skill by hand ($ARGUMENTS is replaced by ARGS)",
        "/NAME [ARGS]"
    );
    text.push_str(
        "Anything else is a message. A line whose first word is a path is a message too\n\
         (`/etc/hosts looks wrong`: the word holds another /, or names an existing file and no\n\
         command or skill); start a line with // to send the rest as it is (`//help` sends\n\
         `/help`).\n\
         Tab completes commands and skill names. Ctrl-C cancels the answer being written; the\n\
         session goes on. Ctrl-D leaves.",
    );
    text
}

pub fn run(context: &Context, args: &AgentArgs) -> anyhow::Result<ExitCode> {
    let settings = match settings(context, args, false) {
        Ok(settings) => settings,
        Err(message) => {
            warn(&format!("error: {message}"));
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let mut editor = editor()?;
    let history = user_data_dir().map(|dir| dir.join("chat-history"));
    if let Some(history) = &history {
        let _ = editor.load_history(history);
    }
    let resume = if args.continue_latest {
        Some(LATEST.to_string())
    } else if args.resume.as_deref() == Some(LATEST) && std::io::stdin().is_terminal() {
        // `--resume` without an id: pick one (none to pick: the latest, which says so).
        match pick_session(&mut editor, context, &settings, None)? {
            Picked::Session(id) => Some(id),
            Picked::Nothing => return Ok(ExitCode::SUCCESS),
            Picked::NoneToPick => Some(LATEST.to_string()),
        }
    } else {
        args.resume.clone()
    };
    let (resumed_context, resumed) = find_resumed(context, &settings, resume.as_deref())?;
    let context = resumed_context.unwrap_or_else(|| context.at(context.env.cwd.clone()));
    let runtime = runtime()?;
    let skills = library(&context);
    let replayed = resumed.is_some();
    let first_message = args
        .initial_prompt
        .as_deref()
        .filter(|message| !message.trim().is_empty());
    let permissions = Permissions::Ask(Arc::new(TerminalApprover));
    let agent = start(
        &context,
        &settings,
        &skills,
        resumed,
        permissions.clone(),
        first_message,
    )?;
    let mut chat = Chat {
        models: vec![(agent.model().to_string(), agent.usage())],
        runtime,
        context,
        settings,
        skills,
        permissions,
        agent,
    };
    editor.set_helper(Some(ChatHelper::new(&chat.skills)));
    warn(&format!(
        "skillet · {} · {} · {} · /help for commands",
        terminal_safe(chat.agent.model(), false),
        terminal_safe(&chat.context.env.cwd.display().to_string(), false),
        plural(chat.skills.model_invocable().count(), "skill")
    ));
    if let Some(text) = super::session::instructions_text(chat.agent.instructions()) {
        warn(&text);
    }
    if replayed {
        replay(chat.agent.history());
    }
    if let Some(message) = first_message {
        // Shown as if typed at the prompt.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{PROMPT}{}", terminal_safe(message, true));
        let _ = out.flush();
        drop(out);
        let _ = editor.add_history_entry(message);
        turn(&chat.runtime, &mut chat.agent, message);
    }
    chat.converse(&mut editor)?;
    if let Some(history) = &history {
        if let Some(dir) = history.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = editor.save_history(history);
    }
    warn(&format!(
        "usage: {} · session {}",
        chat.agent.usage().summary(),
        chat.agent.header().id
    ));
    Ok(ExitCode::SUCCESS)
}

/// Runs one turn; Ctrl-C (at an approval prompt too) cancels it and the session goes on.
fn turn(runtime: &tokio::runtime::Runtime, agent: &mut Agent, message: &str) {
    let mut view = TextView::new();
    let mut show = |event| view.show(&event);
    let outcome = runtime.block_on(async {
        tokio::select! {
            result = agent.run_turn(message, &mut show) => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    view.end_line();
    match outcome {
        Some(Ok(_)) => {}
        // Stopped at an approval prompt: the calls are answered already.
        Some(Err(skillet_agent::AgentError::Cancelled)) => warn("(cancelled)"),
        Some(Err(error)) => warn(&format!("error: {error}")),
        None => {
            agent.close_cancelled_turn();
            warn("(cancelled)");
        }
    }
}

/// The line editor: history, and Tab completion once [`ChatHelper`] is set.
type ChatEditor = rustyline::Editor<ChatHelper, FileHistory>;

fn editor() -> anyhow::Result<ChatEditor> {
    let config = rustyline::Config::builder()
        .max_history_size(HISTORY_LINES)?
        .auto_add_history(false)
        .completion_type(rustyline::CompletionType::List)
        .build();
    let mut editor = ChatEditor::with_config(config)?;
    editor.set_helper(Some(ChatHelper::default()));
    Ok(editor)
}

/// What a line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Input<'a> {
    /// A message for the model, as it is to be sent.
    Message(&'a str),
    /// A chat command or a skill, by name (without the `/`), and its arguments.
    Command { name: &'a str, arguments: &'a str },
}

/// Reads a trimmed, non-empty line. `//` sends the rest of the line (one `/` stripped); a line
/// whose first word is a path is a message: the word holds another `/` (`/etc/hosts`, `/tmp/x`),
/// or names an existing file or folder and no command or skill (`known`). Any other `/word` is
/// a command, known or not.
fn classify(line: &str, known: impl Fn(&str) -> bool) -> Input<'_> {
    let Some(command) = line.strip_prefix('/') else {
        return Input::Message(line);
    };
    if command.starts_with('/') {
        return Input::Message(command);
    }
    let (name, arguments) = command
        .split_once(char::is_whitespace)
        .unwrap_or((command, ""));
    if name.contains('/') {
        return Input::Message(line);
    }
    if !name.is_empty() && !known(name) && std::fs::symlink_metadata(format!("/{name}")).is_ok() {
        return Input::Message(line);
    }
    Input::Command {
        name,
        arguments: arguments.trim(),
    }
}

enum Slash {
    Handled,
    Exit,
    Send(String),
}

/// The session and what starting another needs.
struct Chat {
    /// Where the session works (a resumed session's own folder).
    context: Context,
    /// The settings; `model` follows `/model`, so `/clear` keeps the model in use.
    settings: Settings,
    skills: Arc<Library>,
    permissions: Permissions,
    agent: Agent,
    runtime: tokio::runtime::Runtime,
    /// Each model used in this session, with the session's usage when it took over (for
    /// `/cost`).
    models: Vec<(String, Usage)>,
}

impl Chat {
    /// Reads lines until `/exit` or Ctrl-D: each a command, a skill or a message.
    fn converse(&mut self, editor: &mut ChatEditor) -> anyhow::Result<()> {
        loop {
            let line = match editor.readline(PROMPT) {
                Ok(line) => line,
                Err(ReadlineError::Interrupted) => {
                    warn("(Ctrl-D or /exit leaves)");
                    continue;
                }
                Err(ReadlineError::Eof) => break,
                Err(error) => return Err(error.into()),
            };
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let _ = editor.add_history_entry(line);
            let skills = Arc::clone(&self.skills);
            let known = |name: &str| command(name).is_some() || skills.get(name).is_some();
            let message = match classify(line, known) {
                Input::Message(text) => text.to_string(),
                Input::Command { name, arguments } => {
                    match self.command(name, arguments, editor) {
                        Ok(Slash::Handled) => continue,
                        Ok(Slash::Exit) => break,
                        Ok(Slash::Send(text)) => text,
                        // A session that cannot be started or continued: this one goes on.
                        Err(error) => {
                            warn(&format!("error: {error:#}"));
                            continue;
                        }
                    }
                }
            };
            turn(&self.runtime, &mut self.agent, &message);
        }
        Ok(())
    }

    /// Runs a chat command or a skill invoked by hand.
    fn command(
        &mut self,
        name: &str,
        arguments: &str,
        editor: &mut ChatEditor,
    ) -> anyhow::Result<Slash> {
        if name.is_empty() {
            warn(&help_text());
            return Ok(Slash::Handled);
        }
        let Some(action) = command(name) else {
            return Ok(self.skill(name, arguments));
        };
        match action {
            Action::Exit => return Ok(Slash::Exit),
            Action::Help => warn(&help_text()),
            Action::Skills => warn(&skills_table(&self.skills)),
            Action::Cost => warn(&self.cost()),
            Action::Model => self.model(arguments),
            Action::Compact => self.compact(arguments),
            Action::Init => {
                warn("asking the model to draft AGENTS.md; you will be asked before it writes");
                return Ok(Slash::Send(init_prompt(&self.context.env.cwd)));
            }
            Action::Clear => {
                self.agent = start(
                    &self.context,
                    &self.settings,
                    &self.skills,
                    None,
                    self.permissions.clone(),
                    None,
                )?;
                self.models = vec![(self.agent.model().to_string(), Usage::default())];
                warn(&format!("new session {}", self.agent.header().id));
            }
            Action::Sessions => {
                let current = self.agent.header().id.clone();
                match pick_session(editor, &self.context, &self.settings, Some(&current))? {
                    Picked::Session(id) => {
                        self.switch_to(&id)?;
                        editor.set_helper(Some(ChatHelper::new(&self.skills)));
                    }
                    Picked::Nothing => {}
                    Picked::NoneToPick => warn("no other session of this project to continue"),
                }
            }
        }
        Ok(Slash::Handled)
    }

    /// A skill invoked by hand: its text to send, or why not.
    fn skill(&self, name: &str, arguments: &str) -> Slash {
        let Some(skill) = self.skills.get(name) else {
            warn(&unknown_command(name, &self.skills));
            return Slash::Handled;
        };
        match invoke_skill(&self.skills, name, arguments) {
            Ok(text) => {
                if let Some(notice) = self.agent.audit_notice(skill) {
                    warn(&format!("note: {}", terminal_safe(&notice, false)));
                }
                Slash::Send(text)
            }
            Err(message) => {
                warn(&message);
                Slash::Handled
            }
        }
    }

    /// `/model [NAME]`.
    fn model(&mut self, name: &str) {
        let current = self.agent.model().to_string();
        if name.is_empty() {
            let mut text = format!(
                "model: {} ({}, {})",
                terminal_safe(&current, false),
                self.settings.provider.as_str(),
                terminal_safe(&crate::output::redacted_url(&self.settings.base_url), false)
            );
            if self.agent.header().model != current {
                let _ = write!(
                    text,
                    "; this session started with {}",
                    terminal_safe(&self.agent.header().model, false)
                );
            }
            text.push_str(
                "\n  /model NAME uses another model of this provider from the next turn on",
            );
            warn(&text);
            return;
        }
        if name.chars().count() > MAX_MODEL_NAME_CHARS
            || name.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            warn(&format!(
                "error: '{}' is not a model name (one word of at most {MAX_MODEL_NAME_CHARS} characters)",
                terminal_safe(&cut(name, MAX_COMPARED_NAME_CHARS), false)
            ));
            return;
        }
        if name == current {
            warn(&format!("already using {}", terminal_safe(name, false)));
            return;
        }
        match self.agent.set_model(name) {
            Ok(true) => {
                name.clone_into(&mut self.settings.model);
                self.models.push((name.to_string(), self.agent.usage()));
                let mut text = format!(
                    "model: {} from the next turn on (was {})",
                    terminal_safe(name, false),
                    terminal_safe(&current, false)
                );
                if price_of(name).is_none() {
                    let _ = write!(text, "; price unknown for {}", terminal_safe(name, false));
                }
                warn(&text);
            }
            Ok(false) => warn("error: the model cannot be switched while a turn runs"),
            Err(error) => warn(&format!("error: the model was not switched: {error}")),
        }
    }

    /// `/compact [INSTRUCTIONS]`: the history replaced by the model's summary of it; Ctrl-C
    /// leaves it as it was.
    fn compact(&mut self, instructions: &str) {
        warn("compacting the conversation…");
        let mut view = TextView::new();
        let mut show = |event| view.show(&event);
        let instructions = Some(instructions).filter(|text| !text.is_empty());
        let agent = &mut self.agent;
        let outcome = self.runtime.block_on(async {
            tokio::select! {
                result = agent.compact(instructions, &mut show) => Some(result),
                _ = tokio::signal::ctrl_c() => None,
            }
        });
        view.end_line();
        match outcome {
            Some(Ok(outcome)) => warn(&format!(
                "compacted {} into a summary: about {} tokens before, {} after",
                plural(outcome.messages_before, "message"),
                outcome.tokens_before,
                outcome.tokens_after
            )),
            Some(Err(error)) => warn(&format!("error: {error}")),
            None => warn("(cancelled; the conversation is as it was)"),
        }
    }

    /// `/cost`: the tokens so far, and what they cost at the list price of each model used.
    fn cost(&self) -> String {
        let total = self.agent.usage();
        let mut text = total.summary();
        let mut dollars = 0.0;
        let mut priced = Vec::new();
        let mut unknown = Vec::new();
        for (index, (model, from)) in self.models.iter().enumerate() {
            let until = self
                .models
                .get(index + 1)
                .map_or(total, |(_, usage)| *usage);
            let used = minus(until, *from);
            let last = index + 1 == self.models.len();
            if used == Usage::default() && !(last && priced.is_empty() && unknown.is_empty()) {
                continue;
            }
            match price_of(model) {
                Some(price) => {
                    dollars += cost(&used, &price);
                    priced.push(terminal_safe(model, false).into_owned());
                }
                None => unknown.push(terminal_safe(model, false).into_owned()),
            }
        }
        if !priced.is_empty() {
            let _ = write!(
                text,
                "\ncost: {} at the list price of {}",
                dollars_text(dollars),
                priced.join(", ")
            );
            if !unknown.is_empty() {
                text.push_str(" (not counting the others)");
            }
        }
        if !unknown.is_empty() {
            let _ = write!(text, "\nprice unknown for {}", unknown.join(", "));
        }
        text
    }

    /// Continues another session of this project (`/sessions`).
    fn switch_to(&mut self, id: &str) -> anyhow::Result<()> {
        let (context, resumed) = find_resumed(&self.context, &self.settings, Some(id))?;
        let context = context.unwrap_or_else(|| self.context.at(self.context.env.cwd.clone()));
        let skills = if context.env.cwd == self.context.env.cwd {
            Arc::clone(&self.skills)
        } else {
            library(&context)
        };
        let agent = start(
            &context,
            &self.settings,
            &skills,
            resumed,
            self.permissions.clone(),
            None,
        )?;
        self.models = vec![(agent.model().to_string(), agent.usage())];
        (self.context, self.skills, self.agent) = (context, skills, agent);
        replay(self.agent.history());
        Ok(())
    }
}

/// `a - b`, field by field.
fn minus(a: Usage, b: Usage) -> Usage {
    Usage {
        input_tokens: a.input_tokens.saturating_sub(b.input_tokens),
        output_tokens: a.output_tokens.saturating_sub(b.output_tokens),
        cache_write_tokens: a.cache_write_tokens.saturating_sub(b.cache_write_tokens),
        cache_read_tokens: a.cache_read_tokens.saturating_sub(b.cache_read_tokens),
    }
}

/// `$0.0009`, `$12.35`.
fn dollars_text(dollars: f64) -> String {
    if dollars < 1.0 {
        format!("${dollars:.4}")
    } else {
        format!("${dollars:.2}")
    }
}

/// At most `limit` characters of `text`, with `…` when cut.
fn cut(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}…", &text[..at]).into(),
        None => text.into(),
    }
}

/// What an unknown `/name` gets: the closest commands and skills, never the whole list.
fn unknown_command(name: &str, skills: &Library) -> String {
    let candidates = COMMANDS
        .iter()
        .map(|command| command.name)
        .chain(ALIASES.iter().map(|(alias, _)| *alias))
        .chain(
            skills
                .skills()
                .iter()
                .filter(|skill| skill.user_invocable())
                .map(|skill| skill.name.as_str()),
        );
    let closest = closest(name, candidates);
    let mut text = format!(
        "unknown command or skill /{}",
        terminal_safe(&cut(name, MAX_COMPARED_NAME_CHARS), false)
    );
    if !closest.is_empty() {
        let names: Vec<String> = closest
            .iter()
            .map(|name| format!("/{}", terminal_safe(name, false)))
            .collect();
        let _ = write!(text, "; did you mean {}?", names.join(", "));
    }
    text.push_str(
        "\n  /help lists the commands; start with // to send a line beginning with / as a message",
    );
    text
}

/// The names closest to `name` (at most [`MAX_CLOSEST`]): within a small edit distance, or
/// starting with it. The work is bounded: a name (typed or offered) over
/// [`MAX_COMPARED_NAME_CHARS`] is not compared, nor one whose length is too far from the typed
/// one to be close, and each distance is computed in a band around the diagonal.
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let comparable = |text: &str| -> Option<Vec<char>> {
        if text.len() > 4 * MAX_COMPARED_NAME_CHARS {
            return None;
        }
        let chars: Vec<char> = text.to_lowercase().chars().collect();
        (chars.len() <= MAX_COMPARED_NAME_CHARS).then_some(chars)
    };
    let Some(wanted) = comparable(name).filter(|chars| !chars.is_empty()) else {
        return Vec::new();
    };
    let limit = (wanted.len() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .filter_map(|candidate| {
            let offered = comparable(candidate)?;
            if let Some(distance) = distance_within(&wanted, &offered, limit) {
                return Some((distance, candidate));
            }
            (wanted.len() >= 2 && offered.starts_with(&wanted)).then_some((limit + 1, candidate))
        })
        .collect();
    scored.sort_unstable();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_CLOSEST)
        .map(|(_, candidate)| candidate)
        .collect()
}

/// The Levenshtein distance of `a` and `b` when it is at most `limit`, else `None`: only cells
/// within `limit` of the diagonal are computed, and a row all over the limit stops the work.
fn distance_within(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let over = limit + 1;
    let mut previous: Vec<usize> = (0..=b.len()).map(|j| j.min(over)).collect();
    for (i, &from) in a.iter().enumerate() {
        let row = i + 1;
        let mut current = vec![over; b.len() + 1];
        current[0] = row.min(over);
        let low = row.saturating_sub(limit).max(1);
        let high = (row + limit).min(b.len());
        for j in low..=high {
            current[j] = (previous[j - 1] + usize::from(from != b[j - 1]))
                .min(previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(over);
        }
        if current.iter().all(|&cell| cell > limit) {
            return None;
        }
        previous = current;
    }
    let distance = previous[b.len()];
    (distance <= limit).then_some(distance)
}

/// Tab completion: `/` and the start of a command or skill name, at the start of the line.
#[derive(Default)]
struct ChatHelper {
    /// Command names, then the names of skills the user may invoke, sorted.
    names: Vec<String>,
}

impl ChatHelper {
    fn new(skills: &Library) -> Self {
        let mut names: Vec<String> = COMMANDS
            .iter()
            .map(|command| command.name.to_string())
            .collect();
        names.extend(
            skills
                .skills()
                .iter()
                .filter(|skill| skill.user_invocable() && completable(&skill.name))
                .map(|skill| skill.name.clone()),
        );
        names.sort_unstable();
        names.dedup();
        Self { names }
    }
}

/// Whether a skill's name can be offered as typed: one word, nothing that acts on a terminal.
fn completable(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_COMPARED_NAME_CHARS
        && !name.chars().any(|c| c.is_whitespace() || c == '/')
        && matches!(terminal_safe(name, false), std::borrow::Cow::Borrowed(_))
}

impl Completer for ChatHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let partial = line
            .get(..pos)
            .and_then(|typed| typed.strip_prefix('/'))
            .filter(|partial| !partial.starts_with('/') && !partial.contains(char::is_whitespace));
        let Some(partial) = partial else {
            return Ok((0, Vec::new()));
        };
        let candidates = self
            .names
            .iter()
            .filter(|name| name.starts_with(partial))
            .map(|name| Pair {
                display: format!("/{name}"),
                replacement: format!("/{name} "),
            })
            .collect();
        Ok((0, candidates))
    }
}

impl rustyline::hint::Hinter for ChatHelper {
    type Hint = String;
}

impl rustyline::highlight::Highlighter for ChatHelper {}

impl rustyline::validate::Validator for ChatHelper {}

impl rustyline::Helper for ChatHelper {}

/// What the session picker got.
enum Picked {
    /// A session, by id.
    Session(String),
    /// No choice (`q`, Ctrl-C, Ctrl-D, or a number not listed).
    Nothing,
    /// There was nothing to list.
    NoneToPick,
}

/// Lists this project's sessions (newest first, `except` left out) and reads a choice: a
/// number, or Enter for the newest.
fn pick_session(
    editor: &mut ChatEditor,
    context: &Context,
    settings: &Settings,
    except: Option<&str>,
) -> anyhow::Result<Picked> {
    let sessions: Vec<SessionSummary> = project_sessions(
        &settings.sessions_dir,
        &context.env.cwd,
        PICKER_SESSIONS + 1,
    )?
    .into_iter()
    .filter(|session| Some(session.id.as_str()) != except)
    .take(PICKER_SESSIONS)
    .collect();
    if sessions.is_empty() {
        return Ok(Picked::NoneToPick);
    }
    let mut list = String::from("sessions of this project, newest first:");
    for (number, session) in sessions.iter().enumerate() {
        // The first message is one line already, cut and safe to print.
        let _ = write!(
            list,
            "\n{:>3}. {}  {}  {:<9}  {}",
            number + 1,
            session.started_utc(),
            session.id,
            plural(session.turns, "turn"),
            session.first_message
        );
    }
    warn(&list);
    let question = format!("continue which? [1-{}, Enter: 1, q: none] ", sessions.len());
    let answer = match editor.readline(&question) {
        Ok(answer) => answer,
        Err(ReadlineError::Interrupted | ReadlineError::Eof) => return Ok(Picked::Nothing),
        Err(error) => return Err(error.into()),
    };
    let answer = answer.trim();
    let chosen = if answer.is_empty() {
        sessions.first()
    } else {
        answer
            .parse::<usize>()
            .ok()
            .and_then(|number| number.checked_sub(1))
            .and_then(|index| sessions.get(index))
    };
    if let Some(session) = chosen {
        // The file's name, which `--resume` looks up: a header may claim another id.
        let id = session.path.file_stem().map_or_else(
            || session.id.clone(),
            |stem| stem.to_string_lossy().into_owned(),
        );
        return Ok(Picked::Session(id));
    }
    warn("no session chosen");
    Ok(Picked::Nothing)
}

/// The words of a user message that is a turn's start: its first text block (what follows it
/// is skillet's, such as skill suggestions); `None` for tool results.
fn user_text(message: &Message) -> Option<&str> {
    if message.role != Role::User {
        return None;
    }
    message.content.iter().find_map(|block| match block {
        ContentBlock::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
        _ => None,
    })
}

/// Shows a resumed session's conversation so far, before the prompt, as a turn is shown: the
/// user's messages, the answers (Markdown rendered on a terminal) and one line per tool call,
/// for the last [`REPLAY_TURNS`] turns.
fn replay(history: &[Message]) {
    let starts: Vec<usize> = history
        .iter()
        .enumerate()
        .filter(|(_, message)| user_text(message).is_some())
        .map(|(index, _)| index)
        .collect();
    let earlier = starts.len().saturating_sub(REPLAY_TURNS);
    let from = starts.get(earlier).copied().unwrap_or(0);
    if earlier > 0 {
        warn(&format!("… {} earlier", plural(earlier, "turn")));
    }
    let screen = crate::ui::screen();
    for message in &history[from..] {
        match message.role {
            Role::User => {
                let Some(said) = user_text(message) else {
                    continue;
                };
                // The answer before it is shown whole, its line ended.
                screen.end_turn();
                if said.starts_with(SUMMARY_HEADER) {
                    warn("(the conversation before this point was compacted into a summary)");
                    continue;
                }
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "{PROMPT}{}",
                    terminal_safe(&cut(said.trim(), REPLAY_LINE_CHARS), true)
                );
                let _ = out.flush();
            }
            Role::Assistant => {
                for block in &message.content {
                    match block {
                        ContentBlock::Text { text } => screen.text(text),
                        ContentBlock::ToolUse { name, input, .. } => {
                            screen.tool_call(name, input, 0);
                        }
                        ContentBlock::ToolResult { .. } => {}
                    }
                }
            }
        }
    }
    screen.end_turn();
}

/// The body of a skill invoked by hand, with `$ARGUMENTS` replaced (or the arguments appended
/// when the body does not use them).
pub fn invoke_skill(skills: &Library, name: &str, arguments: &str) -> Result<String, String> {
    let Some(skill) = skills.get(name) else {
        return Err(unknown_command(name, skills));
    };
    if !skill.user_invocable() {
        return Err(format!(
            "/{name} can only be used by the model (user-invocable: false)"
        ));
    }
    let text = render_skill(skill).map_err(|error| error.to_string())?;
    if text.contains("$ARGUMENTS") {
        return Ok(text.replace("$ARGUMENTS", arguments));
    }
    if arguments.is_empty() {
        Ok(text)
    } else {
        Ok(format!("{text}\n\nARGUMENTS: {arguments}"))
    }
}

fn skills_table(skills: &Library) -> String {
    let mut out = String::new();
    for skill in skills.skills() {
        let mut marks = String::new();
        if !skill.model_invocable() {
            marks.push_str(" [you only]");
        }
        if !skill.user_invocable() {
            marks.push_str(" [model only]");
        }
        let _ = writeln!(
            out,
            "{}{marks}: {}\n    {} ({})",
            terminal_safe(&skill.name, false),
            terminal_safe(&skill.description, false),
            terminal_safe(&skill.file.display().to_string(), false),
            skill.root_kind.as_str()
        );
    }
    if out.is_empty() {
        out.push_str("no skills found; `skillet skills list` shows where skillet looks");
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod command_tests {
    use super::*;

    fn known(name: &str) -> bool {
        command(name).is_some() || name == "pdf"
    }

    #[test]
    fn a_path_first_line_or_double_slash_is_a_message() {
        assert_eq!(
            classify("/etc/hosts looks wrong", known),
            Input::Message("/etc/hosts looks wrong")
        );
        assert_eq!(classify("/tmp/x", known), Input::Message("/tmp/x"));
        // An existing folder that is no command or skill.
        assert_eq!(
            classify("/tmp is full", known),
            Input::Message("/tmp is full")
        );
        assert_eq!(classify("//help me", known), Input::Message("/help me"));
        assert_eq!(classify("///x", known), Input::Message("//x"));
        assert_eq!(classify("hello /etc", known), Input::Message("hello /etc"));
        // Commands and skills win over a path of the same name.
        assert_eq!(
            classify("/model  gpt-4o ", known),
            Input::Command {
                name: "model",
                arguments: "gpt-4o"
            }
        );
        assert_eq!(
            classify("/pdf form.pdf", known),
            Input::Command {
                name: "pdf",
                arguments: "form.pdf"
            }
        );
        // An unknown word naming nothing is an unknown command, not a message.
        assert_eq!(
            classify("/no-such-thing-here x", known),
            Input::Command {
                name: "no-such-thing-here",
                arguments: "x"
            }
        );
        assert_eq!(
            classify("/", known),
            Input::Command {
                name: "",
                arguments: ""
            }
        );
    }

    #[test]
    fn closest_names_are_few_and_close() {
        let names = [
            "model",
            "compact",
            "cost",
            "clear",
            "help",
            "pdf",
            "pdf-forms",
            "review",
        ];
        assert_eq!(closest("modle", names.into_iter()), ["model"]);
        assert_eq!(closest("cmpact", names.into_iter()), ["compact"]);
        assert_eq!(closest("pd", names.into_iter()), ["pdf", "pdf-forms"]);
        assert_eq!(closest("REVIEW", names.into_iter()), ["review"]);
        assert!(closest("zzzzzzzz", names.into_iter()).is_empty());
        assert!(closest("", names.into_iter()).is_empty());
        // At most MAX_CLOSEST, and a huge name is not compared at all.
        let many: Vec<String> = (0..20).map(|n| format!("cos{n}")).collect();
        assert_eq!(
            closest("cos", many.iter().map(String::as_str)).len(),
            MAX_CLOSEST
        );
        let huge = "a".repeat(10 * MAX_COMPARED_NAME_CHARS);
        assert!(closest(&huge, std::iter::once(huge.as_str())).is_empty());
    }

    #[test]
    fn banded_distance_matches_the_full_one() {
        fn full(a: &[char], b: &[char]) -> usize {
            let mut previous: Vec<usize> = (0..=b.len()).collect();
            for (i, &x) in a.iter().enumerate() {
                let mut current = vec![i + 1; b.len() + 1];
                for j in 1..=b.len() {
                    current[j] = (previous[j - 1] + usize::from(x != b[j - 1]))
                        .min(previous[j] + 1)
                        .min(current[j - 1] + 1);
                }
                previous = current;
            }
            previous[b.len()]
        }
        let words = [
            "", "a", "ab", "ba", "abc", "model", "modle", "mdoel", "compact", "cost", "kitten",
            "sitting", "flaw", "lawn",
        ];
        for a in words {
            for b in words {
                let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                let exact = full(&a, &b);
                for limit in 0..4 {
                    let expected = (exact <= limit).then_some(exact);
                    assert_eq!(
                        distance_within(&a, &b, limit),
                        expected,
                        "{a:?} {b:?} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn help_lists_every_command_of_the_table() {
        let help = help_text();
        for command in COMMANDS {
            assert!(help.contains(&format!("/{}", command.name)), "{help}");
            assert!(help.contains(command.help), "{help}");
        }
        assert!(help.contains("start a line with //"), "{help}");
    }

    #[test]
    fn tab_offers_commands_and_skill_names_at_the_start_only() {
        let helper = ChatHelper {
            names: vec!["clear".into(), "cost".into(), "model".into(), "pdf".into()],
        };
        let history = rustyline::history::DefaultHistory::new();
        let context = rustyline::Context::new(&history);
        let offered = |line: &str| -> Vec<String> {
            let (start, pairs) = helper.complete(line, line.len(), &context).unwrap();
            assert_eq!(start, 0);
            pairs.into_iter().map(|pair| pair.replacement).collect()
        };
        assert_eq!(offered("/mo"), ["/model "]);
        assert_eq!(offered("/c"), ["/clear ", "/cost "]);
        assert_eq!(offered("/p"), ["/pdf "]);
        assert!(offered("/model x").is_empty());
        assert!(offered("mo").is_empty());
        assert!(offered("//mo").is_empty());
        assert_eq!(offered("/").len(), 4);
        // A skill name that would act on the terminal is not offered.
        assert!(!completable("evil\u{1b}[2J"));
        assert!(completable("pdf-forms"));
    }

    #[test]
    fn usage_is_split_by_model() {
        let usage = |input, output| Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        };
        assert_eq!(minus(usage(300, 30), usage(100, 10)), usage(200, 20));
        assert_eq!(minus(usage(1, 1), usage(5, 5)), Usage::default());
        assert_eq!(dollars_text(0.000_46), "$0.0005");
        assert_eq!(dollars_text(12.345), "$12.35");
    }
}
