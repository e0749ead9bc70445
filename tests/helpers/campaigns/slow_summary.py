"""A slow summary model for the kill campaigns (issue 42, item 9): conclusions, folds and restores
were too fast for a kill -9 to land in them. :class:`SlowSummaries` wraps a fake server's responder:
a summary request waits ``delay`` seconds before it is answered, and the server side keeps each one's
kind, start and end (and, with ``log``, writes them to a JSONL file), so a campaign can wait for one to
be in flight, kill then, and count as a hit only a kill that landed while the server held a summary
request it had not answered yet (:meth:`SlowSummaries.kill_inside`).

The kinds: ``conclusion`` (the summarize prompt: ``/conclude``, ``close_effort``), ``fold`` (the request
the kill campaign's driver makes from a fold's summary step: a fold's summary is extracted without a
model, see :mod:`.turn_driver`), ``restore-turn`` (restore's turn-by-turn summaries),
``restore-session`` (its SESSION SUMMARY)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUMMARY_MARK = "You write the summary"  # the summarize prompt's opening words
FOLD_MARK = "Kill campaign: a fold's summary step"  # the driver's request from inside a fold
RESTORE_TURN_MARK = "You are restoring a coding-agent session"  # restore_turn.md and restore_turns.md
RESTORE_SESSION_MARK = "You write the final summary"  # restore_final.md


def _system(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")


def summary_kind(body: dict[str, Any]) -> str | None:
    """Which summary call a request is (None: not one): see the module's docstring."""
    if body.get("tools"):
        return None
    system = _system(body)
    for mark, kind in (
        (SUMMARY_MARK, "conclusion"),
        (FOLD_MARK, "fold"),
        (RESTORE_TURN_MARK, "restore-turn"),
        (RESTORE_SESSION_MARK, "restore-session"),
    ):
        if system.startswith(mark):
            return kind
    return None


def is_summary(body: dict[str, Any]) -> bool:
    """A conclusion's or a fold's summary call."""
    return summary_kind(body) in ("conclusion", "fold")


@dataclass
class SummaryCall:
    kind: str
    start: float  # time.monotonic() when the server had read the request
    end: float | None = None  # when the wait was over and the answer began (None: still waiting)


class SlowSummaries:
    """``kinds``: the summary kinds recorded and, while ``delay`` > 0, made slow (by default conclusions
    and folds)."""

    def __init__(
        self,
        responder: Callable[[dict], Any],
        delay: float,
        kinds: tuple[str, ...] = ("conclusion", "fold"),
        log: Path | None = None,
    ) -> None:
        self.responder = responder
        self.delay = delay
        self.kinds = kinds
        self.log = log
        self._lock = threading.Lock()
        self._calls: list[SummaryCall] = []

    def __call__(self, body: dict) -> Any:
        kind = summary_kind(body)
        if kind in self.kinds:
            call = SummaryCall(kind, time.monotonic())
            with self._lock:
                self._calls.append(call)
            self._write({"summary_call": kind, "received": call.start})
            try:
                if self.delay > 0:
                    time.sleep(self.delay)
            finally:
                call.end = time.monotonic()
                self._write({"summary_call": kind, "received": call.start, "answered": call.end})
        return self.responder(body)

    def _write(self, record: dict[str, Any]) -> None:
        if self.log is not None:
            with self._lock, self.log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")

    def calls(self, since: float, kind: str | None = None) -> list[SummaryCall]:
        with self._lock:
            return [c for c in self._calls if c.start >= since and kind in (None, c.kind)]

    def wait_for_one(
        self,
        since: float,
        timeout: float,
        *,
        proc: subprocess.Popen | None = None,
        kind: str | None = None,
        nth: int | None = None,
    ) -> SummaryCall | None:
        """A summary call (of ``kind``) begun after ``since`` and in flight, within ``timeout`` seconds;
        with ``nth``, the nth such call, or None if it was answered before it was seen. None at once
        when ``proc`` ends first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            calls = self.calls(since, kind)
            if nth is not None and len(calls) >= nth:
                return calls[nth - 1] if calls[nth - 1].end is None else None
            waiting = next((c for c in calls if c.end is None), None) if nth is None else None
            if waiting is not None:
                return waiting
            if proc is not None and proc.poll() is not None:
                return None
            time.sleep(0.005)
        return None

    def kill_inside(self, proc: subprocess.Popen, since: float) -> str | None:
        """kill -9 ``proc`` now; the kind of the summary call begun after ``since`` that the server had
        received before the kill and not yet answered once the process was dead (None: no such call,
        the kill missed). Logged with the calls."""
        before = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        after = time.monotonic()
        hit = next(
            (c.kind for c in self.calls(since) if c.start < before and (c.end is None or c.end > after)),
            None,
        )
        self._write({"kill": before, "dead": after, "inside": hit})
        return hit
