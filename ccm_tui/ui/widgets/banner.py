"""Notices in the chat, styled apart from messages: effort changes, compaction, pauses, errors."""

from __future__ import annotations

import time

from textual.timer import Timer
from textual.widgets import Static

KINDS = ("effort", "compaction", "pause", "recovery", "info", "error", "demo")


class BannerLine(Static):
    """One notice, e.g. ``--- Opened effort: auth-bug ---`` (kept verbatim, styled by kind)."""

    def __init__(self, text: str, kind: str = "effort") -> None:
        kind = kind if kind in KINDS else "info"
        super().__init__(text, markup=False, classes=f"banner -{kind}")
        self.kind = kind


class PauseBanner(BannerLine):
    """``SESSION PAUSED — <reason>`` with a live countdown until the automatic retry."""

    def __init__(self, reason: str, resume_at: float, attempt: int) -> None:
        super().__init__("", kind="pause")
        self.reason = " ".join(reason.split())
        self.resume_at = resume_at
        self.attempt = attempt
        self._timer: Timer | None = None

    def on_mount(self) -> None:
        self._tick()
        self._timer = self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        left = max(0, round(self.resume_at - time.time()))
        self.update(f"SESSION PAUSED — {self.reason} · retrying in {left} s (attempt {self.attempt}) · Esc cancels")

    def resolve(self, text: str) -> None:
        """Stop the countdown and show how the pause ended."""
        if self._timer is not None:
            self._timer.stop()
        self.update(f"SESSION PAUSED — {self.reason} · {text}")
        self.add_class("-resolved")
