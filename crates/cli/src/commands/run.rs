//! `skillet run "PROMPT"`: one task, no interaction.

use std::io::Write as _;
use std::process::ExitCode;

use skillet_agent::permission::Permissions;

use super::Context;
use super::session::{TextView, event_json, find_resumed, library, runtime, settings, start};
use crate::args::RunArgs;
use crate::output::warn;
use crate::{EXIT_CANCELLED, EXIT_FAILURE, EXIT_USAGE};

/// What the model is told when it may not write or run commands.
const DENIED: &str = "writes and commands are not allowed in `skillet run` without --yes \
                      (or `yes = true` in the user's ~/.config/skillet/skillet.toml); say what \
                      you would change instead";

pub fn run(context: &Context, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let settings = match settings(context, &args.agent, args.yes) {
        Ok(settings) => settings,
        Err(message) => {
            warn(&format!("error: {message}"));
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let (resumed_context, resumed) =
        find_resumed(context, &settings, args.agent.resume.as_deref())?;
    let context = resumed_context.as_ref().unwrap_or(context);
    let permissions = if settings.yes {
        Permissions::Allow
    } else {
        Permissions::Deny {
            reason: DENIED.to_string(),
        }
    };
    let runtime = runtime()?;
    let skills = library(context);
    let mut agent = start(
        context,
        &settings,
        &skills,
        resumed,
        permissions,
        Some(&args.prompt),
    )?;
    let mut view = TextView::new();
    let json = args.json;
    let mut show = |event| {
        if json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", event_json(&event));
            let _ = out.flush();
        } else {
            view.show(&event);
        }
    };
    // Ctrl-C cancels the turn: the running command's process group is killed with it, and the
    // calls left open are answered in the transcript, so `--resume` continues from here.
    let result = runtime.block_on(async {
        tokio::select! {
            result = agent.run_turn(&args.prompt, &mut show) => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    view.end_line();
    let Some(result) = result else {
        agent.close_cancelled_turn();
        warn(&format!("(cancelled) · session {}", agent.header().id));
        if json {
            let cancelled = serde_json::json!({"type": "cancelled", "session": agent.header().id});
            let mut out = std::io::stdout().lock();
            writeln!(out, "{cancelled}")?;
        }
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    let usage = agent.usage();
    let session = &agent.header().id;
    match result {
        Ok(outcome) => {
            if json {
                let done = serde_json::json!({"type": "done", "text": outcome.text, "steps": outcome.steps, "usage": usage, "session": session});
                let mut out = std::io::stdout().lock();
                writeln!(out, "{done}")?;
            } else {
                warn(&format!("usage: {} · session {session}", usage.summary()));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            if json {
                let failed = serde_json::json!({"type": "error", "message": error.to_string(), "usage": usage, "session": session});
                let mut out = std::io::stdout().lock();
                writeln!(out, "{failed}")?;
            }
            warn(&format!("error: {error}"));
            warn(&format!("usage: {} · session {session}", usage.summary()));
            Ok(ExitCode::from(EXIT_FAILURE))
        }
    }
}
