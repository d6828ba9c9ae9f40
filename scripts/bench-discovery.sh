#!/usr/bin/env bash
# Whole-process discovery benchmark (issue #2): `skillet skills list` and `catalog` over the corpus
# and over a generated tree of 10,000 skills, against a straightforward Python loader and against
# `find | xargs head -c 1024` on the same tree, plus peak memory. Needs hyperfine and PyYAML
# (installed here when missing). Usage: scripts/bench-discovery.sh [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-10000}
corpus=${SKILLET_CORPUS:-$(cd .. && pwd)/shared/corpus}
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
python3 -c 'import yaml' 2>/dev/null || pip install -q pyyaml
cargo build --release -q -p skillet-cli
bin=$PWD/target/release/skillet
mkdir -p target
results=target/bench-discovery.md
: > "$results"

# Two generated trees: one copying real corpus frontmatters and bodies (realistic sizes and YAML
# shapes, heavier), one synthetic (the same short frontmatter shape for every skill).
synthetic=${TMPDIR:-/tmp}/skillet-bench-synthetic-$count
realistic=${TMPDIR:-/tmp}/skillet-bench-realistic-$count
[ -d "$synthetic" ] || SKILLET_CORPUS=/nonexistent python3 scripts/gen_skill_tree.py "$synthetic" "$count"
if [ -d "$corpus" ]; then
  [ -d "$realistic" ] || SKILLET_CORPUS=$corpus python3 scripts/gen_skill_tree.py "$realistic" "$count"
  trees=("$synthetic" "$realistic")
else
  echo "SKIPPED corpus-derived tree: no corpus at $corpus"
  trees=("$synthetic")
fi

for tree in "${trees[@]}"; do
  echo "== $tree: whole process, warm page cache"
  hyperfine -N --warmup 5 --runs 40 --export-markdown /tmp/skillet-bench-part.md \
    -n "skillet skills list" "$bin skills list --skills-dir $tree" \
    -n "skillet skills catalog (no budget)" "$bin skills catalog --skills-dir $tree --budget 100000000" \
    -n "python loader (glob, read, regex, yaml.safe_load)" "python3 scripts/python_loader.py $tree" \
    -n "find | xargs head -c 1024" "bash -c 'find $tree -name SKILL.md -print0 | xargs -0 head -q -c 1024 >/dev/null'"
  { echo "### $tree"; cat /tmp/skillet-bench-part.md; echo; } >> "$results"
  echo "== peak memory (max RSS)"
  for args in "skills list" "skills catalog --budget 100000000"; do
    /usr/bin/time -f "skillet $args: %M KB max RSS, %e s" "$bin" $args --skills-dir "$tree" >/dev/null 2>/tmp/skillet-bench-time || true
    tail -1 /tmp/skillet-bench-time
  done
done

if [ -d "$corpus" ]; then
  echo "== the corpus ($corpus): whole process"
  hyperfine -N --warmup 3 --runs 20 \
    -n "skillet skills list (corpus)" "$bin skills list --skills-dir $corpus" \
    -n "skillet skills catalog (corpus)" "$bin skills catalog --skills-dir $corpus"
else
  echo "SKIPPED corpus: not found at $corpus"
fi
echo "tables: $results"
