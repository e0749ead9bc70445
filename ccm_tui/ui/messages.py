"""Every Textual message of the UI, in one place.

The core reports a turn as plain dataclass events (:mod:`ccm_tui.core.turn_events`);
:func:`for_event` wraps each one in the matching message so the chat screen can
handle it on the event loop. Token-figure messages may replace an older queued
one (``can_replace``): only the newest figures matter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from ..core import turn_events as te

if TYPE_CHECKING:
    from ..core.chat_history import LoggedLine
    from ..core.engine import Engine, RecoveryReport


# --------------------------------------------------------------------------- turn events
class TurnMessage(Message):
    """Base: a core turn event, delivered on the UI's event loop."""

    def __init__(self, event: te.TurnEvent) -> None:
        super().__init__()
        self.event = event


class TurnStartedMessage(TurnMessage):
    event: te.TurnStarted


class TextDeltaMessage(TurnMessage):
    event: te.TextDelta


class RoundResetMessage(TurnMessage):
    event: te.RoundReset


class BannerMessage(TurnMessage):
    event: te.Banner


class EffortChangedMessage(TurnMessage):
    event: te.EffortChanged


class ToolCalledMessage(TurnMessage):
    event: te.ToolCalled


class ContextFiguresMessage(TurnMessage):
    """New token figures; a newer one replaces an older one still in the queue."""

    event: te.ContextFigures

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ContextFiguresMessage)


class PausedMessage(TurnMessage):
    event: te.Paused


class ResumedMessage(TurnMessage):
    event: te.Resumed


class TurnDoneMessage(TurnMessage):
    event: te.TurnDone


class TurnFailedMessage(TurnMessage):
    event: te.TurnFailed


class TurnCancelledMessage(TurnMessage):
    event: te.TurnCancelled


class WaitingMessage(TurnMessage):
    """The turn waits (for the session's lock, for litellm to load) before the model is asked."""

    event: te.Waiting


_FOR_EVENT: dict[type, type[TurnMessage]] = {
    te.TurnStarted: TurnStartedMessage,
    te.TextDelta: TextDeltaMessage,
    te.RoundReset: RoundResetMessage,
    te.Banner: BannerMessage,
    te.EffortChanged: EffortChangedMessage,
    te.ToolCalled: ToolCalledMessage,
    te.ContextFigures: ContextFiguresMessage,
    te.Paused: PausedMessage,
    te.Resumed: ResumedMessage,
    te.TurnDone: TurnDoneMessage,
    te.TurnFailed: TurnFailedMessage,
    te.TurnCancelled: TurnCancelledMessage,
    te.Waiting: WaitingMessage,
}


def for_event(event: te.TurnEvent) -> TurnMessage:
    """The message that carries a core event (unknown event types get the base class)."""
    return _FOR_EVENT.get(type(event), TurnMessage)(event)


# --------------------------------------------------------------------------- session
class EngineReady(Message):
    """The session is open (opened in a thread after the first paint)."""

    def __init__(
        self,
        engine: Engine,
        report: RecoveryReport,
        history: list[LoggedLine],
        figures: te.ContextFigures,
        *,
        first: bool,
    ) -> None:
        super().__init__()
        self.engine = engine
        self.report = report
        self.history = history
        self.figures = figures
        self.first = first  # the first open of this session in this app (not a reopen with new settings)


class EngineFailed(Message):
    """The session could not be opened; ``error`` is one line for the user."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class SessionWaiting(Message):
    """Another process holds the session's lock: the host tries again in ``retry_in`` seconds."""

    def __init__(self, pid: int | None, retry_in: float, attempt: int) -> None:
        super().__init__()
        self.pid = pid
        self.retry_in = retry_in
        self.attempt = attempt


class SessionChangedOnDisk(Message):
    """Another process wrote to the session directory (seen by the watcher)."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SessionChangedOnDisk)


class WorkEnded(Message):
    """A turn or an effort action finished (done, failed or cancelled)."""

    def __init__(self, kind: str, error: str | None) -> None:
        super().__init__()
        self.kind = kind
        self.error = error


class BackgroundNotice(Message):
    """A finding of the background warm-up (budget resolved, missing key ...)."""

    def __init__(self, budget: int | None = None, warning: str | None = None) -> None:
        super().__init__()
        self.budget = budget
        self.warning = warning


# --------------------------------------------------------------------------- widgets
class PromptSubmitted(Message):
    """The user pressed Enter in the prompt."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class EffortSelected(Message):
    """An effort in the sidebar got the focus (its details show below the list)."""

    def __init__(self, effort_id: str | None) -> None:
        super().__init__()
        self.effort_id = effort_id


class EffortActivated(Message):
    """An effort was clicked or Enter was pressed on it: offer its actions."""

    def __init__(self, effort_id: str) -> None:
        super().__init__()
        self.effort_id = effort_id


class EffortActionRequested(Message):
    """Run an action on an effort (from the sidebar keys, the menu or the palette); ``confirm``
    asks the user first (a single key press)."""

    def __init__(self, effort_id: str, action: str, *, confirm: bool = False) -> None:
        super().__init__()
        self.effort_id = effort_id
        self.action = action
        self.confirm = confirm


class TypingRedirected(Message):
    """Focus back to the prompt (Escape on the effort list), with the character typed there, if any."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
