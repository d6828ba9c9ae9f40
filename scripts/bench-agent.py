#!/usr/bin/env python3
"""Agent harness figures (issue 3), measured against a canned model server on loopback:

- startup: from spawning `skillet run` to its first request reaching the server;
- whole run: spawn to exit for a one-request task, and peak memory (max RSS);
- per-turn overhead inside the process comes from the divan bench `cargo bench -p skillet-agent`.

Usage: scripts/bench-agent.py [RUNS]   (builds target/release/skillet first)
"""
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "skillet")
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
        length = int(self.headers.get("content-length", 0))
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *args):
        pass


def main():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "skillet-cli"], cwd=ROOT, check=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = tempfile.mkdtemp()
    env = {
        "PATH": os.environ["PATH"], "HOME": home,
        "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}",
    }
    corpus = os.environ.get("SKILLET_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
    setups = [("no skills", [])]
    if os.path.isdir(corpus):
        setups.append(("the corpus (1,939 skills)", ["--skills-dir", corpus]))
    for label, extra in setups:
        to_request, whole, peak = [], [], []
        for _ in range(RUNS):
            first_request.clear()
            start = time.perf_counter()
            child = subprocess.Popen([BIN, *extra, "run", "--no-stream", "hi"], env=env, cwd=home,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(child.pid, 0)
            end = time.perf_counter()
            assert status == 0, f"skillet run failed ({status})"
            peak.append(usage.ru_maxrss / 1024)
            to_request.append((first_request[0] - start) * 1000)
            whole.append((end - start) * 1000)
        print(f"{label}: spawn to first request median {statistics.median(to_request):.1f} ms "
              f"(min {min(to_request):.1f}, max {max(to_request):.1f}); whole run median "
              f"{statistics.median(whole):.1f} ms; peak RSS max {max(peak):.1f} MB")
    server.shutdown()


if __name__ == "__main__":
    main()
