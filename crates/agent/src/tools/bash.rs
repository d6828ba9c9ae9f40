//! `bash {command, timeout?}`: runs a command in the working directory, in the sandbox
//! ([`crate::sandbox`]), with the secrets of skillet's environment removed, a timeout, an output
//! cap and a blocklist of plainly destructive commands (a guard against slips, not a boundary:
//! the sandbox is). The command runs in its own process group, which is killed whole when it
//! times out, when the turn is cancelled, and when it returns (nothing it started is left).

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;

use crate::permission::ApprovalRequest;
use crate::tool::{BoxFuture, Tool, ToolContext, ToolError, ToolKind, string_arg, usize_arg};
pub use crate::tools::blocklist::blocked;

/// The timeout when the model gives none.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The longest timeout the model may ask for.
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// The most output characters returned; the middle of longer output is cut.
pub const MAX_OUTPUT_CHARS: usize = 50_000;

pub use crate::tools::secrets::{carries_secret, is_secret, withheld};

/// The environment of a sandboxed command (`bash`, a hook): skillet's, less every variable
/// [`withheld`] (`pass`: those the user passes on purpose), with git's settings for the launch
/// ([`crate::sandbox::Launch::git_settings`]).
pub(crate) fn command_env(
    shell: &mut tokio::process::Command,
    launch: &crate::sandbox::Launch,
    pass: &[String],
) {
    let mut git_config_withheld = false;
    for (name, value) in std::env::vars_os() {
        if withheld(&name, &value, pass) {
            shell.env_remove(&name);
            git_config_withheld |= name.to_string_lossy().starts_with("GIT_CONFIG_VALUE_");
        }
    }
    if git_config_withheld {
        // Git reads GIT_CONFIG_COUNT pairs of KEY_n and VALUE_n and stops at a missing one:
        // without the count it reads none, rather than failing every call.
        shell.env_remove("GIT_CONFIG_COUNT");
    }
    let name = crate::sandbox::GIT_CONFIG_PARAMETERS;
    let user = std::env::var_os(name).filter(|value| !withheld(name.as_ref(), value, pass));
    shell.envs(launch.git_settings(user));
}

/// Runs shell commands.
pub struct Bash;

impl Tool for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }

    fn description(&self, _context: &ToolContext) -> String {
        format!(
            "Run a bash command in the working directory and return its output (stdout and \
             stderr together) and exit code. Timeout {DEFAULT_TIMEOUT_SECS} s unless `timeout` \
             (seconds, at most {MAX_TIMEOUT_SECS}) says otherwise; output over \
             {MAX_OUTPUT_CHARS} characters is cut in the middle. Plainly destructive commands \
             are refused."
        )
    }

    fn input_schema(&self, _context: &ToolContext) -> Value {
        json!({"type": "object", "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECS, "description": "Seconds"}
        }, "required": ["command"]})
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn call<'a>(
        &'a self,
        input: &'a Value,
        context: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let command = string_arg(input, "command")?;
            if let Some(why) = blocked(command) {
                return Err(ToolError::new(format!(
                    "refused: this command {why}; it is on skillet's blocklist"
                )));
            }
            let timeout = usize_arg(input, "timeout")?
                .map_or(DEFAULT_TIMEOUT_SECS, |s| {
                    u64::try_from(s).unwrap_or(MAX_TIMEOUT_SECS)
                })
                .clamp(1, MAX_TIMEOUT_SECS);
            let request = ApprovalRequest::new(self.name(), ToolKind::Execute, command);
            // Decided before asking: a command the user approves now was reviewed; one the
            // policy or an active skill lets run was not.
            let unattended = context.gate.allows_unasked(&request, input);
            context.approve(&request, input)?;
            run_guarded(
                command,
                &[],
                context,
                Duration::from_secs(timeout),
                unattended,
            )
            .await
            .map(|ran| {
                if ran.text.trim().is_empty() {
                    "(no output)".to_string()
                } else {
                    ran.text
                }
            })
        })
    }
}

/// A command's output, and whether it exited with 0.
pub(crate) struct Ran {
    /// What it printed (stdout and stderr together, capped), with its exit code when not 0.
    pub(crate) text: String,
    /// It exited with 0.
    pub(crate) success: bool,
}

/// Runs a command as `bash` does, once allowed. Where nobody was asked (`unattended`), the
/// files that run code later are read-only for it (namespaces), or, where the sandbox cannot do
/// that, put back after the command, also when it is cancelled, and what was put back is told.
pub(crate) async fn run_guarded(
    command: &str,
    env: &[(String, String)],
    context: &ToolContext,
    timeout: Duration,
    unattended: bool,
) -> Result<Ran, ToolError> {
    let prepare = |policy: &crate::sandbox::SandboxPolicy| {
        crate::sandbox::Launch::prepare(
            policy,
            &context.cwd,
            unattended.then_some(context.protected.as_slice()),
        )
        .map_err(|error| ToolError::new(format!("cannot start bash: {error}")))
    };
    let mut policy = context.sandbox_policy();
    let mut launch = prepare(&policy)?;
    // Without namespaces what runs code later is put back afterwards, in the working directory
    // only: a command nobody reviewed then gets no added folder to write in.
    if unattended && launch.needs_put_back() && policy.writable != context.sandbox.writable {
        policy = context.sandbox.clone();
        launch = prepare(&policy)?;
    }
    for incomplete in launch.incomplete() {
        told_once(context, incomplete);
    }
    let mut put_back = (unattended && launch.needs_put_back())
        .then(|| PutBack(crate::guard::Guard::watch(&context.cwd, &context.protected)));
    #[cfg(unix)]
    let aftermath = unattended.then(|| {
        crate::sandbox::aftermath::Aftermath::before(
            &context.cwd,
            launch.links().to_vec(),
            &crate::sandbox::host::untrusted_roots(&context.cwd, &policy.writable),
        )
    });
    let mut output = run(command, env, context, timeout, &launch).await;
    #[cfg(unix)]
    if let Some(aftermath) = aftermath {
        let findings = aftermath.after();
        if !findings.is_empty() {
            for finding in &findings {
                context.notices.push(format!("careful: {finding}"));
            }
            output = with_note(
                output,
                &format!(
                    "\n[skillet: {}. Commands nobody reviews may not leave what runs code later: tell the user]",
                    findings.join("; ")
                ),
            );
        }
    }
    if let Some(guard) = put_back.as_mut().and_then(|put_back| put_back.0.take()) {
        let changed = guard.restore();
        if !changed.is_empty() {
            let list: Vec<String> = changed
                .iter()
                .map(|change| {
                    format!(
                        "{}{}",
                        change.path.display(),
                        if change.restored {
                            ""
                        } else {
                            " (could not be put back: tell the user)"
                        }
                    )
                })
                .collect();
            let note = format!(
                "\n[refused: the command changed {}; skillet put them back. Commands nobody reviews may not change git's config and hooks, .envrc, skillet.toml or skill folders (they run code or steer the model later): tell the user what to change instead]",
                list.join(", ")
            );
            output = with_note(output, &note);
        }
    }
    output
}

/// Tells the user `notice` (a `careful:` one) the first time this process meets it.
fn told_once(context: &ToolContext, notice: &str) {
    static TOLD: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut told = TOLD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !told.iter().any(|known| known == notice) {
        told.push(notice.to_string());
        context.notices.push(format!("careful: {notice}"));
    }
}

/// A command's result with `note` added, as a failure: the model is to tell the user.
fn with_note(output: Result<Ran, ToolError>, note: &str) -> Result<Ran, ToolError> {
    match output {
        Ok(ran) => Ok(Ran {
            text: ran.text + note,
            success: false,
        }),
        Err(error) => Err(ToolError::new(error.0 + note)),
    }
}

async fn run(
    command: &str,
    env: &[(String, String)],
    context: &ToolContext,
    timeout: Duration,
    launch: &crate::sandbox::Launch,
) -> Result<Ran, ToolError> {
    let mut shell = launch.command("bash");
    shell
        .arg("-c")
        // One pipe for both streams keeps their order.
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(&context.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    command_env(&mut shell, launch, &context.sandbox.pass_env);
    shell.envs(env.iter().map(|(name, value)| (name, value)));
    // Its own process group, so a timeout or a cancelled turn stops everything it started.
    #[cfg(unix)]
    shell.process_group(0);
    let mut child = launch
        .spawn(shell)
        .await
        .map_err(|error| ToolError::new(format!("cannot start bash: {error}")))?;
    let _group = GroupGuard(child.id());
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| ToolError::new("cannot read the command's output"))?;
    let mut output = CappedOutput::default();
    let reading = async {
        let mut buffer = [0_u8; 8192];
        loop {
            match stdout.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => output.push(&buffer[..n]),
            }
        }
        child.wait().await
    };
    let Ok(exit) = tokio::time::timeout(timeout, reading).await else {
        let partial = output.finish();
        return Err(ToolError::new(format!(
            "the command timed out after {} s and was stopped; output so far:\n{}",
            timeout.as_secs(),
            if partial.is_empty() {
                "(none)".to_string()
            } else {
                partial
            }
        )));
    };
    let mut text = output.finish();
    let success = exit.as_ref().is_ok_and(std::process::ExitStatus::success);
    match exit {
        Ok(status) if status.success() => {}
        Ok(status) => {
            let code = status.code().map_or_else(
                || "killed by a signal".to_string(),
                |c| format!("exit code {c}"),
            );
            let _ = write!(text, "\n[{code}]");
        }
        Err(error) => {
            let _ = write!(text, "\n[cannot wait for the command: {error}]");
        }
    }
    Ok(Ran { text, success })
}

/// Puts protected files back when dropped (a cancelled command), unless the normal path did.
pub(crate) struct PutBack(pub(crate) Option<crate::guard::Guard>);

impl Drop for PutBack {
    fn drop(&mut self) {
        if let Some(guard) = &self.0 {
            guard.restore();
        }
    }
}

/// Kills the command's process group when dropped: after it returns, when it times out, and
/// when the turn is cancelled (the future holding it is dropped).
pub(crate) struct GroupGuard(pub(crate) Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        crate::sandbox::kill_group(self.0);
    }
}

/// Keeps the head and the tail of a long output, counting what falls between.
#[derive(Default)]
struct CappedOutput {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: usize,
}

impl CappedOutput {
    const HALF: usize = MAX_OUTPUT_CHARS / 2;

    fn push(&mut self, bytes: &[u8]) {
        let room = Self::HALF.saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(rest);
        while self.tail.len() > Self::HALF {
            self.tail.pop_front();
            self.dropped += 1;
        }
    }

    fn finish(&mut self) -> String {
        let head = String::from_utf8_lossy(&self.head).into_owned();
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        if self.dropped == 0 {
            return head + &tail;
        }
        format!(
            "{head}\n[… {} bytes of output cut here; the output was {} bytes …]\n{tail}",
            self.dropped,
            self.head.len() + self.dropped + self.tail.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_head_and_tail() {
        let mut output = CappedOutput::default();
        output.push(&vec![b'a'; CappedOutput::HALF]);
        output.push(&[b'b'; 100]);
        output.push(&vec![b'c'; CappedOutput::HALF]);
        let text = output.finish();
        assert!(text.starts_with(&"a".repeat(CappedOutput::HALF)));
        assert!(text.ends_with(&"c".repeat(CappedOutput::HALF)));
        assert!(text.contains("[… 100 bytes of output cut here; the output was 50100 bytes …]"));
    }
}
