//! The `skillet` binary: parses arguments, runs the command, maps the result to an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    skillet_cli::run_main()
}
