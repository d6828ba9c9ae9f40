#!/usr/bin/env python3
"""Start-up at scale (issue 31): generated libraries of 1k and 10k skills (100k with --100k),
each measured against `skillet skills list` on the same tree.

For each size, whole process, median of RUNS (peak memory the largest):
- `skills list`: the baseline (discovery and the catalog, no body read);
- `run` start: spawn to the first request reaching a canned model server, hybrid matching,
  warm (the body facts, word indexes and vectors kept from a run before) and cold (the facts
  and word indexes removed: every body read, tokenised and stemmed again, the indexes built and
  written; vectors stay cached, embedding 10k skills takes minutes);
- `chat` start: the same to the first request, the message typed on its input, warm;
- `skillet mcp`: spawn to the answer to `initialize`, and to the answer to the first
  `search_skills` (hybrid: the server waits for its semantic index), warm and cold;
- `run --skill-match off` start, warm.

Needs the embedding model (SKILLET_EMBED_MODEL, as for the tests); the first run of each tree
embeds every skill once (minutes at 10k), outside the figures. Trees are made by
scripts/gen_skill_tree.py under $SKILLET_BENCH_DIR (default: the temp dir) and kept.

Usage: scripts/bench-start.py [RUNS] [--100k]   (builds target/release/skillet first)
  SKILLET_BENCH_BIN=PATH           measure this binary instead (nothing built)
  SKILLET_BENCH_SIZES=1000,10000   the sizes (default)
  SKILLET_BENCH_HOME=DIR           a home kept between invocations (vectors embedded once)
"""
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# SKILLET_BENCH_BIN: a binary built before (a profiling build); else the release build.
BIN = os.environ.get("SKILLET_BENCH_BIN") or os.path.join(ROOT, "target", "release", "skillet")
ARGS = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
RUNS = int(ARGS[0]) if ARGS else 5
SIZES = [int(size) for size in os.environ.get("SKILLET_BENCH_SIZES", "1000,10000").split(",")] + (
    [100_000] if "--100k" in sys.argv else [])
first_request = []

ANSWER = json.dumps({
    "id": "msg_bench", "type": "message", "role": "assistant",
    "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
    "usage": {"input_tokens": 10, "output_tokens": 1},
}).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):  # noqa: N802 (http.server's naming)
        first_request.append(time.perf_counter())
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *args):
        pass


def tree(count):
    """The generated tree's --skills-dir arguments: roots of at most 50,000 skills (a root's
    walk stops at 100,000 folders)."""
    base = os.environ.get("SKILLET_BENCH_DIR", tempfile.gettempdir())
    roots = []
    for part in range(max(1, count // 50_000)):
        size = min(count, 50_000)
        out = os.path.join(base, f"skillet-bench-tree-{count}-{part}")
        if not os.path.isdir(out):
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_skill_tree.py"), out,
                            str(size)], check=True, stdout=subprocess.DEVNULL)
        roots += ["--skills-dir", out]
    return roots


def measure(argv, env, to_request):
    """Milliseconds to the first request (or to the exit), and peak RSS in MB."""
    first_request.clear()
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=env["HOME"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    end = time.perf_counter()
    assert status == 0, f"{argv} failed ({status})"
    at = first_request[0] if to_request else end
    return (at - start) * 1000, usage.ru_maxrss / 1024


def measure_chat(argv, env, message):
    """Milliseconds from spawning `chat` with `message` on its input to its first request, and
    peak RSS in MB."""
    first_request.clear()
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=env["HOME"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    child.stdin.write(f"{message}\n/exit\n".encode())
    child.stdin.close()
    _, status, usage = os.wait4(child.pid, 0)
    assert status == 0, f"{argv} failed ({status})"
    return (first_request[0] - start) * 1000, usage.ru_maxrss / 1024


def measure_mcp(argv, env):
    """Milliseconds from spawning `skillet mcp` to its answer to `initialize`, then to its
    answer to the first `search_skills` (checked hybrid), and peak RSS in MB."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=env["HOME"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def ask(request_id, method, params):
        child.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                      "params": params}) + "\n")
        child.stdin.flush()
        while True:
            line = child.stdout.readline()
            assert line, f"the server closed its output during {method}"
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    ask(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "bench", "version": "1"}})
    initialized = time.perf_counter()
    child.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    found = ask(2, "tools/call", {"name": "search_skills",
                                  "arguments": {"query": "plot a chart of monthly sales"}})
    searched = time.perf_counter()
    ranking = found["result"].get("structuredContent", {}).get("ranking")
    assert ranking == "hybrid", f"the first search ranked by {ranking}"
    with open(f"/proc/{child.pid}/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    child.kill()
    child.wait()
    return (initialized - start) * 1000, (searched - start) * 1000, peak / 1024


def series(argv, env, to_request, before=None, how=None):
    times, peaks = [], []
    for _ in range(RUNS):
        if before:
            before()
        elapsed, peak = how() if how else measure(argv, env, to_request)
        times.append(elapsed)
        peaks.append(peak)
    return statistics.median(times), max(peaks)


def mcp_series(argv, env, before=None):
    initialize, search, peaks = [], [], []
    for _ in range(RUNS):
        if before:
            before()
        started, answered, peak = measure_mcp(argv, env)
        initialize.append(started)
        search.append(answered)
        peaks.append(peak)
    return statistics.median(initialize), statistics.median(search), max(peaks)


def main():
    if not os.environ.get("SKILLET_BENCH_BIN"):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "skillet-cli"], cwd=ROOT,
                       check=True)
    model = os.environ.get("SKILLET_EMBED_MODEL")
    if not model:
        sys.exit("set SKILLET_EMBED_MODEL to the embedding model's folder")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # A home kept between invocations keeps each tree's vectors (SKILLET_BENCH_HOME).
    home = os.environ.get("SKILLET_BENCH_HOME") or tempfile.mkdtemp()
    os.makedirs(home, exist_ok=True)
    env = {
        "PATH": os.environ["PATH"], "HOME": home, "HF_HUB_OFFLINE": "1",
        "SKILLET_EMBED_MODEL": model,
        "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}",
    }
    facts = os.path.join(home, ".cache", "skillet", "index")
    print(f"median of {RUNS}, peak RSS the largest; this machine: {os.cpu_count()} cores")
    for count in SIZES:
        roots = tree(count)
        run = [BIN, *roots, "run", "--no-stream", "plot a chart of monthly sales"]
        # Embeds every skill once and keeps the facts: outside the figures.
        measure(run, env, True)
        forget = lambda: shutil.rmtree(facts, ignore_errors=True)  # noqa: E731
        listed = series([BIN, *roots, "skills", "list"], env, False)
        warm = series(run, env, True)
        cold = series(run, env, True, before=forget)
        measure(run, env, True)
        chat_argv = [BIN, *roots, "chat"]
        chat = series(chat_argv, env, True,
                      how=lambda: measure_chat(chat_argv, env, "plot a chart of monthly sales"))
        mcp = [BIN, *roots, "mcp"]
        mcp_warm = mcp_series(mcp, env)
        mcp_cold = mcp_series(mcp, env, before=forget)
        measure(run, env, True)
        off = series([BIN, *roots, "run", "--skill-match", "off", "--no-stream", "hi"], env, True)
        ratio = lambda figure: f"{figure[0]:.0f} ms {figure[1]:.0f} MB ({figure[0] / listed[0]:.1f}x list)"  # noqa: E731
        print(f"{count} skills: skills list {listed[0]:.0f} ms {listed[1]:.0f} MB\n"
              f"  run warm {ratio(warm)} | cold {ratio(cold)}\n"
              f"  chat warm {ratio(chat)}\n"
              f"  mcp warm: initialize {mcp_warm[0]:.0f} ms, first hybrid search "
              f"{mcp_warm[1]:.0f} ms, {mcp_warm[2]:.0f} MB | cold: {mcp_cold[0]:.0f} ms, "
              f"{mcp_cold[1]:.0f} ms, {mcp_cold[2]:.0f} MB\n"
              f"  run --skill-match off {off[0]:.0f} ms {off[1]:.0f} MB", flush=True)
    server.shutdown()


if __name__ == "__main__":
    main()
