"""A slow summary model for the kill campaigns (issue 42, item 9): conclusions, folds and restores
were too fast for a kill -9 to land in them. :class:`SlowSummaries` wraps a fake server's responder:
a summary request waits ``delay`` seconds before it is answered, and each one's start and end are
kept, so a campaign can wait for one to be in flight, kill then, and count the kills that hit one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

SUMMARY_MARK = "You write the summary"  # the summarize prompt's opening words


def is_summary(body: dict[str, Any]) -> bool:
    """A conclusion's or a fold's summary call: no tools, the summarize prompt as system message."""
    messages = body.get("messages") or []
    system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    return not body.get("tools") and SUMMARY_MARK in system


class SlowSummaries:
    def __init__(
        self, responder: Callable[[dict], Any], delay: float, which: Callable[[dict], bool] = is_summary
    ) -> None:
        self.responder = responder
        self.delay = delay
        self.which = which
        self._lock = threading.Lock()
        self._calls: list[list[float | None]] = []  # [start, end (None: still waiting)]

    def __call__(self, body: dict) -> Any:
        if self.delay > 0 and self.which(body):
            call: list[float | None] = [time.monotonic(), None]
            with self._lock:
                self._calls.append(call)
            try:
                time.sleep(self.delay)
            finally:
                call[1] = time.monotonic()
        return self.responder(body)

    def wait_for_one(self, since: float, timeout: float) -> bool:
        """Whether a summary call began after ``since`` and is still waiting, within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.in_flight(since):
                return True
            time.sleep(0.01)
        return False

    def in_flight(self, since: float) -> bool:
        with self._lock:
            return any(start >= since and end is None for start, end in self._calls)  # type: ignore[operator]
