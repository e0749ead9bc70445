"""The effort log viewer: an effort's raw log, read-only, with its summary on top."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...core.api import EffortView, effort_markdown, terminal_safe
from ..widgets.banner import BannerLine
from ..widgets.chat_message import ChatMessage

MAX_RECORDS = 300


class EffortLogScreen(Screen[str | None]):
    """Dismisses with "export" when the user asks to export from here, "forget" to forget lines."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="log.close"),
        Binding("x", "export", "Export to Markdown", id="log.export"),
        Binding("y", "copy", "Copy log", id="log.copy"),
        Binding("f", "forget", "Forget lines", id="log.forget"),
    ]

    def __init__(self, effort: EffortView, records: list[dict[str, Any]], bad_lines: int = 0) -> None:
        super().__init__()
        self.effort = effort
        self.records = records
        self.bad_lines = bad_lines

    def compose(self) -> ComposeResult:
        e = self.effort
        shown = self.records[-MAX_RECORDS:]
        status = "open" if e.state.is_open else "concluded" + (" · expanded" if e.expanded else "")
        sub = Content.assemble(
            (status, "$text-accent"),
            f" · {len(self.records)} log lines · {e.raw_tokens:,} tokens",
            (f" · showing the last {MAX_RECORDS}" if len(self.records) > MAX_RECORDS else "", "$text-warning"),
            (f" · {self.bad_lines} unreadable line(s) skipped" if self.bad_lines else "", "$text-warning"),
            (" · read-only", "$foreground-muted"),
        )
        with Vertical(id="log-viewer"):
            yield Static(f"Effort log — {e.id}", classes="screen-title", markup=False)
            yield Static(sub, classes="screen-subtitle")
            with VerticalScroll(id="log-scroll"):
                if e.summary:
                    summary = Static(terminal_safe(e.summary), id="log-summary", markup=False)
                    summary.border_title = "Summary"
                    yield summary
                for record in shown:
                    role, content = record.get("role"), str(record.get("content") or "")
                    if role == "system":
                        yield BannerLine(content, "info")
                    elif role in ("user", "assistant"):
                        message = ChatMessage(role, content)
                        if record.get("interrupted"):
                            message.note = "(interrupted)"
                        yield message
                if not shown:
                    yield Static("This effort has no messages yet.", classes="banner -info")
        yield Footer()

    def on_mount(self) -> None:
        scroll = self.query_one("#log-scroll", VerticalScroll)
        scroll.focus()
        scroll.scroll_end(animate=False, immediate=True)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(effort_markdown(self.effort, self.records))
        self.notify("Log copied to the clipboard")

    def action_export(self) -> None:
        self.dismiss("export")

    def action_forget(self) -> None:
        self.dismiss("forget")

    def action_close(self) -> None:
        self.dismiss(None)
