"""What the user does to efforts by hand: open, the action menu, conclude/expand/…, the log, export,
and what to read instead when an expansion does not fit in the context.

The chat screen owns one :class:`EffortActions`; the sidebar, the palette and
the keys all end up here. It asks the user (menus, confirmations, names) and
hands typed actions to the session controller through the :class:`SessionLink`;
which actions are valid comes from the core's state table (``EffortView.actions``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import App

from ..core.api import Action, EffortAction, EffortView
from .action_looks import EXPORT, FORGET, FORGET_LOOK, LOG, LOOKS, START, edit_looks_for, looks_for, offered
from .controller_link import SessionLink
from .screens.choice import Choice, ChoiceDialog
from .screens.question import PromptDialog
from .widgets.effort_detail import describe


class EffortActions:
    def __init__(
        self,
        app: App,
        link: SessionLink,
        focus_effort: Callable[[str], object],
        show_lines: Callable[[str, tuple[int, int]], object],
        jump_to_start: Callable[[str], object] | None = None,
    ) -> None:
        self.app = app
        self.link = link
        self.focus_effort = focus_effort
        self.show_lines = show_lines  # an effort's lines around one, read-only (the chat screen's viewer)
        self.jump_to_start = jump_to_start  # the chat scrolled back to where an effort started

    def effort(self, effort_id: str) -> EffortView | None:
        snapshot = self.link.snapshot
        return snapshot.effort(effort_id) if snapshot is not None else None

    def ready(self, what: str) -> bool:
        """The session is open and idle; otherwise say why ``what`` cannot happen now."""
        reason = self.link.not_ready(what)
        if reason:
            self.app.notify(reason, severity="warning")
        return reason is None

    def activate(self, effort_id: str) -> None:
        """Offer the actions valid for the effort's state."""
        effort = self.effort(effort_id)
        if effort is None:
            self.app.notify(f"There is no effort '{effort_id}'", severity="warning")
            return
        self.focus_effort(effort_id)
        looks = [*looks_for(effort), *edit_looks_for(effort)]
        choices = [Choice(a.name, a.label, a.help, a.key) for a in looks]
        key, label, help = FORGET_LOOK
        choices.append(Choice(FORGET, label, help, key))

        def chosen(name: str | None) -> None:
            if name == FORGET:
                self.forget(effort_id)
            elif name:
                self.run(effort_id, next(a.action for a in looks if a.name == name))

        text = describe(effort, self.link.settings.decay_threshold, keys=False)
        self.app.push_screen(ChoiceDialog(f"Effort {effort_id}", choices, text=text), chosen)

    def run(self, effort_id: str, action: Action | str, *, confirm: bool = False) -> None:
        if action == LOG:
            self.show_log(effort_id)
            return
        if action == EXPORT:
            self.export(effort_id)
            return
        if action == START:
            if self.jump_to_start is not None:
                self.jump_to_start(effort_id)
            return
        effort = self.effort(effort_id)
        name = action.value if isinstance(action, Action) else action
        if effort is not None and isinstance(action, Action) and action in effort.edits:
            self.edit(effort, action)
            return
        if effort is None or not isinstance(action, Action) or not offered(effort, action):
            self.app.notify(f"Cannot {name} '{effort_id}' in its current state", severity="warning")
            return
        if not self.ready(name):
            return
        if confirm:
            self._confirm(effort, action)
            return
        self.link.act(action, effort_id)

    def edit(self, effort: EffortView, action: Action) -> None:
        """One of the user's edits: asks for the new name, the new summary or the effort to merge
        into, then hands it to the controller (pin and unpin need no question)."""
        if not self.ready(action.value):
            return

        def send(value: str | None) -> None:
            if value is not None and value.strip() and self.ready(action.value):
                self.link.controller.submit(EffortAction(action, effort.id, value=value.strip()))

        if action is Action.RENAME:
            dialog = PromptDialog(f"Rename the effort {effort.id}", value=effort.title, help="its id stays")
            self.app.push_screen(dialog, send)
        elif action is Action.SUMMARY:
            help = "yours replaces the model's in context; the model's stays in the event log"
            self.app.push_screen(PromptDialog(f"Summary of {effort.id}", value=effort.summary or "", help=help), send)
        elif action is Action.MERGE:
            snapshot = self.link.snapshot
            others = [
                e
                for e in (snapshot.status.efforts if snapshot is not None else ())
                if e.id != effort.id and not e.merged_into
            ]
            if not others:
                self.app.notify("There is no other effort to merge it into", severity="warning")
                return
            choices = [Choice(e.id, e.title, e.id if e.title != e.id else "") for e in others[:20]]
            text = f"{effort.id}'s lines are appended to the chosen effort's log; {effort.id} then points there"
            self.app.push_screen(ChoiceDialog(f"Merge {effort.id} into…", choices, text=text), send)
        else:
            send(effort.id)  # pin, unpin: the value is not read

    def _confirm(self, effort: EffortView, action: Action) -> None:
        look = LOOKS[action]
        choices = [
            Choice(action.value, f"{look.label} it", look.help, "y"),
            Choice("cancel", "Keep it as it is", "nothing changes", "n"),
        ]
        dialog = ChoiceDialog(f"{look.label} “{effort.title}”?", choices, text=f"Effort {effort.id}")
        self.app.push_screen(dialog, lambda chosen: self.run(effort.id, action) if chosen == action.value else None)

    def ask_open(self, name: str = "") -> None:
        """Ask for the new effort's name (``name`` pre-filled, e.g. from the palette's query):
        an effort is only ever opened by an explicit Enter in this dialog."""
        self.app.push_screen(
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
        if not name or not self.ready("open an effort"):
            return
        existing = self._named(name) if check_existing else None
        if existing is not None:
            self._offer_existing(existing, name)
            return
        self.link.act(Action.OPEN, name)

    def _named(self, name: str) -> EffortView | None:
        """An effort this name already means: its name or its id typed again, as a person would mean it
        (case, spaces, dashes, a leading article, a plural: the core's ``name_key``, as the model's
        open_effort and /open compare names)."""
        from ..core.api import name_key

        snapshot = self.link.snapshot
        wanted = name_key(name)
        for effort in snapshot.status.efforts if snapshot is not None else ():
            if wanted in (name_key(effort.title), name_key(effort.id)):
                return effort
        return None

    def _offer_existing(self, effort: EffortView, name: str) -> None:
        if effort.active:
            self.app.notify(f"“{effort.title}” is already the active effort", severity="information")
            return
        again = Action.REOPEN if not effort.state.is_open else Action.SWITCH
        look = LOOKS[again]
        choices = [
            Choice(again.value, look.label, look.help, again.value[0]),
            Choice("new", "Open a new effort anyway", f"a separate effort, also named “{name}”", "n"),
            Choice("cancel", "Cancel", "", "c"),
        ]
        state = "concluded" if not effort.state.is_open else "open in the background"
        dialog = ChoiceDialog(f"“{effort.title}” exists", choices, text=f"Effort {effort.id} is {state}.")

        def chosen(choice: str | None) -> None:
            if choice == again.value:
                self.run(effort.id, again)
            elif choice == "new":
                self.open(name, check_existing=False)

        self.app.push_screen(dialog, chosen)

    def show_log(self, effort_id: str) -> None:
        effort = self.effort(effort_id)
        if effort is None:
            return
        self.app.run_worker(self._show_log(effort), group="effort-log", exclusive=True, exit_on_error=False)

    async def _show_log(self, effort: EffortView) -> None:
        from .screens.log_viewer import EffortLogScreen

        result = await self.link.controller.effort_log(effort.id)

        def closed(choice: str | None) -> None:
            if choice == EXPORT:
                self.export(effort.id)
            elif choice == FORGET:
                self.forget_lines(effort.id)

        self.app.push_screen(EffortLogScreen(effort, result.records, len(result.bad_lines)), closed)

    def offer_passage(self, reason: str, result: dict) -> None:
        """An expansion the budget cannot hold was refused: offer what fits instead — the lines around
        the best hit, or the effort's raw log to read."""
        effort_id = str(result.get("effort_id") or "")
        around = result.get("around_line")
        if not effort_id:
            return
        choices = []
        if isinstance(around, int) and around > 0:
            choices.append(
                Choice("lines", f"Read its lines around line {around:,}", "read-only, a screen of them", "r")
            )
        choices += [
            Choice("log", "Read its raw log", "read-only, the newest lines first", "l"),
            Choice("cancel", "Leave it concluded", "its summary stays in the context", "c"),
        ]

        def chosen(choice: str | None) -> None:
            if choice == "lines" and isinstance(around, int):
                self.show_lines(effort_id, (around, around))
            elif choice == "log":
                self.show_log(effort_id)

        self.app.push_screen(ChoiceDialog(f"{effort_id} does not fit in the context", choices, text=reason), chosen)

    def export(self, effort_id: str) -> None:
        def chosen(target: str | None) -> None:
            if target:
                self.app.run_worker(self._export(effort_id, target), group="export", exit_on_error=False)

        self.app.push_screen(
            PromptDialog(
                f"Export {effort_id} to Markdown",
                value=str(Path.cwd() / f"{effort_id}.md"),
                help="A file path, or a directory (the file is then <id>.md); a path ending in / is a directory.",
            ),
            chosen,
        )

    async def _export(self, effort_id: str, target: str) -> None:
        try:
            path = await self.link.controller.export_effort(effort_id, target)
        except (OSError, KeyError, RuntimeError) as exc:
            self.app.notify(f"Export failed: {exc}", severity="error")
            return
        self.app.notify(f"Exported to {path}", title="Export")

    def export_conversation(self) -> None:
        """The whole conversation (ambient chat and efforts, in the order said) to one Markdown file."""
        name = self.link.session_dir.name

        def chosen(target: str | None) -> None:
            if target:
                self.app.run_worker(self._export_all(target), group="export", exit_on_error=False)

        self.app.push_screen(
            PromptDialog(
                "Export the whole conversation to Markdown",
                value=str(Path.cwd() / f"{name}.md"),
                help=f"A file path, or a directory (the file is then {name}.md); a path ending in / is a directory.",
            ),
            chosen,
        )

    async def _export_all(self, target: str) -> None:
        try:
            path = await self.link.controller.export_conversation(target)
        except (OSError, KeyError, RuntimeError) as exc:
            self.app.notify(f"Export failed: {exc}", severity="error")
            return
        self.app.notify(f"Conversation exported to {path}", title="Export")

    def forget(self, effort_id: str, lines: str = "") -> None:
        """Forget an effort (or ``lines`` "A-B" of its log) in every file of the session, after a question."""
        what = f"lines {lines} of {effort_id}" if lines else f"effort {effort_id}"
        choices = [
            Choice("forget", "Forget, from every file", "cannot be undone: logs, journal, index, summaries", "y"),
            Choice("cancel", "Keep it", "nothing changes", "n"),
        ]
        text = "Lines forgotten keep their place as [forgotten]." if lines else "Its log, summary and name go."
        argument = f"--yes --effort {effort_id}" + (f" --lines {lines}" if lines else "")

        def chosen(choice: str | None) -> None:
            if choice == "forget" and self.ready("forget"):
                self.app.run_worker(self._forget(argument), group="forget", exit_on_error=False)

        self.app.push_screen(ChoiceDialog(f"Forget {what}?", choices, text=text), chosen)

    def forget_lines(self, effort_id: str) -> None:
        self.app.push_screen(
            PromptDialog(
                f"Forget lines of {effort_id}",
                placeholder="A-B, e.g. 12-14",
                help="The log's line numbers (1 is the first line). They stay as [forgotten].",
            ),
            lambda lines: self.forget(effort_id, lines.replace(" ", "")) if lines else None,
        )

    async def _forget(self, argument: str) -> None:
        from ..core.api import SlashCommand, SlashError, parse

        try:
            command = parse(f"/forget {argument}")
        except SlashError as exc:
            self.app.notify(str(exc), severity="error")
            return
        assert isinstance(command, SlashCommand)
        outcome = await self.link.controller.command(command)
        if outcome.ok:
            self.app.notify(outcome.reply or "forgotten", title="Forget")
        else:
            self.app.notify(f"Forget failed: {outcome.reason}", severity="error")
