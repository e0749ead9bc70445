"""The actions a user can take on an effort, and which are valid in which state.

The sidebar keys, the effort menu and the command palette all read this table,
so they always agree. Actions with a ``tool`` go through the same core tool as
the model's call (``Engine.run_action``); the others are views (log, export).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.views import EffortState, EffortView


@dataclass(frozen=True)
class EffortAction:
    name: str  # action id, e.g. "expand"
    label: str  # menu text
    short: str  # footer text
    key: str  # sidebar key
    tool: str | None  # core tool, or None for a view
    help: str


ACTIONS: dict[str, EffortAction] = {
    a.name: a
    for a in (
        EffortAction(
            "switch", "Switch to it", "Switch", "s", "switch_effort", "make it the active effort: new messages go to it"
        ),
        EffortAction(
            "conclude", "Conclude", "Conclude", "d", "close_effort", "summarize it; the raw log leaves the context"
        ),
        EffortAction(
            "expand", "Expand", "Expand", "e", "expand_effort", "load its raw log back into context (read-only)"
        ),
        EffortAction("collapse", "Collapse", "Collapse", "c", "collapse_effort", "back to its summary"),
        EffortAction("reopen", "Reopen", "Reopen", "r", "reopen_effort", "continue it: open and active again"),
        EffortAction("log", "View raw log", "Log", "l", None, "read the whole conversation"),
        EffortAction("export", "Export to Markdown", "Export", "x", None, "write <id>.md"),
    )
}


VALID_BY_STATE: dict[EffortState, tuple[str, ...]] = {
    EffortState.ACTIVE: ("conclude",),
    EffortState.BACKGROUND: ("switch", "conclude"),
    EffortState.EXPANDED: ("collapse", "reopen"),
    EffortState.CONCLUDED: ("expand", "reopen"),
    EffortState.EVICTED: ("expand", "reopen"),
}


def valid_actions(effort: EffortView) -> list[EffortAction]:
    """Actions valid for an effort in its state (views are valid in every state)."""
    return [ACTIONS[n] for n in (*VALID_BY_STATE[effort.state], "log", "export")]


def is_valid(effort: EffortView, action: str) -> bool:
    return any(a.name == action for a in valid_actions(effort))
