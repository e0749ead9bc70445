"""F1: every key of the app, read from the bindings themselves (so the list cannot go stale)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keys import binding_keys

KEY_COLUMN = 20

# Keys the prompt understands that are not bindings of ours (Textual's TextArea and our key handler).
PROMPT_KEYS = [
    Binding("enter", "", "Send the message"),
    Binding("alt+enter,ctrl+j", "", "New line (Shift+Enter too, where the terminal reports it)"),
    Binding("up,down", "", "In an empty input: the messages sent before in this session"),
    Binding("ctrl+z", "", "Undo"),
    Binding("ctrl+u", "", "Delete to the start of the line"),
    Binding("f7", "", "Select all"),
]


def key_table(bindings: Iterable[Binding]) -> Table:
    """Keys and what they do in two columns: a long description wraps within its own column."""
    table = Table.grid(padding=(0, 1, 0, 0))
    table.add_column(width=KEY_COLUMN, no_wrap=True, style="bold")
    table.add_column(ratio=1)
    for b in bindings:
        table.add_row(binding_keys(b), b.tooltip or b.description)
    return table


class HelpScreen(ModalScreen[None]):
    """``sections`` pairs a title with the bindings shown under it."""

    BINDINGS = [Binding("escape,f1,q", "close", "Close", id="help.close")]

    def __init__(self, sections: Iterable[tuple[str, Iterable[object]]]) -> None:
        super().__init__(classes="dialog-screen")
        self.sections = [
            (title, [b for b in bindings if isinstance(b, Binding) and b.description]) for title, bindings in sections
        ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog help-dialog"):
            yield Static("Keys", classes="dialog-title")
            with VerticalScroll(id="help-keys"):
                for title, bindings in self.sections:
                    yield Static(Content.styled(title, "bold $accent"), classes="help-section")
                    yield Static(key_table(bindings), classes="help-rows")
            yield Static("Every action is also in the command palette (Ctrl+P) · Esc closes", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#help-keys").focus()  # arrows and PgUp/PgDn scroll the list

    def action_close(self) -> None:
        self.dismiss(None)
