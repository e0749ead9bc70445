"""The chat pane: messages and banners, kept scrolled to the newest line while it streams."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

if TYPE_CHECKING:
    from ...core.run_state import LoggedLine
from .banner import BannerLine
from .message import ChatMessage, code_blocks

MAX_WIDGETS = 400  # older widgets are dropped from the pane (they stay in the logs)


class ChatLog(VerticalScroll):
    """Messages and banners in order. ``anchor`` keeps the view at the bottom as text streams."""

    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.effort_names: dict[str, str] = {}  # id → human name, for the messages' "→ effort" labels

    def on_mount(self) -> None:
        self.anchor()

    async def add(self, widget: Widget, *, before: Widget | None = None) -> Widget:
        if before is not None and before.parent is self:
            await self.mount(widget, before=before)
        else:
            await self.mount(widget)
        await self._trim()
        return widget

    async def add_message(self, role: str, text: str = "", **kwargs) -> ChatMessage:
        message = ChatMessage(role, text, **kwargs)
        await self.add(message)
        return message

    async def add_banner(self, text: str, kind: str = "effort", *, before: Widget | None = None) -> BannerLine:
        banner = BannerLine(text, kind)
        await self.add(banner, before=before)
        return banner

    async def add_history(self, lines: list[LoggedLine]) -> None:
        """Earlier lines from the logs (start-up, or written by another process)."""
        widgets: list[Widget] = []
        for line in lines:
            if line.banner:
                text = f"--- {line.content} ---" if line.kind == "effort" else line.content
                widgets.append(BannerLine(text, line.kind))
            elif line.role == "system":
                widgets.append(BannerLine(f"--- {line.content.strip(' -')} ({line.logged_to}) ---", "info"))
            else:
                message = ChatMessage(
                    line.role,
                    line.content,
                    earlier=True,
                    logged_to=line.logged_to if line.role == "assistant" else None,
                )
                if line.interrupted:
                    message.note = "(interrupted)"
                widgets.append(message)
        if widgets:
            await self.mount_all(widgets)
            await self._trim()

    async def add_divider(self, text: str) -> None:
        await self.add(Static(text, classes="divider"))

    async def _trim(self) -> None:
        extra = len(self.children) - MAX_WIDGETS
        if extra > 0:
            await self.remove_children(list(self.children)[:extra])

    def messages(self, role: str | None = None) -> list[ChatMessage]:
        return [m for m in self.query(ChatMessage) if role is None or m.role == role]

    def last_reply(self) -> str | None:
        replies = self.messages("assistant")
        return replies[-1].text if replies and replies[-1].text else None

    def last_code_block(self) -> str | None:
        """The model's last code block (the user's own pastes are not what one copies back)."""
        for message in reversed(self.messages("assistant")):
            blocks = code_blocks(message.text)
            if blocks:
                return blocks[-1]
        return None
