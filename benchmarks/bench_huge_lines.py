"""A session holding one huge message costs what a session without it costs (issue 33, hole 2).

Builds two sessions alike — some chat, an effort concluded by the model, then a transcript
imported by ``restore``'s landing — except that one import holds a message of ``--size`` MB
(the reference's holds 1 KB). Then, alternating the two and taking medians of ``--runs``:

* as fresh processes (what the issue timed): ``ccm-tui send``, ``search``, ``status``, and a
  ``ccm-tui mcp`` started for one read around the huge line;

and in-process, per operation (the work alone, against a reference of a few milliseconds):

* open: a session controller opens it as the TUI does (recovery, the chat's history);
* send: one ``ccm-tui send`` turn (in-process, against the fake OpenAI server);
* search: ``ccm-tui search``'s core (``search_session``) for a word whose best hit is the message;
* MCP: a ``ccm-tui mcp --allow-writes`` process over a raw JSON-RPC pipe: its start and first
  search, a read of the effort's first page, a read around the huge line, the first remember;
* reopened: the imported effort reopened (the message is in the working context: it is cut
  to the per-message cap there), then open, send and search again.

Each figure is printed with its ratio to the reference (target: ≤ 1.5× for the commands).

    python benchmarks/bench_huge_lines.py [--size 60] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ccm_tui.cli import main as cli  # noqa: E402
from ccm_tui.config import Settings  # noqa: E402
from ccm_tui.core.engine.opening import search_session  # noqa: E402
from ccm_tui.core.service.controller import OpenOptions, SessionController  # noqa: E402
from ccm_tui.restore.landing import land  # noqa: E402
from ccm_tui.restore.turns import ParsedTranscript, TurnRound  # noqa: E402
from tests.helpers.openai_server import FakeLLMServer, call, text, tool_calls  # noqa: E402

MODEL = "openai/fake-model"
WORD = "zebrafish"


def send(server: FakeLLMServer, directory: Path, message: str, *replies: Any) -> None:
    server.push(*replies)
    out = io.StringIO()
    argv = ["send", "--session-dir", str(directory), "--model", MODEL, "--api-base", server.base_url, message]
    with contextlib.redirect_stdout(out):
        if cli(argv) != 0:
            raise SystemExit(f"send failed: {out.getvalue()}")


def build(server: FakeLLMServer, directory: Path, size: int) -> None:
    """Chat, an effort the model opened and concluded, then an imported transcript whose first reply
    is ``size`` bytes of prose (the word searched for in it)."""
    send(server, directory, "hello there", text("Hello!"))
    send(
        server,
        directory,
        "let's plan the garden",
        tool_calls(call("open_effort", {"name": "garden"})),
        text("Opened: what grows?"),
    )
    send(server, directory, "tomatoes and beans", text("Good choice."))
    send(
        server, directory, "the garden is done", tool_calls(call("close_effort", {})), text("Garden plan."), text("ok")
    )
    prose = (f"lorem ipsum dolor {WORD} sit amet " * (size // 32 + 1))[:size]
    turns = [
        TurnRound(
            turn=1, user_messages=[f"tell me about the {WORD}"], agent_responses=[prose], start_line=1, end_line=2
        ),
        TurnRound(turn=2, user_messages=["thanks"], agent_responses=["you are welcome"], start_line=3, end_line=4),
    ]
    parsed = ParsedTranscript(format="aider", turns=turns, title="imported")
    land(directory, parsed, directory.with_suffix(".md"), f"The {WORD} notes.", Settings())


async def open_session(directory: Path) -> int:
    """What the TUI's link does on start: open (recovery, history), then close. Returns the history's size."""
    seen: list[Any] = []
    controller = SessionController(directory, Settings(), options=OpenOptions(hold_lock=False))
    controller.subscribe(seen.append)
    try:
        await controller.open()
    finally:
        await controller.close()
    return sum(len(line.content) for event in seen for line in getattr(event, "history", ()))


class Mcp:
    """A ``ccm-tui mcp --allow-writes`` process spoken to over its pipes, one request at a time."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        argv = [sys.executable, "-m", "ccm_tui.cli", "mcp", "--session-dir", str(directory), "--allow-writes"]
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
        )
        self.next_id = 0
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        self.request("initialize", hello)
        self.start = time.perf_counter() - started
        self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdout is not None
        self.next_id += 1
        self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        answer = json.loads(self.proc.stdout.readline())
        if "error" in answer or answer["result"].get("isError"):
            raise SystemExit(f"the server answered an error: {answer}")
        return answer

    def tool(self, name: str, **arguments: Any) -> tuple[float, int]:
        """Seconds the call took at the client, and the answer's size."""
        started = time.perf_counter()
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        return time.perf_counter() - started, len(answer["result"]["content"][0]["text"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


class Figures:
    """Seconds (and an answer's size) per operation and session kind."""

    def __init__(self) -> None:
        self.times: dict[tuple[str, str], list[float]] = {}
        self.sizes: dict[tuple[str, str], int] = {}

    def add(self, op: str, kind: str, seconds: float, size: int | None = None) -> None:
        self.times.setdefault((op, kind), []).append(seconds)
        if size is not None:
            self.sizes[(op, kind)] = size

    def timed(self, op: str, kind: str, fn: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        value = fn()
        self.add(op, kind, time.perf_counter() - started, value if isinstance(value, int) else None)
        return value

    def report(self, ops: list[str]) -> list[float]:
        ratios = []
        for op in ops:
            huge, small = (statistics.median(self.times[(op, k)]) for k in ("huge", "small"))
            ratios.append(huge / small)
            sizes = ""
            if (op, "huge") in self.sizes:
                sizes = f"   answer {self.sizes[(op, 'huge')]:>9,} chars (reference {self.sizes[(op, 'small')]:,})"
            print(
                f"  {op:<34} {huge * 1000:9.1f} ms   reference {small * 1000:8.1f} ms   ratio {huge / small:5.2f}×{sizes}"
            )
        return ratios


def mcp_round(figures: Figures, kind: str, directory: Path, env: dict[str, str], huge_line: int) -> None:
    server = Mcp(directory, env)
    try:
        figures.add("mcp: start (spawn → initialize)", kind, server.start)
        for op, name, arguments in (
            ("mcp: first search", "search", {"query": WORD}),
            ("mcp: search", "search", {"query": f"{WORD} lorem"}),
            ("mcp: read the effort's first page", "read", {"id": "imported"}),
            ("mcp: read around the huge line", "read", {"id": "imported", "around_line": huge_line}),
            ("mcp: first remember", "remember", {"text": f"a note about the {WORD}"}),
        ):
            seconds, size = server.tool(name, **arguments)
            figures.add(op, kind, seconds, size)
    finally:
        server.close()


def ccm(argv: list[str], env: dict[str, str]) -> float:
    """Seconds one ``ccm-tui`` command takes as a fresh process (what a user or a script waits for)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ccm_tui.cli", *argv], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"ccm-tui {argv[0]} failed: {done.stderr.strip()}")
    return time.perf_counter() - started


def process_round(figures: Figures, server: FakeLLMServer, kind: str, directory: Path, env: dict[str, str]) -> None:
    where = ["--session-dir", str(directory)]
    server.push(text("ok"))
    model = ["--model", MODEL, "--api-base", server.base_url]
    figures.add("process: ccm-tui send", kind, ccm(["send", *where, *model, f"more on the {WORD}"], env))
    figures.add("process: ccm-tui search", kind, ccm(["search", *where, WORD], env))
    figures.add("process: ccm-tui status", kind, ccm(["status", *where], env))
    started = time.perf_counter()
    server_process = Mcp(directory, env)
    try:
        server_process.tool("read", id="imported", around_line=2)
    finally:
        server_process.close()
    figures.add("process: ccm-tui mcp, start + first read", kind, time.perf_counter() - started)


def run_ops(figures: Figures, server: FakeLLMServer, sessions: dict[str, Path], runs: int, label: str) -> None:
    for i in range(runs):
        order = ("huge", "small") if i % 2 == 0 else ("small", "huge")
        for kind in order:
            directory = sessions[kind]
            figures.timed(f"{label}open (history)", kind, lambda d=directory: asyncio.run(open_session(d)))
            figures.timed(f"{label}send", kind, lambda d=directory: send(server, d, f"more on the {WORD}", text("ok")))
            figures.timed(f"{label}search", kind, lambda d=directory: len(search_session(d, WORD)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=60, help="the huge message, in MB")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    size = int(args.size * 1_000_000)
    with tempfile.TemporaryDirectory(prefix="ccm-bench-huge-") as tmp, FakeLLMServer() as server:
        base = Path(tmp)
        env = {**os.environ, "CCM_HOME": str(base / "home"), "XDG_CONFIG_HOME": str(base / "config")}
        env["PYTHONPATH"] = str(ROOT)
        sessions = {"huge": base / "huge", "small": base / "small"}
        started = time.perf_counter()
        build(server, sessions["huge"], size)
        build(server, sessions["small"], 1000)
        print(
            f"built the sessions ({args.size:g} MB message) in {time.perf_counter() - started:.1f} s", file=sys.stderr
        )
        send(server, sessions["small"], "warm-up", text("ok"))  # litellm imported in this process

        figures = Figures()
        for i in range(args.runs):
            for kind in ("huge", "small") if i % 2 == 0 else ("small", "huge"):
                process_round(figures, server, kind, sessions[kind], env)
        run_ops(figures, server, sessions, args.runs, "")
        for i in range(args.runs):
            for kind in ("huge", "small") if i % 2 == 0 else ("small", "huge"):
                mcp_round(figures, kind, sessions[kind], env, huge_line=2)
        for directory in sessions.values():
            send(server, directory, "/reopen imported")
        reopened = Figures()
        run_ops(reopened, server, sessions, args.runs, "reopened: ")

    print(f"one {args.size:g} MB message in an imported effort, against 1 KB (median of {args.runs}, alternated)")
    print("commands, each a fresh process (what a user, a script or an agent waits for):")
    ratios = figures.report(
        [
            "process: ccm-tui send",
            "process: ccm-tui search",
            "process: ccm-tui status",
            "process: ccm-tui mcp, start + first read",
        ]
    )
    print("in-process, per operation (the work alone: stricter, its reference is a few milliseconds):")
    strict = figures.report(
        [
            "open (history)",
            "send",
            "search",
            "mcp: start (spawn → initialize)",
            "mcp: first search",
            "mcp: search",
            "mcp: read the effort's first page",
            "mcp: read around the huge line",
            "mcp: first remember",
        ]
    )
    print("the effort reopened: the message in the working context (in-process)")
    strict += reopened.report(["reopened: open (history)", "reopened: send", "reopened: search"])
    print(f"worst ratio: commands {max(ratios):.2f}× (target ≤ 1.5×), in-process {max(strict):.2f}×")


if __name__ == "__main__":
    main()
