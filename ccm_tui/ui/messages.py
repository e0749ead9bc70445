"""Every Textual message of the UI, in one place.

The core reports a turn as plain dataclass events (:mod:`ccm_tui.core.turn.events`);
:func:`for_event` wraps each one in a :class:`TurnMessage` so the chat screen can
handle it on the event loop. Token-figure messages may replace an older queued
one (``can_replace``): only the newest figures matter; streamed text is gathered while
its message waits in the queue (:class:`StreamedText`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from textual.message import Message

from ..core.api import (
    Action,
    ContextFigures,
    Notice,
    RunState,
    SessionOpened,
    SessionSnapshot,
    SnapshotChanged,
    StateChanged,
    Suggestion,
    TextDelta,
    TurnEvent,
    WrittenElsewhere,
)

if TYPE_CHECKING:
    from ..core.api import LoggedLine


# --------------------------------------------------------------------------- turn events
class TurnMessage(Message):
    """A core turn event, delivered on the UI's event loop."""

    def __init__(self, event: TurnEvent) -> None:
        super().__init__()
        self.event = event


class ContextFiguresMessage(TurnMessage):
    """New token figures; a newer one replaces an older one still in the queue."""

    event: ContextFigures

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ContextFiguresMessage)


class StreamedText(TurnMessage):
    """The reply text streamed since the screen last drew some: one message for many pieces.

    The session thread adds pieces (:meth:`add`) while this message is queued; the first read of
    :attr:`event` (the chat screen, when it gets to it) takes them all as one ``TextDelta``, and the
    next piece starts a new message. So however fast the model streams, the screen handles one
    message per time it is free, not one per piece (``lock`` is the sender's, shared by its batches).
    """

    def __init__(self, first: TextDelta, lock: threading.Lock) -> None:
        Message.__init__(self)
        self._turn = first.turn
        self._pieces = [first.text]
        self._lock = lock
        self._taken: TextDelta | None = None

    def add(self, delta: TextDelta) -> bool:
        """Add a piece of the same turn if the screen has not read this message yet (the caller holds
        ``lock``); False when a new message must carry it."""
        if self._taken is not None or delta.turn != self._turn:
            return False
        self._pieces.append(delta.text)
        return True

    @property
    def event(self) -> TextDelta:  # type: ignore[override]  # (read once, then fixed)
        with self._lock:
            if self._taken is None:
                self._taken = TextDelta(turn=self._turn, text="".join(self._pieces))
                self._pieces = []
            return self._taken


def for_event(event: TurnEvent) -> TurnMessage:
    """The message that carries a core event: the chat screen handles them all in one place (figures
    have their own type only so that the newest replaces one still queued)."""
    return ContextFiguresMessage(event) if isinstance(event, ContextFigures) else TurnMessage(event)


# --------------------------------------------------------------------------- session
class RunStateChanged(Message):
    """The session controller's run state changed (opening, locked, idle, a turn, an action …)."""

    def __init__(self, state: RunState) -> None:
        super().__init__()
        self.state = state


class SnapshotArrived(Message):
    """A new snapshot of the session (efforts, figures): a newer one replaces one still queued."""

    def __init__(self, snapshot: SessionSnapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotArrived)


class SessionReady(Message):
    """The session is open: what recovery did, and the chat so far (first open only)."""

    def __init__(self, opened: SessionOpened) -> None:
        super().__init__()
        self.report = opened.report
        self.history = opened.history
        self.first = opened.first


class OpenFailed(Message):
    """The session could not be opened; ``error`` is one line for the user."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class ChangedElsewhere(Message):
    """Another process wrote to the session; ``lines`` are the chat lines it added."""

    def __init__(self, lines: tuple[LoggedLine, ...]) -> None:
        super().__init__()
        self.lines = lines


class SuggestionMessage(Message):
    """The app proposes an effort (the model does not manage them): offered on Ctrl+Y."""

    def __init__(self, suggestion: Suggestion) -> None:
        super().__init__()
        self.proposal = suggestion.proposal
        self.text = suggestion.text
        self.taken = suggestion.taken


class NoticeMessage(Message):
    """Something for the user that belongs to no work (a missing API key …)."""

    def __init__(self, text: str, title: str) -> None:
        super().__init__()
        self.text = text
        self.title = title


def for_controller_event(event: Any) -> Message:
    """The message that carries a session controller event."""
    if isinstance(event, StateChanged):
        return RunStateChanged(event.state)
    if isinstance(event, SnapshotChanged):
        return SnapshotArrived(event.snapshot)
    if isinstance(event, SessionOpened):
        return SessionReady(event)
    if isinstance(event, WrittenElsewhere):
        return ChangedElsewhere(event.lines)
    if isinstance(event, Suggestion):
        return SuggestionMessage(event)
    if isinstance(event, Notice):
        return NoticeMessage(event.text, event.title)
    return for_event(event)


# --------------------------------------------------------------------------- widgets
class PromptSubmitted(Message):
    """The user pressed Enter in the prompt: ``text`` is the message as sent (pastes in full),
    ``typed`` as the input showed it (folded pastes as markers), ``pastes`` the folded ones."""

    def __init__(self, text: str, typed: str | None = None, pastes: dict[int, str] | None = None) -> None:
        super().__init__()
        self.text = text
        self.typed = text if typed is None else typed
        self.pastes = pastes or {}


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
    """Run an action on an effort — a core :class:`Action`, or a view: ``"log"``, ``"export"`` —
    (from the sidebar keys, the menu or the palette); ``confirm`` asks the user first (one key)."""

    def __init__(self, effort_id: str, action: Action | str, *, confirm: bool = False) -> None:
        super().__init__()
        self.effort_id = effort_id
        self.action = action
        self.confirm = confirm


class TypingRedirected(Message):
    """Focus back to the prompt (Escape on the effort list), with the character typed there, if any
    (``key``: a key that is no character, such as Enter, typed while the focus was on its way)."""

    def __init__(self, text: str, key: str = "") -> None:
        super().__init__()
        self.text = text
        self.key = key


class ShowWelcome(Message):
    """No model is configured: the app offers its first-run screen (settings or the demo)."""


class ChatInputReady(Message):
    """The chat screen's input has the focus, and what was typed before the app held the terminal is
    in it or sent: keys the app held while it started go to it now (:mod:`ccm_tui.ui.startup_keys`)."""
