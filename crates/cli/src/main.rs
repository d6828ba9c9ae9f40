//! The `skillet` binary: parses arguments, runs the command, maps the result to an exit code.

use std::process::ExitCode;

#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    skillet_cli::run_main()
}
