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
    // Not dumpable: other processes of the user (an MCP server, a program a reviewed command
    // started) cannot read skillet's environment (its API key) through /proc/PID/environ, nor
    // attach to it. Programs it starts are dumpable again.
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    skillet_cli::run_main()
}
