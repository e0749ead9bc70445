"""The session host: owns the :class:`~ccm_tui.core.engine.Engine` and every worker that touches it.

A non-visual widget on the chat screen. It opens the session in a thread after
the first paint, warms litellm up in another, watches the session directory,
and runs turns and effort actions in async workers on the UI's event loop.
Everything it learns is posted as a message (:mod:`.messages`) that bubbles up
to the screen, which only draws.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import work
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from ..config import Settings
from ..core import turn_events as te
from ..core.chat_model import ChatModel
from ..core.engine import Engine
from ..core.search import SearchHit
from ..core.views import EffortView, SessionStatus
from . import messages as msg

ENGINE_GROUPS = ("turn", "action")


def still_locked(pid: int | None) -> str:
    """What the TUI says when another process kept the session through the whole wait."""
    who = f"pid {pid}" if pid else "another process"
    return (
        f"the session is still in use by {who} (another ccm-tui or a ccm-tui send on this session); "
        "send again once it is done"
    )


class SessionHost(Widget):
    """``engine`` is None until :class:`~.messages.EngineReady` (or after a failure)."""

    lock_wait = 5.0  # seconds one open attempt waits for another process's lock
    retry_delays = (1.0, 2.0, 4.0, 8.0, 15.0)  # then every 15 s while the session stays locked

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
        self.settings = settings
        self.session_dir = Path(session_dir)
        self.llm = llm
        self.watch_files = watch
        self.warm = warm_up
        self.engine: Engine | None = None
        self.last_error: str | None = None
        self.running: str | None = None  # "turn" or "action" while one runs
        self.watching = False
        self._opened_once = False
        self._warmed_model: str | None = None  # the model the warm-up last checked
        self._disk_pending = False
        self._stop_watch: asyncio.Event | None = None
        self._lock_attempts = 0
        self._retry: Timer | None = None

    # ------------------------------------------------------------ lifecycle
    @property
    def waiting(self) -> bool:
        """The session is locked by another process and an open is scheduled."""
        return self._retry is not None

    def open(self) -> None:
        self.last_error = None
        if self._retry is not None:
            self._retry.stop()
            self._retry = None
        self._open(with_history=not self._opened_once)

    def retry_now(self) -> None:
        """Try the locked session again at once (the user is waiting to send)."""
        if self._retry is not None:
            self.open()

    def reopen(
        self, settings: Settings, session_dir: Path | None = None, llm: ChatModel | None = None, *, fresh: bool = False
    ) -> None:
        """Close and open again with other settings (a new model) or another session (the demo)."""
        self.close()
        self.settings = settings
        if session_dir is not None:
            self.session_dir = Path(session_dir)
            self.llm = llm
        if fresh:
            self._opened_once = False
        self.open()

    @work(thread=True, exclusive=True, group="session", exit_on_error=False, description="open the session")
    def _open(self, with_history: bool) -> None:
        from ..core.engine import SessionLocked, start_engine

        engine = None
        try:
            engine = start_engine(
                self.session_dir,
                self.settings,
                hold_lock=False,
                llm=self.llm,
                probe_model_window=False,
                lock_wait=self.lock_wait,
            )
            report = engine.recovery
            figures = engine.figures()  # loads the tokenizer here, off the event loop
            history = engine.recent_lines() if with_history else []
        except SessionLocked as exc:
            if engine is not None:
                engine.close(clean=False)
            delay = self.retry_delays[min(self._lock_attempts, len(self.retry_delays) - 1)]
            self._lock_attempts += 1
            self.post_message(msg.SessionWaiting(exc.pid, delay, self._lock_attempts))
            return
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback
            if engine is not None:
                engine.close(clean=False)
            self.post_message(msg.EngineFailed(str(exc)))
            return
        assert report is not None
        self.post_message(msg.EngineReady(engine, report, history, figures, first=with_history))

    def on_session_waiting(self, message: msg.SessionWaiting) -> None:
        self._retry = self.set_timer(message.retry_in, self.open)

    def on_engine_ready(self, message: msg.EngineReady) -> None:
        self._lock_attempts = 0
        self.engine = message.engine
        self._opened_once = True
        if self.watch_files and not self.watching:
            self._watch()
        if self.warm:
            self.engine.preload_model()  # litellm in a thread after the first paint; a turn waits for it visibly
        model = self.settings.model
        if self.warm and model and self.llm is None and model != self._warmed_model:
            self._warmed_model = model  # a new model: its budget and its key are checked again
            self._warm_up()

    def on_engine_failed(self, message: msg.EngineFailed) -> None:
        self.last_error = message.error

    def close(self) -> None:
        if self._retry is not None:
            self._retry.stop()
            self._retry = None
        if self._stop_watch is not None:
            self._stop_watch.set()
            self._stop_watch = None
        if self.engine is not None:
            engine, self.engine = self.engine, None
            engine.close()

    def on_unmount(self) -> None:
        self.close()

    # ------------------------------------------------------------ background
    @work(
        thread=True, exclusive=True, group="warmup", exit_on_error=False, description="load litellm in the background"
    )
    def _warm_up(self) -> None:
        from ..core.engine import missing_api_keys, resolve_budget

        budget = None if self.settings.token_budget else resolve_budget(self.settings)
        warning = None
        missing = [] if self.settings.api_base else missing_api_keys(self.settings)
        if missing:
            warning = (
                f"No API key found for {self.settings.model}: set {', '.join(missing)} in the "
                "environment, or use --api-base for a local server (F4 opens the settings)."
            )
        self.post_message(msg.BackgroundNotice(budget=budget, warning=warning))

    def on_background_notice(self, message: msg.BackgroundNotice) -> None:
        if message.budget and self.engine is not None and self.running is None:
            self.engine.adopt_model_budget(message.budget)

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
                self.post_message(msg.SessionChangedOnDisk())
        finally:
            self.watching = False

    def on_session_changed_on_disk(self, message: msg.SessionChangedOnDisk) -> None:
        """Re-read the session if another process wrote (our own writes change nothing here)."""
        if self.running is not None or self.engine is None:
            self._disk_pending = True
            message.stop()
            return
        self._disk_pending = False
        if not self.engine.refresh():
            message.stop()

    # ----------------------------------------------------------------- work
    def run_turn(self, text: str) -> None:
        self.running = "turn"
        self._turn(text)

    def run_tool(self, tool: str, args: dict[str, str]) -> None:
        self.running = "action"
        self._action(tool, args)

    @work(exclusive=True, group="turn", exit_on_error=False, description="LLM turn")
    async def _turn(self, text: str) -> None:
        from ..core.engine import SessionLocked, StoreError, UserInputError

        engine = self._engine()
        try:
            await engine.run_turn(text, self._emit)  # it says so while it waits for the lock or litellm
        except SessionLocked as exc:
            self._emit(te.TurnFailed(turn=0, message=still_locked(exc.pid), retryable=False))
        except (UserInputError, StoreError) as exc:
            self._emit(te.TurnFailed(turn=0, message=str(exc), retryable=False))

    @work(exclusive=True, group="action", exit_on_error=False, description="effort action")
    async def _action(self, tool: str, args: dict[str, str]) -> None:
        from ..core.engine import SessionLocked

        engine = self._engine()
        try:  # an action that needs the model (conclude) says so while litellm loads
            outcome = await engine.run_action(tool, args, self._emit)
        except SessionLocked as exc:
            self.notify(still_locked(exc.pid), title="Not done", severity="warning", timeout=10)
            return
        if not outcome.ok:
            self.notify(str(outcome.result.get("error", "the action failed")), title="Not done", severity="error")

    def _engine(self) -> Engine:
        if self.engine is None:
            raise RuntimeError("the session is not open")
        return self.engine

    def _emit(self, event: te.TurnEvent) -> None:
        self.post_message(msg.for_event(event))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker outcomes are handled: failures are shown, finished work is reported."""
        worker = event.worker
        error = None
        if event.state == WorkerState.ERROR:
            error = f"{type(worker.error).__name__}: {worker.error}" if worker.error else "unknown error"
            self.notify(error, title=f"{worker.description} failed", severity="error", timeout=10)
        if worker.group in ENGINE_GROUPS and worker.is_finished:
            self.running = None
            self.post_message(msg.WorkEnded(worker.group, error))
            if self._disk_pending:
                self.post_message(msg.SessionChangedOnDisk())

    def cancel(self) -> None:
        for group in ENGINE_GROUPS:  # a conclusion waiting for its summary can be cancelled too
            self.workers.cancel_group(self, group)

    async def wait_idle(self) -> None:
        """Cancel running work and wait until it has written its partial exchange (quit)."""
        for worker in list(self.workers):
            if worker.group in ENGINE_GROUPS and not worker.is_finished:
                worker.cancel()
                try:
                    await worker.wait()
                except Exception:  # noqa: BLE001 - cancelled or failed: both are fine here
                    pass

    # --------------------------------------------------------------- queries
    def status(self) -> SessionStatus:
        return self.engine.status() if self.engine is not None else SessionStatus(turn=0)

    def effort(self, effort_id: str) -> EffortView | None:
        return self.engine.effort(effort_id) if self.engine is not None else None

    def search(self, query: str, limit: int) -> list[SearchHit]:
        if self.engine is None or not query.strip():
            return []
        try:
            return self.engine.search(query, limit=limit)
        except Exception as exc:  # noqa: BLE001 - a broken index must not break the palette
            self.log.warning(f"search failed: {exc}")
            return []

    def figures(self) -> te.ContextFigures | None:
        return self.engine.figures() if self.engine is not None else None
