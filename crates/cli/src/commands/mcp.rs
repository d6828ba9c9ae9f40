//! `skillet mcp`: the skill library served over MCP (see `skillet_mcp`), on stdio or with
//! `--http ADDR` over streamable HTTP. The roots are the usual ones (`--skills-dir`, the
//! project's, the user's); stdout carries only the protocol, everything else goes to stderr.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use super::Context;
use super::matching::model_env;
use crate::args::McpArgs;
use crate::{EXIT_FAILURE, UsageError};

pub fn run(context: &Context, args: &McpArgs) -> anyhow::Result<ExitCode> {
    if let Some(crate::args::McpAction::List) = args.action {
        return list(context);
    }
    let http = args.http.as_deref().map(http_address).transpose()?;
    if let Some(text) = crate::env::var(crate::env::SKILLET_LOG) {
        let level = skillet_mcp::LogLevel::parse(&text).ok_or_else(|| {
            UsageError::new(format!("SKILLET_LOG={text}: not a log level"))
                .with_hint("off, error, info (the default) or debug")
        })?;
        skillet_mcp::set_log_level(level);
    }
    let registry = super::registry::configured_url(context, args.registry.as_deref())?;
    let mut shared = skillet_mcp::Shared::new(
        context.roots.clone(),
        model_env(args.embed_model.as_deref()),
    );
    if let Some(source) = registry.as_deref().and_then(|url| {
        skillet_session::builder::registry_source(
            context,
            url,
            &mut super::session::stderr_report(),
        )
    }) {
        skillet_mcp::log(&format!("also searching {}", source.label()));
        shared = shared.with_source(source);
    }
    // Reading files and ranking run on the blocking pool: one thread is enough for the protocol.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = match http {
        Some(addr) => runtime.block_on(skillet_mcp::serve_http(shared, addr, args.allow_remote)),
        None => runtime.block_on(skillet_mcp::serve_stdio(shared)),
    };
    // The client has gone: work still running on the blocking pool (the model loading, a large
    // listing) is not waited for.
    runtime.shutdown_background();
    match served {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(skillet_mcp::ServeError::Remote(addr)) => Err(UsageError::new(format!(
            "--http {addr}: not a loopback address; the server would be reachable from other machines"
        ))
        .with_hint("bind 127.0.0.1 (the default for a bare port), or add --allow-remote behind a proxy that checks who connects")
        .into()),
        Err(error) => {
            skillet_mcp::log_at(skillet_mcp::LogLevel::Error, &format!("error: {error}"));
            Ok(ExitCode::from(EXIT_FAILURE))
        }
    }
}

/// `--http`'s address: `PORT` (on 127.0.0.1) or `HOST:PORT` (`[::1]:PORT` for IPv6).
fn http_address(text: &str) -> Result<SocketAddr, UsageError> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Some(port) = text
        .strip_prefix("localhost:")
        .and_then(|p| p.parse::<u16>().ok())
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse().map_err(|_| {
        UsageError::new(format!("--http {text}: not an address"))
            .with_hint("give a port (8808, on 127.0.0.1) or HOST:PORT (127.0.0.1:8808, [::1]:8808)")
    })
}

/// `skillet mcp list`: the servers skillet's agent would use here, started, on stdout.
fn list(context: &Context) -> anyhow::Result<ExitCode> {
    let library = super::session::library(context);
    let listed =
        skillet_session::mcp::list(context, &library, &mut super::session::stderr_report())
            .map_err(|error| UsageError::new(error.to_string()))?;
    let text = listed.map_or_else(
        || "no MCP servers: add [mcp_servers.NAME] (command = \"…\", args = […], or url = \"…\") to ~/.config/skillet/skillet.toml, or trust a project whose .mcp.json names some\n".to_string(),
        |text| crate::output::terminal_safe(&text, true).into_owned(),
    );
    std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
