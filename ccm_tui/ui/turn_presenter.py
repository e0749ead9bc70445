"""Drawing the user's turns: each sent message, its streamed reply, and how it ended.

The chat screen owns one :class:`TurnPresenter`. A sent message is a
:class:`~ccm_tui.ui.widgets.turn_view.TurnView` in the chat log at once (queued
ones too); the session controller runs them in order, so the events of the
running turn belong to the first view still waiting for its outcome, and each
outcome ends the first one. Whatever happens, the user's text is never lost: a
turn cancelled before anything came back, or failed, puts it back in the input.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from ..core.api import Asking, Banner, ExchangeWithdrawn, Outcome, TurnEvent, TurnStarted, Waiting, cache_words
from .widgets.chat_log import ChatLog
from .widgets.turn_view import TurnView

# (the message, as typed, its folded pastes) -> back in the input (False: something else was typed there)
GiveBack = Callable[[str, str | None, dict[int, str]], bool]


class TurnPresenter:
    def __init__(self, chat_log: ChatLog, give_back: GiveBack, notify: Callable[..., None]) -> None:
        self.chat_log = chat_log
        self.give_back = give_back
        self.notify = notify
        self.pending: deque[TurnView] = deque()  # sent and not ended yet; the first one runs
        self._mounting: dict[int, asyncio.Task[object]] = {}
        self.failed: TurnView | None = None  # a failed turn nothing of which was kept (its message given back)

    @property
    def current(self) -> TurnView | None:
        return self.pending[0] if self.pending else None

    def begin(
        self, text: str, *, queued: bool = False, typed: str | None = None, pastes: dict[int, str] | None = None
    ) -> None:
        """A sent message, on screen at once (mounted in the background: its events wait for it)."""
        failed, self.failed = self.failed, None
        if failed is not None and failed.text == text:  # sent again: the discarded attempt leaves the chat
            failed.remove()  # (nothing of it was logged: a relaunch would not show it either)
        view = TurnView(text, typed=typed, pastes=pastes)
        if queued:
            view.queued()
        self.pending.append(view)
        self._mounting[id(view)] = asyncio.ensure_future(self._add(view))

    async def _add(self, view: TurnView) -> TurnView:
        await self.chat_log.add(view)
        self.chat_log.scroll_end(animate=False)
        return view

    async def _mounted(self, view: TurnView) -> TurnView:
        task = self._mounting.pop(id(view), None)
        if task is not None:
            await task
        return view

    async def apply(self, event: TurnEvent) -> str | None:
        """Draw an event of the running work; returns the status line's new label, if it changes."""
        if isinstance(event, Outcome):
            await self.end(event)
            return None
        if isinstance(event, Waiting):  # the session's lock, the model client loading, a retry …
            return event.reason[:1].upper() + event.reason[1:]
        if isinstance(event, Asking):  # the wait is over: the status follows the turn again
            return "Thinking" if event.attempt <= 1 else f"Thinking (attempt {event.attempt})"
        if isinstance(event, ExchangeWithdrawn):  # regenerated or edited: off the pane
            await self.chat_log.withdraw(event.user, event.reply)
            return None
        if isinstance(event, TurnStarted) and self.current is None:  # a turn the app started (regenerate)
            self.begin(event.user)
        current = self.current
        if current is not None and not current.begun and not isinstance(event, TurnStarted):
            current = None  # a message queued behind an effort action: the action's events are not its
        if current is None:
            if isinstance(event, Banner):  # an effort action's notice (no turn on screen)
                await self.chat_log.add_banner(event.text, event.kind)
            return None
        label = await (await self._mounted(current)).apply(event)
        return "Thinking" if isinstance(event, TurnStarted) else label

    async def end(self, outcome: Outcome) -> None:
        if outcome.work == "edit" and outcome.ok:
            self.give_back(outcome.text, None, {})  # the message, in the input to change and send
            return
        if outcome.work != "turn":
            if outcome.failed and outcome.cause != "budget":  # (too large to expand: the screen offers a passage)
                self.notify(outcome.reason or "the action failed", title="Not done", severity="error")
            return
        if not self.pending:
            return
        view = await self._mounted(self.pending.popleft())
        if outcome.ok:
            spent = outcome.turn_usage
            usage = (
                (
                    int(spent.get("prompt_tokens", 0)),
                    int(spent.get("completion_tokens", 0)),
                    outcome.turn_cost,
                    cache_words(spent),
                )
                if spent
                else None
            )
            await view.finish(outcome.reply, outcome.logged_to, usage, cut=outcome.cut)
        elif outcome.cancelled and outcome.given_back:
            await view.withdraw()  # nothing came back: as if it was never sent
            if self.give_back(view.text, view.typed, view.pastes):
                await view.remove()  # back in the input: it leaves the chat
            else:
                view.user.set_note("(withdrawn: ↑ in the empty input brings it back)")
        elif outcome.cancelled:
            await view.interrupted(outcome.partial)
        else:
            await view.fail(outcome.partial, kept=not outcome.given_back)
            back = self.give_back(view.text, view.typed, view.pastes)
            discarded = (
                f"; the {len(outcome.partial):,} characters that came were discarded (not logged, not sent to the model)"
                if outcome.given_back and outcome.partial
                else ""
            )
            self.failed = view if outcome.given_back and back else None  # (sent again, it leaves the chat)
            await self.chat_log.add_banner(
                f"The reply failed: {outcome.reason}{discarded} — your message is back in the input.", "error"
            )
            self.notify(outcome.reason, title="The reply failed", severity="error", timeout=10)
