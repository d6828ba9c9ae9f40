//! The `skillet` command line: argument parsing, settings, and the commands. `main.rs` only
//! calls [`run_main`].

mod args;
mod commands;
mod output;
mod ui;

use skillet_session::{env, settings};

use std::process::ExitCode;

use clap::Parser;

pub use args::Cli;

/// The version and the commit it was built from: `0.1.0 (abc1234)` (`unknown` when it was
/// not built from a git checkout).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("SKILLET_GIT_COMMIT"),
    ")"
);
/// The cargo features built in (`embeddings, download`), or `none`.
pub const FEATURES: &str = env!("SKILLET_FEATURES");
/// `skillet --version`: the version, the commit and the features.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ncommit: ",
    env!("SKILLET_GIT_COMMIT"),
    "\nfeatures: ",
    env!("SKILLET_FEATURES")
);
/// The version on one line, features included, for `skillet config`.
pub const LONG_VERSION_LINE: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("SKILLET_GIT_COMMIT"),
    "; features: ",
    env!("SKILLET_FEATURES"),
    ")"
);

/// Exit code for a failure the user should look at (an unknown skill, validation errors).
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for usage errors (clap uses it too).
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a `run` the user cancelled with Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_CANCELLED: u8 = 130;

/// A mistake in how skillet was called (a flag, an argument, a config file, a session that
/// does not exist): printed like any error, but the exit code is [`EXIT_USAGE`].
#[derive(Debug, thiserror::Error)]
#[error("{message}{}", hint.as_ref().map(|hint| format!("\n  hint: {hint}")).unwrap_or_default())]
pub struct UsageError {
    /// What is wrong, naming the flag, file or argument.
    message: String,
    /// What to do instead.
    hint: Option<String>,
}

impl UsageError {
    /// A usage error saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
        }
    }

    /// Adds what to do instead.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// The exit code for an error: [`EXIT_USAGE`] when a usage error (or a settings error, which
/// is one) is anywhere in its chain, else [`EXIT_FAILURE`].
pub fn exit_code_of(error: &anyhow::Error) -> u8 {
    let usage = error
        .chain()
        .any(|cause| cause.is::<UsageError>() || cause.is::<settings::SettingsError>());
    if usage { EXIT_USAGE } else { EXIT_FAILURE }
}

/// `1 skill`, `2 skills`: a count and a noun whose plural adds `s`.
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Parses the process arguments, runs the command and returns its exit code. Errors are printed
/// once, as a chain, on stderr; a closed stdout (`skillet skills list | head`) is not an error.
pub fn run_main() -> ExitCode {
    let cli = Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) if output::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            output::print_error(&error);
            ExitCode::from(exit_code_of(&error))
        }
    }
}
