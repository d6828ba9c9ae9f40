//! What `run` and `chat` share: settings, the provider, the skills, the agent and its
//! transcript (new or resumed), and how events are shown.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Value, json};
use skillet_agent::permission::Permissions;
use skillet_agent::transcript::{self, Transcript};
use skillet_agent::{Agent, AgentEvent};
use skillet_library::trust::SkillTrust;
use skillet_session::builder;
use skillet_skills::{Library, discover, find_git_root};

use super::Context;
use super::matching::stderr_events;
use crate::args::AgentArgs;
use crate::env;
use crate::output::{terminal_safe, warn};
use crate::settings::{Settings, SettingsError, Sources, user_config_dir, user_data_dir};
use crate::ui::{self, Attrs, Screen};

/// Resolves the settings (printing what a project file tried to set); an `Err` is a usage
/// error to print before exiting with 2.
pub fn settings(
    context: &Context,
    args: &AgentArgs,
    yes: bool,
    trusted_project: bool,
) -> Result<Settings, SettingsError> {
    let project_root = context.project_root();
    let settings = Settings::resolve(
        &args.flags(),
        yes,
        &Sources {
            var: &env::var,
            project_root: &project_root,
            user_config_dir: user_config_dir(),
            user_data_dir: user_data_dir(),
            trusted_project,
        },
    )?;
    for warning in &settings.warnings {
        warn(warning);
    }
    Ok(settings)
}

/// The discovered skills, with load problems shown once on stderr.
pub fn library(context: &Context) -> Arc<Library> {
    let library = discover(&context.roots);
    let problems = library.diagnostics().len()
        + library
            .skills()
            .iter()
            .map(|s| s.diagnostics.len())
            .sum::<usize>();
    if problems > 0 {
        warn(&format!(
            "note: {problems} problems while loading skills; `skillet skills list` shows them"
        ));
    }
    Arc::new(library)
}

/// The skills of the session working in `context`, which may act, and its settings: those
/// found where skillet started (`started_in`), the trust settled there and the settings
/// resolved with it, or, for a resumed session that works elsewhere, that folder's skills, the
/// trust recorded for it (nothing is asked) and the settings resolved again there, so that one
/// project's trust never applies in another.
pub fn skills_at(
    context: &Context,
    started_in: &Path,
    here: (Arc<Library>, super::trust::Decided, Settings),
    args: &AgentArgs,
    yes: bool,
) -> Result<(Arc<Library>, SkillTrust, Settings), SettingsError> {
    let (skills_here, decided, settings_here) = here;
    if context.env.cwd == started_in {
        return Ok((skills_here, decided.skills, settings_here));
    }
    let skills = library(context);
    let decided = super::trust::recorded_decided(context, &skills);
    let settings = settings(context, args, yes, decided.project_trusted)?;
    Ok((skills, decided.skills, settings))
}

pub use skillet_session::builder::Resumed;

/// The session `--resume` names, if any (`latest`: this project's newest), and the context it
/// runs in: its own working directory, wherever skillet was started (`None`: the given one).
pub fn find_resumed(
    context: &Context,
    settings: &Settings,
    resume: Option<&str>,
) -> anyhow::Result<(Option<Context>, Option<Resumed>)> {
    let Some(id) = resume else {
        return Ok((None, None));
    };
    let path = session_path(&settings.sessions_dir, id, &context.env.cwd)?;
    // Locked before it is read: another skillet writing to it now is refused here, before any
    // work, and none can write between the reading and the appending.
    let locked = Transcript::append_to(&path)?;
    let transcript::Loaded {
        header,
        messages: history,
        model,
    } = transcript::load_session(&path)?;
    let model = model.unwrap_or_else(|| header.model.clone());
    // A session whose folder is gone cannot be asked for: a usage error, like an unknown id.
    let cwd = std::fs::canonicalize(&header.cwd).map_err(|_| {
        crate::UsageError::new(format!(
            "session {} worked in {}, which is gone; it cannot be resumed there",
            header.id,
            terminal_safe(&header.cwd.display().to_string(), false)
        ))
        .with_hint("`skillet sessions` lists this project's sessions")
    })?;
    if cwd != context.env.cwd {
        warn(&format!(
            "note: session {} works in {}; continuing there",
            header.id,
            terminal_safe(&cwd.display().to_string(), false)
        ));
    }
    Ok((
        Some(context.at(cwd)),
        Some(Resumed {
            transcript: locked,
            header,
            history,
            model,
        }),
    ))
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
    Ok(builder::start(
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
    )?)
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

/// The transcript of a session id, or for `latest` of the session of the project `cwd` is in
/// (its git root, else `cwd` itself) written to last in which the user said something (a
/// session left empty, by `/clear` then `/exit`, is not one to continue). A session that cannot
/// be named is a usage error (exit 2); a sessions folder that cannot be read is a failure (1).
fn session_path(dir: &Path, id: &str, cwd: &Path) -> anyhow::Result<PathBuf> {
    use crate::UsageError;
    const ID_HINT: &str = "`skillet sessions` lists this project's sessions";
    if id != crate::args::LATEST {
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(UsageError::new(format!(
                "--resume: '{}' is not a session id (they look like 20261130-042927-29b8)",
                terminal_safe(id, false)
            ))
            .with_hint(ID_HINT)
            .into());
        }
        let path = dir.join(format!("{id}.jsonl"));
        if !path.is_file() {
            return Err(UsageError::new(format!(
                "--resume: no session '{id}' in {}",
                dir.display()
            ))
            .with_hint(ID_HINT)
            .into());
        }
        return Ok(path);
    }
    let latest = super::sessions::project_sessions(dir, cwd, 1)
        .with_context(|| format!("cannot read {}", dir.display()))?;
    let latest = latest.into_iter().next().map(|s| s.path);
    latest.ok_or_else(|| {
        let project = find_git_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
        UsageError::new(format!(
            "no session of this project ({}) to continue in {}",
            project.display(),
            dir.display()
        ))
        .with_hint("`--resume ID` continues a session of another project; `skillet run \"PROMPT\"` starts one")
        .into()
    })
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
            AgentEvent::Text(text) if depth == 0 => self.screen.text(text),
            AgentEvent::Text(text) => self.screen.subagent_text(text),
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
