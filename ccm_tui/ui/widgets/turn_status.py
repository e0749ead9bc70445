"""The line above the prompt: what a running turn is doing, with elapsed time and how to cancel."""

from __future__ import annotations

import time

from textual.timer import Timer

from .line import StatusLine

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class TurnStatus(StatusLine):
    """Hidden when idle; ``start(label)`` shows a spinner until ``stop()`` (ten frames a second: a
    :class:`StatusLine`, repainted, never laid out again)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.label = ""
        self.cancellable = True
        self._started = 0.0
        self._frame = 0
        self._timer: Timer | None = None

    def start(self, label: str, *, cancellable: bool = True) -> None:
        self.label = label
        self.cancellable = cancellable
        self._started = time.monotonic()
        self.add_class("-running")
        if self._timer is None:
            self._timer = self.set_interval(0.1, self._tick)
        self._tick()

    @property
    def running(self) -> bool:
        return self._timer is not None

    def set_label(self, label: str) -> None:
        if label == self.label:
            return  # called on every streamed token: the 0.1 s tick keeps the line current
        self.label = label
        self._tick()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.remove_class("-running")
        self.set_text("")

    def _tick(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)
        elapsed = time.monotonic() - self._started
        hint = " · Esc cancels" if self.cancellable else ""
        self.set_text(f"{SPINNER[self._frame]} {self.label} · {elapsed:.1f} s{hint}")
