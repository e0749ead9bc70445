"""The TUI's link to its session controller: a worker adapter and nothing more.

A non-visual widget on the chat screen. It owns the
:class:`~ccm_tui.core.service.controller.SessionController`, opens the session in a
worker after the first paint, watches the session directory for other
processes' writes, and turns every controller event into a Textual message
(:mod:`.messages`) that bubbles up to the screen, which draws. Intents go the
other way: :meth:`send`, :meth:`act`, :meth:`cancel`. It holds no run state of
its own: the controller's state and snapshot are the truth.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.widget import Widget

from ..config import Settings
from ..core.api import (
    Action,
    ControllerEvent,
    EffortAction,
    Outcome,
    RetryOrphan,
    RunState,
    SendMessage,
    SessionSnapshot,
    TextDelta,
    Withdraw,
    Work,
)
from . import messages as msg

if TYPE_CHECKING:
    from ..core.api import ChatModel, SessionController

CONTROLLER = "ccm_tui.core.service.controller"  # the whole core: loaded after the first paint
TIDY_AFTER = 1.0  # seconds after a piece of work ends: its garbage collected, what lives frozen (_tidy_heap)
FULL_EVERY = 100  # young collections between two full ones while the app runs (Python's default: 10)


class SessionLink(Widget):
    # How long the first open waits for another process's lock, the retries after it, how long a turn
    # waits (saying so): None takes the core's OpenOptions default (5 s; 1, 2, 4, 8, then every 15 s; 30 s).
    lock_wait: float | None = None
    retry_delays: tuple[float, ...] | None = None
    turn_lock_wait: float | None = None

    def __init__(
        self,
        settings: Settings,
        session_dir: Path,
        *,
        llm: ChatModel | None = None,
        watch: bool = True,
        warm_up: bool = True,
    ) -> None:
        super().__init__()
        self.watch_files = watch
        self.warm = warm_up
        self.watching = False
        self._stop_watch: asyncio.Event | None = None
        self._warmed_model: str | None = None  # the model the warm-up last checked
        self._wanted: Settings | None = None  # settings asked for while the reopen runs
        self._settings, self._session_dir, self._llm = settings, Path(session_dir), llm
        self._controller: SessionController | None = None
        self._batch_lock = threading.Lock()
        self._batch: msg.StreamedText | None = None  # the streamed text not read by the screen yet
        self._frozen_for: int | None = None  # the turn whose first streamed piece froze the heap (see _post)
        self._thresholds: tuple[int, int, int] | None = None  # the collector's, before on_mount set ours

    @property
    def controller(self) -> SessionController:
        """The session's controller, made on first use: the open after the first paint (which loads the
        core in a thread), or an intent sent before it (which then waits for that load)."""
        if self._controller is None:
            from ..core.api import OpenOptions, SessionController

            waits: dict[str, Any] = {
                "lock_wait": self.lock_wait,
                "retry_delays": self.retry_delays,
                "turn_lock_wait": self.turn_lock_wait,
            }
            options = OpenOptions(**{name: value for name, value in waits.items() if value is not None})
            self._controller = SessionController(self._session_dir, self._settings, llm=self._llm, options=options)
            self._controller.subscribe(self._post)
        return self._controller

    def _post(self, event: ControllerEvent) -> None:
        """Every controller event, as a message (called on the session thread: post_message is thread-safe).

        Streamed text is batched: a piece joins the :class:`~.messages.StreamedText` still waiting in
        the queue, so the screen handles one message per time it is free, not one per piece (a reply
        of thousands of pieces cost as many trips through the DOM). Any other event closes the batch:
        what follows it comes after it.

        The first piece of a turn also freezes the heap (``gc.freeze``): what lives then (the core,
        litellm's ~400,000 objects, the chat so far) is left out of every later garbage collection.
        Without it, each full collection during a stream walked all of them and held the event loop
        0.3–1.4 s, several times a reply: the frozen frames and the late key echoes of issue 38. The
        garbage of a turn is collected once it has ended (:meth:`_tidy_heap`), and the app's close
        unfreezes all (:meth:`on_unmount`): what was frozen is not kept for ever."""
        if isinstance(event, TextDelta):
            if event.turn != self._frozen_for:
                self._frozen_for = event.turn
                gc.freeze()
            with self._batch_lock:
                batch = self._batch
                if batch is not None and batch.add(event):
                    return
                self._batch = batch = msg.StreamedText(event, self._batch_lock)
            self.post_message(batch)
            return
        with self._batch_lock:
            self._batch = None
        self.post_message(msg.for_controller_event(event))

    # ------------------------------------------------------------ what the screen reads
    @property
    def settings(self) -> Settings:
        if self._wanted is not None:
            return self._wanted
        return self._controller.settings if self._controller is not None else self._settings

    @property
    def session_dir(self) -> Path:
        return self._controller.session_dir if self._controller is not None else self._session_dir

    @property
    def state(self) -> RunState:
        return self._controller.state if self._controller is not None else RunState()

    @property
    def snapshot(self) -> SessionSnapshot | None:
        return self._controller.snapshot if self._controller is not None else None

    def not_ready(self, what: str) -> str | None:
        """Why ``what`` cannot be done now (the session is not open, or it is busy), or None."""
        state = self.state
        if not state.is_open:
            return state.error or "The session is still opening…"
        if state.busy:
            return f"Wait for the current reply to finish before you {what} (Esc cancels it)."
        return None

    # ------------------------------------------------------------ opening and closing
    def open(self) -> None:
        self._open()

    @work(exclusive=True, group="session", exit_on_error=False, description="open the session")
    async def _open(self) -> None:
        if self._controller is None:  # the core's modules, read off the event loop
            await asyncio.to_thread(importlib.import_module, CONTROLLER)
        try:
            await self.controller.open()
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback
            self.post_message(msg.OpenFailed(" ".join(str(exc).split()) or type(exc).__name__))
            return
        if self.watch_files and not self.watching:
            self._watch()
        if self.warm:
            self.controller.preload_model()  # litellm in a thread after the first paint; a turn waits visibly
            model = self.settings.model
            if model and model != self._warmed_model:
                self._warmed_model = model  # a new model: its budget and its key are checked again
                await self.controller.check_model()

    async def reopen(self, settings: Settings, session_dir: Path | None = None, llm: ChatModel | None = None) -> None:
        """Open again with other settings (a new model), or another session (the demo)."""
        if session_dir is not None and Path(session_dir) != self.session_dir:
            await self.close()
            self._settings, self._session_dir, self._llm = settings, Path(session_dir), llm
            self._controller = None
            self._warmed_model = None
            self.open()
            return
        self._wanted = settings  # shown at once (the header); the controller takes it on its thread
        self._reopen(settings)

    @work(exclusive=True, group="session", exit_on_error=False, description="reopen the session")
    async def _reopen(self, settings: Settings) -> None:
        try:
            await self.controller.reopen(settings)
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback
            self.post_message(msg.OpenFailed(" ".join(str(exc).split()) or type(exc).__name__))
            return
        finally:
            if self._wanted is settings:
                self._wanted = None
        if self.warm and settings.model and settings.model != self._warmed_model:
            self._warmed_model = settings.model
            await self.controller.check_model()

    async def on_unmount(self) -> None:
        """However the app ends (quit, an exit from elsewhere, a test's end), the session is closed:
        its partial reply written, its lock, files and thread let go. Its open or reopen still running is
        cancelled first: it would start the session's thread again after the close."""
        self.workers.cancel_node(self)
        await self.close()
        gc.unfreeze()  # what the turns froze (see _post) is the collector's again
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)

    # ------------------------------------------------------------ the heap
    def on_mount(self) -> None:
        """Full collections ten times rarer while the app runs (the young ones as usual): a stream
        allocates fast, and the full ones, however small the heap left to them, came several times a
        reply; a turn's garbage is collected when it ends (:meth:`_tidy_heap`)."""
        self._thresholds = young, middle, full = gc.get_threshold()
        gc.set_threshold(young, middle, max(full, FULL_EVERY))

    @on(msg.TurnMessage)
    def _work_ended(self, message: msg.TurnMessage) -> None:
        """A piece of work ended (a turn, an action): its garbage is collected a moment later (the
        message goes on to the screen, which draws it)."""
        if not isinstance(message, msg.StreamedText) and isinstance(message.event, Outcome):
            self.set_timer(TIDY_AFTER, self._tidy_heap)

    def _tidy_heap(self) -> None:
        """Collect what the last turn left (only what is not frozen: the turn's own objects, a few
        tens of milliseconds) and freeze what lives: the next reply streams over a collector with
        nothing to walk."""
        gc.collect()
        gc.freeze()

    async def close(self) -> None:
        """Cancel running work (it writes its partial reply first) and close the session."""
        if self._stop_watch is not None:
            self._stop_watch.set()
            self._stop_watch = None
        if self._controller is not None:
            await self._controller.close()

    def close_now(self, timeout: float) -> None:
        """:meth:`close` from a thread with no event loop, waiting at most ``timeout`` seconds: after a
        hang-up whose UI loop no longer answers (see ``CcmApp._quit_on_hangup``)."""
        if self._controller is not None:
            self._controller.close_blocking(timeout)

    # ------------------------------------------------------------ intents
    def send(self, text: str) -> None:
        self.controller.submit(SendMessage(text))

    def retry_orphan(self) -> None:
        """Send again the message a crashed run left unanswered (the controller checks it still is)."""
        self.controller.submit(RetryOrphan())

    def withdraw(self, why: str) -> None:
        """Withdraw the last exchange: ``regenerate`` (asked again) or ``edit`` (back in the input)."""
        self.controller.submit(Withdraw(Work(why)))

    def act(self, action: Action, target: str = "") -> None:
        self.controller.submit(EffortAction(action, target))

    def cancel(self) -> None:
        if self._controller is not None:  # (nothing runs before the controller exists)
            self._controller.cancel()

    def retry_now(self) -> None:
        if self._controller is not None:
            self._controller.retry_now()

    # ------------------------------------------------------------ other processes
    @work(exclusive=True, group="watch", exit_on_error=False, description="watch the session directory")
    async def _watch(self) -> None:
        from watchfiles import awatch

        self._stop_watch = stop = asyncio.Event()
        self.watching = True
        try:
            async for _changes in awatch(
                self.session_dir,
                watch_filter=lambda _change, path: path.endswith("events.jsonl"),
                debounce=100,
                step=50,
                recursive=False,
                stop_event=stop,
            ):
                self.controller.changed_on_disk()  # re-read once no work runs; our own writes change nothing
        finally:
            self.watching = False
