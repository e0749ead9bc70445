"""Shared helpers for the core's unit tests: a session built on disk, its files read back, an orchestrator
that talks to the fake OpenAI-compatible server through litellm (the only seam), and another process
holding a session's writer lock."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from ccm_tui.config import Settings
from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.models.litellm_client import LLMClient
from ccm_tui.core.session.session import Session
from ccm_tui.core.storage.durable import read_jsonl
from ccm_tui.core.turn.events import TurnEvent
from ccm_tui.core.turn.orchestrator import Orchestrator

MODEL = "openai/fake-model"
SUMMARY_MARK = "You write the summary"  # the opening words of the summarize prompt
TS = "2024-01-01T00:00:00.000Z"


def settings_for(server: Any, **values: Any) -> Settings:
    return Settings(model=MODEL, api_base=server.base_url, **values)


def llm_for(server: Any) -> LLMClient:
    return LLMClient(MODEL, api_base=server.base_url)


def orchestrator_for(session: Session, server: Any, *, budget: int = 16_000, **values: Any) -> Orchestrator:
    """An orchestrator on ``session`` whose model is the fake server (retries instant)."""
    return Orchestrator(session, settings_for(server, **values), llm_for(server), budget=budget, retry_base=0)


def jsonl(path: Path) -> list[dict[str, Any]]:
    """Every record of a JSONL file (an empty list when it does not exist)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def events(session_dir: Path, name: str | None = None) -> list[dict[str, Any]]:
    """The event log's records (lines that are not JSON objects skipped, as the session skips them)."""
    records = read_jsonl(Path(session_dir) / "events.jsonl").records
    return [e for e in records if name is None or e.get("event") == name]


def write_jsonl(path: Path, records: list[dict[str, Any]], *, mode: str = "a") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record) + "\n")


def exchange(user: str, reply: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": user, "ts": TS}, {"role": "assistant", "content": reply, "ts": TS}]


def open_effort(session: Session, name: str, messages: list[dict[str, Any]] | None = None) -> Effort:
    """An open, active effort with ``messages`` in its log (through the lifecycle, as a tool would)."""
    effort = lifecycle.open_effort(session, name, turn=session.state.turn)
    if messages:
        session.append_effort(effort, messages)
    return effort


def concluded_effort(
    session: Session, name: str, messages: list[dict[str, Any]] | None = None, summary: str = "A summary."
) -> Effort:
    """A concluded effort with its summary in working memory."""
    effort = open_effort(session, name, messages)
    lifecycle.conclude(session, effort, summary, turn=session.state.turn)
    return effort


def is_summary_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    return not body.get("tools") and bool(messages) and SUMMARY_MARK in str(messages[0].get("content"))


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results a request carried back to the model."""
    return [json.loads(m["content"]) for m in body["messages"] if m.get("role") == "tool"]


class Emitted:
    """An ``emit`` callback that keeps what it was given (truthy even when empty: ``emit or default``)."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def __call__(self, event: TurnEvent) -> None:
        self.events.append(event)

    def __getitem__(self, index: int) -> Any:
        return self.events[index]

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def make_session(tmp_path) -> Session:
    """Ambient chat, a concluded effort whose summary is expanded (db-pool), and two open efforts (beta active)."""
    session = Session.open(tmp_path / "s")
    session.append_ambient([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    done = Effort(id="db-pool", status=CONCLUDED, summary="Database pool raised to 25 connections.")
    session.efforts.add(done)
    session.append_effort(
        done, [{"role": "user", "content": "pool exhausted"}, {"role": "assistant", "content": "raise it"}]
    )
    session.view.summaries["db-pool"] = 0
    session.view.expanded["db-pool"] = 0
    for eid, active in (("alpha", False), ("beta", True)):
        e = Effort(id=eid, active=active)
        session.efforts.add(e)
        session.append_effort(e, [{"role": "user", "content": f"{eid} question"}])
    return session


HOLD_LOCK = (
    "import sys; from pathlib import Path; from ccm_tui.core.session.lock import SessionLock; "
    "lock = SessionLock(Path(sys.argv[1])); assert lock.try_acquire(); print('held', flush=True); sys.stdin.read()"
)


def hold_writer_lock(session_dir: Path) -> subprocess.Popen[str]:
    """Another process holding the session's writer lock until its stdin closes."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(session_dir)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


@contextlib.contextmanager
def held_by_another_process(directory: Path):
    """The session's writer lock, held by a live process of its own (as tests/faults do)."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import time
            from pathlib import Path
            from ccm_tui.core.session.lock import SessionLock
            lock = SessionLock(Path({str(directory)!r})); lock.acquire()
            print("held", flush=True); time.sleep(60)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder.pid
    finally:
        holder.kill()
        holder.wait()


def withdrawn_by_markers(path: Path) -> set[int]:
    """The lines (from 1) the withdrawal markers of the log ``path`` take back, read from the file alone
    (the rule the readers under test must follow: a marker at line m with ``retracts: N`` withdraws
    lines m-N … m)."""
    out: set[int] = set()
    for number, line in enumerate(path.read_text().split("\n")[:-1], 1):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("role") == "system" and isinstance(record.get("retracts"), int):
            out.update(range(number - record["retracts"], number + 1))
    return out
