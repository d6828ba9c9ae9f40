#!/usr/bin/env bash
# The official MCP Python SDK (mcp 2.x), a client no one here wrote, for the `skillet mcp`
# tests: installed into a venv cached in $SKILLET_CI_CACHE (default ~/.cache/skillet-ci) and
# reused while it imports. Prints the venv's python on stdout; fails, saying why on stderr, when
# Python or PyPI is not to be had.
set -euo pipefail
cache=${SKILLET_CI_CACHE:-$HOME/.cache/skillet-ci}
venv="$cache/mcp-venv"
python="$venv/bin/python"
if [ -x "$python" ] && "$python" -c 'import mcp, importlib.metadata as m; assert m.version("mcp").startswith("2.")' 2>/dev/null; then
  echo "$python"
  exit 0
fi
mkdir -p "$cache"
rm -rf "$venv"
python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed" >&2; exit 1; }
"$venv/bin/pip" install -q "mcp>=2,<3" >&2 || { echo "pip cannot install mcp 2.x from PyPI" >&2; exit 1; }
echo "$python"
