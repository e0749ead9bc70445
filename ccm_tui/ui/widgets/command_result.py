"""A slash command in the chat: what was typed, then its answer (search results, the status, help) or why it failed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static


class CommandResult(Vertical):
    """``› /search locker code`` and, once it has run, the answer (plain text, kept as typed)."""

    def __init__(self, line: str) -> None:
        super().__init__(classes="command")
        self.line = line
        self.answer = Static("…", classes="command-answer", markup=False)

    def compose(self) -> ComposeResult:
        yield Static(f"› {self.line}", classes="command-line", markup=False)
        yield self.answer

    def show(self, text: str, *, failed: bool = False) -> None:
        self.answer.update(text)
        self.set_class(failed, "-failed")
        self.answer.display = bool(text)
