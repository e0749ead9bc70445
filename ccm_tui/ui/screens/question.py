"""A modal one-line question (effort name, export path, model) with a default value."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class PromptDialog(ModalScreen[str | None]):
    """Dismisses with the entered text (stripped; empty counts as cancel), or None on Escape."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, *, value: str = "", placeholder: str = "", help: str = "") -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.value = value
        self.placeholder = placeholder
        self.help = help

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            if self.help:
                yield Static(self.help, classes="dialog-text", markup=False)
            yield Input(self.value, placeholder=self.placeholder, classes="dialog-input")
            yield Static("Enter confirm · Esc cancel", classes="dialog-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
