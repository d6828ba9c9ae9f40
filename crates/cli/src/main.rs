//! The `skillet` binary: parses arguments, runs the command, maps the result to an exit code.

use std::process::ExitCode;

#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Started by the sandbox as its inner layer: restrict, then become the command.
    skillet_agent::sandbox::inner_layer_if_asked();
    // Descriptors whatever started skillet left open reach no program skillet starts. The
    // sandbox's inner layer does this again, failing closed; here /proc missing only leaves
    // the commands of the Landlock fallback or no sandbox as they were.
    #[cfg(unix)]
    let _ = skillet_agent::sandbox::close_on_exec_inherited();
    skillet_cli::run_main()
}
