//! The commands, one module per group.

mod advice;
mod audit;
mod chat;
mod config;
mod matching;
mod mcp;
mod pricing;
mod registry;
mod run;
mod session;
pub mod sessions;
mod skills;
mod triggers;
mod trust;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use skillet_skills::Environment;

use crate::args::{AgentArgs, ChatArgs, Cli, Command, GlobalArgs};
use crate::output::warn;
use crate::{UsageError, env};

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let (Some(command), Some(flag)) = (&cli.command, cli.chat.first_given()) {
        let name = command_name(command);
        return Err(UsageError::new(format!(
            "{flag} before `{name}` would be ignored: the options before a command are the chat's"
        ))
        .with_hint(format!("put it after the command: skillet {name} {flag} …"))
        .into());
    }
    if let Some(Command::Completions { shell }) = cli.command {
        return config::completions(shell);
    }
    let context = resolve_context(&cli.global)?;
    match cli.command {
        Some(Command::Skills(command)) => skills::run(&context, command),
        Some(Command::Run(args)) => run::run(&context, &args),
        Some(Command::Chat(args)) => chat::run(&context, &chat_args(args)?),
        Some(Command::Sessions(args)) => sessions::run(&context, &args),
        Some(Command::Config(args)) => config::run(&context, &args),
        Some(Command::Mcp(args)) => mcp::run(&context, &args),
        Some(Command::Trust(args)) => trust::run(&context, &args),
        Some(Command::Registry(args)) => registry::run(&context, args),
        Some(Command::Completions { .. }) => Ok(ExitCode::SUCCESS),
        None => {
            if let Some(near) = cli.chat.prompt.as_deref().and_then(near_command) {
                return Err(UsageError::new(format!(
                    "there is no command `{}`; did you mean `skillet {near}`?",
                    crate::output::terminal_safe(
                        cli.chat.prompt.as_deref().unwrap_or_default(),
                        false
                    )
                ))
                .with_hint(format!(
                    "to start a chat with it as the first message: skillet chat \"{}\"",
                    crate::output::terminal_safe(
                        cli.chat.prompt.as_deref().unwrap_or_default(),
                        false
                    )
                ))
                .into());
            }
            chat::run(&context, &chat_args(cli.chat)?)
        }
    }
}

/// The command a first message of one word is a typo of (`sesions`: `sessions`), if any: within
/// two edits of a command's name (as the parser knows them), and not a name itself.
fn near_command(prompt: &str) -> Option<String> {
    let parser = <Cli as clap::CommandFactory>::command();
    let names: Vec<&str> = parser
        .get_subcommands()
        .filter(|command| !command.is_hide_set())
        .map(clap::Command::get_name)
        .filter(|name| *name != "help")
        .collect();
    let word = prompt.trim();
    if word.len() < 3 || word.contains(char::is_whitespace) || names.contains(&word) {
        return None;
    }
    chat::closest_within(word, names.into_iter(), 2).map(str::to_string)
}

/// A command's name as typed.
fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Run(_) => "run",
        Command::Chat(_) => "chat",
        Command::Sessions(_) => "sessions",
        Command::Config(_) => "config",
        Command::Completions { .. } => "completions",
        Command::Skills(_) => "skills",
        Command::Mcp(_) => "mcp",
        Command::Trust(_) => "trust",
        Command::Registry(_) => "registry",
    }
}

/// The chat's options, its first message in `initial_prompt`: the `PROMPT` argument, or a
/// `--resume` value that is no session id (then `--resume` is of the latest). `--continue`
/// becomes `--resume` of the latest, `continue_latest` still set (so no picker is offered). A
/// first message that is empty is a usage error.
fn chat_args(args: ChatArgs) -> Result<AgentArgs, UsageError> {
    let ChatArgs { prompt, mut agent } = args;
    let (resume, prompt) = sessions::split_resume(
        agent.resume.as_deref(),
        agent.continue_latest,
        prompt,
        &crate::settings::sessions_dir(),
    );
    if prompt.as_deref().is_some_and(|text| text.trim().is_empty()) {
        return Err(UsageError::new("the first message is empty").with_hint(
            "`skillet \"PROMPT\"` starts a chat with PROMPT; `skillet` alone starts an empty one",
        ));
    }
    agent.resume = resume;
    agent.initial_prompt = prompt;
    Ok(agent)
}

/// What every command needs: where it works and where skills are.
pub type Context = skillet_session::Workspace;

/// The workspace the global flags name: `--cwd` (checked: a folder that exists) and
/// `--skills-dir` folders (a missing one is said, and reads nothing).
fn resolve_context(global: &GlobalArgs) -> anyhow::Result<Context> {
    let current = std::env::current_dir().context("cannot read the current directory")?;
    let cwd = match &global.cwd {
        Some(dir) => match std::fs::canonicalize(current.join(dir)) {
            Ok(cwd) if cwd.is_dir() => cwd,
            Ok(_) => {
                return Err(
                    UsageError::new(format!("--cwd {}: not a folder", dir.display())).into(),
                );
            }
            Err(error) => {
                let why = if error.kind() == std::io::ErrorKind::NotFound {
                    "no such folder".to_string()
                } else {
                    error.to_string()
                };
                return Err(UsageError::new(format!("--cwd {}: {why}", dir.display()))
                    .with_hint("name a folder that exists, relative to where skillet is started")
                    .into());
            }
        },
        None => std::fs::canonicalize(&current).unwrap_or_else(|_| current.clone()),
    };
    let env = Environment {
        cwd,
        home: env::path(env::HOME),
        xdg_config_home: env::path(env::XDG_CONFIG_HOME),
    };
    let explicit: Vec<PathBuf> = global
        .skills_dirs
        .iter()
        .map(|dir| current.join(dir))
        .collect();
    for (given, dir) in global.skills_dirs.iter().zip(&explicit) {
        if !dir.is_dir() {
            let what = if dir.exists() {
                "not a folder"
            } else {
                "no such folder"
            };
            warn(&format!(
                "warning: --skills-dir {}: {what}; no skills are read from it",
                given.display()
            ));
        }
    }
    Ok(Context::new(env, explicit))
}

/// A path as JSON: its text, decoded losslessly where it is UTF-8 and with U+FFFD for the bytes
/// that are not (a folder name of raw bytes must not stop `--json`; `null` for none).
pub(crate) fn path_json<P: AsRef<std::path::Path>>(path: Option<P>) -> serde_json::Value {
    path.map_or(serde_json::Value::Null, |path| {
        serde_json::Value::String(path.as_ref().to_string_lossy().into_owned())
    })
}
