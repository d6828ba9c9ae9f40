//! What `run` and `chat` share: settings, the provider, the skills, the agent and its
//! transcript (new or resumed), and how events are shown.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Value, json};
use skillet_agent::permission::Permissions;
use skillet_agent::transcript::{self, Transcript};
use skillet_agent::{Agent, AgentConfig, AgentEvent, SkillMatch, preview};
use skillet_llm::{Anthropic, OpenAi, Provider, ProviderKind, Transport};
use skillet_skills::{Library, discover, find_git_root};

use super::Context;
use crate::args::AgentArgs;
use crate::env;
use crate::output::warn;
use crate::settings::{Settings, Sources, user_config_dir, user_data_dir};

/// Resolves the settings; an `Err` is a usage error to print before exiting with 2.
pub fn settings(context: &Context, args: &AgentArgs, yes: bool) -> Result<Settings, String> {
    let project_root = find_git_root(&context.env.cwd).unwrap_or_else(|| context.env.cwd.clone());
    Settings::resolve(
        args,
        yes,
        &Sources {
            var: &env::var,
            project_root: &project_root,
            user_config_dir: user_config_dir(),
            user_data_dir: user_data_dir(),
        },
    )
}

/// The provider the settings name.
pub fn provider(settings: &Settings) -> anyhow::Result<Provider> {
    let transport = Transport::new()?;
    Ok(match settings.provider {
        ProviderKind::Anthropic => Provider::Anthropic(Anthropic::new(
            transport,
            &settings.base_url,
            settings.api_key.as_deref().unwrap_or_default(),
            &settings.model,
        )),
        ProviderKind::OpenAi => Provider::OpenAi(OpenAi::new(
            transport,
            &settings.base_url,
            settings.api_key.as_deref(),
            &settings.model,
        )),
    })
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

/// A new or resumed agent with its transcript attached.
pub fn start(
    context: &Context,
    settings: &Settings,
    library: &Arc<Library>,
    resume: Option<&str>,
    permissions: Permissions,
    first_message: Option<&str>,
) -> anyhow::Result<Agent> {
    let provider = provider(settings)?;
    let config = AgentConfig {
        cwd: context.env.cwd.clone(),
        max_tokens: settings.max_tokens,
        max_steps: settings.max_steps,
        stream: settings.stream,
        placement: settings.placement,
        catalog_budget: settings.catalog_budget,
        permissions,
        skill_match: settings.skill_match,
        skill_index: match settings.skill_match {
            SkillMatch::Off => None,
            _ => Some(Arc::new(super::matching::session_index(library))),
        },
        first_message: first_message.map(str::to_string),
    };
    let agent = match resume {
        None => {
            let mut agent = Agent::new(provider, library, &config);
            let transcript = Transcript::create(&settings.sessions_dir, agent.header())?;
            agent.attach_transcript(transcript);
            agent
        }
        Some(id) => {
            let path = session_path(&settings.sessions_dir, id)?;
            let (header, history) = transcript::load(&path)?;
            let mut agent = Agent::resume(provider, library, &config, header, history);
            agent.attach_transcript(Transcript::append_to(&path)?);
            warn(&format!(
                "resumed session {} ({} messages)",
                agent.header().id,
                agent.history().len()
            ));
            agent
        }
    };
    if let Some(summary) = agent.catalog_report().summary() {
        warn(&format!("warning: {summary}"));
    }
    Ok(agent)
}

/// The transcript of a session id, or of the latest session for `latest`.
fn session_path(dir: &Path, id: &str) -> anyhow::Result<PathBuf> {
    if id != "latest" {
        let path = dir.join(format!("{id}.jsonl"));
        anyhow::ensure!(path.is_file(), "no session '{id}' in {}", dir.display());
        return Ok(path);
    }
    let mut sessions: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("no sessions yet in {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    sessions.sort();
    sessions
        .pop()
        .with_context(|| format!("no sessions yet in {}", dir.display()))
}

/// Shows events as text: the answer on stdout as it streams, one `> TOOL: preview` line per
/// tool call on stderr, notices on stderr.
pub struct TextView {
    /// Whether the last thing written to stdout ended a line.
    at_line_start: bool,
}

impl TextView {
    /// A view at the start of a line.
    pub fn new() -> Self {
        Self {
            at_line_start: true,
        }
    }

    /// Shows one event.
    pub fn show(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::Text(text) => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
                self.at_line_start = text.ends_with('\n');
            }
            AgentEvent::ToolResult { name, content, .. } => {
                self.end_line();
                warn(&format!("> {name}: {}", preview(content)));
            }
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.end_line();
                warn(&format!(
                    "retrying (attempt {attempt}) in {delay_ms} ms: {reason}"
                ));
            }
            AgentEvent::Notice(text) => {
                self.end_line();
                warn(&format!("note: {text}"));
            }
            AgentEvent::ToolCall { .. } | AgentEvent::Usage(_) => {}
        }
    }

    /// Ends the answer's line, if it is open.
    pub fn end_line(&mut self) {
        if !self.at_line_start {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\n");
            let _ = out.flush();
            self.at_line_start = true;
        }
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
    }
}

/// A runtime for one command.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
