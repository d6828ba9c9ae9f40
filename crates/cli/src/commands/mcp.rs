//! `skillet mcp`: the skill library served over MCP on stdio (see `skillet_mcp`). The roots
//! are the usual ones (`--skills-dir`, the project's, the user's); stdout carries only the
//! protocol, everything else goes to stderr.

use std::process::ExitCode;

use super::Context;
use super::matching::model_env;
use crate::EXIT_FAILURE;
use crate::args::McpArgs;
use crate::output::warn;

pub fn run(context: &Context, args: &McpArgs) -> anyhow::Result<ExitCode> {
    let shared = skillet_mcp::Shared::new(
        context.roots.clone(),
        model_env(args.embed_model.as_deref()),
    );
    // Reading files and ranking run on the blocking pool: one thread is enough for the protocol.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match runtime.block_on(skillet_mcp::serve_stdio(shared)) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(error) => {
            warn(&format!("error: {error}"));
            Ok(ExitCode::from(EXIT_FAILURE))
        }
    }
}
