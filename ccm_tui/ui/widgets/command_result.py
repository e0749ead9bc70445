"""A slash command in the chat: what was typed, then its answer (search results, the status, help) or why it failed."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ..plain_text import highlighted

MATCH_STYLE = "bold"  # the words a search found, in its report


class CommandResult(Vertical):
    """``› /search locker code`` and, once it has run, the answer (plain text, kept as typed; a search's
    report with the words found in bold and its wrapped lines kept under their indent)."""

    def __init__(self, line: str) -> None:
        super().__init__(classes="command")
        self.line = line
        self.answer = Static("…", classes="command-answer", markup=False)

    def compose(self) -> ComposeResult:
        yield Static(f"› {self.line}", classes="command-line", markup=False)
        yield self.answer

    def show(self, text: str, *, failed: bool = False, report: list[dict[str, Any]] | None = None) -> None:
        self.set_class(failed, "-failed")
        self.answer.update(text)  # (kept as plain text: what a copy or a test reads)
        self.answer.display = bool(text) and not report
        if report:
            self.mount_all([_report_line(line) for line in report])


def _report_line(line: dict[str, Any]) -> Static:
    """One line of a search report: its indent as padding (so a wrapped line stays under it), the words
    found in bold; text and spans from the core, never parsed as markup."""
    spans = [(int(a), int(b)) for a, b in line.get("spans") or ()]
    widget = Static(highlighted(str(line.get("text") or ""), spans, MATCH_STYLE), classes="command-answer -report")
    widget.styles.padding = (0, 0, 0, 2 + max(0, int(line.get("indent") or 0)))  # (.command-answer: 2)
    return widget
