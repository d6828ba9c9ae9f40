//! A skill loaded or invoked in the agent (the model's `load_skill`, the user's `/name`): its
//! arguments filled, its dynamic context run ([`skillet_skills::dynamic`]), and the rules it
//! brings for the rest of the turn ([`crate::grants`]).
//!
//! Dynamic context runs before the body is sent, in the working directory, through the `bash`
//! tool's sandbox, with a [`DYNAMIC_TIMEOUT`] and [`MAX_DYNAMIC_OUTPUT_CHARS`] of output each
//! (and [`MAX_DYNAMIC_COMMANDS`], [`DYNAMIC_TOTAL_TIMEOUT`], [`MAX_DYNAMIC_TOTAL_CHARS`] for one
//! invocation); arguments reach each command as variables ([`FilledCommand`]). It
//! never asks: a command the permissions would not let run unasked (the policy, "always", or an
//! `allowed-tools` rule of the skill itself) ends the invocation with an error saying so, and so
//! does a command on the blocklist, one that fails or one that times out. It runs only for a
//! skill trusted in a trusted project ([`skillet_library::trust::SkillTrust`]) and when skill
//! commands are on; else
//! each command is replaced by a note saying why. Commands are found in the body as read once,
//! filled, run in order, and their output put in place without being scanned again.

use std::time::Duration;

use serde_json::json;
use skillet_skills::{
    FilledCommand, Skill, dynamic, expand_running_from, not_run, render_expanded, shown_dir,
};

use crate::grants::ActiveSkill;
use crate::permission::ApprovalRequest;
use crate::tool::{ToolContext, ToolError, ToolKind};

/// How long one command of a skill's dynamic context may run.
pub const DYNAMIC_TIMEOUT: Duration = Duration::from_mins(2);
/// How long all the commands of one invocation may run together.
pub const DYNAMIC_TOTAL_TIMEOUT: Duration = Duration::from_mins(5);
/// The most commands one invocation runs; a skill with more is refused before any runs.
pub const MAX_DYNAMIC_COMMANDS: usize = 32;
/// The most characters of one command's output put in the body; the rest is cut with a note.
pub const MAX_DYNAMIC_OUTPUT_CHARS: usize = 16_000;
/// The most characters of all the commands' output of one invocation.
pub const MAX_DYNAMIC_TOTAL_CHARS: usize = 64_000;

/// Why a command was not run, as the note in its place says.
const UNTRUSTED: &str = "the project is not trusted; `skillet trust` lets its skills run commands";
/// Why a command was not run in plan mode.
const PLANNING: &str = "the session is in plan mode, where nothing runs until a plan is approved";
/// Why a command was not run when skill commands are off.
const TURNED_OFF: &str = "skill commands are off (--no-skill-shell or skill_shell = false)";

/// A skill rendered for the model, and the rules it brings.
pub struct Invoked {
    /// Layer 2, its dynamic context run or noted.
    pub text: String,
    /// Its `allowed-tools` (when trusted) and `disallowed-tools`.
    pub rules: ActiveSkill,
}

/// Renders `skill` invoked with `arguments` (`None`: loaded, not invoked), running its dynamic
/// context where it may run. An `Err` is what the invoker is told; nothing was loaded.
pub async fn invoke(
    context: &ToolContext,
    skill: &Skill,
    arguments: Option<&str>,
) -> Result<Invoked, ToolError> {
    // A pinned skill's body is the one its digest was checked over: one read, nothing swapped
    // in between.
    let checked = context.skill_trust.check(skill);
    let trusted = checked.trusted;
    let rules = ActiveSkill::new(skill, trusted);
    let body = match checked.skill_md {
        Some(bytes) => skill.body_from(bytes),
        None => skill.read_body(),
    }
    .map_err(|error| ToolError::new(format!("cannot load skill '{}': {error}", skill.name)))?;
    let names = &skill.frontmatter.arguments;
    let dir = shown_dir(skill);
    let expand = |run: &mut dyn FnMut(&FilledCommand) -> Result<String, ToolError>| {
        expand_running_from(
            &body,
            arguments,
            (names, Some(&dir), skill.first_positional()),
            run,
        )
    };
    let why_not = if !context.skill_shell {
        Some(TURNED_OFF)
    } else if !trusted {
        Some(UNTRUSTED)
    } else if context.gate.mode() == crate::permission::Mode::Plan {
        Some(PLANNING)
    } else {
        None
    };
    let expanded = if !dynamic::has_commands(&body) {
        expand(&mut |_| Ok(String::new()))?
    } else if let Some(why) = why_not {
        expand(&mut |command| Ok(not_run(&command.shown, why)))?
    } else {
        // The commands as filled, in order; then each run; then the body again with the
        // outputs, the expansion being the same both times.
        let mut commands = Vec::new();
        expand(&mut |command| {
            commands.push(command.clone());
            Ok(String::new())
        })?;
        if commands.len() > MAX_DYNAMIC_COMMANDS {
            return Err(ToolError::new(format!(
                "skill '{}' was not loaded: it runs {} commands, over the {MAX_DYNAMIC_COMMANDS} one invocation may run",
                skill.name,
                commands.len()
            )));
        }
        let started = std::time::Instant::now();
        let mut room = MAX_DYNAMIC_TOTAL_CHARS;
        let mut outputs = Vec::with_capacity(commands.len());
        for command in &commands {
            let left = DYNAMIC_TOTAL_TIMEOUT.saturating_sub(started.elapsed());
            let output = run_one(context, skill, &rules, command, left).await?;
            let output = cap(&output, room.min(MAX_DYNAMIC_OUTPUT_CHARS));
            room = room.saturating_sub(output.chars().count());
            outputs.push(output);
        }
        let mut outputs = outputs.into_iter();
        expand(&mut |_| Ok(outputs.next().unwrap_or_default()))?
    };
    Ok(Invoked {
        text: render_expanded(skill, &expanded),
        rules,
    })
}

/// Whether the skill asks to run as a subagent (`context: fork`).
pub fn is_forked(skill: &Skill) -> bool {
    skill
        .frontmatter
        .context
        .as_deref()
        .is_some_and(|context| context.eq_ignore_ascii_case("fork"))
}

/// The model a forked skill's subagent runs on: its `model` (Claude Code's `haiku`, `sonnet` and
/// `opus` named in full for Anthropic; meaningless elsewhere, so the session's), `None` for the
/// session's own (`inherit`, or none given).
pub fn fork_model(kind: skillet_llm::ProviderKind, requested: Option<&str>) -> Option<String> {
    let requested = requested?.trim();
    let alias = match requested.to_ascii_lowercase().as_str() {
        "" | "inherit" => return None,
        "haiku" => Some("claude-haiku-4-5"),
        "sonnet" => Some("claude-sonnet-4-5"),
        "opus" => Some("claude-opus-4-1"),
        _ => None,
    };
    match (alias, kind) {
        (Some(full), skillet_llm::ProviderKind::Anthropic) => Some(full.to_string()),
        (Some(_), _) => None,
        (None, _) => Some(requested.to_string()),
    }
}

/// Runs a forked skill: its rendered text as the task of a subagent with a fresh history (on
/// its model, when the skill is trusted: an untrusted one could pick any), its rules active
/// meanwhile; only the subagent's final answer comes back. Where there is no subagent to run
/// (inside one: forks do not nest), the skill's text, with a note, its rules active too.
pub async fn run_forked(
    context: &ToolContext,
    skill: &Skill,
    invoked: Invoked,
) -> Result<String, ToolError> {
    context.gate.activate(invoked.rules);
    let Some(subagent) = context.subagent.as_ref() else {
        return Ok(format!(
            "(This skill asks to run as a subagent; subagents do not start others, so it is loaded here.)\n{}",
            invoked.text
        ));
    };
    let model = if context.skill_trust.trusts(skill) {
        skill.frontmatter.model.as_deref()
    } else {
        None
    };
    let answer = subagent.run_on(&invoked.text, model).await?;
    Ok(format!(
        "The skill '{}' ran as a subagent; its answer:\n{answer}",
        skill.name
    ))
}

/// Runs one command of a skill's dynamic context, unasked, within `time_left`; its output,
/// trimmed. Permissions and the blocklist judge the command as shown (values written in); what
/// runs has them as variables.
async fn run_one(
    context: &ToolContext,
    skill: &Skill,
    rules: &ActiveSkill,
    filled: &FilledCommand,
    time_left: Duration,
) -> Result<String, ToolError> {
    let command = filled.shown.as_str();
    let failed = |why: String| {
        ToolError::new(format!(
            "skill '{}' was not loaded: its command `{}` {why}",
            skill.name,
            command.lines().next().unwrap_or_default()
        ))
    };
    if time_left.is_zero() {
        return Err(failed(format!(
            "did not run: the skill's commands took the {} s one invocation may take",
            DYNAMIC_TOTAL_TIMEOUT.as_secs()
        )));
    }
    if let Some(why) = crate::tools::bash::blocked(command) {
        return Err(failed(format!("{why}; it is on skillet's blocklist")));
    }
    let input = json!({ "command": command });
    let request = ApprovalRequest::new("bash", ToolKind::Execute, command);
    // Its own rules count before they are active: they become so once it has loaded.
    let allowed = !rules.refuses("bash", &input)
        && (context.gate.allows_unasked(&request, &input)
            || (context.gate.refusal("bash", &input).is_none() && rules.allows("bash", &input)));
    if !allowed {
        return Err(failed(
            "would need approval, and a skill's commands never ask; the skill's allowed-tools can allow it (in a trusted project), or allow commands for the session"
                .to_string(),
        ));
    }
    let ran = crate::tools::bash::run_guarded(
        &filled.run,
        &filled.env,
        context,
        DYNAMIC_TIMEOUT.min(time_left),
        true,
    )
    .await
    .map_err(|error| failed(error.0))?;
    if !ran.success {
        return Err(failed(format!(
            "failed:\n{}",
            cap(&ran.text, MAX_DYNAMIC_OUTPUT_CHARS)
        )));
    }
    Ok(ran.text.trim_end_matches(['\n', '\r']).to_string())
}

/// At most `limit` characters, the cut said.
fn cap(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_string(),
        Some((at, _)) => format!("{}\n[… output cut at {limit} characters]", &text[..at]),
    }
}
