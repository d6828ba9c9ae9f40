//! One hook's command run ([`crate::hooks`]): as `bash` runs a command nobody reviewed (in the
//! sandbox, the files that run code later read-only or put back, credentials withheld, its
//! process group ended with it), with the event's JSON on stdin and stdout and stderr kept apart.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::hooks::MAX_HOOK_OUTPUT_BYTES;
use crate::tool::ToolContext;
use crate::tools::bash::{GroupGuard, PutBack, command_env};

/// How a hook's command ended.
#[derive(Debug)]
pub(crate) struct HookRun {
    /// Its exit code (`None`: ended by a signal).
    pub(crate) code: Option<i32>,
    /// What it printed on stdout (at most [`MAX_HOOK_OUTPUT_BYTES`], lossy UTF-8).
    pub(crate) stdout: String,
    /// What it printed on stderr (likewise).
    pub(crate) stderr: String,
}

/// Runs `command` with `stdin` as its input, for at most `timeout`; `Err` says why it did not
/// run or end.
pub(crate) async fn run_hook(
    command: &str,
    stdin: &str,
    context: &ToolContext,
    timeout: Duration,
) -> Result<HookRun, String> {
    let launch = crate::sandbox::Launch::prepare(
        &context.sandbox,
        &context.cwd,
        Some(context.protected.as_slice()),
    )
    .map_err(|error| format!("cannot start it: {error}"))?;
    let _put_back = launch
        .needs_put_back()
        .then(|| PutBack(crate::guard::Guard::watch(&context.cwd, &context.protected)));
    let mut shell = launch.command("bash");
    shell
        .arg("-c")
        .arg(command)
        .current_dir(&context.cwd)
        .env("CLAUDE_PROJECT_DIR", &context.cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    command_env(&mut shell, &launch, &context.sandbox.pass_env);
    #[cfg(unix)]
    shell.process_group(0);
    let mut child = launch
        .spawn(shell)
        .await
        .map_err(|error| format!("cannot start it: {error}"))?;
    let _group = GroupGuard(child.id());
    let (Some(mut input), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("cannot talk to it".to_string());
    };
    let running = async {
        // A hook that does not read its input must not block the rest.
        let writing = async {
            let _ = input.write_all(stdin.as_bytes()).await;
            drop(input);
        };
        let ((), out, err, status) =
            tokio::join!(writing, capped(stdout), capped(stderr), child.wait());
        (out, err, status)
    };
    let Ok((stdout, stderr, status)) = Box::pin(tokio::time::timeout(timeout, running)).await
    else {
        return Err(format!(
            "it ran past its {} s and was stopped",
            timeout.as_secs()
        ));
    };
    let status = status.map_err(|error| format!("cannot wait for it: {error}"))?;
    Ok(HookRun {
        code: status.code(),
        stdout,
        stderr,
    })
}

/// What a stream gives until it ends, keeping at most [`MAX_HOOK_OUTPUT_BYTES`].
async fn capped(mut stream: impl tokio::io::AsyncRead + Unpin) -> String {
    let mut kept = Vec::new();
    let mut buffer = [0_u8; 8192];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_HOOK_OUTPUT_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}
