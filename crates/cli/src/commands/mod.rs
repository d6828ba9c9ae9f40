//! The commands, one module per group.

mod audit;
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
    /// The `--skills-dir` folders, absolute.
    explicit: Vec<PathBuf>,
}

impl Context {
    fn resolve(global: &GlobalArgs) -> anyhow::Result<Self> {
        let current = std::env::current_dir().context("cannot read the current directory")?;
        let cwd = match &global.cwd {
            Some(dir) => std::fs::canonicalize(current.join(dir))
                .with_context(|| format!("--cwd {}: no such folder", dir.display()))?,
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
        let roots = resolve_roots(&explicit, &env);
        Ok(Self {
            env,
            roots,
            explicit,
        })
    }

    /// The same command, working in another folder (a resumed session's own).
    pub fn at(&self, cwd: PathBuf) -> Self {
        let env = Environment {
            cwd,
            home: self.env.home.clone(),
            xdg_config_home: self.env.xdg_config_home.clone(),
        };
        let roots = resolve_roots(&self.explicit, &env);
        Self {
            env,
            roots,
            explicit: self.explicit.clone(),
        }
    }

    /// Every skill root a write must not touch without asking: the default ones of this
    /// folder (also when `--skills-dir` replaces them for discovery) and those in use, as
    /// written and, for links, where they lead.
    pub fn skill_roots(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = skillet_skills::default_roots(&self.env)
            .into_iter()
            .map(|root| root.path)
            .chain(self.roots.iter().map(|root| root.path.clone()))
            .filter_map(|path| skillet_skills::confine::normalize(&path))
            // A root that is a link is protected where it leads too.
            .flat_map(|path| {
                let real = std::fs::canonicalize(&path).ok();
                std::iter::once(path).chain(real)
            })
            .collect();
        roots.sort();
        roots.dedup();
        roots
    }
}
