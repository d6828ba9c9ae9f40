//! Claude Code's hooks, read as it writes them (`"hooks"` in `~/.claude/settings.json` and, in a
//! trusted project, `.claude/settings.json` and `.claude/settings.local.json`), run with its
//! JSON protocol at four points of a turn:
//!
//! - `PreToolUse`, before a call runs: exit 2, `"decision": "block"` or a `permissionDecision`
//!   of `deny` refuses the call, the model told why (stderr, or the reason);
//! - `PostToolUse`, after it ran: exit 2 or `"decision": "block"` adds the reason to the
//!   result the model gets;
//! - `UserPromptSubmit`, before a message is sent: exit 2 or `"decision": "block"` stops it (the
//!   user is told why, nothing is sent); what a hook prints on success (or its
//!   `additionalContext`) goes with the message as context;
//! - `Stop`, when the model ends its turn: exit 2 or `"decision": "block"` sends the reason back
//!   and the turn goes on (`stop_hook_active` is then true), at most [`MAX_STOP_CONTINUATIONS`]
//!   times a turn.
//!
//! Any other exit code, a timeout, or output that is not JSON is not a decision: the user is
//! told (`hook … failed`), and the turn goes on as if there were no hook.
//!
//! A hook can refuse, never approve: `permissionDecision: allow` does not skip the question,
//! since only the user's permissions allow (a trusted project's hook must not widen them).
//!
//! Each hook runs as a `bash` command does ([`crate::sandbox`]): in the working directory, in
//! the sandbox, with the files that run code later read-only, credentials withheld, its process
//! group ended with it. It gets the event as JSON on stdin (`session_id`, `transcript_path`,
//! `cwd`, `permission_mode`, `hook_event_name`, and the event's own fields) and
//! `CLAUDE_PROJECT_DIR`. Tool names are Claude Code's (`Bash`, `Write`, `Edit`, `Read`, `Glob`,
//! `Grep`, `Task`, `TodoWrite`; `mcp__…` as they are) and so are their inputs' keys (`file_path`,
//! `old_string`, `new_string`), so hooks written for Claude Code match and read them as there.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

/// How long a hook may run when its entry gives no `timeout`.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_mins(1);
/// The longest `timeout` honoured.
pub const MAX_HOOK_TIMEOUT: Duration = Duration::from_mins(10);
/// The most hooks read from all the settings files.
pub const MAX_HOOKS: usize = 64;
/// The most bytes of a hook's stdout, and of its stderr, kept.
pub const MAX_HOOK_OUTPUT_BYTES: usize = 64 * 1024;
/// How many times `Stop` hooks may send a turn on.
pub const MAX_STOP_CONTINUATIONS: usize = 3;

/// The events hooks run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// Before a tool call runs.
    PreToolUse,
    /// After a tool call ran.
    PostToolUse,
    /// Before the user's message is sent.
    UserPromptSubmit,
    /// When the model ends its turn.
    Stop,
}

impl HookEvent {
    /// Every event, by Claude Code's name.
    pub const ALL: [Self; 4] = [
        Self::PreToolUse,
        Self::PostToolUse,
        Self::UserPromptSubmit,
        Self::Stop,
    ];

    /// Claude Code's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::Stop => "Stop",
        }
    }
}

/// One hook: a command run at an event, for the tools its matcher names.
#[derive(Debug, Clone)]
pub struct Hook {
    /// When it runs.
    pub event: HookEvent,
    /// For tool events, the tools it runs for: a regular expression over Claude Code's tool
    /// names, matched whole (`Bash`, `Edit|Write`, `mcp__.*`); `None` for all.
    pub matcher: Option<regex::Regex>,
    /// The command, run by `bash -c`.
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
    /// The settings file it comes from.
    pub source: PathBuf,
}

impl Hook {
    /// One line saying what it is: `PreToolUse Bash: ./guard.sh`.
    pub fn describe(&self) -> String {
        let matcher = self.matcher.as_ref().map_or_else(
            || "*".to_string(),
            |m| {
                let pattern = m.as_str();
                pattern
                    .strip_prefix("^(?:")
                    .and_then(|p| p.strip_suffix(")$"))
                    .unwrap_or(pattern)
                    .to_string()
            },
        );
        format!("{} {matcher}: {}", self.event.name(), self.command)
    }

    fn matches(&self, tool: Option<&str>) -> bool {
        match (&self.matcher, tool) {
            (Some(matcher), Some(tool)) => matcher.is_match(tool),
            _ => true,
        }
    }
}

/// The hooks a session runs.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    hooks: Vec<Hook>,
    /// The session's id and transcript, given to each hook.
    session: std::sync::Arc<std::sync::Mutex<(String, Option<PathBuf>)>>,
}

impl Hooks {
    /// These hooks.
    pub fn new(hooks: Vec<Hook>) -> Self {
        Self {
            hooks,
            session: std::sync::Arc::default(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Every hook.
    pub fn all(&self) -> &[Hook] {
        &self.hooks
    }

    /// The session the hooks are told about.
    pub fn set_session(&self, id: &str, transcript: Option<&Path>) {
        if let Ok(mut session) = self.session.lock() {
            *session = (id.to_string(), transcript.map(Path::to_path_buf));
        }
    }

    fn for_event(&self, event: HookEvent, tool: Option<&str>) -> Vec<&Hook> {
        self.hooks
            .iter()
            .filter(|hook| hook.event == event && hook.matches(tool))
            .collect()
    }
}

/// The hooks of one Claude Code settings file's text (`path` is where it is, for messages): its
/// `"hooks"` object, each event's entries with their `matcher` and `command` hooks (other
/// handler types, and events other than the four, are not run, and said in the `Err`s). A file
/// that is not JSON, or a hook that is malformed, is an `Err` naming it and the field.
pub fn parse_settings(text: &str, path: &Path) -> (Vec<Hook>, Vec<String>) {
    let shown = path.display();
    let mut hooks = Vec::new();
    let mut problems = Vec::new();
    let settings: Value = match serde_json::from_str(text) {
        Ok(settings) => settings,
        Err(error) => {
            problems.push(format!("{shown}: not JSON ({error}); its hooks do not run"));
            return (hooks, problems);
        }
    };
    let Some(events) = settings.get("hooks") else {
        return (hooks, problems);
    };
    let Some(events) = events.as_object() else {
        problems.push(format!(
            "{shown}: `hooks` is not an object; its hooks do not run"
        ));
        return (hooks, problems);
    };
    for (name, entries) in events {
        let Some(event) = HookEvent::ALL
            .into_iter()
            .find(|event| event.name() == name)
        else {
            problems.push(format!(
                "{shown}: hooks.{name}: skillet runs PreToolUse, PostToolUse, UserPromptSubmit and Stop hooks; these do not run"
            ));
            continue;
        };
        for (index, entry) in entries.as_array().into_iter().flatten().enumerate() {
            let at = format!("{shown}: hooks.{name}[{index}]");
            let matcher = match entry.get("matcher").and_then(Value::as_str) {
                None | Some("" | "*") => None,
                Some(pattern) => match regex::Regex::new(&format!("^(?:{pattern})$")) {
                    Ok(regex) => Some(regex),
                    Err(error) => {
                        problems.push(format!("{at}.matcher: not a regular expression ({error})"));
                        continue;
                    }
                },
            };
            for (position, handler) in entry
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let at = format!("{at}.hooks[{position}]");
                if handler.get("type").and_then(Value::as_str) != Some("command") {
                    problems.push(format!(
                        "{at}: only `\"type\": \"command\"` hooks run in skillet"
                    ));
                    continue;
                }
                let Some(command) = handler
                    .get("command")
                    .and_then(Value::as_str)
                    .filter(|command| !command.trim().is_empty())
                else {
                    problems.push(format!("{at}.command: missing"));
                    continue;
                };
                let timeout = handler
                    .get("timeout")
                    .and_then(Value::as_f64)
                    .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
                    .map_or(DEFAULT_HOOK_TIMEOUT, |seconds| {
                        Duration::from_secs_f64(seconds.min(MAX_HOOK_TIMEOUT.as_secs_f64()))
                    });
                if hooks.len() == MAX_HOOKS {
                    problems.push(format!(
                        "{shown}: more than {MAX_HOOKS} hooks; the rest do not run"
                    ));
                    return (hooks, problems);
                }
                hooks.push(Hook {
                    event,
                    matcher: matcher.clone(),
                    command: command.to_string(),
                    timeout,
                    source: path.to_path_buf(),
                });
            }
        }
    }
    (hooks, problems)
}

/// What the hooks of one event decided.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// Why the action is blocked (`None`: it is not).
    pub block: Option<String>,
    /// Context for the model (`UserPromptSubmit`'s output, `additionalContext`).
    pub context: Vec<String>,
    /// What the user is told (a hook failed, a `systemMessage`).
    pub notes: Vec<String>,
}

/// Claude Code's name for a skillet tool, and its input with Claude Code's keys.
pub fn claude_code_tool(name: &str, input: &Value) -> (String, Value) {
    let renamed = match name {
        "bash" => "Bash",
        "write_file" => "Write",
        "edit_file" => "Edit",
        "read_file" => "Read",
        "glob" => "Glob",
        "grep" => "Grep",
        "task" => "Task",
        "todo_write" => "TodoWrite",
        other => other,
    };
    let mut input = input.clone();
    if let Some(object) = input.as_object_mut() {
        for (ours, theirs) in [
            ("path", "file_path"),
            ("old_text", "old_string"),
            ("new_text", "new_string"),
        ] {
            if let Some(value) = object.remove(ours) {
                object.insert(theirs.to_string(), value);
            }
        }
    }
    (renamed.to_string(), input)
}

/// Runs the hooks of `event` (for `tool`, Claude Code's name, on tool events) with `fields`
/// added to the common input, all at once, and reads what they decided.
pub(crate) async fn run(
    context: &crate::tool::ToolContext,
    event: HookEvent,
    tool: Option<&str>,
    fields: Value,
) -> Decision {
    let hooks = context.hooks.for_event(event, tool);
    if hooks.is_empty() {
        return Decision::default();
    }
    let (session_id, transcript) = context
        .hooks
        .session
        .lock()
        .map(|session| session.clone())
        .unwrap_or_default();
    let mut input = json!({
        "session_id": session_id,
        "transcript_path": transcript.map(|path| path.display().to_string()).unwrap_or_default(),
        "cwd": context.cwd.display().to_string(),
        "permission_mode": claude_code_mode(context.gate.mode()),
        "hook_event_name": event.name(),
    });
    if let (Some(input), Some(fields)) = (input.as_object_mut(), fields.as_object()) {
        input.extend(fields.clone());
    }
    let stdin = input.to_string();
    let mut decision = Decision::default();
    // One after another: each one's sandbox is made and taken down on its own (sandboxes made
    // at once over one working directory would stand in each other's way).
    for hook in hooks {
        let ran = crate::hook_run::run_hook(&hook.command, &stdin, context, hook.timeout).await;
        read_outcome(event, hook, ran, &mut decision);
    }
    decision
}

/// A hook's words as the model gets them: inside `<hook_output>`, which they cannot close or
/// fake (nor a `<system-reminder>` or `<hook_context>`), what hides text shown as escapes.
pub fn quoted(event: HookEvent, text: &str) -> String {
    let cleaned = skillet_skills::clean_text(text);
    let body = skillet_skills::neutralize_tags(
        &cleaned,
        &[
            "hook_output",
            "hook_context",
            "system-reminder",
            "tool_result",
        ],
    );
    format!(
        "<hook_output event=\"{}\">\n{}\n</hook_output>",
        event.name(),
        body.trim_end_matches('\n')
    )
}

/// What one hook's run means, added to `decision`.
fn read_outcome(
    event: HookEvent,
    hook: &Hook,
    ran: Result<crate::hook_run::HookRun, String>,
    decision: &mut Decision,
) {
    let name = hook.describe();
    let ran = match ran {
        Ok(ran) => ran,
        Err(why) => {
            decision.notes.push(format!("hook {name} failed: {why}"));
            // A guard that could not run refuses: the call it guards does not go ahead
            // unchecked.
            if event == HookEvent::PreToolUse {
                decision
                    .block
                    .get_or_insert(format!("the hook {name} could not run ({why})"));
            }
            return;
        }
    };
    let stderr = ran.stderr.trim().to_string();
    match ran.code {
        Some(0) => {}
        Some(2) => {
            let why = if stderr.is_empty() {
                format!("the hook {name} refused it")
            } else {
                stderr
            };
            decision.block.get_or_insert(why);
            return;
        }
        code => {
            let code = code.map_or_else(|| "a signal".to_string(), |code| code.to_string());
            let said = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            };
            decision
                .notes
                .push(format!("hook {name} failed (exit {code}){said}"));
            return;
        }
    }
    let stdout = ran.stdout.trim();
    let Ok(Value::Object(output)) = serde_json::from_str::<Value>(stdout) else {
        // Plain output: context for a message; for the other events, not a decision.
        if event == HookEvent::UserPromptSubmit && !stdout.is_empty() {
            decision.context.push(stdout.to_string());
        }
        return;
    };
    let text = |key: &str| output.get(key).and_then(Value::as_str).map(str::to_string);
    let specific = output.get("hookSpecificOutput");
    let specific_text = |key: &str| {
        specific
            .and_then(|specific| specific.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if let Some(message) = text("systemMessage") {
        decision.notes.push(format!("hook {name}: {message}"));
    }
    let denied = specific_text("permissionDecision").as_deref() == Some("deny");
    let blocked = text("decision").as_deref() == Some("block")
        || (event == HookEvent::PreToolUse && denied)
        || (output.get("continue") == Some(&Value::Bool(false)) && event != HookEvent::Stop);
    if blocked {
        let why = text("reason")
            .or_else(|| specific_text("permissionDecisionReason"))
            .or_else(|| text("stopReason"))
            .unwrap_or_else(|| format!("the hook {name} refused it"));
        decision.block.get_or_insert(why);
    }
    if let Some(context) = specific_text("additionalContext") {
        decision.context.push(context);
    }
}

/// Claude Code's name for a permission mode.
fn claude_code_mode(mode: crate::permission::Mode) -> &'static str {
    match mode {
        crate::permission::Mode::Plan => "plan",
        crate::permission::Mode::AcceptEdits => "acceptEdits",
        crate::permission::Mode::Default => "default",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_settings_are_read_as_written() {
        let text = r#"{"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.py", "timeout": 30}]}],
            "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "check"}, {"type": "prompt", "prompt": "x"}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "hello"}]}]
        }, "permissions": {"allow": []}}"#;
        let (hooks, problems) = parse_settings(text, Path::new("/p/.claude/settings.json"));
        let lines: Vec<String> = hooks.iter().map(Hook::describe).collect();
        // Events in name order (the order of a JSON object's keys carries no meaning).
        assert_eq!(
            lines,
            [
                "PostToolUse Edit|Write: fmt",
                "PreToolUse Bash: ./guard.py",
                "Stop *: check"
            ]
        );
        assert_eq!(hooks[1].timeout, Duration::from_secs(30));
        assert_eq!(hooks[0].timeout, DEFAULT_HOOK_TIMEOUT);
        assert!(hooks[0].matches(Some("Write")) && !hooks[0].matches(Some("WriteX")));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("SessionStart")));
        let (none, problems) = parse_settings("{not json", Path::new("s.json"));
        assert!(none.is_empty() && problems[0].contains("s.json: not JSON"));
    }

    #[test]
    fn tools_are_named_and_shaped_as_in_claude_code() {
        let (name, input) = claude_code_tool(
            "edit_file",
            &json!({"path": "a.rs", "old_text": "x", "new_text": "y"}),
        );
        assert_eq!(name, "Edit");
        assert_eq!(
            input,
            json!({"file_path": "a.rs", "old_string": "x", "new_string": "y"})
        );
        assert_eq!(claude_code_tool("mcp__s__t", &json!({})).0, "mcp__s__t");
    }

    #[test]
    fn outcomes_are_read_as_claude_code_reads_them() {
        let hook = Hook {
            event: HookEvent::PreToolUse,
            matcher: None,
            command: "h".into(),
            timeout: DEFAULT_HOOK_TIMEOUT,
            source: PathBuf::from("s"),
        };
        let outcome = |event, code, stdout: &str, stderr: &str| {
            let mut decision = Decision::default();
            let ran = crate::hook_run::HookRun {
                code,
                stdout: stdout.into(),
                stderr: stderr.into(),
            };
            read_outcome(event, &hook, Ok(ran), &mut decision);
            decision
        };
        let pre = HookEvent::PreToolUse;
        assert_eq!(
            outcome(pre, Some(2), "", "no rm").block.as_deref(),
            Some("no rm")
        );
        let denied = outcome(
            pre,
            Some(0),
            r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not here"}}"#,
            "",
        );
        assert_eq!(denied.block.as_deref(), Some("not here"));
        // Allow approves nothing: no block, and nothing else.
        let allowed = outcome(
            pre,
            Some(0),
            r#"{"hookSpecificOutput": {"permissionDecision": "allow"}}"#,
            "",
        );
        assert_eq!(allowed, Decision::default());
        // Any other exit is no decision: the user is told.
        let failed = outcome(pre, Some(1), "", "oops");
        assert!(failed.block.is_none());
        assert_eq!(failed.notes, ["hook PreToolUse *: h failed (exit 1): oops"]);
        let prompt = HookEvent::UserPromptSubmit;
        assert_eq!(
            outcome(prompt, Some(0), "branch: main\n", "").context,
            ["branch: main"]
        );
        let stop = HookEvent::Stop;
        assert_eq!(
            outcome(
                stop,
                Some(0),
                r#"{"decision": "block", "reason": "tests fail"}"#,
                ""
            )
            .block
            .as_deref(),
            Some("tests fail")
        );
    }
}
