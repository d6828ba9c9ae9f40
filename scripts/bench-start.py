#!/usr/bin/env python3
"""Start-up at scale (issue 31): generated libraries of 1k and 10k skills (100k with --100k),
each measured against `skillet skills list` on the same tree.

For each size, whole process, median of RUNS (peak memory the largest):
- `skills list`: the baseline (discovery and the catalog, no body read);
- `run` start: spawn to the first request reaching a canned model server, hybrid matching,
  warm (body facts and vectors kept from a run before) and with the body facts removed (cold
  facts: every body read, tokenised and stemmed again, as every start did before they were kept);
- `run --skill-match off` start, warm.

Needs the embedding model (SKILLET_EMBED_MODEL, as for the tests); the first run of each tree
embeds every skill once (minutes at 10k), outside the figures. Trees are made by
scripts/gen_skill_tree.py under $SKILLET_BENCH_DIR (default: the temp dir) and kept.

Usage: scripts/bench-start.py [RUNS] [--100k]   (builds target/release/skillet first)
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
BIN = os.path.join(ROOT, "target", "release", "skillet")
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


def series(argv, env, to_request, before=None):
    times, peaks = [], []
    for _ in range(RUNS):
        if before:
            before()
        elapsed, peak = measure(argv, env, to_request)
        times.append(elapsed)
        peaks.append(peak)
    return statistics.median(times), max(peaks)


def main():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "skillet-cli"], cwd=ROOT, check=True)
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
        listed = series([BIN, *roots, "skills", "list"], env, False)
        warm = series(run, env, True)
        cold = series(run, env, True, before=lambda: shutil.rmtree(facts, ignore_errors=True))
        off = series([BIN, *roots, "run", "--skill-match", "off", "--no-stream", "hi"], env, True)
        print(f"{count} skills: skills list {listed[0]:.0f} ms {listed[1]:.0f} MB | run warm "
              f"{warm[0]:.0f} ms {warm[1]:.0f} MB ({warm[0] / listed[0]:.1f}x list) | run, facts "
              f"cold {cold[0]:.0f} ms {cold[1]:.0f} MB | run --skill-match off {off[0]:.0f} ms "
              f"{off[1]:.0f} MB", flush=True)
    server.shutdown()


if __name__ == "__main__":
    main()
