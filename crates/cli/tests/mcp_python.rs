//! `skillet mcp` driven by the official MCP Python SDK (`scripts/mcp_client_check.py`): over
//! stdio and streamable HTTP, on the 2026-07-28 protocol and the legacy handshake. The Python
//! is `SKILLET_MCP_PYTHON` (`scripts/fetch-mcp-client.sh` makes one; `scripts/test.sh` and
//! `.ci/run` do it); without it the test skips, saying so, unless `SKILLET_REQUIRE_MCP_CLIENT`
//! is set (CI), where it fails.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::path::Path;
use std::process::Command;

/// How long the whole client run may take.
const CLIENT_TIMEOUT_SECONDS: u32 = 600;

#[test]
fn the_official_python_client_speaks_to_skillet_mcp() {
    let Some(python) = std::env::var_os("SKILLET_MCP_PYTHON") else {
        assert!(
            std::env::var_os("SKILLET_REQUIRE_MCP_CLIENT").is_none(),
            "SKILLET_REQUIRE_MCP_CLIENT is set but SKILLET_MCP_PYTHON is not"
        );
        skillet_test_support::skip(
            "SKIPPED: MCP Python client test: set SKILLET_MCP_PYTHON to a python with `mcp` 2.x (scripts/fetch-mcp-client.sh)",
        );
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp_client_check.py");
    // `timeout` ends a client that hangs: the test fails instead of waiting for ever.
    let output = Command::new("timeout")
        .arg(CLIENT_TIMEOUT_SECONDS.to_string())
        .arg(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_skillet"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the MCP Python client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The default mode must have spoken the 2026-07-28 protocol (subscriptions/listen and all),
    // the legacy mode the initialize handshake: neither may fall back unnoticed.
    for run in [
        "stdio, mode auto (protocol 2026-07-28)",
        "stdio, mode legacy (protocol 2025-11-25)",
        "http, mode auto (protocol 2026-07-28)",
        "http, mode legacy (protocol 2025-11-25)",
    ] {
        assert!(
            stdout.contains(&format!("ok: {run}")),
            "{run} did not pass:\n{stdout}"
        );
    }
}
