"""Typed events a turn reports while it runs. The CLI and the TUI consume the same stream."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..models.provider_errors import ProviderFailure


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
    """The last exchange was withdrawn (``why``: regenerate or edit): the chat removes it."""

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
    cause: WaitingFor | None = None
    holder: int | None = None  # cause LOCK: the pid holding the session, when known


@dataclass(frozen=True)
class Asking(TurnEvent):
    """A request goes to the model (``attempt`` > 1: again, after a failure): whatever the turn
    waited for (the client loading, a retry delay) is over."""

    attempt: int = 1


class WaitingFor(StrEnum):
    """What a turn waits for before the model is asked (:class:`Waiting`)."""

    LOCK = "lock"
    """Another process writes to the session: the turn starts once it releases it."""
    MODEL = "model"
    """The model's client library is loading (litellm, after the first paint)."""
    RETRY = "retry"
    """A failed request is sent again after a delay (a banner says why)."""


class Status(StrEnum):
    """How a piece of work ended."""

    DONE = "done"
    """It did what was asked."""
    CANCELLED = "cancelled"
    """The user cancelled it; what came so far is kept."""
    FAILED = "failed"
    """It could not be done: ``reason`` says why, ``cause`` what kind of failure."""


class Work(StrEnum):
    """What a piece of work was."""

    TURN = "turn"
    """A message for the model, answered."""
    ACTION = "action"
    """An effort action (open, conclude, expand, collapse, switch, reopen)."""
    COMMAND = "command"
    """A slash command that answers at once (/search, /status, /help)."""
    NOTE = "note"
    """A note another agent left (ccm-tui mcp's remember)."""
    REGENERATE = "regenerate"
    """The last exchange withdrawn and the message asked again."""
    EDIT = "edit"
    """The last exchange withdrawn and the message given back to edit."""
    CANCEL = "cancel"
    """Queued work withdrawn before it started."""


class Cause(StrEnum):
    """Why work failed (a provider's failures are :class:`ProviderFailure`)."""

    NONE = ""
    """Not failed."""
    INPUT = "input"
    """The input cannot be taken as given (undecodable text, too long, a bad argument)."""
    NOT_FOUND = "not_found"
    """It names an effort (or a log) that does not exist."""
    REFUSED = "refused"
    """Not valid in the effort's state, or nothing to do (no unanswered message to retry)."""
    BUDGET = "budget"
    """It cannot fit in the token budget (an expansion too large; a request even compaction cannot fit)."""
    LOCKED = "locked"
    """Another process kept the session past the wait."""
    IO = "io"
    """A session file could not be written (a full disk, an I/O error)."""
    EMPTY_REPLY = "empty_reply"
    """The model answered nothing."""
    SEARCH = "search"
    """The search index could not answer."""
    INTERNAL = "internal"
    """A fault in ccm-tui itself (reported, the message given back)."""


DONE = Status.DONE
CANCELLED = Status.CANCELLED
FAILED = Status.FAILED


@dataclass(frozen=True)
class Outcome(TurnEvent):
    """How one piece of work ended — the last event of every turn and every effort action, and
    what the session controller returns for it. There is no other way a turn or an action ends.

    ``status`` is ``done``, ``cancelled`` or ``failed``; ``reason`` says why in plain words
    (one line, never a traceback). ``given_back`` means the user's ``text`` was not logged: it
    goes back to the input, and sending it again cannot duplicate it. ``retryable`` marks a
    failed turn whose message can be sent again as it is (no tool effect would repeat).
    """

    work: Work
    status: Status
    reason: str = ""
    cause: Cause | ProviderFailure = Cause.NONE
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


def cache_words(usage: Mapping[str, Any]) -> str:
    """How much of a turn's input the provider's prompt cache served, in words for the tokens line:
    ``(9,800 cached · 1,200 uncached)`` from the provider's own usage (``cached_tokens`` read,
    ``cache_write_tokens`` written); ``(≈9,800 a repeated prefix, estimate)`` when it reported none
    (``cached_estimate``: what the request shared with the one before); empty when there is neither."""
    sent = int(usage.get("prompt_tokens") or 0)
    read = int(usage.get("cached_tokens") or 0)
    written = int(usage.get("cache_write_tokens") or 0)
    if read or written:
        parts = [f"{read:,} cached"] + ([f"{written:,} written to the cache"] if written else [])
        return "(" + " · ".join([*parts, f"{max(0, sent - read - written):,} uncached"]) + ")"
    estimate = int(usage.get("cached_estimate") or 0)
    return f"(≈{estimate:,} a repeated prefix, estimate)" if estimate else ""
