"""The chat pane: messages and banners, kept scrolled to the newest line while it streams.

It draws what can be seen and a few screens around it, never the whole history: every widget costs
style and layout work on each key typed and each frame streamed, so their number is bounded by the
screen, not by how long the session is.

* At the start it draws about :data:`START_SCREENS` screens of the newest chat; the rest of the page
  the session sent is held (not drawn) and drawn as the user scrolls up, a screen and a half at a time;
  past it the page before is asked from the session (:class:`NeedOlder`).
* It holds at most :data:`MAX_SCREENS` screens: new lines at the bottom let the oldest go (scrolling
  back brings them again); drawing older lines at the top lets the newest go, and the pane then says
  that newer lines are hidden — scrolling to the bottom or Ctrl+End asks for them (:class:`NeedNewest`),
  and a new message shows the present at once.
* An earlier reply longer than a screen or two shows its first lines (``message.FOLD_LINES``); the rest
  is drawn when asked for.
"""

from __future__ import annotations

from math import ceil

from textual import events
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...core.api import END_OF_CHAT, LoggedLine
from .banner import BannerLine
from .chat_message import FOLD_CHARS, FOLD_LINES, ChatMessage, code_blocks

START_SCREENS = 2.5  # the history drawn at the start, in screens
PAGE_SCREENS = 1.5  # drawn per step while scrolling back
MAX_SCREENS = 8.0  # the most the pane holds
MESSAGE_ROWS = 3  # a message's header and margins
NEWER_HIDDEN = "newer messages hidden — click, scroll down or Ctrl+End shows them"


def _history_widget(line: LoggedLine) -> Widget:
    if line.banner:
        text = f"--- {line.content} ---" if line.kind == "effort" else line.content
        widget: Widget = BannerLine(text, line.kind)
    elif line.role == "system":
        widget = BannerLine(f"--- {line.content.strip(' -')} ({line.logged_to}) ---", "info")
    else:
        message = ChatMessage(  # (``shown``: an interrupted reply says so at its end too)
            line.role, line.shown, earlier=True, logged_to=line.logged_to if line.role == "assistant" else None
        )
        message.logged = line  # type: ignore[attr-defined]  # (the header reads a note's author, a cut reply)
        if line.interrupted:
            message.note = "(interrupted)"
        if line.usage is not None:
            message.set_usage(line.usage)
        widget = message
    widget.logged = line  # type: ignore[attr-defined]  # where it comes from: scrolling back starts before it
    return widget


def line_of(widget: Widget) -> LoggedLine | None:
    """The logged line a widget shows (a history line, or a finished turn's message), if any."""
    line = getattr(widget, "logged", None) or getattr(widget, "logged_line", None)
    return line if isinstance(line, LoggedLine) else None


def live(widget: Widget) -> bool:
    """Whether ``widget`` is a turn still being answered (or waiting to be): never let go."""
    return widget.has_class("-streaming") or bool(widget.query(".-streaming"))


def estimated_rows(line: LoggedLine, width: int) -> int:
    """About how many rows ``line`` takes at ``width`` columns, before it is laid out (a long reply is
    folded to its first lines, and counted so)."""
    if line.banner or line.role == "system":
        return 2
    text = line.content[: FOLD_CHARS * 2]
    rows = sum(max(1, ceil(len(part) / max(20, width))) for part in text.split("\n")[: FOLD_LINES + 1])
    return MESSAGE_ROWS + min(rows, FOLD_LINES + 1)


class NewerHidden(Static):
    """At the bottom while the newest lines are let go: a click brings them back."""

    def __init__(self) -> None:
        super().__init__(NEWER_HIDDEN, classes="divider -newer-hidden", markup=False)

    def on_click(self) -> None:
        if isinstance(self.parent, ChatLog):
            self.parent.want_newest()


class ChatLog(VerticalScroll):
    """Messages and banners in order. ``anchor`` keeps the view at the bottom as text streams."""

    can_focus = False

    class NeedOlder(Message):
        """The user scrolled to the top and more was said before: the screen asks the session."""

    class NeedNewest(Message):
        """The newest lines were let go while scrolling back and the user came back down: the screen
        asks the session for the newest page (:meth:`show_newest`)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.effort_names: dict[str, str] = {}  # id → human name, for the messages' "→ effort" labels
        self.oldest: LoggedLine | None = None  # the oldest line the session sent (the next page comes before it)
        self.more_before = False  # lines said before it may be left in the session
        self.loading_older = False  # a page is being asked from the session, or held lines are being drawn
        self.newer_hidden = False  # the newest lines were let go: the bottom of the pane is not the present
        self.held: list[LoggedLine] = []  # sent by the session, older than what is drawn, not drawn (oldest first)
        self._history_top: Widget | None = None  # the first widget of the history: older lines go above it

    def on_mount(self) -> None:
        self.anchor()

    # ------------------------------------------------------------------ sizes
    @property
    def screen_rows(self) -> int:
        return max(10, self.size.height or self.app.size.height)

    @property
    def text_width(self) -> int:
        return max(20, (self.size.width or self.app.size.width) - 8)

    def _rows(self, widgets: list[Widget]) -> int:
        """The rows ``widgets`` take: laid out ones measured, the others estimated."""
        total = 0
        for widget in widgets:
            height = widget.outer_size.height
            if height:
                total += height
            else:
                line = line_of(widget)
                total += estimated_rows(line, self.text_width) if line is not None else 2
        return total

    # --------------------------------------------------------------- drawing
    async def add(self, widget: Widget, *, before: Widget | None = None) -> Widget:
        """A new widget at the bottom (a turn, a banner, a command's answer): the present."""
        if self.newer_hidden and before is None:
            await self._to_present()
        if before is not None and before.parent is self:
            await self.mount(widget, before=before)
        else:
            await self.mount(widget)
        if self.oldest is None and self.more_before:  # the present, drawn alone: scrolling back starts here
            self.oldest, self._history_top = line_of(widget) or END_OF_CHAT, widget
        await self._trim_top()
        return widget

    async def add_banner(self, text: str, kind: str = "effort", *, before: Widget | None = None) -> BannerLine:
        banner = BannerLine(text, kind)
        await self.add(banner, before=before)
        return banner

    async def add_history(self, lines: list[LoggedLine], *, start: bool = False, before: Widget | None = None) -> None:
        """Earlier lines from the logs: at start-up (``start``: the newest few screens are drawn, the
        rest held for scrolling back; ``before``: above what the pane shows already, such as a command's
        answer asked for while the session opened), or lines another process wrote (drawn at the bottom)."""
        if not lines:
            return
        if not start:
            if self.newer_hidden:
                await self._to_present()
            await self.mount_all([_history_widget(line) for line in lines])
            await self._trim_top()
            return
        cut = self._cut(lines, START_SCREENS)
        self.held, drawn = list(lines[:cut]), lines[cut:]
        widgets = [_history_widget(line) for line in drawn]
        if before is not None and before.parent is self:
            await self.mount_all(widgets, before=before)
        else:
            await self.mount_all(widgets)
        self._history_top, self.oldest, self.more_before = widgets[0], lines[0], True

    async def show_from(self, lines: list[LoggedLine], at: int = 0, *, more_before: bool = False) -> None:
        """Jump back in time: the pane shows ``lines`` from ``at`` on (the session's first line, where an
        effort started), a few screens of them; the present is let go (the pane says newer lines are
        hidden, and scrolling down past them brings it back); ``lines`` before ``at`` are held, to
        scroll back to. A turn being answered stays."""
        kept = [w for w in self.children if live(w)]
        await self.remove_children([w for w in self.children if w not in kept])
        end = at
        rows, budget = 0, int((MAX_SCREENS / 2) * self.screen_rows)
        while end < len(lines) and rows < budget:
            rows += estimated_rows(lines[end], self.text_width)
            end += 1
        widgets = [_history_widget(line) for line in lines[at:end]]
        top = kept[0] if kept else None
        if top is not None:
            await self.mount_all(widgets, before=top)
        else:
            await self.mount_all(widgets)
        self.held = list(lines[:at])
        self.more_before = more_before
        self.oldest = lines[0] if lines else None
        self._history_top = widgets[0] if widgets else None
        self.newer_hidden = True
        await self.mount(NewerHidden())
        self.release_anchor()
        if widgets:
            self.call_after_refresh(self.scroll_to_widget, widgets[0], animate=False, top=True)

    async def add_older(self, lines: list[LoggedLine], more: bool) -> None:
        """A page the session sent, said before the oldest line it sent: held, then drawn as far as a
        step of scrolling back goes; the lines in view stay where they are."""
        self.more_before = more and bool(lines)
        if lines:
            self.held = list(lines) + self.held
            self.oldest = lines[0]
        await self._draw_held()

    def _cut(self, lines: list[LoggedLine], screens: float) -> int:
        """Where the newest ``screens`` of ``lines`` start (at least one line is drawn)."""
        budget, rows, at = int(screens * self.screen_rows), 0, len(lines)
        while at > 0 and rows < budget:
            at -= 1
            rows += estimated_rows(lines[at], self.text_width)
        return at

    async def _draw_held(self) -> None:
        """Draw a step of the held lines above the oldest drawn, keeping the view where it is."""
        if not self.held:
            return
        cut = self._cut(self.held, PAGE_SCREENS)
        lines, self.held = self.held[cut:], self.held[:cut]
        widgets = [_history_widget(line) for line in lines]
        top = self._history_top if self._history_top is not None and self._history_top.parent is self else None
        if top is None:
            top = self.children[0] if self.children else None
        before_height, before_y = self.virtual_size.height, self.scroll_y
        if top is not None:
            await self.mount_all(widgets, before=top)
        else:
            await self.mount_all(widgets)
        self._history_top = widgets[0]
        self.call_after_refresh(self._keep_view, before_height, before_y)
        await self._trim_bottom()

    def _keep_view(self, before_height: int, before_y: float) -> None:
        grown = self.virtual_size.height - before_height
        self.scroll_to(y=before_y + grown, animate=False, immediate=True)

    async def _trim_top(self) -> None:
        """Past MAX_SCREENS, the oldest lines go (scrolling back asks for them again)."""
        children = list(self.children)
        extra = self._rows(children) - int(MAX_SCREENS * self.screen_rows)
        dropped: list[Widget] = []
        for widget in children[:-1]:
            if extra <= 0 or live(widget):
                break
            dropped.append(widget)
            extra -= self._rows([widget])
        kept = next((w for w in children[len(dropped) :] if line_of(w) is not None), None)
        if not dropped or kept is None:
            return  # (nothing after them to scroll back from: they stay)
        await self.remove_children(dropped)
        self._history_top, self.oldest, self.more_before, self.held = kept, line_of(kept), True, []

    async def _trim_bottom(self) -> None:
        """Past MAX_SCREENS while scrolling back, the newest finished lines go; the pane then says newer
        lines are hidden (a reply being written is never let go)."""
        children = list(self.children)
        extra = self._rows(children) - int(MAX_SCREENS * self.screen_rows)
        dropped: list[Widget] = []
        for widget in reversed(children[1:]):
            if extra <= 0 or live(widget):
                break
            dropped.append(widget)
            extra -= self._rows([widget])
        if not dropped:
            return
        await self.remove_children(dropped)
        if not self.newer_hidden:
            self.newer_hidden = True
            await self.mount(NewerHidden())
        self.release_anchor()

    async def _to_present(self) -> None:
        """Something new comes at the bottom while newer lines are hidden: the pane jumps to the present —
        everything drawn goes but a turn being answered (scrolling back brings the rest again)."""
        kept = [w for w in self.children if live(w)]
        await self.remove_children([w for w in self.children if w not in kept])
        self.newer_hidden, self.held = False, []
        first = next((line_of(w) for w in kept if line_of(w) is not None), None)
        self.oldest, self.more_before, self._history_top = first, True, kept[0] if kept else None
        self.anchor()

    async def show_newest(self, lines: list[LoggedLine]) -> None:
        """The newest page, from the session (after :class:`NeedNewest`): drawn as at the start, above a
        turn still being answered."""
        await self._to_present()
        live_top = self.children[0] if self.children else None
        cut = self._cut(lines, START_SCREENS)
        widgets = [_history_widget(line) for line in lines[cut:]]
        if widgets:
            if live_top is not None:
                await self.mount_all(widgets, before=live_top)
            else:
                await self.mount_all(widgets)
            self._history_top, self.oldest, self.more_before, self.held = widgets[0], lines[0], True, lines[:cut]
        self.scroll_end(animate=False)

    # -------------------------------------------------------------- scrolling
    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 < old:
            self.want_older()

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if self.scroll_y <= 0:
            self.want_older()  # at the top already (or nothing to scroll): the wheel asks for more

    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        if self.newer_hidden and self.scroll_y >= self.max_scroll_y:
            self.want_newest()

    def want_older(self) -> None:
        """Draw what was said before the oldest line shown: held lines first, else a page from the session."""
        if self.loading_older:
            return
        if self.held:
            self.loading_older = True
            self.run_worker(self._draw_held_step(), group="chat-older", exit_on_error=False)
        elif self.more_before and self.oldest is not None:
            self.post_message(self.NeedOlder())

    async def _draw_held_step(self) -> None:
        try:
            await self._draw_held()
        finally:
            self.loading_older = False

    def want_newest(self) -> None:
        if self.newer_hidden:
            self.post_message(self.NeedNewest())

    def clear(self) -> None:
        """Empty (another session is shown next)."""
        self.remove_children()
        self.oldest, self.more_before, self._history_top = None, False, None
        self.held, self.newer_hidden = [], False

    async def add_divider(self, text: str) -> None:
        await self.add(Static(text, classes="divider", markup=False))

    # ----------------------------------------------------------------- reading
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
