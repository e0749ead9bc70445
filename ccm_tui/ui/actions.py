"""The actions a user can take on an effort, and which are valid in which state.

The sidebar keys, the effort menu and the command palette all read this table,
so they always agree. Actions with a ``tool`` go through the same core tool as
the model's call (``Engine.run_action``); the others are views (log, export).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
        EffortAction("switch", "Switch to it", "Switch", "s", "switch_effort", "make it the active effort: new messages go to it"),
        EffortAction("conclude", "Conclude", "Conclude", "d", "close_effort", "summarize it; the raw log leaves the context"),
        EffortAction("expand", "Expand", "Expand", "e", "expand_effort", "load its raw log back into context (read-only)"),
        EffortAction("collapse", "Collapse", "Collapse", "c", "collapse_effort", "back to its summary"),
        EffortAction("reopen", "Reopen", "Reopen", "r", "reopen_effort", "continue it: open and active again"),
        EffortAction("log", "View raw log", "Log", "l", None, "read the whole conversation"),
        EffortAction("export", "Export to Markdown", "Export", "x", None, "write <id>.md"),
    )
}


def valid_actions(effort: dict[str, Any]) -> list[EffortAction]:
    """Actions valid for an effort in the shape of ``Session.status_dict()['efforts'][i]``."""
    names: list[str]
    if effort.get("status") == "open":
        names = ([] if effort.get("active") else ["switch"]) + ["conclude"]
    elif effort.get("expanded"):
        names = ["collapse", "reopen"]
    else:
        names = ["expand", "reopen"]
    return [ACTIONS[n] for n in names + ["log", "export"]]


def is_valid(effort: dict[str, Any], action: str) -> bool:
    return any(a.name == action for a in valid_actions(effort))


def turns_left(effort: dict[str, Any], decay_threshold: int) -> int:
    """Turns before an expanded effort collapses back to its summary."""
    return max(0, decay_threshold - (effort["turns_since_reference"] or 0))
