"""Shared helpers for the core's unit tests: a session built on disk, its files read back, and an
orchestrator that talks to the fake OpenAI-compatible server through litellm (the only seam)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ccm_tui.config import Settings
from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.manifest.effort import Effort
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
