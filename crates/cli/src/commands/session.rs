//! What `run` and `chat` share: settings, the provider, the skills, the agent and its
//! transcript (new or resumed), and how events are shown.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Value, json};
use skillet_agent::permission::Permissions;
use skillet_agent::{Agent, AgentEvent};
use skillet_library::trust::SkillTrust;
use skillet_session::builder;
use skillet_session::prepare::{self, ResumeError};
use skillet_skills::Library;

use super::Context;
use super::matching::stderr_events;
use crate::args::AgentArgs;
use crate::output::{terminal_safe, warn};
use crate::settings::{Settings, SettingsError};
use crate::ui::{self, Attrs, Screen};

/// Resolves the settings (printing what a project file tried to set); an `Err` is a usage
/// error to print before exiting with 2.
pub fn settings(
    context: &Context,
    args: &AgentArgs,
    yes: bool,
    trusted_project: bool,
) -> Result<Settings, SettingsError> {
    prepare::settings(
        context,
        &args.flags(),
        yes,
        trusted_project,
        &mut stderr_report(),
    )
}

/// The discovered skills, with load problems shown once on stderr.
pub fn library(context: &Context) -> Arc<Library> {
    prepare::library(context, &mut stderr_report())
}

/// The skills of the session working in `context`, which may act, and its settings
/// ([`prepare::skills_at`]).
pub fn skills_at(
    context: &Context,
    started_in: &Path,
    here: (Arc<Library>, skillet_session::trust::Decided, Settings),
    args: &AgentArgs,
    yes: bool,
) -> Result<(Arc<Library>, SkillTrust, Settings), SettingsError> {
    prepare::skills_at(
        context,
        started_in,
        here,
        (&args.flags(), yes),
        &mut stderr_report(),
    )
}

pub use skillet_session::builder::Resumed;

/// The session `--resume` names, if any, and the context it runs in
/// ([`prepare::find_resumed`]); a session that cannot be named is a usage error (exit 2), a
/// sessions folder or transcript that cannot be read a failure (1).
pub fn find_resumed(
    context: &Context,
    settings: &Settings,
    resume: Option<&str>,
) -> anyhow::Result<(Option<Context>, Option<Resumed>)> {
    prepare::find_resumed(
        context,
        &settings.sessions_dir,
        resume,
        &mut stderr_report(),
    )
    .map_err(|error| match error {
        ResumeError::Usage { message, hint } => {
            crate::UsageError::new(message).with_hint(hint).into()
        }
        other => other.into(),
    })
}

/// A new or resumed agent with its transcript attached, built by [`skillet_session::builder`];
/// what it says is shown on stderr.
pub fn start(
    context: &Context,
    settings: &Settings,
    library: &Arc<Library>,
    resume: Option<Resumed>,
    permissions: Permissions,
    first_message: Option<&str>,
    skill_trust: &SkillTrust,
) -> anyhow::Result<Agent> {
    builder::start(
        builder::Start {
            workspace: context,
            settings,
            library,
            skill_trust,
            permissions,
            first_message,
            resume,
        },
        &mut stderr_report(),
    )
    .map_err(|error| match error {
        builder::StartError::AddDir(_) => crate::UsageError::new(error.to_string())
            .with_hint("--add-dir takes a folder that exists (relative to the working directory, or absolute)")
            .into(),
        other => other.into(),
    })
}

/// The index a session ranks `library` with (none when matching is off), its model's progress
/// on stderr.
pub fn skill_index(
    settings: &Settings,
    library: &Arc<Library>,
) -> Option<Arc<skillet_library::index::SkillIndex>> {
    builder::skill_index(settings, library, &mut stderr_report())
}

/// What building a session says, shown on stderr as it is said: notes as warnings, the model's
/// events as `skills match` shows them.
pub fn stderr_report() -> impl builder::Report {
    struct Stderr<E>(E);
    impl<E: FnMut(skillet_library::model::ModelEvent<'_>)> builder::Report for Stderr<E> {
        fn note(&mut self, text: &str) {
            warn(text);
        }

        fn model(&mut self, event: skillet_library::model::ModelEvent<'_>) {
            (self.0)(event);
        }
    }
    Stderr(stderr_events())
}

/// Shows events as text (see [`crate::ui`]): the answer on stdout as it streams (Markdown
/// rendered on a terminal, as written to a pipe), each tool call on stderr as the model made it
/// (`> bash(git status)`) with its result under it (`  ⎿ (no output)`), a subagent's calls
/// indented, notices on stderr, and a spinner on a terminal. A view is one turn: it begins when
/// made and ends with [`TextView::end_line`] (or when dropped).
pub struct TextView {
    screen: &'static Screen,
}

impl TextView {
    /// A view of a turn that begins now (the spinner starts).
    pub fn new() -> Self {
        let screen = ui::screen();
        screen.begin_turn();
        Self { screen }
    }

    /// Shows one event. Everything shown is untrusted and passes [`terminal_safe`] before it
    /// is styled.
    pub fn show(&mut self, event: &AgentEvent) {
        self.show_at(event, 0);
    }

    /// An event `depth` subagents in.
    fn show_at(&self, event: &AgentEvent, depth: usize) {
        match event {
            AgentEvent::Text(text) | AgentEvent::Thinking(text) if depth > 0 => {
                self.screen.subagent_text(text);
            }
            AgentEvent::Text(text) => self.screen.text(text),
            AgentEvent::Thinking(text) => self.screen.thinking(text),
            AgentEvent::ToolCall { name, input, .. } => self.screen.tool_call(name, input, depth),
            AgentEvent::ToolResult {
                content, is_error, ..
            } => self.screen.tool_result(content, *is_error, depth),
            AgentEvent::Subagent { event, .. } => self.show_at(event, depth + 1),
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => self.screen.notice(
                &format!("retrying (attempt {attempt}) in {delay_ms} ms: {reason}"),
                Attrs::YELLOW,
                depth,
            ),
            AgentEvent::Notice(text) => {
                self.screen
                    .notice(&format!("note: {text}"), Attrs::YELLOW, depth);
            }
            AgentEvent::Usage(usage) => self.screen.usage(usage.output_tokens),
        }
    }

    /// Ends the turn: the answer's last line is shown and ended, the spinner erased.
    pub fn end_line(&mut self) {
        self.screen.end_turn();
    }
}

impl Drop for TextView {
    fn drop(&mut self) {
        self.screen.end_turn();
    }
}

/// An event as a JSON object, for `run --json`.
pub fn event_json(event: &AgentEvent) -> Value {
    match event {
        AgentEvent::Text(text) => json!({"type": "text", "text": text}),
        AgentEvent::Thinking(text) => json!({"type": "thinking", "text": text}),
        AgentEvent::ToolCall { id, name, input } => {
            json!({"type": "tool_call", "id": id, "name": name, "input": input})
        }
        AgentEvent::ToolResult {
            id,
            name,
            content,
            is_error,
        } => {
            json!({"type": "tool_result", "id": id, "name": name, "content": content, "is_error": is_error})
        }
        AgentEvent::Retrying {
            attempt,
            delay_ms,
            reason,
        } => {
            json!({"type": "retrying", "attempt": attempt, "delay_ms": delay_ms, "reason": reason})
        }
        AgentEvent::Notice(text) => json!({"type": "notice", "text": text}),
        AgentEvent::Usage(usage) => json!({"type": "usage", "usage": usage}),
        AgentEvent::Subagent { call_id, event } => {
            let mut inner = event_json(event);
            inner["subagent"] = json!(call_id);
            inner
        }
    }
}

/// A runtime for one command.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The project instructions a new session read into its prompt, to list at the start: each
/// file, what the budget cut, and what could not be read. `None`: nothing to say.
pub fn instructions_text(
    instructions: &skillet_agent::instructions::Instructions,
) -> Option<String> {
    use std::fmt::Write as _;
    let mut text = String::new();
    if !instructions.files.is_empty() {
        let files: Vec<String> = instructions
            .files
            .iter()
            .map(|file| {
                let path = terminal_safe(&file.path.display().to_string(), false).into_owned();
                if file.cut() {
                    format!(
                        "{path} (cut: {} of {} bytes fit the {}-byte budget)",
                        file.included(),
                        file.size,
                        instructions.budget
                    )
                } else {
                    path
                }
            })
            .collect();
        let _ = write!(text, "instructions: {}", files.join(", "));
    }
    for skipped in &instructions.skipped {
        if !text.is_empty() {
            text.push('\n');
        }
        let _ = write!(
            text,
            "note: instructions {} not read: {}",
            terminal_safe(&skipped.path.display().to_string(), false),
            terminal_safe(&skipped.reason, false)
        );
    }
    (!text.is_empty()).then_some(text)
}
