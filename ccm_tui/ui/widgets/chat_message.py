"""One chat message: a header line and a Markdown body that can stream.

Streaming goes through Textual's ``MarkdownStream`` (it batches fragments when
they come faster than the widget can render); when the reply is complete the
body gets one final ``update`` with the authoritative text, unless that is
exactly what streamed.
"""

from __future__ import annotations

import re
import time
from functools import cache
from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Collapsible, Static

from ...core.api import ROLE_TITLES, terminal_safe
from ..pastes import SHOWN_CHARS, long_message
from ..plain_text import plain

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from textual.timer import Timer
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

PLAIN_ROLES = ("user", "note")  # shown as typed, line breaks kept, never as Markdown
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
FOLD_LINES = 60  # an earlier reply longer than this shows its first lines; the rest comes on demand
FOLD_CHARS = 8_000  # … or longer than this many characters
WRITE_EVERY = 0.1  # seconds between two writes of streamed text into a reply's Markdown


def folded_head(text: str) -> tuple[str, int] | None:
    """The first lines of a long Markdown text (a code fence left open is closed) and how many lines
    are left out; None when the text is short enough to show whole."""
    if len(text) <= FOLD_CHARS and text.count("\n") < FOLD_LINES:
        return None
    lines = text[: FOLD_CHARS * 2].split("\n")[:FOLD_LINES]
    head = "\n".join(lines)[:FOLD_CHARS]
    if sum(1 for line in head.split("\n") if line.lstrip().startswith("```")) % 2:
        head += "\n```"
    shown = head.count("\n") + 1
    return head, max(1, text.count("\n") + 1 - shown)


def clipped(text: str) -> str:
    """At most SHOWN_CHARS of a message, saying what is left out."""
    if len(text) <= SHOWN_CHARS:
        return text
    rest = len(text) - SHOWN_CHARS
    return text[:SHOWN_CHARS] + f"\n\n*… {rest:,} more characters are in the log (the effort's raw log, or search).*"


def markdown_parser() -> MarkdownIt:
    """GitHub-like Markdown with raw HTML off: ``<stdio.h>`` or ``List<String>`` in a reply is text,
    shown as written, never an HTML tag silently dropped."""
    from markdown_it import MarkdownIt

    return MarkdownIt("gfm-like", {"html": False})


LAST_BLOCK = "-last-block"  # the class of a reply's last block (no margin under it: see styles/chat.tcss)


@cache
def reply_body() -> type[Markdown]:
    """The Markdown widget of a reply (made on first use: markdown-it loads after the first paint).

    It marks its last block with :data:`LAST_BLOCK` after every update and append, instead of a
    ``:last-child`` style: an order-dependent style makes Textual restyle every sibling (and its
    subtree) on each mount, which made a streamed reply quadratic in its blocks."""
    from textual.await_complete import AwaitComplete
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownBlock

    class ReplyBody(Markdown):
        _marked: MarkdownBlock | None = None

        def _mark_last(self) -> None:
            """Move :data:`LAST_BLOCK` to the last block, restyling the two blocks only: a class change
            restyles the whole subtree (a table is a widget a cell), which took 5% of a stream's event
            loop, and no style under a block depends on it."""
            last = next((c for c in reversed(self.children) if isinstance(c, MarkdownBlock)), None)
            if last is self._marked:
                return
            changed = [block for block in (self._marked, last) if block is not None]
            if self._marked is not None:
                self._marked.set_class(False, LAST_BLOCK, update=False)
            self._marked = last
            if last is not None:
                last.set_class(True, LAST_BLOCK, update=False)
            if self.is_attached:
                self.app.stylesheet.update_nodes([b for b in changed if b.is_attached], animate=False)

        def _then_mark(self, done: AwaitComplete) -> AwaitComplete:
            async def run() -> None:
                await done
                self._mark_last()

            return AwaitComplete(run())

        def update(self, markdown: str) -> AwaitComplete:
            return self._then_mark(super().update(markdown))

        def append(self, markdown: str) -> AwaitComplete:
            return self._then_mark(super().append(markdown))

    return ReplyBody


def code_blocks(markdown: str) -> list[str]:
    """The fenced code blocks of a Markdown text, in order."""
    return [m.group(1).rstrip("\n") for m in _FENCE.finditer(markdown)]


class MoreLines(Static):
    """The rest of a folded reply: a line saying how much, which draws it on Enter or a click."""

    can_focus = True
    BINDINGS = [Binding("enter", "unfold", "Show all", id="message.unfold")]

    def __init__(self, left: int) -> None:
        super().__init__(f"▸ {left:,} more lines — Enter or click shows them", classes="message-more", markup=False)

    def action_unfold(self) -> None:
        message = next((a for a in self.ancestors if isinstance(a, ChatMessage)), None)
        if message is not None:  # (the message's worker: this line goes away while it runs)
            message.run_worker(message.unfold(), exit_on_error=False)

    def on_click(self) -> None:
        self.action_unfold()


class ChatMessage(Vertical):
    """A user or assistant message. Assistant messages may stream in."""

    def __init__(
        self,
        role: str,
        text: str = "",
        *,
        logged_to: str | None = None,
        streaming: bool = False,
        earlier: bool = False,
        shown: list[tuple[str, str | None]] | None = None,
    ) -> None:
        classes = f"message -{role}" + (" -streaming" if streaming else "") + (" -earlier" if earlier else "")
        super().__init__(classes=classes)
        self.role = role
        self.text = terminal_safe(text)  # model and file text: never a control sequence on the terminal
        self.logged_to = logged_to
        self.note = ""
        self.tools: list[tuple[str, bool]] = []
        self._stream: MarkdownStream | None = None
        self._unwritten: list[str] = []  # streamed, not yet written to the Markdown stream
        self._written_at = 0.0  # when it last was
        self._write_timer: Timer | None = None
        # its turn's tokens in, out, cost (and, live, how much of the input the provider's cache served)
        self.usage: tuple[int, int, float | None] | tuple[int, int, float | None, str] | None = None
        # a user message's parts, large pastes folded: (text, None) typed, (text, title) folded
        typed = role in PLAIN_ROLES
        self.shown = shown if shown is not None or not typed else long_message(self.text)

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="message-header")
        yield Static(self._usage_line(), classes="message-usage")
        yield Static("", classes="message-tools", markup=False)
        yield Static("thinking…", classes="message-thinking")
        if self.role in PLAIN_ROLES and self.shown:  # large pastes folded: a click or Enter shows them
            with Vertical(classes="message-body -plain -folded"):
                for text, title in self.shown:
                    if title is None:
                        yield Static(terminal_safe(text), markup=False)
                    else:
                        yield Collapsible(
                            Static(terminal_safe(text), markup=False),
                            title=cast(str, plain(title)),  # (Textual would parse a string title as markup)
                            collapsed=True,
                            classes="paste",
                        )
        elif self.role in PLAIN_ROLES:  # what the user (or an agent's note) typed, as typed: no Markdown
            yield Static(self.text, classes="message-body -plain", markup=False)
        else:
            body = reply_body()  # (markdown-it loads with the first reply, after the first paint)

            fold = folded_head(self.text) if self.has_class("-earlier") else None
            if fold is None:
                yield body(clipped(self.text), classes="message-body", parser_factory=markdown_parser)
            else:  # a long earlier reply: its first lines; the rest is drawn when asked for
                head, left = fold
                yield body(head, classes="message-body", parser_factory=markdown_parser)
                yield MoreLines(left)

    async def unfold(self) -> None:
        """Draw the whole of a folded reply (Enter or a click on its "more lines")."""
        for more in self.query(MoreLines):
            await more.remove()
        await self.body.update(clipped(self.text))

    # ------------------------------------------------------------------ view
    def _header(self) -> Content:
        logged = getattr(self, "logged", None)  # the logged line it shows (the chat's history)
        author = getattr(logged, "author", "")  # a note: the agent that left it
        title = f"Note from {author}" if author else ROLE_TITLES.get(self.role, self.role)
        note = self.note or ("(cut at reply_max_tokens)" if getattr(logged, "cut", False) else "")
        parts: list[tuple[str, str] | str] = [(title, "bold")]
        if self.logged_to:
            where = "ambient" if self.logged_to == "ambient" else f"effort {self._effort_label(self.logged_to)}"
            parts += ["  ", (f"→ {where}", "$foreground-muted")]
        if note:
            parts += ["  ", (note, "$text-warning italic")]
        return Content.assemble(*parts)

    def _usage_line(self) -> Content:
        if self.usage is None:
            return Content("")
        sent, received, cost = self.usage[:3]
        cache = f" {self.usage[3]}" if len(self.usage) > 3 and self.usage[3] else ""  # (cached · uncached)
        text = f"{sent:,} tokens sent{cache} · {received:,} received" + (f" · ${cost:,.4f}" if cost else "")
        return Content.assemble((text, "$foreground-muted"))

    def set_usage(self, usage: tuple[int, int, float | None] | tuple[int, int, float | None, str] | None) -> None:
        """What this reply's turn cost (shown with the chat's tokens-per-message view, Ctrl+T)."""
        self.usage = usage
        self._state(usage is not None, "-has-usage")
        for line in self.query(".message-usage").results(Static):
            line.update(self._usage_line())

    def _state(self, on: bool, name: str) -> None:
        """Set a state class of the message (``-streaming``, ``-noted``, ``-has-usage`` …), restyling the
        message and its own lines but not its body: no style of a body's blocks depends on these, and
        restyling every block of a long reply (a table is a widget a cell) cost as much as drawing it."""
        if on == self.has_class(name):
            return
        self.set_class(on, name, update=False)
        if self.is_attached:
            parts = [child for child in self.children if not child.has_class("message-body")]
            self.app.stylesheet.update_nodes([self, *parts], animate=True)

    def _effort_label(self, effort_id: str) -> str:
        """The effort's human name with its id, when the chat log knows it (``ChatLog.effort_names``)."""
        names: dict[str, str] = {}
        for node in self.ancestors:
            names = getattr(node, "effort_names", names)
        name = names.get(effort_id)
        if not name or name == effort_id:
            return effort_id
        short = name if len(name) <= 40 else name[:39].rstrip() + "…"
        return f"{short} ({effort_id})"

    def _refresh_header(self) -> None:
        headers = self.query(".message-header").results(Static)
        for header in headers:  # none before compose: compose draws the header as it is then
            header.update(self._header())

    @property
    def body(self) -> Markdown:
        from textual.widgets import Markdown

        return self.query_one(".message-body", Markdown)

    # -------------------------------------------------------------- streaming
    async def append(self, piece: str) -> None:
        """Add streamed text: the first piece is drawn at once, the next ones at most every
        :data:`WRITE_EVERY` seconds, together (each write lays the chat out again: written as they
        come, they kept the app too busy to echo a key)."""
        piece = terminal_safe(piece)
        if not piece:
            return
        if self._stream is None:
            self._state(False, "-waiting")
            self._stream = self.body.get_stream(self.body)
        self.text += piece
        self._unwritten.append(piece)
        wait = self._written_at + WRITE_EVERY - time.monotonic()
        if wait <= 0:
            await self._write()
        elif self._write_timer is None:
            self._write_timer = self.set_timer(wait, self._write)

    async def _write(self) -> None:
        """What streamed since the last write, to the Markdown stream (it parses and mounts in its task)."""
        if self._write_timer is not None:
            self._write_timer.stop()
            self._write_timer = None
        if self._unwritten and self._stream is not None:
            text = "".join(self._unwritten)
            self._unwritten.clear()
            self._written_at = time.monotonic()
            await self._stream.write(text)

    async def _stop_stream(self, *, flush: bool = True) -> None:
        if flush:
            await self._write()
        else:
            self._unwritten.clear()
        if self._write_timer is not None:
            self._write_timer.stop()
            self._write_timer = None
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    async def replace_text(self, text: str) -> None:
        """Drop what streamed and show ``text`` instead (a retried round, a final reply)."""
        await self._stop_stream(flush=False)
        self.text = text = terminal_safe(text)
        if self.role in PLAIN_ROLES:
            self.shown = None
            for body in self.query(".message-body"):
                await body.remove()
            await self.mount(Static(text, classes="message-body -plain", markup=False))
        else:
            await self.body.update(text)

    async def finish(self, text: str | None = None, *, logged_to: str | None = None, note: str = "") -> None:
        """The message is complete: the authoritative text, drawn again only where it is not what streamed
        (a reply drawn again whole costs as much as all its stream did)."""
        final = self.text if text is None else terminal_safe(text)
        if self._stream is not None and final == self.text:
            await self._stop_stream()  # (what the stream still held is drawn)
        else:
            await self.replace_text(final)
        self._state(False, "-streaming")
        if logged_to is not None:
            self.logged_to = logged_to
        self.note = note
        self._state(bool(note), "-noted")
        self._refresh_header()

    def set_note(self, note: str) -> None:
        """A word beside the role (``queued``, ``interrupted`` …); empty removes it."""
        self.note = note
        self._state(bool(note), "-noted")
        self._refresh_header()

    def add_tool(self, name: str, ok: bool) -> None:
        """Show a tool call of this turn on the message's tool line."""
        self.tools.append((name, ok))
        line = "  ".join(f"⚙ {n} {'✓' if good else '✗'}" for n, good in self.tools)
        tools = self.query_one(".message-tools", Static)
        tools.update(line)
        self._state(True, "-has-tools")

    @property
    def streaming(self) -> bool:
        return self.has_class("-streaming")
