"""Typed events a turn reports while it runs. The CLI and the TUI consume the same stream."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def savings_share(total: int, naive: int) -> float:
    """The share of the naive context that effort management saves (0 when nothing to compare)."""
    return 0.0 if naive <= 0 else max(0.0, 1.0 - total / naive)


@dataclass(frozen=True)
class TurnEvent:
    """Base class; every event carries the turn number it belongs to."""

    turn: int


@dataclass(frozen=True)
class TurnStarted(TurnEvent):
    user: str


@dataclass(frozen=True)
class TextDelta(TurnEvent):
    """A piece of the assistant's reply as it streams in."""

    text: str


@dataclass(frozen=True)
class RoundReset(TurnEvent):
    """The stream of this round was cut off: the text streamed so far is partial."""


@dataclass(frozen=True)
class Banner(TurnEvent):
    """A one-line notice shown apart from the chat, e.g. ``--- Opened effort: auth-bug ---``."""

    text: str
    kind: str = "effort"  # effort | compaction | pause | recovery | info


@dataclass(frozen=True)
class EffortChanged(TurnEvent):
    """An effort changed state; the sidebar redraws from ``status``."""

    effort_id: str
    change: str  # opened | concluded | expanded | collapsed | reopened | switched | evicted | restored


@dataclass(frozen=True)
class ToolCalled(TurnEvent):
    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    ok: bool


@dataclass(frozen=True)
class ContextFigures(TurnEvent):
    """Token counts of the working context, per layer, and the naive figure."""

    layers: dict[str, int]
    total: int
    naive: int
    budget: int
    cost: float | None = None
    # tokens each open or expanded effort takes in the context (its section; the sidebar shows these)
    efforts: dict[str, int] = field(default_factory=dict)

    @property
    def savings(self) -> float:
        return savings_share(self.total, self.naive)

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "naive": self.naive,
            "budget": self.budget,
            "savings": round(self.savings, 4),
            "layers": dict(self.layers),
        }


@dataclass(frozen=True)
class Paused(TurnEvent):
    """The provider rate-limited us; the turn waits and retries by itself."""

    reason: str
    resume_at: float  # epoch seconds
    attempt: int


@dataclass(frozen=True)
class Resumed(TurnEvent):
    pass


@dataclass(frozen=True)
class Waiting(TurnEvent):
    """The turn waits for something before the model is asked (e.g. "loading the model client…");
    the next event (text, a banner, the end of the turn) means the wait is over."""

    reason: str


@dataclass(frozen=True)
class TurnDone(TurnEvent):
    reply: str
    logged_to: str  # "ambient" or an effort id
    banners: tuple[str, ...] = ()
    usage: dict[str, int] = field(default_factory=dict)
    context: ContextFigures | None = None


@dataclass(frozen=True)
class TurnFailed(TurnEvent):
    """The turn could not finish. The user's message is kept (see ``retryable``)."""

    message: str
    partial: str = ""
    retryable: bool = True


@dataclass(frozen=True)
class TurnCancelled(TurnEvent):
    partial: str = ""
