#!/usr/bin/env bash
# The MCP reference server `@modelcontextprotocol/server-everything` (tools, prompts, resources,
# images, annotations), for the MCP client tests: installed with npm into $SKILLET_CI_CACHE
# (default ~/.cache/skillet-ci) at a pinned version and reused. Prints its entry point on stdout;
# fails, saying why on stderr, when node, npm or the npm registry is not to be had.
set -euo pipefail
version=2026.8.31
cache=${SKILLET_CI_CACHE:-$HOME/.cache/skillet-ci}
dir="$cache/mcp-everything-$version"
entry="$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if [ -f "$entry" ]; then
  echo "$entry"
  exit 0
fi
command -v node >/dev/null 2>&1 || { echo "node is not installed" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "npm is not installed" >&2; exit 1; }
mkdir -p "$dir"
npm install --silent --no-audit --no-fund --prefix "$dir" "@modelcontextprotocol/server-everything@$version" >&2 \
  || { echo "npm cannot install @modelcontextprotocol/server-everything@$version" >&2; exit 1; }
[ -f "$entry" ] || { echo "the package has no $entry" >&2; exit 1; }
echo "$entry"
