#!/usr/bin/env bash
# Whole-process skill-matching benchmarks (issue #4), with the real model:
#   - cold index of the corpus (empty embedding cache each run): skills per second;
#   - warm re-index of the corpus (everything cached);
#   - `skillet skills match` over the ~500-skill pool with a warm cache;
#   - peak memory of those processes.
# In-process figures (query latency at 10k/100k, memory of a 100k index) come from
# `cargo bench -p skillet-retrieval --bench search`. Needs hyperfine (installed here when
# missing), the model (scripts/fetch-model.sh) and the corpus. Usage: scripts/bench-matching.sh
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${SKILLET_CORPUS:-$(cd .. && pwd)/shared/corpus}
[ -d "$corpus" ] || { echo "SKIPPED: no corpus at $corpus"; exit 0; }
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
model=${SKILLET_EMBED_MODEL:-$(bash scripts/fetch-model.sh)}
export SKILLET_EMBED_MODEL=$model HF_HUB_OFFLINE=1
cargo build --release -q -p skillet-cli
bin=$PWD/target/release/skillet
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
pool=()
for collection in anthropics-claude-plugins-official anthropics-skills openai-skills obra-superpowers \
  vercel-agent-skills mattpocock-skills trailofbits-skills wshobson-agents kdense-scientific-skills; do
  pool+=(--skills-dir "$corpus/$collection")
done

echo "== cold index of the corpus (empty cache every run)"
XDG_CACHE_HOME=$cache "$bin" --skills-dir "$corpus" skills index
hyperfine -N --runs "${COLD_RUNS:-5}" --prepare "rm -rf $cache/skillet" \
  -n "skills index, cold (corpus)" "env XDG_CACHE_HOME=$cache $bin --skills-dir $corpus skills index"

echo "== warm re-index of the corpus"
hyperfine -N --warmup 2 --runs 20 \
  -n "skills index, warm (corpus)" "env XDG_CACHE_HOME=$cache $bin --skills-dir $corpus skills index"

echo "== skills match on the ~500-skill pool, warm cache"
XDG_CACHE_HOME=$cache "$bin" "${pool[@]}" skills index
hyperfine -N --warmup 3 --runs 30 \
  -n "skills match (pool, hybrid)" "env XDG_CACHE_HOME=$cache $bin ${pool[*]} skills match 'review my PR for injection holes'" \
  -n "skills match (pool, lexical)" "env XDG_CACHE_HOME=$cache $bin ${pool[*]} skills match 'review my PR for injection holes' --mode lexical"

echo "== peak memory (max RSS)"
XDG_CACHE_HOME=$cache /usr/bin/time -f "skills match (pool): %M KB, %e s" \
  "$bin" "${pool[@]}" skills match 'review my PR for injection holes' >/dev/null 2>"$cache/time" || true
tail -1 "$cache/time"
rm -rf "$cache/skillet"
XDG_CACHE_HOME=$cache /usr/bin/time -f "skills index, cold (corpus): %M KB, %e s" \
  "$bin" --skills-dir "$corpus" skills index >/dev/null 2>"$cache/time" || true
tail -1 "$cache/time"
