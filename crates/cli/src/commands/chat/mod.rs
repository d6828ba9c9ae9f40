//! `skillet chat` (and plain `skillet`): a line editor with Tab completion, streamed answers,
//! chat commands and skills invoked by hand; Ctrl-C cancels the current turn without ending the
//! session.
//!
//! A line is a chat command or a skill (`/name args`), or a message. A line whose first word is
//! a path (`/etc/hosts looks wrong`: it holds another `/`, or names an existing file and no
//! command or skill) is a message, and `//` sends the rest of the line as it is typed.
//!
//! This module starts the chat ([`run`]) and reads its lines; the rest is by job:
//!
//! - `commands`: the table of chat commands, `/help`, and how a line is read ([`classify`]).
//! - `closest`: "did you mean" for an unknown command or skill.
//! - `handlers`: what each command does, and skills invoked by hand.
//! - `complete`: Tab completion of command and skill names.
//! - `picker`: the session picker, for `--resume` without an id and `/sessions`.
//! - `replay`: a resumed session's last turns, shown before the prompt.

mod closest;
pub(super) use closest::closest_within;
mod commands;
mod complete;
mod handlers;
mod picker;
mod replay;

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use skillet_agent::Agent;
use skillet_agent::permission::{Mode, Permissions};
use skillet_library::trust::SkillTrust;
use skillet_llm::Usage;
use skillet_skills::Library;

use super::Context;
use super::session::{TextView, find_resumed, library, runtime, settings, skills_at, start};
use crate::args::{AgentArgs, LATEST};
use crate::output::{terminal_safe, warn};
use crate::settings::{Settings, user_data_dir};
use crate::ui::TerminalApprover;
use crate::{EXIT_USAGE, plural};

use commands::{Input, classify, command};
use complete::ChatHelper;
use picker::{Picked, pick_session};
use replay::replay;

/// The prompt shown for each line.
const PROMPT: &str = "› ";
/// The most lines kept in the chat history file.
const HISTORY_LINES: usize = 1_000;

/// Starts the chat (a resumed session's, when asked) and reads lines until it ends.
pub fn run(context: &Context, args: &AgentArgs) -> anyhow::Result<ExitCode> {
    // Trust is settled first: the project's skillet.toml grants only in a trusted project.
    let skills_here = library(context);
    let (decided, kept) = super::trust::decide_on_terminal(context, &skills_here);
    let settings = match settings(context, args, false, decided.project_trusted) {
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
    let resumed_from_cwd = context.env.cwd.clone();
    let (resumed_context, resumed) = find_resumed(context, &settings, resume.as_deref())?;
    let context = resumed_context.unwrap_or_else(|| context.at(context.env.cwd.clone()));
    let runtime = runtime()?;
    // Where the session works decides its trust and settings (a resumed one may work elsewhere).
    let (skills, skill_trust, settings) = skills_at(
        &context,
        &resumed_from_cwd,
        (skills_here, decided, settings),
        args,
        false,
    )?;
    let replayed = resumed.is_some();
    let first_message = args
        .initial_prompt
        .as_deref()
        .filter(|message| !message.trim().is_empty());
    let permissions = Permissions::Ask(Arc::new(TerminalApprover));
    let (agent, watching) = start_watching(
        &context,
        &settings,
        &skills,
        resumed,
        permissions.clone(),
        first_message,
        &skill_trust,
    )?;
    // A resumed session may go on with its own model: `/clear` keeps the model in use.
    let mut settings = settings;
    agent.model().clone_into(&mut settings.model);
    let mut chat = Chat {
        models: vec![(agent.model().to_string(), agent.usage())],
        runtime,
        context,
        args: args.clone(),
        settings,
        skills,
        skill_trust,
        permissions,
        agent,
        watching,
    };
    editor.set_helper(Some(ChatHelper::new(&chat.skills, &chat.context.env.cwd)));
    let mode = match chat.agent.permission_mode() {
        Mode::Default => String::new(),
        other => format!("{} mode · ", other.as_str()),
    };
    warn(&format!(
        "skillet · {} · {} · {} · {mode}/help for commands",
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
        show_typed(message);
        let _ = editor.add_history_entry(message);
        let attachments = chat.agent.attachments(message);
        for note in &attachments.notes {
            warn(note);
        }
        chat.exchange(&mut editor, message.to_string(), attachments.blocks);
    }
    if chat.kept(&mut editor, kept) == Flow::Next {
        chat.converse(&mut editor)?;
    }
    Ok(chat.end(&mut editor, history.as_deref()))
}

impl Chat {
    /// The lines typed at the trust question, in order, as if typed at the prompt now.
    fn kept(&mut self, editor: &mut ChatEditor, kept: Vec<String>) -> Flow {
        for line in kept {
            show_typed(&line);
            if self.line(editor, &line) == Flow::Exit {
                return Flow::Exit;
            }
        }
        Flow::Next
    }

    /// The chat's end: the line history saved, the usage said.
    fn end(&mut self, editor: &mut ChatEditor, history: Option<&std::path::Path>) -> ExitCode {
        if let Some(history) = history {
            if let Some(dir) = history.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = editor.save_history(history);
        }
        // A new session the model never answered is not kept to be listed or continued.
        if !self.agent.discard_if_unanswered() {
            warn(&format!(
                "usage: {} · session {}",
                self.agent.usage().summary(),
                self.agent.header().id
            ));
        }
        ExitCode::SUCCESS
    }
}

/// A line the chat sends without it being typed at the prompt (the first message, lines typed
/// at the trust question), shown as if it had been.
fn show_typed(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{PROMPT}{}", terminal_safe(line, true));
    let _ = out.flush();
}

/// Runs one turn; Ctrl-C (at an approval prompt too) cancels it and the session goes on. True
/// when the model answered.
fn turn(
    runtime: &tokio::runtime::Runtime,
    agent: &mut Agent,
    message: &str,
    attached: Vec<skillet_llm::ContentBlock>,
) -> bool {
    let mut view = TextView::new();
    let mut show = |event| view.show(&event);
    // What is typed while the turn runs is kept for the next prompt.
    let typing = crate::ui::typeahead::Turn::begin();
    let outcome = runtime.block_on(async {
        tokio::select! {
            result = agent.run_turn_with(message, attached, &mut show) => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    drop(typing);
    view.end_line();
    match outcome {
        Some(Ok(_)) => return true,
        // Stopped at an approval prompt: the calls are answered already.
        Some(Err(skillet_agent::AgentError::Cancelled)) => warn("(cancelled)"),
        Some(Err(error)) => warn(&format!("error: {error}")),
        None => {
            agent.close_cancelled_turn();
            warn("(cancelled)");
        }
    }
    false
}

/// What the model is told when the user approves its plan.
const PLAN_APPROVED: &str = "The user approved your plan and left plan mode: carry it out now.";

/// The question after a plan.
const PLAN_QUESTION: &str = "approve this plan and carry it out (default mode)? [y]es / [n]o, stay in plan mode / or type what to change: ";

/// What the user answers to a plan.
enum PlanAnswer {
    /// Leave plan mode and carry it out.
    Approve,
    /// Stay in plan mode; nothing sent.
    Keep,
    /// Stay in plan mode and send this (what to change).
    Revise(String),
}

/// Reads the answer to a plan: `y`, `n` (or Enter, Ctrl-C, Ctrl-D), or what to change.
fn plan_answer(editor: &mut ChatEditor) -> PlanAnswer {
    match editor.readline(PLAN_QUESTION) {
        Ok(line) => match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => PlanAnswer::Approve,
            "" | "n" | "no" => PlanAnswer::Keep,
            _ => PlanAnswer::Revise(line.trim().to_string()),
        },
        Err(_) => PlanAnswer::Keep,
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
    // Alt-Enter: a line break in the message (Enter sends it; `\` before Enter goes on too).
    editor.bind_sequence(
        rustyline::KeyEvent::alt('\r'),
        rustyline::EventHandler::Simple(rustyline::Cmd::Newline),
    );
    Ok(editor)
}

/// Whether the chat goes on after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Read the next line.
    Next,
    /// Leave the chat.
    Exit,
}

/// What a command or skill leaves the loop to do.
enum Slash {
    /// Nothing more: read the next line.
    Handled,
    /// Leave the chat.
    Exit,
    /// Send this message, as if typed.
    Send(String),
}

/// The session and what starting another needs.
struct Chat {
    /// Where the session works (a resumed session's own folder).
    context: Context,
    /// The flags it was started with (the settings of another folder are resolved from them).
    args: AgentArgs,
    /// The settings; `model` follows `/model`, so `/clear` keeps the model in use.
    settings: Settings,
    skills: Arc<Library>,
    /// Which skills may act (the project's when it is trusted).
    skill_trust: SkillTrust,
    permissions: Permissions,
    agent: Agent,
    runtime: tokio::runtime::Runtime,
    /// Each model used in this session, with the session's usage when it took over (for
    /// `/cost`).
    models: Vec<(String, Usage)>,
    /// Watches the skill roots; set when they changed since the skills were last found.
    watching: Watching,
}

/// The session started ([`start`]), and the skill folders watched from the walk that found
/// them: set up while the session is (a watch on each folder of a large library takes a
/// while).
fn start_watching(
    context: &Context,
    settings: &Settings,
    skills: &Arc<Library>,
    resumed: Option<super::session::Resumed>,
    permissions: Permissions,
    first_message: Option<&str>,
    skill_trust: &SkillTrust,
) -> anyhow::Result<(Agent, Watching)> {
    let (agent, watching) = std::thread::scope(|scope| {
        let watching = scope.spawn(|| Watching::start(context, skills));
        let agent = start(
            context,
            settings,
            skills,
            resumed,
            permissions,
            first_message,
            skill_trust,
        );
        (agent, watching.join())
    });
    let agent = agent?;
    Ok((
        agent,
        watching.unwrap_or_else(|_| Watching::start(context, skills)),
    ))
}

/// The skill roots watched, and the skills found again when they changed (taken by the next
/// turn).
struct Watching {
    changed: Arc<Mutex<Option<skillet_skills::Library>>>,
    _watcher: Option<skillet_library::watch::RootWatcher>,
}

impl Watching {
    /// Watches `context`'s roots, whose last walk is `library` (a failure is said once, and
    /// skills are then not reloaded).
    fn start(context: &Context, library: &skillet_skills::Library) -> Self {
        let changed = Arc::new(Mutex::new(None));
        let found = Arc::clone(&changed);
        let watcher = match skillet_library::watch::watch(&context.roots, library, move |library| {
            if let Ok(mut found) = found.lock() {
                *found = Some(library);
            }
        }) {
            Ok(watcher) => {
                for failure in &watcher.failures {
                    warn(&format!(
                        "note: {}: not watched; skills changed there show when a change elsewhere is seen, or after a restart",
                        terminal_safe(failure, false)
                    ));
                }
                Some(watcher)
            }
            Err(error) => {
                warn(&format!(
                    "note: {error}; skills added or changed show after a restart"
                ));
                None
            }
        };
        Self {
            changed,
            _watcher: watcher,
        }
    }
}

impl Chat {
    /// When the skill folders changed: the skills found again and given to the agent (the next
    /// message tells the model what changed; the system prompt stays), the change said, and
    /// completion brought up to date.
    fn refresh_skills(&mut self, editor: &mut ChatEditor) {
        let Some(library) = self
            .watching
            .changed
            .lock()
            .ok()
            .and_then(|mut found| found.take())
        else {
            return;
        };
        // Found again as at the start: a project's commands only when it is trusted.
        let library = self.skill_trust.admitted(Arc::new(library));
        let index = super::session::skill_index(&self.settings, &library);
        let changes = self.agent.reload_skills(Arc::clone(&library), index);
        if !changes.is_empty() {
            warn(&format!(
                "note: {}",
                terminal_safe(&changes.summary(), false)
            ));
        }
        self.skills = library;
        let helper =
            ChatHelper::new(&self.skills, &self.context.env.cwd).with_status_of(editor.helper());
        editor.set_helper(Some(helper));
    }

    /// The status line under the input, brought up to date: on a terminal only.
    fn show_status(&self, editor: &mut ChatEditor) {
        let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
        let width = terminal
            .then(|| console::Term::stdout().size_checked())
            .flatten()
            .map(|(_, columns)| usize::from(columns));
        let colour = crate::ui::screen().err_style().colour();
        let status = self.status();
        if let Some(helper) = editor.helper_mut() {
            helper.set_status(&status, width, colour);
        }
    }

    /// Reads lines until `/exit` or Ctrl-D: each a command, a skill or a message.
    fn converse(&mut self, editor: &mut ChatEditor) -> anyhow::Result<()> {
        let mut ahead = String::new();
        loop {
            // Typed during the last turn: a line ended with Enter is sent as it is, the rest is
            // already typed at the prompt.
            ahead.push_str(&crate::ui::typeahead::take());
            if let Some((line, rest)) = ahead.split_once('\n') {
                let line = line.to_string();
                ahead = rest.to_string();
                show_typed(&line);
                if self.line(editor, &line) == Flow::Exit {
                    break;
                }
                continue;
            }
            self.show_status(editor);
            let typed = std::mem::take(&mut ahead);
            let line = match editor.readline_with_initial(PROMPT, (&typed, "")) {
                Ok(line) => complete::joined_lines(&line),
                Err(ReadlineError::Interrupted) => {
                    warn("(Ctrl-D or /exit leaves)");
                    continue;
                }
                Err(ReadlineError::Eof) => break,
                Err(error) => return Err(error.into()),
            };
            if self.line(editor, &line) == Flow::Exit {
                break;
            }
        }
        Ok(())
    }

    /// One line typed: a command, a skill or a message, done.
    fn line(&mut self, editor: &mut ChatEditor, line: &str) -> Flow {
        let line = line.trim();
        if line.is_empty() {
            return Flow::Next;
        }
        let _ = editor.add_history_entry(line);
        self.refresh_skills(editor);
        let skills = Arc::clone(&self.skills);
        let known = |name: &str| {
            command(name).is_some() || skills.get(name).is_some() || name.starts_with("mcp__")
        };
        let message = match classify(line, known) {
            Input::Message(text) => {
                // What the user typed attaches the files it mentions (`@path`); a skill's
                // text does not.
                let attachments = self.agent.attachments(text);
                for note in &attachments.notes {
                    warn(note);
                }
                self.exchange(editor, text.to_string(), attachments.blocks);
                return Flow::Next;
            }
            Input::Command { name, arguments } => match self.command(name, arguments, editor) {
                Ok(Slash::Handled) => return Flow::Next,
                Ok(Slash::Exit) => return Flow::Exit,
                Ok(Slash::Send(text)) => text,
                // A session that cannot be started or continued: this one goes on.
                Err(error) => {
                    warn(&format!("error: {error:#}"));
                    return Flow::Next;
                }
            },
        };
        self.exchange(editor, message, Vec::new());
        Flow::Next
    }

    /// Sends `message` and runs the turn; in plan mode, a turn that ends with an answer ends
    /// with its plan to approve: approved, the session switches to default mode and carries it
    /// out; a line typed instead goes back to the model, still in plan mode.
    fn exchange(
        &mut self,
        editor: &mut ChatEditor,
        message: String,
        attached: Vec<skillet_llm::ContentBlock>,
    ) {
        let mut message = message;
        let mut attached = attached;
        while turn(
            &self.runtime,
            &mut self.agent,
            &message,
            std::mem::take(&mut attached),
        ) && self.agent.permission_mode() == Mode::Plan
        {
            message = match plan_answer(editor) {
                PlanAnswer::Approve => {
                    self.agent.set_permission_mode(Mode::Default);
                    self.settings.permission_mode = Mode::Default;
                    warn("permission mode: default");
                    PLAN_APPROVED.to_string()
                }
                PlanAnswer::Revise(text) => text,
                PlanAnswer::Keep => break,
            };
        }
    }
}

/// At most `limit` characters of `text`, with `…` when cut.
fn cut(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}…", &text[..at]).into(),
        None => text.into(),
    }
}
