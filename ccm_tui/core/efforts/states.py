"""The effort state machine, written once: the states an effort is in, the actions on it, which are valid.

The lifecycle enforces this table (:func:`refuse_unless_valid`), the session controller
answers "which actions are valid for this effort" from it, and the UI draws those
answers; nothing else decides. An effort's state as the user sees it::

    ACTIVE ─switch─► BACKGROUND ─switch─► ACTIVE        (open: its log is in context)
    ACTIVE/BACKGROUND ─conclude─► CONCLUDED
    CONCLUDED/EVICTED ─expand─► EXPANDED ─collapse─► CONCLUDED
    CONCLUDED/EVICTED/EXPANDED ─reopen─► ACTIVE
    CONCLUDED ─(20 turns unreferenced)─► EVICTED ─(referenced)─► CONCLUDED

``open`` creates a new effort (it needs a name, not a state). Repeating an action
whose effect already holds (switching to the active effort, expanding an
expanded one) is answered "already", not refused.

The user's *edits* (issue 41) change what is said about an effort, not its state: rename and
pin/unpin in every state, the summary's edit and a merge into another effort once it is concluded
(:data:`EDITS`; :func:`edit_actions`).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any

from ...errors import Refused

if TYPE_CHECKING:
    from ..manifest.effort import Effort
    from ..session.session import Session


class EffortState(Enum):
    """Where an effort stands, as the user sees it (one value per sidebar group)."""

    ACTIVE = "active"  # open, receives new messages
    BACKGROUND = "background"  # open, in context, not receiving messages
    EXPANDED = "expanded"  # concluded, raw log temporarily back in context
    CONCLUDED = "concluded"  # concluded, summary in working memory
    EVICTED = "evicted"  # concluded, summary out of working memory (searchable)

    @property
    def is_open(self) -> bool:
        return self in (EffortState.ACTIVE, EffortState.BACKGROUND)


class Action(Enum):
    """What the user or the model can do to an effort."""

    OPEN = "open"
    SWITCH = "switch"
    CONCLUDE = "conclude"
    EXPAND = "expand"
    COLLAPSE = "collapse"
    REOPEN = "reopen"
    # the user's edits (no model tool does these; the event log names them by TOOL_NAMES all the same)
    RENAME = "rename"
    SUMMARY = "summary"
    PIN = "pin"
    UNPIN = "unpin"
    MERGE = "merge"

    @property
    def tool_name(self) -> str:
        """The model's tool with the same effect (how the event log names the action)."""
        return TOOL_NAMES[self]


TOOL_NAMES = {
    Action.OPEN: "open_effort",
    Action.SWITCH: "switch_effort",
    Action.CONCLUDE: "close_effort",
    Action.EXPAND: "expand_effort",
    Action.COLLAPSE: "collapse_effort",
    Action.REOPEN: "reopen_effort",
    Action.RENAME: "rename_effort",
    Action.SUMMARY: "edit_summary",
    Action.PIN: "pin_effort",
    Action.UNPIN: "unpin_effort",
    Action.MERGE: "merge_efforts",
}

VALID: dict[EffortState, tuple[Action, ...]] = {
    EffortState.ACTIVE: (Action.CONCLUDE,),
    EffortState.BACKGROUND: (Action.SWITCH, Action.CONCLUDE),
    EffortState.EXPANDED: (Action.COLLAPSE, Action.REOPEN),
    EffortState.CONCLUDED: (Action.EXPAND, Action.REOPEN),
    EffortState.EVICTED: (Action.EXPAND, Action.REOPEN),
}

EDIT_ACTIONS = frozenset({Action.RENAME, Action.SUMMARY, Action.PIN, Action.UNPIN, Action.MERGE})
_CONCLUDED_EDITS = (Action.RENAME, Action.SUMMARY, Action.PIN, Action.UNPIN, Action.MERGE)
EDITS: dict[EffortState, tuple[Action, ...]] = {
    EffortState.ACTIVE: (Action.RENAME, Action.PIN, Action.UNPIN),
    EffortState.BACKGROUND: (Action.RENAME, Action.PIN, Action.UNPIN),
    EffortState.EXPANDED: _CONCLUDED_EDITS,
    EffortState.CONCLUDED: _CONCLUDED_EDITS,
    EffortState.EVICTED: _CONCLUDED_EDITS,
}

# Repeats whose effect already holds: answered "already", never refused.
ALREADY: frozenset[tuple[EffortState, Action]] = frozenset(
    {(EffortState.ACTIVE, Action.SWITCH), (EffortState.EXPANDED, Action.EXPAND)}
)

# Why an action is refused (each action is invalid in one family of states).
REFUSALS: dict[Action, str] = {
    Action.SWITCH: "effort '{id}' is concluded; use reopen_effort to continue it",
    Action.CONCLUDE: "effort '{id}' is already concluded",
    Action.EXPAND: "effort '{id}' is open, its log is already in context",
    Action.COLLAPSE: "effort '{id}' is not expanded",
    Action.REOPEN: "effort '{id}' is not concluded (status: open)",
    Action.RENAME: "effort '{id}' cannot be renamed",
    Action.SUMMARY: "effort '{id}' is open: its summary is written when it is concluded",
    Action.PIN: "effort '{id}' cannot be pinned",
    Action.UNPIN: "effort '{id}' cannot be unpinned",
    Action.MERGE: "effort '{id}' is open: conclude it before merging it",
}


class ActionRefused(Refused):
    """An action that is not valid in the effort's current state (the message says why). ``cause``
    and ``details`` are the failed outcome's (a refusal with more to say sets them)."""

    cause = "refused"  # (the failed outcome's cause: turn.events.Cause)
    details: dict[str, Any] | None = None


def effort_state(session: Session, effort: Effort) -> EffortState:
    if effort.is_open:
        return EffortState.ACTIVE if effort.active else EffortState.BACKGROUND
    if effort.id in session.view.expanded:
        return EffortState.EXPANDED
    return EffortState.EVICTED if session.is_evicted(effort) else EffortState.CONCLUDED


def valid_actions(state: EffortState) -> tuple[Action, ...]:
    """The actions that change an effort in ``state`` (what the UI offers)."""
    return VALID[state]


def edit_actions(state: EffortState, pinned: bool = False) -> tuple[Action, ...]:
    """The user's edits that apply to an effort in ``state`` (pin or unpin, as it is pinned or not)."""
    unwanted = Action.PIN if pinned else Action.UNPIN
    return tuple(a for a in EDITS[state] if a is not unwanted)


def is_valid(state: EffortState, action: Action) -> bool:
    return action in VALID[state] or (state, action) in ALREADY or action in EDITS[state]


def refuse_unless_valid(effort_id: str, state: EffortState, action: Action) -> None:
    """Raise :class:`ActionRefused` when ``action`` is not valid for an effort in ``state``."""
    if not is_valid(state, action):
        raise ActionRefused(REFUSALS[action].format(id=effort_id))
