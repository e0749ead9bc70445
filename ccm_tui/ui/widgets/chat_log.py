"""The chat pane: messages and banners, kept scrolled to the newest line while it streams."""

from __future__ import annotations

from textual import events
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...core.run_state import LoggedLine
from .banner import BannerLine
from .message import ChatMessage, code_blocks

MAX_WIDGETS = 400  # older widgets are dropped from the pane as new ones come (scrolling up brings them back)


def _history_widget(line: LoggedLine) -> Widget:
    if line.banner:
        text = f"--- {line.content} ---" if line.kind == "effort" else line.content
        widget: Widget = BannerLine(text, line.kind)
    elif line.role == "system":
        widget = BannerLine(f"--- {line.content.strip(' -')} ({line.logged_to}) ---", "info")
    else:
        message = ChatMessage(
            line.role, line.content, earlier=True, logged_to=line.logged_to if line.role == "assistant" else None
        )
        if line.interrupted:
            message.note = "(interrupted)"
        if line.usage is not None:
            message.set_usage(line.usage)
        widget = message
    widget.logged = line  # type: ignore[attr-defined]  # where it comes from: scrolling back starts before it
    return widget


class ChatLog(VerticalScroll):
    """Messages and banners in order. ``anchor`` keeps the view at the bottom as text streams."""

    can_focus = False

    class NeedOlder(Message):
        """The user scrolled to the top and more was said before: the screen asks the session."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.effort_names: dict[str, str] = {}  # id → human name, for the messages' "→ effort" labels
        self.oldest: LoggedLine | None = None  # the oldest logged line shown (scrolling back starts before it)
        self.more_before = False  # lines said before it may be left
        self.loading_older = False
        self._history_top: Widget | None = None  # the first widget of the history: older lines go above it

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

    async def add_history(self, lines: list[LoggedLine], *, start: bool = False) -> None:
        """Earlier lines from the logs: at start-up (``start``: scrolling back continues before the
        first of them), or lines another process wrote."""
        widgets = [_history_widget(line) for line in lines]
        if widgets:
            await self.mount_all(widgets)
            if start:
                self._history_top, self.oldest, self.more_before = widgets[0], lines[0], True
            await self._trim()

    async def add_older(self, lines: list[LoggedLine], more: bool) -> None:
        """A page said before the oldest line shown, above it; the lines in view stay where they are."""
        self.more_before = more and bool(lines)
        if not lines:
            return
        widgets = [_history_widget(line) for line in lines]
        top = self._history_top if self._history_top is not None and self._history_top.parent is self else None
        if top is None:
            top = self.children[0] if self.children else None
        before_height, before_y = self.virtual_size.height, self.scroll_y
        if top is not None:
            await self.mount_all(widgets, before=top)
        else:
            await self.mount_all(widgets)
        self._history_top, self.oldest = widgets[0], lines[0]
        self.call_after_refresh(self._keep_view, before_height, before_y)

    def _keep_view(self, before_height: int, before_y: float) -> None:
        grown = self.virtual_size.height - before_height
        self.scroll_to(y=before_y + grown, animate=False, immediate=True)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 < old:
            self.want_older()

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if self.scroll_y <= 0:
            self.want_older()  # at the top already (or nothing to scroll): the wheel asks for more

    def want_older(self) -> None:
        """Ask for the page before the oldest line shown, if there may be one and none is on its way."""
        if self.more_before and self.oldest is not None and not self.loading_older:
            self.post_message(self.NeedOlder())

    def clear(self) -> None:
        """Empty (another session is shown next)."""
        self.remove_children()
        self.oldest, self.more_before, self._history_top = None, False, None

    async def add_divider(self, text: str) -> None:
        await self.add(Static(text, classes="divider"))

    async def _trim(self) -> None:
        extra = len(self.children) - MAX_WIDGETS
        if extra <= 0:
            return
        dropped, kept = list(self.children)[:extra], list(self.children)[extra:]
        await self.remove_children(dropped)
        for widget in kept:  # scrolling back now starts before the oldest line still shown
            line = getattr(widget, "logged", None) or getattr(widget, "logged_line", None)
            if isinstance(line, LoggedLine):
                self._history_top, self.oldest, self.more_before = widget, line, True
                return

    def messages(self, role: str | None = None) -> list[ChatMessage]:
        return [m for m in self.query(ChatMessage) if role is None or m.role == role]

    async def withdraw(self, user: str, reply: str) -> bool:
        """Take the last exchange off the pane (regenerated or edited): its turn, or its two messages."""
        replies = [m for m in self.messages("assistant") if m.text.strip() == reply.strip()]
        if not replies:
            return False
        answer = replies[-1]
        turn = answer.parent
        if isinstance(turn, Widget) and turn is not self and turn.has_class("turn"):
            await turn.remove()
            return True
        users = [m for m in self.messages("user") if m.text == user and m.region.y <= answer.region.y]
        await answer.remove()
        if users:
            await users[-1].remove()
        return True

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
