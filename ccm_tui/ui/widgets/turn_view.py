"""One exchange as it is answered: the user's message, the turn's banners and tool calls, the streamed reply.

The chat screen mounts a :class:`TurnView` in the chat log when the user sends
and hands it every event of the turn (:meth:`TurnView.apply`); the view draws
them and says what the status line should read. The turn's outcome ends it
(:meth:`finish`, :meth:`interrupted`, :meth:`fail`, :meth:`withdraw`); the view
then stays in the log as that exchange.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from ...core.api import (
    Banner,
    Paused,
    Resumed,
    RoundReset,
    TextDelta,
    ToolCalled,
    TurnEvent,
    sent_now,
    with_interrupted_end,
)
from ..pastes import segments
from .banner import BannerLine, PauseBanner
from .chat_message import ChatMessage


class TurnView(Vertical):
    def __init__(self, text: str, *, typed: str | None = None, pastes: dict[int, str] | None = None) -> None:
        super().__init__(classes="turn")
        self.text = text
        self.typed = text if typed is None else typed  # as the input showed it: given back so
        self.pastes = dict(pastes or {})
        self.logged_line = sent_now(text)  # scrolling back past this turn starts before it
        self.gap = False  # tool calls happened: the next streamed text starts a new paragraph
        self.round_start = 0  # where this round's text starts in the reply (a cut-off round is dropped)
        self.pause: PauseBanner | None = None
        self.begun = False  # its turn started (a queued message waits for the work before it)
        self.user = ChatMessage("user", text, shown=segments(self.typed, self.pastes) if self.pastes else None)
        self.assistant = ChatMessage("assistant", streaming=True)
        self.assistant.add_class("-waiting")

    def compose(self) -> ComposeResult:
        yield self.user
        yield self.assistant

    async def add_banner(self, text: str, kind: str = "effort") -> BannerLine:
        """A notice of this turn, shown above the reply."""
        banner = BannerLine(text, kind)
        await self.mount(banner, before=self.assistant)
        return banner

    def queued(self) -> None:
        """Sent while the session was busy or not open yet: it goes when the session is free."""
        self.user.add_class("-queued")
        self.user.set_note("(queued: sent when the session is free)")

    def _started(self) -> None:
        if self.user.has_class("-queued"):
            self.user.remove_class("-queued")
            self.user.set_note("")

    async def apply(self, event: TurnEvent) -> str | None:
        """Draw one event of the turn; returns the status line's new label, if it changes."""
        self.begun = True
        self._started()
        if isinstance(event, TextDelta):
            await self._append(event.text)
            return "Writing"
        elif isinstance(event, ToolCalled):
            self.assistant.add_tool(event.name, event.ok)
            self.gap = True
            self.round_start = len(self.assistant.text)
            return "Thinking"
        elif isinstance(event, RoundReset):
            await self.assistant.replace_text(self.assistant.text[: self.round_start])
        elif isinstance(event, Banner):
            await self.add_banner(event.text, event.kind)
        elif isinstance(event, Paused):
            self._resolve_pause("retrying")
            self.pause = PauseBanner(event.reason, event.resume_at, event.attempt)
            await self.mount(self.pause, before=self.assistant)
            return "Paused by the provider"
        elif isinstance(event, Resumed) and self.pause is not None:
            self._resolve_pause("resumed")
            return "Thinking"
        return None

    async def finish(
        self,
        reply: str,
        logged_to: str | None,
        usage: tuple[int, int, float | None] | tuple[int, int, float | None, str] | None = None,
        *,
        cut: bool = False,
    ) -> None:
        """The turn is done: the whole reply, where it was logged, what it cost, and whether it stopped at
        its length cap (``cut``)."""
        note = "(cut at reply_max_tokens)" if cut else ""
        await self.assistant.finish(reply or self.assistant.text or "*(no reply)*", logged_to=logged_to, note=note)
        self.assistant.set_usage(usage)

    async def interrupted(self, partial: str) -> None:
        """Cancelled after something came back: what came is kept, marked in its header and at its end
        (as the history and the model's next requests show it)."""
        await self.assistant.finish(with_interrupted_end(self.assistant.text or partial), note="(interrupted)")
        self._resolve_pause("cancelled")

    async def _append(self, piece: str) -> None:
        if self.gap and self.assistant.text.strip():
            piece = "\n\n" + piece.lstrip()
        self.gap = False
        self._resolve_pause("resumed")
        await self.assistant.append(piece)

    def _resolve_pause(self, how: str) -> None:
        if self.pause is not None:
            self.pause.resolve(how)
            self.pause = None

    async def fail(self, partial: str = "", *, kept: bool = False) -> None:
        """The reply failed: show what came back (a cut-off stream included), marked kept (logged) or
        discarded (not logged, never sent to the model: the message went back to the input); else drop
        the empty reply."""
        if partial.strip() and len(partial) >= len(self.assistant.text):
            await self.assistant.finish(
                partial, note="(cut off: kept as it arrived)" if kept else "(cut off: discarded)"
            )
        elif self.assistant.text.strip():
            await self.assistant.finish(note="(failed)")
        else:
            await self.assistant.remove()
        self._resolve_pause("gave up")
        self.user.add_class("-unanswered")

    async def withdraw(self) -> None:
        """Nothing came back (cancelled before the first token): no reply is shown, the message is marked."""
        if self.assistant.is_attached:
            await self.assistant.remove()
        self._resolve_pause("cancelled")
        self._started()
        self.user.add_class("-unanswered")
