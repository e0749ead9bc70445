"""``ccm-tui mcp --all-sessions`` over many sessions under a small descriptor limit (issue 33, hole 3).

Builds ``--sessions`` sessions (copies of one built through the fake OpenAI server, each with a
word of its own in its ambient chat), then runs the real server with its descriptor limit set to
``--limit`` (``resource.setrlimit`` in the child, as macOS gives GUI-launched processes 256) and
checks, over a raw JSON-RPC pipe:

* ``status`` lists every session with its counts (none "unreadable");
* each session's own word is found by a search of that session (every session searchable);
* ``--probes`` searches over all sessions each find the one session holding their word;

and prints the time of each kind of call (median, slowest). Before: past ~40 sessions under 256
descriptors, sessions were skipped with "Too many open files" and status said "no sessions yet".

    python benchmarks/bench_mcp_sessions.py [--sessions 500] [--limit 256] [--probes 20]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.helpers.openai_server import FakeLLMServer, text  # noqa: E402

MODEL = "openai/fake-model"


def build(template: Path, root: Path, count: int) -> list[str]:
    """The template session, then ``count`` copies of it under ``root``, each with its own word."""
    from ccm_tui.cli import main

    with FakeLLMServer() as server, contextlib.redirect_stdout(io.StringIO()):
        for i in range(3):
            server.push(text(f"Reply {i}."))
            argv = ["send", "--session-dir", str(template), "--model", MODEL, "--api-base", server.base_url]
            if main([*argv, f"message {i} about the weather"]) != 0:
                raise SystemExit("building the template session failed")
    names = [f"s{i:04d}" for i in range(count)]
    for i, name in enumerate(names):
        shutil.copytree(template, root / name)
        record = {"role": "user", "content": f"the vault quux{i:04d} opens at noon", "ts": "2026-01-02T00:00:00Z"}
        with open(root / name / "raw.jsonl", "a", encoding="utf-8") as raw:
            raw.write(json.dumps(record) + "\n")
    return names


class Server:
    """``ccm-tui mcp --all-sessions`` under a descriptor limit, one request at a time."""

    def __init__(self, env: dict[str, str], limit: int) -> None:
        def limited() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ccm_tui.cli", "mcp", "--all-sessions"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=limited,
        )
        self.next_id = 0
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        self.request("initialize", hello)
        self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdout is not None
        self.next_id += 1
        self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the server ended: {self.stderr()}")
        return json.loads(line)

    def tool(self, name: str, **arguments: Any) -> tuple[float, str, bool]:
        started = time.perf_counter()
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        result = answer.get("result") or {}
        said = result.get("content", [{}])[0].get("text", json.dumps(answer.get("error")))
        return time.perf_counter() - started, said, bool(result.get("isError", "error" in answer))

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def close(self) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        errors = self.stderr()
        self.proc.wait(timeout=120)
        return errors


def row(name: str, seconds: list[float]) -> str:
    return f"  {name:<44} {len(seconds):>4} calls   median {statistics.median(seconds) * 1000:8.1f} ms   slowest {max(seconds) * 1000:8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--limit", type=int, default=256, help="the server's descriptor limit")
    parser.add_argument("--probes", type=int, default=20, help="searches over all sessions")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ccm-bench-sessions-") as tmp:
        base = Path(tmp)
        env = {**os.environ, "CCM_HOME": str(base / "home"), "XDG_CONFIG_HOME": str(base / "config")}
        env["PYTHONPATH"] = str(ROOT)
        os.environ["CCM_HOME"] = env["CCM_HOME"]
        root = base / "home" / "sessions"
        root.mkdir(parents=True)
        started = time.perf_counter()
        names = build(base / "template", root, args.sessions)
        print(f"built {args.sessions} sessions in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        server = Server(env, args.limit)
        failures: list[str] = []
        status_s, status, bad = server.tool("status")
        listed = sum(f"\n{name} · " in status for name in names)
        if bad or "unreadable" in status or listed != len(names):
            failures.append(f"status listed {listed} of {len(names)} (unreadable: {status.count('unreadable')})")
        own: list[float] = []
        for i, name in enumerate(names):
            seconds, said, bad = server.tool("search", query=f"quux{i:04d}", session=name)
            own.append(seconds)
            if bad or f"session {name}" not in said:
                failures.append(f"{name}: its own word not found: {said[:120]}")
        every: list[float] = []
        for i in random.Random(args.sessions).sample(range(len(names)), min(args.probes, len(names))):
            seconds, said, bad = server.tool("search", query=f"quux{i:04d}")
            every.append(seconds)
            if bad or f"session {names[i]}" not in said or "skipped" in said:
                failures.append(f"search over all sessions for {names[i]}'s word: {said[:160]}")
        errors = server.close()
    print(f"ccm-tui mcp --all-sessions: {args.sessions} sessions, descriptor limit {args.limit}")
    print(row("status (every session listed with its counts)", [status_s]))
    print(row("search of one session for its own word", own))
    print(row("search over all sessions", every))
    print(f"sessions listed by status: {listed} of {len(names)}; searches that failed: {len(failures)}")
    if "Too many open files" in errors:
        failures.append("the server's stderr says 'Too many open files'")
    for failure in failures[:10]:
        print("  FAILED:", failure)
    print("every session searchable, status right" if not failures else f"{len(failures)} failure(s)")


if __name__ == "__main__":
    main()
