"""How fast `skillet mcp` starts and answers, measured from outside as a client sees it.

For each library: spawn to answered `initialize` (the model loads after it, in the background),
the median of RUNS spawns; then, in one server, `search_skills` round trips once the model has
loaded (median and 95th percentile over the queries), and the server's peak memory (VmHWM).

Usage: python mcp_bench.py SKILLET_BINARY [CORPUS_DIR]
The libraries are the corpus's ~500-skill pool of nine collections (all but the two largest)
and the whole corpus. Needs only the standard library. Run the release build on a quiet machine;
the figures are wall-clock and move with load.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 15
QUERIES = [
    "fill in a pdf form",
    "review my pull request for bugs",
    "deploy the app to production",
    "write unit tests for a python module",
    "make a chart from a csv file",
    "summarise a research paper",
    "set up continuous integration",
    "find security vulnerabilities in smart contracts",
    "design a database schema",
    "translate the user interface strings",
]
LARGEST = {"antigravity-awesome-skills", "composio-awesome-claude-skills"}
MODEL_WAIT = 600.0


class Server:
    def __init__(self, binary: str, roots: list[Path]) -> None:
        args = [binary, "mcp"]
        for root in roots:
            args += ["--skills-dir", str(root)]
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.next_id = 1

    def request(self, method: str, params: dict) -> dict:
        request_id = self.next_id
        self.next_id += 1
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server closed its output during {method}")
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def initialize(self) -> dict:
        answer = self.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.process.stdin.flush()
        return answer

    def peak_memory_kib(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def startup(binary: str, roots: list[Path]) -> tuple[float, int]:
    times = []
    skills = 0
    for _ in range(RUNS):
        started = time.perf_counter()
        server = Server(binary, roots)
        answer = server.initialize()
        times.append(time.perf_counter() - started)
        server.close()
        text = answer["result"].get("instructions", "")
        skills = int(text.split("library of ")[1].split(" ")[0]) if "library of " in text else 0
    return statistics.median(times) * 1000, skills


def searches(binary: str, roots: list[Path]) -> tuple[float, float, int, str]:
    server = Server(binary, roots)
    try:
        server.initialize()
        deadline = time.monotonic() + MODEL_WAIT
        ranking = "words"
        while time.monotonic() < deadline:
            found = server.request("tools/call", {"name": "search_skills", "arguments": {"query": "warm up"}})
            ranking = found["result"].get("structuredContent", {}).get("ranking", "words")
            note = found["result"].get("structuredContent", {}).get("note", "")
            if ranking == "hybrid" or "not available" in note:
                break
            time.sleep(0.5)
        times = []
        for _ in range(3):
            for query in QUERIES:
                started = time.perf_counter()
                server.request("tools/call", {"name": "search_skills", "arguments": {"query": query, "top_k": 5}})
                times.append((time.perf_counter() - started) * 1000)
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        return statistics.median(times), p95, server.peak_memory_kib(), ranking
    finally:
        server.close()


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    binary = sys.argv[1]
    corpus = Path(sys.argv[2] if len(sys.argv) == 3 else os.environ.get("SKILLET_CORPUS", "../shared/corpus"))
    collections = sorted(path for path in corpus.iterdir() if path.is_dir())
    if not collections:
        print(f"no corpus at {corpus}")
        return 2
    libraries = {
        "pool (nine collections)": [path for path in collections if path.name not in LARGEST],
        "whole corpus": collections,
    }
    for label, roots in libraries.items():
        initialize_ms, skills = startup(binary, roots)
        median, p95, peak_kib, ranking = searches(binary, roots)
        print(
            f"{label}: {skills} skills; spawn to initialize answered {initialize_ms:.1f} ms (median of {RUNS}); "
            f"search_skills ({ranking}) median {median:.1f} ms, p95 {p95:.1f} ms over {3 * len(QUERIES)} calls; "
            f"peak memory {peak_kib / 1024:.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
