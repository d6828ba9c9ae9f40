//! What each chat command does (`/model`, `/compact`, `/cost`, `/sessions`, `/skills`, `/init`,
//! `/clear`, `/help`), and a skill invoked by hand.

use std::fmt::Write as _;
use std::sync::Arc;

use skillet_agent::init_prompt;
use skillet_agent::permission::Mode;
use skillet_llm::Usage;
use skillet_skills::Library;

use super::closest::MAX_COMPARED_NAME_CHARS;
use super::commands::{Action, command, help_text, unknown_command};
use super::complete::ChatHelper;
use super::picker::{Picked, pick_session};
use super::replay::replay;
use super::{Chat, ChatEditor, Slash, cut};
use crate::commands::pricing::{cost, price_of};
use crate::commands::session::{TextView, find_resumed, library, start};
use crate::output::{terminal_safe, warn};
use crate::plural;

/// The longest model name `/model` takes.
const MAX_MODEL_NAME_CHARS: usize = 256;

impl Chat {
    /// Runs a chat command or a skill invoked by hand.
    pub(super) fn command(
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
            if name.starts_with("mcp__") {
                return Ok(self.mcp_prompt(name, arguments));
            }
            return Ok(self.skill(name, arguments));
        };
        match action {
            Action::Exit => return Ok(Slash::Exit),
            Action::Mode => self.mode(arguments),
            Action::AddDir => self.add_dir(arguments),
            Action::Mcp => warn(&self.agent.tool_source_report().map_or_else(
                || "no MCP servers in this session\n  hint: add [mcp_servers.NAME] to ~/.config/skillet/skillet.toml (command = \"…\" or url = \"…\"), or trust a project whose .mcp.json names some".to_string(),
                |report| terminal_safe(&report, true).into_owned(),
            )),
            Action::Help => warn(&help_text()),
            Action::Skills => warn(&skills_table(&self.skills)),
            Action::Cost => warn(&self.cost()),
            Action::Model => self.model(arguments),
            Action::Thinking => self.thinking(arguments),
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
                    &self.skill_trust,
                )?;
                self.models = vec![(self.agent.model().to_string(), Usage::default())];
                warn(&format!("new session {}", self.agent.header().id));
            }
            Action::Sessions => {
                let current = self.agent.header().id.clone();
                match pick_session(editor, &self.context, &self.settings, Some(&current))? {
                    Picked::Session(id) => {
                        self.switch_to(&id)?;
                        editor.set_helper(Some(ChatHelper::new(&self.skills, &self.context.env.cwd)));
                    }
                    Picked::Nothing => {}
                    Picked::NoneToPick => warn("no other session of this project to continue"),
                }
            }
        }
        Ok(Slash::Handled)
    }

    /// `/mode`: the permission mode, or a switch to the one named.
    /// `/mcp__SERVER__PROMPT ARGS`: the server's prompt, sent as the user's message.
    fn mcp_prompt(&mut self, name: &str, arguments: &str) -> Slash {
        let agent = &self.agent;
        let expanded = self
            .runtime
            .block_on(agent.expand_tool_source_command(name, arguments));
        match expanded {
            Some(Ok(text)) => Slash::Send(text),
            Some(Err(why)) => {
                warn(&format!("error: /{name}: {}", terminal_safe(&why, true)));
                Slash::Handled
            }
            None => {
                let known: Vec<String> = self
                    .agent
                    .tool_source_commands()
                    .into_iter()
                    .map(|(command, _)| format!("/{command}"))
                    .collect();
                warn(&format!(
                    "error: no MCP prompt /{}\n  hint: {}",
                    terminal_safe(name, false),
                    if known.is_empty() {
                        "no MCP server of this session offers prompts (/mcp lists them)".to_string()
                    } else {
                        format!("the MCP prompts are {}", known.join(", "))
                    }
                ));
                Slash::Handled
            }
        }
    }

    fn mode(&mut self, name: &str) {
        let name = name.trim();
        if name.is_empty() {
            let modes: Vec<&str> = Mode::ALL.iter().map(|mode| mode.as_str()).collect();
            warn(&format!(
                "permission mode: {} (others: /mode {})",
                self.agent.permission_mode().as_str(),
                modes.join(", ")
            ));
            // What "always" approved so far, as rules would say it.
            for rule in self.agent.approved_rules() {
                warn(&format!(
                    "  always allowed this session: {}",
                    terminal_safe(&rule, false)
                ));
            }
            return;
        }
        match Mode::parse(name) {
            Some(mode) => {
                self.agent.set_permission_mode(mode);
                self.settings.permission_mode = mode;
                warn(&format!("permission mode: {}", mode.as_str()));
            }
            None => warn(&format!(
                "error: no permission mode {}\n  hint: default, accept-edits or plan",
                terminal_safe(&cut(name, MAX_MODEL_NAME_CHARS), false)
            )),
        }
    }

    /// `/add-dir DIR`: a folder the session may read and write in, from now on (kept by
    /// `/clear`).
    fn add_dir(&mut self, dir: &str) {
        let dir = dir.trim();
        if dir.is_empty() {
            let added = self.agent.added_dirs();
            if added.is_empty() {
                warn("no folders added; /add-dir DIR adds one");
            }
            for dir in added {
                warn(&format!(
                    "added: {}",
                    terminal_safe(&dir.display().to_string(), false)
                ));
            }
            return;
        }
        match self.agent.add_dir(std::path::Path::new(dir)) {
            Ok(real) => {
                warn(&format!(
                    "added {}: file tools read and write there, commands may write there",
                    terminal_safe(&real.display().to_string(), false)
                ));
                self.settings.add_dirs.push(real);
            }
            Err(why) => warn(&format!("error: {}", terminal_safe(&why, false))),
        }
    }

    /// A skill invoked by hand: its text to send, or why not. Its commands (and a forked
    /// skill's subagent) run now, shown as a turn is; Ctrl-C stops them and nothing is sent.
    fn skill(&mut self, name: &str, arguments: &str) -> Slash {
        let skills = Arc::clone(&self.skills);
        let Some(skill) = skills.get(name) else {
            warn(&unknown_command(name, &self.skills));
            return Slash::Handled;
        };
        if !skill.user_invocable() {
            warn(&format!(
                "/{name} can only be used by the model (user-invocable: false)"
            ));
            return Slash::Handled;
        }
        if skillet_agent::invoke::is_forked(skill) {
            warn(&format!("running /{name} as a subagent (context: fork)…"));
        }
        let mut view = TextView::new();
        let mut show = |event| view.show(&event);
        let agent = &mut self.agent;
        let outcome = self.runtime.block_on(async {
            tokio::select! {
                result = agent.invoke_skill(skill, arguments, &mut show) => Some(result),
                _ = tokio::signal::ctrl_c() => None,
            }
        });
        view.end_line();
        let Some(outcome) = outcome else {
            warn(&format!("(cancelled) /{name}: nothing was sent"));
            return Slash::Handled;
        };
        match outcome {
            Ok(text) => {
                if let Some(note) = skill.shadow_note() {
                    warn(&note);
                }
                if let Some(notice) = self.agent.audit_notice(skill) {
                    warn(&format!("note: {}", terminal_safe(&notice, false)));
                }
                Slash::Send(text)
            }
            Err(error) => {
                warn(&format!(
                    "error: /{name}: {}",
                    terminal_safe(&error.0, true)
                ));
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

    /// `/thinking [TOKENS|off]`.
    fn thinking(&mut self, argument: &str) {
        let said = |budget: Option<u32>| {
            budget.map_or_else(
                || "off".to_string(),
                |budget| format!("up to {budget} tokens, shown dimmed"),
            )
        };
        let budget = match argument.trim() {
            "" => {
                let mut text = format!("thinking: {}", said(self.agent.thinking()));
                if self.settings.provider != skillet_llm::ProviderKind::Anthropic {
                    text.push_str(
                        " (asked of Anthropic models only; a server that sends its reasoning has it shown)",
                    );
                }
                text.push_str(
                    "\n  /thinking TOKENS (at least 1024) or /thinking off, from the next turn on",
                );
                warn(&text);
                return;
            }
            "off" | "0" => None,
            number => match number.parse::<u32>() {
                Ok(budget) if skillet_session::settings::thinking_budget_ok(budget) => Some(budget),
                _ => {
                    warn(&format!(
                        "error: '{}' is not {}",
                        terminal_safe(&cut(number, MAX_COMPARED_NAME_CHARS), false),
                        skillet_session::settings::THINKING_BUDGET
                    ));
                    return;
                }
            },
        };
        if self.agent.set_thinking(budget) {
            self.settings.thinking = budget;
            warn(&format!("thinking: {} from the next turn on", said(budget)));
        } else {
            warn("error: thinking cannot be switched while a turn runs");
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

    /// The status line: the model, how much of its context window the conversation fills, what
    /// the session cost so far where the price is known, and the permission mode when it is not
    /// the default.
    pub(super) fn status(&self) -> String {
        let mut parts = vec![self.agent.model().to_string()];
        let (used, window) = self.agent.context_use();
        if window > 0 {
            #[expect(
                clippy::cast_precision_loss,
                reason = "a share of a token count, shown rounded"
            )]
            let share = used as f64 * 100.0 / window as f64;
            parts.push(format!("context {share:.0}% of {}k", window / 1000));
        }
        let (dollars, priced, unknown) = self.spent();
        if !priced.is_empty() && unknown.is_empty() {
            parts.push(dollars_text(dollars));
        }
        if let Some(budget) = self.agent.thinking() {
            parts.push(if budget % 1000 == 0 {
                format!("thinking {}k", budget / 1000)
            } else {
                format!("thinking {budget}")
            });
        }
        let mode = self.agent.permission_mode();
        if mode != skillet_agent::permission::Mode::Default {
            parts.push(format!("{} mode", mode.as_str()));
        }
        parts.join(" · ")
    }

    /// `/cost`: the tokens so far, and what they cost at the list price of each model used.
    fn cost(&self) -> String {
        let total = self.agent.usage();
        let mut text = total.summary();
        let (dollars, priced, unknown) = self.spent();
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

    /// What the session cost so far at list prices: dollars, the models priced, and those whose
    /// price is unknown (not counted).
    fn spent(&self) -> (f64, Vec<String>, Vec<String>) {
        let total = self.agent.usage();
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
        (dollars, priced, unknown)
    }

    /// Continues another session of this project (`/sessions`).
    fn switch_to(&mut self, id: &str) -> anyhow::Result<()> {
        let (context, resumed) = find_resumed(&self.context, &self.settings, Some(id))?;
        let context = context.unwrap_or_else(|| self.context.at(self.context.env.cwd.clone()));
        // Another folder: its skills, the trust recorded for it and its settings (one
        // project's trust never applies in another).
        let (skills, skill_trust, settings) = if context.env.cwd == self.context.env.cwd {
            (
                Arc::clone(&self.skills),
                self.skill_trust.clone(),
                self.settings.clone(),
            )
        } else {
            let skills = library(&context);
            let decided = crate::commands::trust::recorded_decided(&context, &skills);
            let settings = crate::commands::session::settings(
                &context,
                &self.args,
                false,
                decided.project_trusted,
            )?;
            (skills, decided.skills, settings)
        };
        let agent = start(
            &context,
            &settings,
            &skills,
            resumed,
            self.permissions.clone(),
            None,
            &skill_trust,
        )?;
        self.models = vec![(agent.model().to_string(), agent.usage())];
        self.settings = settings;
        agent.model().clone_into(&mut self.settings.model);
        if context.env.cwd != self.context.env.cwd {
            self.watching = super::Watching::start(&context, &skills);
        }
        (self.context, self.skills, self.agent, self.skill_trust) =
            (context, skills, agent, skill_trust);
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

/// `/skills`: each skill, who may invoke it, and where it comes from.
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
            terminal_safe(&skill.origin(), false)
        );
    }
    if out.is_empty() {
        out.push_str("no skills found; `skillet skills list` shows where skillet looks");
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
