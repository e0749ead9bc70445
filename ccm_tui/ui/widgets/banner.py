"""Notices in the chat, styled apart from messages: effort changes, compaction, pauses, errors."""

from __future__ import annotations

import time

from rich.cells import cell_len, set_cell_size
from textual import events
from textual.timer import Timer
from textual.widgets import Static

KINDS = ("effort", "compaction", "pause", "recovery", "info", "error", "demo")


class BannerLine(Static):
    """One notice, e.g. ``--- Opened effort: auth-bug ---`` (kept verbatim, styled by kind). An
    effort banner stays on one line: a name too long for the pane is shortened in its middle."""

    def __init__(self, text: str, kind: str = "effort") -> None:
        kind = kind if kind in KINDS else "info"
        super().__init__(text, markup=False, classes=f"banner -{kind}")
        self.kind = kind
        self.text = text

    def on_resize(self, event: events.Resize) -> None:
        if self.kind == "effort" and self.content_region.width > 0:
            self.update(one_line(self.text, self.content_region.width))


def one_line(text: str, width: int) -> str:
    """``text`` within ``width`` cells, its longest word (an effort's name) cut in the middle with
    "…" first, so the banner's action and its figures stay readable; the end is cut only if that
    is not enough."""
    if cell_len(text) <= width:
        return text
    words = text.split(" ")
    longest = max(range(len(words)), key=lambda i: cell_len(words[i]))
    word = words[longest]
    over = cell_len(text) - width + 1  # the "…" takes a cell
    if cell_len(word) - over >= 8:
        keep = len(word) - over
        while True:
            head, tail = word[: (keep + 1) // 2], word[len(word) - keep // 2 :]
            words[longest] = f"{head}…{tail}"
            shortened = " ".join(words)
            if cell_len(shortened) <= width or keep <= 0:
                return shortened
            keep -= 1
    return set_cell_size(text, width - 1) + "…" if width > 1 else "…"


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
