"""Running the user's turns: send (or hold until the session is open), show, cancel, fail, give back.

The chat screen owns one :class:`TurnRunner`. A turn is a
:class:`~ccm_tui.ui.widgets.turn_view.TurnView` in the chat log, fed by the
session host's turn events; whatever happens, the user's text is never lost:
a turn cancelled before anything came back, or failed, puts it back in the input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import turn_events as te
from .widgets.turn_status import TurnStatus
from .widgets.turn_view import TurnView

if TYPE_CHECKING:
    from .screens.chat import ChatScreen


class TurnRunner:
    def __init__(self, screen: ChatScreen) -> None:
        self.screen = screen
        self.turn: TurnView | None = None
        self.pending: str | None = None  # sent as soon as the session is open
        self.cancel_requested = False  # Escape between Enter and the start of the turn's worker

    @property
    def status(self) -> TurnStatus:
        return self.screen.query_one(TurnStatus)

    def send(self, text: str) -> None:
        screen, host = self.screen, self.screen.host
        if host.engine is None and host.last_error is None:
            self.pending = text
            if host.waiting:
                host.retry_now()
            else:
                self.status.start("Opening the session — your message is sent next", cancellable=False)
            return
        if not screen.ready("send another message"):
            return
        assert host.engine is not None
        if not host.engine.has_model:
            screen.notify("No model is configured: open Settings (F4) or start with --model.", severity="warning")
            screen.app.show_welcome()  # type: ignore[attr-defined]
            return
        if screen.prompt.text.strip() == text.strip():
            screen.prompt.clear()
        if screen.demo:
            screen.driver.sent(text)
        screen.busy = True
        screen.call_next(self._begin, text)

    def send_pending(self) -> None:
        """The session is open: send what the user typed while it was opening."""
        if self.pending:
            text, self.pending = self.pending, None
            self.status.stop()
            self.send(text)

    async def _begin(self, text: str) -> None:
        if self.cancel_requested:
            self.cancel_requested = False
            self.screen.busy = False
            self.give_back(text)
            return
        self.turn = TurnView(text)
        await self.screen.chat_log.add(self.turn)
        self.screen.chat_log.scroll_end(animate=False)
        self.status.start("Thinking")
        self.screen.host.run_turn(text)

    def give_back(self, text: str) -> None:
        """A message that got no answer: back in the input (and in the demo's script)."""
        if not self.screen.prompt.text.strip():
            self.screen.prompt.set_text(text)
        if self.screen.demo:
            self.screen.driver.unsent(text)

    async def apply(self, event: te.TurnEvent) -> None:
        """An event of the running turn (figures and effort changes are the screen's)."""
        if isinstance(event, te.Waiting):  # the session's lock, the model client loading …
            self.status.set_label(event.reason[:1].upper() + event.reason[1:])
        elif isinstance(event, te.TurnFailed):
            await self.fail(event.message, event.partial)
        elif isinstance(event, te.TurnCancelled) and self.turn is not None and not event.partial.strip():
            await self._withdraw()  # Escape before anything came back: as if it was never sent
        elif self.turn is not None:
            if isinstance(event, te.TurnDone) and (effort := self.screen.host.effort(event.logged_to)):
                self.screen.chat_log.effort_names[effort.id] = effort.title  # opened this turn: named in its label
            label = await self.turn.apply(event)
            if isinstance(event, te.TurnStarted):
                label = "Thinking"  # a wait for the session's lock (if any) is over
            if label:
                self.status.set_label(label)
        elif isinstance(event, te.Banner):  # an effort action's notice (no turn on screen)
            await self.screen.chat_log.add_banner(event.text, event.kind)

    async def _withdraw(self) -> None:
        turn, self.turn = self.turn, None
        if turn is not None:
            await turn.withdraw()
            self.give_back(turn.text)

    async def fail(self, error: str, partial: str = "") -> None:
        turn, self.turn = self.turn, None
        if turn is not None:
            await turn.fail(partial)
            self.give_back(turn.text)
        await self.screen.chat_log.add_banner(
            f"The reply failed: {error} — your message is back in the input.", "error"
        )
        self.screen.notify(error, title="The reply failed", severity="error", timeout=10)

    async def ended(self, error: str | None) -> None:
        """The worker of a turn or an action finished."""
        if error and self.turn is not None:
            await self.fail(error)
        turn, self.turn = self.turn, None
        if turn is not None and not turn.started:  # cancelled before the core began it: nothing was sent
            await turn.withdraw()
            self.give_back(turn.text)
        elif turn is not None:
            await turn.end()
        self.status.stop()

    def cancel(self) -> None:
        if self.screen.busy:
            if self.turn is None and self.screen.host.running is None:
                self.cancel_requested = True  # Enter was pressed but the turn has not begun yet
            self.screen.host.cancel()
            self.status.set_label("Cancelling")
