//! `skillet mcp` driven by the official MCP Python SDK (`scripts/mcp_client_check.py`): over
//! stdio and streamable HTTP, on the 2026-07-28 protocol and the legacy handshake. The Python
//! is `SKILLET_MCP_PYTHON` (`scripts/fetch-mcp-client.sh` makes one; `scripts/test.sh` and
//! `.ci/run` do it); without it the test skips, saying so, unless `SKILLET_REQUIRE_MCP_CLIENT`
//! is set (CI), where it fails.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::path::Path;
use std::process::Command;

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
    let output = Command::new(python)
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
    for run in [
        "stdio, mode auto",
        "stdio, mode legacy",
        "http, mode auto",
        "http, mode legacy",
    ] {
        assert!(
            stdout.contains(&format!("ok: {run}")),
            "{run} did not pass:\n{stdout}"
        );
    }
}
