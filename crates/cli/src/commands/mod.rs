//! The commands, one module per group.

mod chat;
mod matching;
mod run;
mod session;
mod skills;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use skillet_skills::{Environment, Root, resolve_roots};

use crate::args::{Cli, Command, GlobalArgs};
use crate::env;

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let context = Context::resolve(&cli.global)?;
    match cli.command {
        Some(Command::Skills(command)) => skills::run(&context, command),
        Some(Command::Run(args)) => run::run(&context, &args),
        Some(Command::Chat(args)) => chat::run(&context, &args),
        None => chat::run(&context, &crate::args::AgentArgs::default()),
    }
}

/// What every command needs: where it works and where skills are.
pub struct Context {
    pub env: Environment,
    pub roots: Vec<Root>,
}

impl Context {
    fn resolve(global: &GlobalArgs) -> anyhow::Result<Self> {
        let current = std::env::current_dir().context("cannot read the current directory")?;
        let cwd = match &global.cwd {
            Some(dir) => std::fs::canonicalize(current.join(dir))
                .with_context(|| format!("--cwd {}: no such folder", dir.display()))?,
            None => std::fs::canonicalize(&current).unwrap_or(current),
        };
        let env = Environment {
            cwd,
            home: env::path(env::HOME),
            xdg_config_home: env::path(env::XDG_CONFIG_HOME),
        };
        let explicit: Vec<PathBuf> = global.skills_dirs.clone();
        let roots = resolve_roots(&explicit, &env);
        Ok(Self { env, roots })
    }
}
