#!/usr/bin/env bash
# The whole test suite, as CI runs it: format check, clippy with warnings denied (benches and
# tests included), then every test of the workspace. Corpus tests read ../shared/corpus (or
# $SKILLET_CORPUS) and skip, saying so, where it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
