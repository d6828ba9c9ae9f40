//! The `skillet` command line: argument parsing, settings, and the commands. `main.rs` only
//! calls [`run_main`].

mod args;
mod commands;
mod env;
mod output;
mod settings;

use std::process::ExitCode;

use clap::Parser;

pub use args::Cli;

/// Exit code for a failure the user should look at (an unknown skill, validation errors).
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for usage errors (clap uses it too).
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a `run` the user cancelled with Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_CANCELLED: u8 = 130;

/// Parses the process arguments, runs the command and returns its exit code. Errors are printed
/// once, as a chain, on stderr; a closed stdout (`skillet skills list | head`) is not an error.
pub fn run_main() -> ExitCode {
    let cli = Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) if output::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            output::print_error(&error);
            ExitCode::from(EXIT_FAILURE)
        }
    }
}
