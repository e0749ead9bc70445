"""``ccm-tui mcp``: search latency through MCP at 10,000 efforts, and the server's start time.

Builds a session of 10,000 concluded efforts of 100 messages each (bench_turn's
builder: 1,000,000 logged messages) and indexes it once, as the TUI would have. Then,
over a raw JSON-RPC pipe to the real ``ccm-tui mcp`` process:

* start: spawn to the initialize response, median of N fresh processes, alternated with
  the same on an empty session (the reference: what the SDK and Python cost);
* search: 200 queries (pairs of the builder's words, as bench_turn) once the server is
  started and has answered one search, timed at the client: write the request, read the
  answer. References measured in the same run on the same session: the core's
  ``SessionReader.search`` in-process (the MCP server's own search, without the
  protocol), and ``search_session`` in-process (what ``ccm-tui search`` does per call:
  read the manifest, sync the index, rank).

    python benchmarks/bench_mcp.py [--efforts 10000] [--messages 100] [--runs 5] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_turn import WORDS  # noqa: E402
from benchmarks.bench_turn import build_session as build_effort_files  # noqa: E402
from ccm_tui.config import Settings  # noqa: E402
from ccm_tui.core.api import SessionReader  # noqa: E402
from ccm_tui.core.engine.opening import open_engine, search_session  # noqa: E402

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


class Server:
    """A ``ccm-tui mcp`` process spoken to over its pipes, one request at a time."""

    def __init__(self, session_dir: Path, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ccm_tui.cli", "mcp", "--session-dir", str(session_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=ROOT,
        )
        self.next_id = 1
        self.request(INITIALIZE)
        self.start_seconds = time.perf_counter() - self.started
        self.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def notify(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, message: dict) -> dict:
        assert self.proc.stdout is not None
        self.notify(message)
        answer = json.loads(self.proc.stdout.readline())
        if "error" in answer:
            raise SystemExit(f"the server answered an error: {answer['error']}")
        return answer

    def search(self, query: str) -> str:
        self.next_id += 1
        call = {"name": "search", "arguments": {"query": query, "limit": 10}}
        answer = self.request({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": call})
        return answer["result"]["content"][0]["text"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def queries(n: int) -> list[str]:
    return [f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7 + 3) % len(WORDS)]}" for i in range(n)]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def timed_calls(call, items: list[str]) -> list[float]:
    out = []
    for item in items:
        start = time.perf_counter()
        call(item)
        out.append((time.perf_counter() - start) * 1000)
    return out


def start_times(big: Path, empty: Path, runs: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    """Spawn → initialize answered, alternating the big session and the empty one (a warm-up each first)."""
    a: list[float] = []
    b: list[float] = []
    for i in range(runs + 1):
        for directory, into in ((big, a), (empty, b)) if i % 2 == 0 else ((empty, b), (big, a)):
            server = Server(directory, env)
            server.close()
            if i:
                into.append(server.start_seconds)
    return a, b


def row(name: str, ms: list[float]) -> str:
    return f"  {name:<54} p50 {statistics.median(ms):7.1f} ms   p95 {percentile(ms, 0.95):7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--efforts", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5, help="server starts of each kind")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with tempfile.TemporaryDirectory(prefix="ccm-bench-mcp-") as tmp:
        base = Path(tmp)
        env = {**os.environ, "CCM_HOME": str(base / "home"), "XDG_CONFIG_HOME": str(base / "config")}
        big, empty = base / "big", base / "empty"
        started = time.perf_counter()
        build_effort_files(big, args.efforts, args.messages)
        build_effort_files(empty, 0, args.messages)
        for directory in (big, empty):  # every session file and the search index, as after real use
            open_engine(directory, Settings(token_budget=16_000)).close()
        print(
            f"built and indexed {args.efforts:,} efforts × {args.messages} messages in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )

        big_starts, empty_starts = start_times(big, empty, args.runs, env)
        items = queries(args.queries)
        server = Server(big, env)
        try:
            first = timed_calls(server.search, items[:1])[0]
            through_mcp = timed_calls(server.search, items)
        finally:
            server.close()
        reader = SessionReader(big, Settings())
        try:
            reader.search(items[0])
            in_process = timed_calls(lambda q: reader.search(q, 10), items)
        finally:
            reader.close()
        cli_like = timed_calls(lambda q: search_session(big, q, 10), items[: max(20, args.queries // 10)])

    print(
        f"ccm-tui mcp at {args.efforts:,} efforts × {args.messages} messages ({args.efforts * args.messages:,} logged)"
    )
    print("start: spawn to the initialize response, median of", args.runs)
    print(f"  {args.efforts:,} efforts {statistics.median(big_starts) * 1000:7.0f} ms   "
          f"empty session (reference) {statistics.median(empty_starts) * 1000:7.0f} ms   "
          f"ratio {statistics.median(big_starts) / statistics.median(empty_starts):.2f}×")  # fmt: skip
    print(f"search, {len(items)} queries of two words, limit 10 (first search after start: {first:.0f} ms)")
    print(row("through MCP (client: request written → answer read)", through_mcp))
    print(row("reference: SessionReader.search in-process", in_process))
    print(row("reference: search_session in-process (ccm-tui search)", cli_like))


if __name__ == "__main__":
    main()
