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
class ExchangeWithdrawn(TurnEvent):
    """The last exchange was taken back (``why``: regenerate or edit): the chat removes it."""

    user: str
    reply: str
    why: str


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
    # "lock" (another process writes to the session), "model" (its client loads) or "retry" (a
    # failed request is sent again after a delay; a banner says why)
    cause: str = ""
    holder: int | None = None  # cause "lock": the pid holding the session, when known


@dataclass(frozen=True)
class Asking(TurnEvent):
    """A request goes to the model (``attempt`` > 1: again, after a failure): whatever the turn
    waited for (the client loading, a retry delay) is over."""

    attempt: int = 1


DONE = "done"
CANCELLED = "cancelled"
FAILED = "failed"


@dataclass(frozen=True)
class Outcome(TurnEvent):
    """How one piece of work ended — the last event of every turn and every effort action, and
    what the session controller returns for it. There is no other way a turn or an action ends.

    ``status`` is ``done``, ``cancelled`` or ``failed``; ``reason`` says why in plain words
    (one line, never a traceback). ``given_back`` means the user's ``text`` was not logged: it
    goes back to the input, and sending it again cannot duplicate it. ``retryable`` marks a
    failed turn whose message can be sent again as it is (no tool effect would repeat).
    """

    work: str  # "turn" or "action"
    status: str
    reason: str = ""
    cause: str = ""  # failed: input | locked | io | refused | provider kind (rate_limit, auth …) | budget | empty_reply
    text: str = ""  # the user's message (a turn) or what the action was ("conclude trip")
    given_back: bool = False
    retryable: bool = False
    reply: str = ""
    partial: str = ""  # what came back before a failure or a cancel
    logged_to: str | None = None  # "ambient" or an effort id; None when nothing was logged
    banners: tuple[str, ...] = ()
    context: ContextFigures | None = None  # the working context after the turn
    request: ContextFigures | None = None  # the last request the turn sent
    usage: dict[str, int] = field(default_factory=dict)  # this run's requests so far
    tool_calls: tuple[dict[str, Any], ...] = ()
    turn_usage: dict[str, int] = field(default_factory=dict)  # this turn's requests: prompt, completion tokens
    turn_cost: float | None = None  # this turn's cost in dollars, when the model's price is known
    result: dict[str, Any] | None = None  # an action's result (its effort id, its summary ...)
    cut: bool = False  # the reply stopped at its cap (reply_max_tokens): it is marked so in the log

    @property
    def ok(self) -> bool:
        return self.status == DONE

    @property
    def cancelled(self) -> bool:
        return self.status == CANCELLED

    @property
    def failed(self) -> bool:
        return self.status == FAILED
