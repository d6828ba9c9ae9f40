//! The `skillet` binary: parses arguments, runs the command, maps the result to an exit code.

use std::process::ExitCode;

#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Started by the sandbox as its inner layer: restrict, then become the command.
    skillet_agent::sandbox::inner_layer_if_asked();
    skillet_cli::run_main()
}
