"""The words of the session controller: its run state, the intents it takes, the events it reports.

A session is in one :class:`Phase` at a time::

    CLOSED ─open─► OPENING ─► IDLE ◄──────────────────────┐
                      │  ▲                                  │ outcome (done / cancelled / failed)
                      ▼  │ retry                            │
                    LOCKED (another process holds it)    TURN / ACTION ─cancel─► CANCELLING
                                                          │  ▲
                                    the lock is busy ──►  LOCKED (work waiting) ─┘

Intents are typed requests (send a message, an action on an effort, a note left by
another agent, cancel, retry the orphaned message); every piece of work ends in one
:class:`~ccm_tui.core.turn.events.Outcome`. Listeners receive the turn events of
:mod:`ccm_tui.core.turn.events` and the session events below, in order, from the
controller's session thread (a listener must be thread-safe: Textual's
``post_message`` and a print are).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..efforts.states import Action
from ..session.chat_line import END_OF_CHAT as END_OF_CHAT  # after everything said: the newest page is before it
from ..session.chat_line import INTERRUPTED_END as INTERRUPTED_END  # what ends an interrupted reply (live too)
from ..session.chat_line import LoggedLine as LoggedLine  # what the UI draws of earlier chat lines
from ..session.chat_line import sent_now as sent_now
from ..session.chat_line import with_interrupted_end as with_interrupted_end
from ..turn.events import Cause, ContextFigures, Outcome, Status, TurnEvent, Work
from ..views.status import EffortView, SessionStatus

if TYPE_CHECKING:  # (annotations only: the UI imports this module before anything reads a session)
    from ..efforts.proposals import Proposal
    from ..engine.recovery import RecoveryReport


class Phase(Enum):
    CLOSED = "closed"
    OPENING = "opening"
    LOCKED = "locked"  # another process holds the session's lock: opening, or work waiting to start
    IDLE = "idle"
    TURN = "turn"  # a message is being answered
    ACTION = "action"  # an effort action runs (a conclusion waits for its summary)
    CANCELLING = "cancelling"


@dataclass(frozen=True)
class RunState:
    """What the session is doing now (immutable: each change is a new state)."""

    phase: Phase = Phase.CLOSED
    detail: str = ""  # the work in words ("conclude trip"), or why it waits
    work: Work | None = None  # a turn or an action, while it runs or waits for the lock
    holder: int | None = None  # LOCKED: the pid holding the session, when known
    retry_in: float | None = None  # LOCKED while opening: seconds until the next attempt
    attempt: int = 0  # LOCKED while opening: attempts so far
    queued: tuple[str, ...] = ()  # messages waiting to be sent, in order
    error: str | None = None  # CLOSED after an open failed: why, in one line

    @property
    def busy(self) -> bool:
        """Work runs (or waits for the lock to run): a new message would be queued."""
        return self.work is not None

    @property
    def is_open(self) -> bool:
        return self.phase in (Phase.IDLE, Phase.TURN, Phase.ACTION, Phase.CANCELLING) or (
            self.phase is Phase.LOCKED and self.work is not None
        )

    @property
    def cancellable(self) -> bool:
        return self.work is not None and self.phase is not Phase.CANCELLING


# ----------------------------------------------------------------------------- intents
@dataclass(frozen=True)
class SendMessage:
    text: str


@dataclass(frozen=True)
class EffortAction:
    """An action on an effort: ``target`` is its id, or the new effort's name for ``open``. ``topic``
    (a switch to a new topic: the effort it began in, its first and last line there): the conclusion
    summarises that effort without those lines, and the opened effort starts with them. ``reuse``
    (``/open``): a name an effort already has switches to it, or is refused when it is concluded,
    instead of opening a second effort of that name (Ctrl+O's "open anyway" leaves it False)."""

    action: Action
    target: str = ""
    topic: tuple[str, int, int] | None = None
    reuse: bool = False
    value: str = ""  # the user's edits: the new name, the new summary, the effort merged into


@dataclass(frozen=True)
class SlashCommand:
    """A slash command as parsed (:mod:`.slash_commands`): ``/open trip`` → ``("open", "trip")``."""

    name: str
    argument: str = ""

    @property
    def line(self) -> str:
        return f"/{self.name} {self.argument}".rstrip()


@dataclass(frozen=True)
class Remember:
    """A note another agent leaves (``ccm-tui mcp``'s remember): appended to ``effort_id``'s log, or,
    without one, to the notes effort (made on first use); findable at once. Needs no model."""

    text: str
    effort_id: str = ""
    agent: str = ""  # the MCP client that leaves it (its clientInfo name), shown with the note


@dataclass(frozen=True)
class Cancel:
    """Stop the running work (the partial reply is kept); with none running, withdraw queued messages."""


@dataclass(frozen=True)
class RetryOrphan:
    """Send again the last message that never got a reply (after a crash or a failed turn)."""


@dataclass(frozen=True)
class Withdraw:
    """Withdraw the last exchange (core/session/withdrawn.py): ``regenerate`` asks the model again for the
    same message; ``edit`` gives the message back to be changed and sent anew."""

    why: Work  # Work.REGENERATE or Work.EDIT


Intent = SendMessage | EffortAction | SlashCommand | Remember | Cancel | RetryOrphan | Withdraw


# ----------------------------------------------------------------------------- session events
@dataclass(frozen=True)
class SessionSnapshot:
    """Everything the UI draws about the session, taken after each change (never a live object)."""

    status: SessionStatus
    figures: ContextFigures
    history: tuple[dict[str, int], ...] = ()  # per-turn ccm/naive tokens (the sparkline)
    budget: int = 0
    has_model: bool = False
    tools_enabled: bool = True
    usage: dict[str, int] = field(default_factory=dict)  # this run's requests
    # the session's, across launches: prompt_tokens, completion_tokens, requests, cost (when known)
    session_usage: dict[str, Any] = field(default_factory=dict)

    @property
    def turn(self) -> int:
        return self.status.turn

    def effort(self, effort_id: str) -> EffortView | None:
        return self.status.get(effort_id)


@dataclass(frozen=True)
class StateChanged:
    state: RunState


@dataclass(frozen=True)
class SnapshotChanged:
    snapshot: SessionSnapshot


@dataclass(frozen=True)
class SessionOpened:
    """The session is open: what recovery did, and the chat so far (on the first open only)."""

    report: RecoveryReport
    history: tuple[LoggedLine, ...]
    first: bool


@dataclass(frozen=True)
class WrittenElsewhere:
    """Another process wrote to the session (seen by a watcher); ``lines`` are the new chat lines."""

    lines: tuple[LoggedLine, ...]


@dataclass(frozen=True)
class Suggestion:
    """An effort the app proposes because the model does not manage efforts (offered on one key in the
    TUI, printed by ``send``; carried out by itself with ``auto_efforts``)."""

    proposal: Proposal
    taken: bool = False  # auto_efforts: the app carries it out itself, at once

    @property
    def text(self) -> str:
        return self.proposal.text


@dataclass(frozen=True)
class Notice:
    """Something to tell the user that is not part of any work (a missing API key …)."""

    text: str
    title: str = ""


def one_line(exc: BaseException) -> str:
    """An error as one line for the user."""
    return " ".join(str(exc).split()) or type(exc).__name__


def unrun_outcome(
    intent: Intent, status: Status, reason: str, *, cause: Cause = Cause.NONE, given_back: bool = False
) -> Outcome:
    """The outcome of work that ended before the engine ran it (withdrawn, refused, a bug)."""
    if isinstance(intent, EffortAction):
        text = f"{intent.action.value} {intent.target}".strip()
        return Outcome(turn=0, work=Work.ACTION, status=status, reason=reason, cause=cause, text=text)
    if isinstance(intent, SlashCommand):
        return Outcome(turn=0, work=Work.COMMAND, status=status, reason=reason, cause=cause, text=intent.line)
    if isinstance(intent, Remember):
        return Outcome(turn=0, work=Work.NOTE, status=status, reason=reason, cause=cause, text=intent.text)
    if isinstance(intent, Withdraw):
        return Outcome(turn=0, work=intent.why, status=status, reason=reason, cause=cause)
    text = intent.text if isinstance(intent, SendMessage) else ""
    return Outcome(turn=0, work=Work.TURN, status=status, reason=reason, cause=cause, text=text, given_back=given_back)


SessionEvent = StateChanged | SnapshotChanged | SessionOpened | WrittenElsewhere | Suggestion | Notice
ControllerEvent = TurnEvent | SessionEvent
