"""A few lines of a log around a search hit: the ambient chat (or an effort's log), read-only."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...core.api import LogLines
from ..widgets.chat_message import ChatMessage


class LinesScreen(Screen[None]):
    BINDINGS = [Binding("escape,q", "close", "Close", id="lines.close")]

    def __init__(self, title: str, lines: LogLines, *, hit: tuple[int, int] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines
        self.hit = hit  # the lines the search matched, marked

    def compose(self) -> ComposeResult:
        read = self.lines
        total = f" of {read.total:,}" if read.total else ""
        with Vertical(id="log-viewer"):
            yield Static(self.title_text, classes="screen-title", markup=False)
            yield Static(f"lines {read.first}-{read.last}{total} · read-only", classes="screen-subtitle")
            with VerticalScroll(id="log-scroll"):
                for shown in read.messages:
                    if shown["role"] not in ("user", "assistant"):
                        continue
                    message = ChatMessage(shown["role"], shown["content"])
                    message.note = f"line {shown['line']}" + (" · withdrawn" if shown.get("withdrawn") else "")
                    if self.hit and self.hit[0] <= shown["line"] <= self.hit[1]:
                        message.add_class("-hit")
                    yield message
                if not read.messages:
                    yield Static("No chat messages on these lines.", classes="banner -info")
        yield Footer()

    def on_mount(self) -> None:
        scroll = self.query_one("#log-scroll", VerticalScroll)
        scroll.focus()
        hits = self.query(".-hit")
        if hits:
            scroll.scroll_to_widget(hits.first(), animate=False, top=True)

    def action_close(self) -> None:
        self.dismiss(None)
