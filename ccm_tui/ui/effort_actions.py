"""What the user does to efforts by hand: open, the action menu, conclude/expand/…, the log, export.

The chat screen owns one :class:`EffortActions`; the sidebar, the palette and
the keys all end up here. Actions that change an effort run the same core tool
the model calls (through the session host), so the user and the model can
never disagree about what an action does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core.views import EffortView
from .actions import ACTIONS, is_valid, valid_actions
from .screens.choice import Choice, ChoiceDialog
from .screens.prompt import PromptDialog
from .widgets.effort_detail import describe
from .widgets.sidebar import Sidebar
from .widgets.turn_status import TurnStatus

if TYPE_CHECKING:
    from .screens.chat import ChatScreen
    from .session_host import SessionHost


class EffortActions:
    def __init__(self, screen: ChatScreen) -> None:
        self.screen = screen

    @property
    def host(self) -> SessionHost:
        return self.screen.host

    def activate(self, effort_id: str) -> None:
        """Offer the actions valid for the effort's state."""
        effort = self.host.effort(effort_id)
        if effort is None:
            self.screen.notify(f"There is no effort '{effort_id}'", severity="warning")
            return
        self.screen.query_one(Sidebar).focus_effort(effort_id)
        choices = [Choice(a.name, a.label, a.help, a.key) for a in valid_actions(effort)]

        def chosen(action: str | None) -> None:
            if action:
                self.run(effort_id, action)

        text = describe(effort, self.screen.settings.decay_threshold, keys=False)
        self.screen.app.push_screen(ChoiceDialog(f"Effort {effort_id}", choices, text=text), chosen)

    def run(self, effort_id: str, action: str, *, confirm: bool = False) -> None:
        if action == "log":
            self.show_log(effort_id)
            return
        if action == "export":
            self.export(effort_id)
            return
        effort = self.host.effort(effort_id)
        if effort is None or not is_valid(effort, action):
            self.screen.notify(f"Cannot {action} '{effort_id}' in its current state", severity="warning")
            return
        tool = ACTIONS[action].tool
        if not tool or not self.screen.ready(action):
            return
        if confirm:
            self._confirm(effort, action)
            return
        self._start(tool, {"id": effort_id}, f"{ACTIONS[action].label} {effort_id}")

    def _confirm(self, effort: EffortView, action: str) -> None:
        choices = [
            Choice(action, f"{ACTIONS[action].label} it", ACTIONS[action].help, "y"),
            Choice("cancel", "Keep it as it is", "nothing changes", "n"),
        ]
        dialog = ChoiceDialog(f"{ACTIONS[action].label} “{effort.title}”?", choices, text=f"Effort {effort.id}")
        self.screen.app.push_screen(dialog, lambda chosen: self.run(effort.id, action) if chosen == action else None)

    def ask_open(self, name: str = "") -> None:
        """Ask for the new effort's name (``name`` pre-filled, e.g. from the palette's query):
        an effort is only ever opened by an explicit Enter in this dialog."""
        self.screen.app.push_screen(
            PromptDialog(
                "Open a new effort",
                value=name.strip(),
                placeholder="a short name, e.g. auth bug",
                help="It becomes the active effort: new messages go to it.",
            ),
            lambda name: self.open(name) if name else None,
        )

    def open(self, name: str, *, check_existing: bool = True) -> None:
        name = name.strip()
        if not name or not self.screen.ready("open an effort"):
            return
        existing = self._named(name) if check_existing else None
        if existing is not None:
            self._offer_existing(existing, name)
            return
        self._start("open_effort", {"name": name}, f"Opening {name}")

    def _named(self, name: str) -> EffortView | None:
        """An effort this name already means (its name, or its id, typed again)."""
        wanted = " ".join(name.casefold().split())
        for effort in self.host.status().efforts:
            if wanted in (" ".join(effort.title.casefold().split()), effort.id):
                return effort
        return None

    def _offer_existing(self, effort: EffortView, name: str) -> None:
        if effort.active:
            self.screen.notify(f"“{effort.title}” is already the active effort", severity="information")
            return
        again = "reopen" if not effort.state.is_open else "switch"
        choices = [
            Choice(again, ACTIONS[again].label, ACTIONS[again].help, again[0]),
            Choice("new", "Open a new effort anyway", f"a separate effort, also named “{name}”", "n"),
            Choice("cancel", "Cancel", "", "c"),
        ]
        state = "concluded" if not effort.state.is_open else "open in the background"
        dialog = ChoiceDialog(f"“{effort.title}” exists", choices, text=f"Effort {effort.id} is {state}.")

        def chosen(choice: str | None) -> None:
            if choice == again:
                self.run(effort.id, again)
            elif choice == "new":
                self.open(name, check_existing=False)

        self.screen.app.push_screen(dialog, chosen)

    def _start(self, tool: str, args: dict[str, str], label: str) -> None:
        self.screen.busy = True
        self.screen.query_one(TurnStatus).start(label, cancellable=tool == "close_effort")
        self.host.run_tool(tool, args)

    def show_log(self, effort_id: str) -> None:
        from .screens.log_viewer import EffortLogScreen

        engine = self.host.engine
        effort = self.host.effort(effort_id)
        if effort is None or engine is None:
            return
        result = engine.effort_log(effort_id)

        def closed(choice: str | None) -> None:
            if choice == "export":
                self.export(effort_id)

        self.screen.app.push_screen(EffortLogScreen(effort, result.records, len(result.bad_lines)), closed)

    def export(self, effort_id: str) -> None:
        def chosen(target: str | None) -> None:
            engine = self.host.engine
            if not target or engine is None:
                return
            try:
                path = engine.export_effort(effort_id, Path(target))
            except (OSError, KeyError) as exc:
                self.screen.notify(f"Export failed: {exc}", severity="error")
                return
            self.screen.notify(f"Exported to {path}", title="Export")

        self.screen.app.push_screen(
            PromptDialog(
                f"Export {effort_id} to Markdown",
                value=str(Path.cwd() / f"{effort_id}.md"),
                help="A file path, or a directory (the file is then <id>.md).",
            ),
            chosen,
        )
