"""The session picker (Ctrl+S): the sessions of the data directory, newest first; Enter switches,
``n`` makes a new one, ``r`` renames one, ``a`` archives one (or brings an archived one back), ``h``
shows or hides the archived ones, ``d`` deletes one (asking first; never the one open here), ``f`` forks
one at a turn (a new session holding what it held then), Esc closes.

The list comes from the core (:mod:`ccm_tui.core.session.sessions_folder`, through ``core.api``), read in
a thread: a session's size is a walk of its directory. What switching and renaming do to the session
shown is the chat screen's (its :class:`SessionHost` side); a refusal or a failure is a one-line
notification and the picker stays.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from ...core.api import (
    SessionCatalogError,
    SessionInfo,
    archive_session,
    check_delete,
    create_session,
    delete_session,
    fork_session,
    last_used_ago,
    list_sessions,
    same_session,
    shown_size,
)
from .choice import Choice, ChoiceDialog
from .question import PromptDialog

NAME_WIDTH = 28  # characters of a name shown; longer ones end with "…"
CURRENT = "●"
NAME_HELP = "Letters, digits, spaces, '-' or '_' (no '/'); at most 64 characters."


class SessionHost(Protocol):
    """What the picker asks of the chat screen (see :class:`~.chat.ChatScreen`)."""

    @property
    def session_dir(self) -> Path: ...

    def switch_refused(self, what: str) -> str | None: ...

    def switch_session(self, session_dir: Path) -> None: ...

    async def rename_session(self, session_dir: Path, new_name: str) -> Path: ...


def _home_relative(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def _one_line(error: Exception) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:1].upper() + text[1:]


def _number(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def _right(values: list[str], header: str) -> tuple[str, list[str]]:
    """A column of numbers, right-aligned under its header (the table lays cells out flush left)."""
    width = max(len(header), *(len(v) for v in values)) if values else len(header)
    return header.rjust(width), [v.rjust(width) for v in values]


class SessionsScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close", id="sessions.close"),
        Binding("n", "new", "New session", id="sessions.new"),
        Binding("r", "rename", "Rename", id="sessions.rename"),
        Binding("a", "archive", "Archive", id="sessions.archive"),
        Binding("h", "toggle_archived", "Show archived", id="sessions.archived"),
        Binding("d", "delete", "Delete", id="sessions.delete"),
        Binding("f", "fork", "Fork", id="sessions.fork"),
    ]

    def __init__(self, root: Path, host: SessionHost) -> None:
        super().__init__(classes="dialog-screen")
        self.root = root
        self.host = host
        self.sessions: list[SessionInfo] = []
        self.loaded = False  # the first listing arrived (tests and snapshots wait for it)
        self.closing = False  # dismissed once: keys typed ahead reach no second pop
        self.show_archived = False  # archived sessions are listed (marked) only when asked

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog sessions-dialog"):
            yield Static("Sessions", classes="dialog-title")
            yield Static("Reading the sessions…", id="sessions-where", classes="dialog-text", markup=False)
            yield DataTable(id="sessions-table", cursor_type="row", show_cursor=True)
            yield Static(
                "Enter switch · n new · r rename · Esc close\na archive · h show archived · d delete · f fork",
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.reload()

    # ------------------------------------------------------------------ listing
    def reload(self, select: Path | None = None) -> None:
        """List the sessions again (in a thread), the cursor on ``select`` (else the current one)."""
        self.run_worker(lambda: self._read(select), thread=True, group="sessions", exclusive=True, exit_on_error=False)

    def _read(self, select: Path | None) -> None:
        try:
            sessions = list_sessions(self.root, archived=self.show_archived)
        except Exception as exc:  # noqa: BLE001 - a notification, never a traceback
            self.app.call_from_thread(self.notify, _one_line(exc), title="Sessions", severity="error")
            sessions = []
        self.app.call_from_thread(self.show, sessions, select)

    def show(self, sessions: list[SessionInfo], select: Path | None = None) -> None:
        if not self.is_attached:
            return  # closed while the list was read
        self.sessions = sessions
        table = self.query_one(DataTable)
        table.clear(columns=True)
        size, sizes = _right([shown_size(i.size) for i in sessions], "Size")
        efforts, counts = _right([_number(i.efforts) for i in sessions], "Efforts")
        turns, turn_counts = _right([_number(i.turns) for i in sessions], "Turns")
        for label, key in (("", "mark"), ("Session", "name"), ("Last used", "used")):
            table.add_column(label, key=key)
        for label, key in ((size, "size"), (efforts, "efforts"), (turns, "turns")):
            table.add_column(Text(label), key=key)
        now = time.time()
        current = self.host.session_dir
        cursor = 0
        for row, info in enumerate(sessions):
            here = same_session(info.path, current)
            name = info.name if len(info.name) <= NAME_WIDTH else info.name[: NAME_WIDTH - 1] + "…"
            if info.archived:
                name += " (archived)"
            table.add_row(
                Text(CURRENT if here else "", style="bold"),
                Text(name, style="bold" if here else ""),
                last_used_ago(info, now),
                sizes[row],
                counts[row],
                turn_counts[row],
                key=str(info.path),
            )
            if (select is not None and same_session(info.path, select)) or (select is None and here):
                cursor = row
        if sessions:
            table.move_cursor(row=cursor, animate=False)
        self.query_one("#sessions-where", Static).update(self._where(sessions, current))
        self.loaded = True

    def _where(self, sessions: list[SessionInfo], current: Path) -> str:
        where = _home_relative(self.root)
        if not sessions:
            return f"No sessions in {where} yet: n makes one."
        count = f"{len(sessions)} session{'s' if len(sessions) != 1 else ''} in {where}"
        if not any(same_session(s.path, current) for s in sessions):
            count += f" · this one is elsewhere: {_home_relative(current)}"
        else:
            count += f" · {CURRENT} the one open here"
        return count

    def selected(self) -> SessionInfo | None:
        table = self.query_one(DataTable)
        if not self.sessions or not 0 <= table.cursor_row < len(self.sessions):
            return None
        return self.sessions[table.cursor_row]

    # ------------------------------------------------------------------ actions
    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        info = self.selected()
        if info is not None:
            self.switch(info.path)

    def switch(self, path: Path) -> None:
        if same_session(path, self.host.session_dir):
            self.action_close()
            return
        if self._refused("switch sessions"):
            return
        if not path.is_dir():
            self.notify(f"There is no session {path.name!r} any more", severity="warning")
            self.reload()
            return
        self.action_close()
        self.host.switch_session(path)

    def _refused(self, what: str) -> bool:
        reason = self.host.switch_refused(what)
        if reason:
            self.notify(reason, severity="warning")
        return reason is not None

    def action_new(self) -> None:
        if self._refused("switch sessions"):
            return

        def named(name: str | None) -> None:
            if not name or self._refused("switch sessions"):
                return
            try:
                path = create_session(self.root, name)
            except SessionCatalogError as exc:
                self.notify(f"Not created: {exc}", title="New session", severity="warning")
                return
            self.action_close()
            self.host.switch_session(path)

        self.app.push_screen(PromptDialog("New session", placeholder="its name", help=NAME_HELP), named)

    def action_rename(self) -> None:
        info = self.selected()
        if info is None:
            self.notify("No session to rename", severity="warning")
            return
        if same_session(info.path, self.host.session_dir) and self._refused("rename this session"):
            return

        def named(name: str | None) -> None:
            if name and name != info.name:
                self.run_worker(self._rename(info, name), group="sessions-rename", exit_on_error=False)

        self.app.push_screen(
            PromptDialog(f"Rename the session {info.name}", value=info.name, help=NAME_HELP),
            named,
        )

    async def _rename(self, info: SessionInfo, name: str) -> None:
        try:
            target = await self.host.rename_session(info.path, name)
        except SessionCatalogError as exc:
            self.notify(f"Not renamed: {exc}", title="Rename", severity="warning")
            return
        except OSError as exc:
            self.notify(f"Not renamed: {_one_line(exc)}", title="Rename", severity="error")
            return
        self.notify(f"{info.name} is now {target.name}", title="Renamed")
        self.reload(select=target)

    def action_toggle_archived(self) -> None:
        self.show_archived = not self.show_archived
        info = self.selected()
        self.reload(select=info.path if info else None)

    def action_archive(self) -> None:
        info = self.selected()
        if info is None:
            self.notify("No session to archive", severity="warning")
            return
        try:
            archive_session(self.root, info.name, archived=not info.archived)
        except SessionCatalogError as exc:
            self.notify(f"Not changed: {exc}", title="Archive", severity="warning")
            return
        if info.archived:
            self.notify(f"{info.name} is back in the list", title="Unarchived")
        else:
            self.notify(f"{info.name} is archived: h shows archived sessions", title="Archived")
        self.reload(select=info.path)

    def action_delete(self) -> None:
        info = self.selected()
        if info is None:
            self.notify("No session to delete", severity="warning")
            return
        if same_session(info.path, self.host.session_dir):
            self.notify("This session is open here: switch to another one to delete it", severity="warning")
            return
        try:
            check_delete(self.root, info.name)
        except SessionCatalogError as exc:
            self.notify(f"Not deleted: {exc}", title="Delete", severity="warning")
            return

        def chosen(choice: str | None) -> None:
            if choice == "delete":
                self.run_worker(lambda: self._delete(info), thread=True, group="sessions-delete", exit_on_error=False)

        what = f"{_number(info.efforts)} efforts, {_number(info.turns)} turns, {shown_size(info.size)}"
        self.app.push_screen(
            ChoiceDialog(
                f"Delete the session {info.name}?",
                [
                    Choice("delete", "Delete it", "every file it holds is removed: this cannot be undone", key="y"),
                    Choice("keep", "Keep it", key="n"),
                ],
                text=f"{what} · {_home_relative(info.path)}",
            ),
            chosen,
        )

    def _delete(self, info: SessionInfo) -> None:
        try:
            delete_session(self.root, info.name)
        except (SessionCatalogError, OSError) as exc:
            self.app.call_from_thread(self.notify, f"Not deleted: {_one_line(exc)}", title="Delete", severity="warning")
            return
        self.app.call_from_thread(self.notify, f"{info.name} is deleted", title="Deleted")
        self.app.call_from_thread(self.reload)

    def action_fork(self) -> None:
        info = self.selected()
        if info is None:
            self.notify("No session to fork", severity="warning")
            return
        last = info.turns or 0

        def named(name: str | None) -> None:
            if not name:
                return

            def at(turn: str | None) -> None:
                if turn is None:
                    return
                try:
                    number = int(turn.strip() or last)
                except ValueError:
                    self.notify(f"Not forked: {turn!r} is not a turn number", title="Fork", severity="warning")
                    return
                self.run_worker(
                    lambda: self._fork(info, name, number), thread=True, group="sessions-fork", exit_on_error=False
                )

            help = f"0 to {last}: the new session holds what {info.name} held after that turn"
            self.app.push_screen(PromptDialog(f"Fork {info.name} at turn", value=str(last), help=help), at)

        self.app.push_screen(
            PromptDialog(f"Fork the session {info.name}", value=f"{info.name} fork", help=NAME_HELP), named
        )

    def _fork(self, info: SessionInfo, name: str, turn: int) -> None:
        try:
            report = fork_session(self.root, info.name, name, turn)
        except (SessionCatalogError, OSError) as exc:
            self.app.call_from_thread(self.notify, f"Not forked: {_one_line(exc)}", title="Fork", severity="warning")
            return
        said = f"{report.path.name}: {info.name} up to turn {report.turn}"
        self.app.call_from_thread(self.notify, said, title="Forked")
        self.app.call_from_thread(self.reload, report.path)

    def action_close(self) -> None:
        if not self.closing:
            self.closing = True
            self.dismiss(None)
