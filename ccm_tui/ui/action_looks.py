"""How the effort actions look: labels, footer words, keys and help — never which are valid.

Which actions are valid for an effort is the core's one table
(:mod:`ccm_tui.core.efforts.states`), carried by each view as ``EffortView.actions``.
This module only says how to show them, plus the views every effort has (its raw
log, an export to Markdown, the chat where it started). The sidebar keys, the effort menu, the detail panel
and the command palette all read it, so they always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.api import Action, EffortView

LOG = "log"  # views: valid in every state, no change to the effort
EXPORT = "export"
FORGET = "forget"  # the menu's last entry (no key of its own: a slip must not forget); asks first
FORGET_LOOK = ("f", "Forget it…", "take it out of every file: log, summary, name (asks first)")  # key, label, help
START = "start"  # the chat scrolled back to where the effort started
VIEWS = (LOG, EXPORT, START)


@dataclass(frozen=True)
class ActionLook:
    action: Action | str  # a core action, or a view (LOG, EXPORT)
    label: str  # menu text
    short: str  # footer text
    key: str  # sidebar key
    help: str
    in_footer: bool = True  # the user's edits are in the menu and their keys work, off the footer

    @property
    def name(self) -> str:
        return self.action.value if isinstance(self.action, Action) else self.action


LOOKS: dict[Action | str, ActionLook] = {
    a.action: a
    for a in (
        ActionLook(Action.SWITCH, "Switch to it", "Switch", "s", "make it the active effort: new messages go to it"),
        ActionLook(Action.CONCLUDE, "Conclude", "Conclude", "d", "summarize it; the raw log leaves the context"),
        ActionLook(Action.EXPAND, "Expand", "Expand", "e", "load its raw log back into context (read-only)"),
        ActionLook(Action.COLLAPSE, "Collapse", "Collapse", "c", "back to its summary"),
        ActionLook(Action.REOPEN, "Reopen", "Reopen", "r", "continue it: open and active again"),
        ActionLook(LOG, "View raw log", "Log", "l", "read the whole conversation"),
        ActionLook(EXPORT, "Export to Markdown", "Export", "x", "write <id>.md"),
        # the user's edits (what is said about the effort, not its state)
        ActionLook(Action.RENAME, "Rename…", "Rename", "n", "give it another name (its id stays)", False),
        ActionLook(
            Action.SUMMARY, "Edit the summary…", "Summary", "t", "your summary replaces the model's in context", False
        ),
        ActionLook(Action.PIN, "Pin", "Pin", "p", "its summary always stays in context", False),
        ActionLook(Action.UNPIN, "Unpin", "Unpin", "u", "its summary may leave the context again", False),
        ActionLook(
            Action.MERGE, "Merge into…", "Merge", "g", "its lines go to another effort's log; it points there", False
        ),
        ActionLook(START, "Jump to where it started", "Start", "j", "scroll the chat back to its first message"),
    )
}


def looks_for(effort: EffortView) -> list[ActionLook]:
    """What to offer for an effort: its valid actions (the core's table), then the views."""
    shown: list[Action | str] = [*effort.actions, *VIEWS]
    return [LOOKS[a] for a in shown]


def edit_looks_for(effort: EffortView) -> list[ActionLook]:
    """The user's edits that apply to the effort (rename, summary, pin or unpin, merge)."""
    return [LOOKS[a] for a in effort.edits]


def offered(effort: EffortView, action: Action | str) -> bool:
    return action in VIEWS or action in effort.actions or action in effort.edits


def parse_action(name: str) -> Action | str | None:
    """An action or a view from its name (``"expand"``, ``"log"``), None when there is none."""
    if name in VIEWS:
        return name
    try:
        return Action(name)
    except ValueError:
        return None
