"""The session controller: one UI-free object that owns a session's run state.

The TUI, ``ccm-tui send``, the slash commands and the MCP server all drive a
session through a :class:`SessionController`. It opens the session (waiting,
and saying so, while another process holds it), takes typed intents (send a
message, an action on an effort, cancel, retry the orphan), runs one piece of
work at a time on its session thread (queueing what comes meanwhile), answers
which actions are valid for an effort, and ends every piece of work with one
:class:`~ccm_tui.core.turn.events.Outcome` — emitted as the work's last event and returned
to whoever awaits it. Listeners see the turn events, the run state
(:class:`~.run_state.RunState`) and snapshots of the session
(:class:`~.run_state.SessionSnapshot`) as they change.

Every engine call runs on the controller's :class:`~.session_thread.SessionThread`:
disk writes and re-indexing never run on the caller's event loop, and the
engine is touched by one thread only. Callers read the published state and
snapshot (immutable) or await a query.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import replace
from functools import wraps
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from ...config import Settings
from ...errors import CcmError, Interruption
from ..efforts.proposals import Proposal
from ..efforts.states import Action
from ..engine.engine import ContextInspection, Engine
from ..engine.opening import OpenOptions, start_engine_when_free
from ..engine.recovery import RecoveryReport, no_orphan_reason
from ..models.client_setup import model_checks
from ..models.interface import ChatModel
from ..models.litellm_client import release_loop_clients
from ..session.lock import Presence
from ..storage.eventlog import now_iso
from ..turn.events import (
    CANCELLED,
    FAILED,
    Banner,
    Cause,
    EffortChanged,
    Outcome,
    Status,
    TurnEvent,
    TurnStarted,
    Waiting,
    Work,
)
from ..turn.recall import RecallSource
from ._slash_reads import answer
from ._thread import SessionThread
from .run_state import (
    Cancel,
    ControllerEvent,
    EffortAction,
    Intent,
    Notice,
    Phase,
    Remember,
    RetryOrphan,
    RunState,
    SendMessage,
    SessionOpened,
    SessionSnapshot,
    SlashCommand,
    SnapshotChanged,
    StateChanged,
    Suggestion,
    Withdraw,
    WrittenElsewhere,
    one_line,
    unrun_outcome,
)
from .slash_commands import forget_request, spec_of

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")
Listener = Callable[[ControllerEvent], None]


class SessionClosed(Interruption, RuntimeError):
    """A query or work was asked of a session that is not open (yet, or any more)."""


def on_session_thread(
    read: Callable[Concatenate[Engine, P], R],
) -> Callable[Concatenate[SessionController, P], Coroutine[Any, Any, R]]:
    """A controller query that runs the engine's ``read`` on the session thread (awaited; same
    arguments, same documentation; it raises :class:`SessionClosed` too, when the session is not open)."""

    @wraps(read)
    async def query(controller: SessionController, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await controller._query(lambda engine: read(engine, *args, **kwargs))

    return query


class SessionController:
    """One session's run state and work (see the module doc; ``options``: how it opens).

    Its parts, in this order: opening; work (intents, the queue, one piece at a time, cancel);
    what it tells (listeners, the run state and snapshots it publishes); questions (answered on the
    session thread without waiting for the work); the world outside (another process's writes, the
    model's window); closing. Nothing here raises for what can go wrong in a piece of work: that
    ends in an :class:`~..turn.events.Outcome`.
    """

    def __init__(
        self,
        session_dir: Path,
        settings: Settings,
        *,
        llm: ChatModel | None = None,
        options: OpenOptions = OpenOptions(),
    ) -> None:
        self.session_dir = Path(session_dir)
        self.settings = settings
        self.llm = llm
        self.options = options
        self._thread = SessionThread()
        self._guard = threading.Lock()
        self._listeners: list[Listener] = []
        self._state = RunState()
        self._snapshot: SessionSnapshot | None = None
        # --- touched on the session thread only
        self._engine: Engine | None = None
        self._queue: deque[tuple[Intent, concurrent.futures.Future[Outcome]]] = deque()
        self._task: asyncio.Task[None] | None = None  # the work now: runs _perform, ends it
        self._inner: asyncio.Future[Outcome] | None = None  # _perform itself: what a cancel stops
        self._retry_now: asyncio.Event | None = None
        self._opening: asyncio.Task[Any] | None = None
        self._opened_once = False
        self._disk_pending = False
        self._seen_ts = ""
        self._presence = Presence(self.session_dir)

    # ------------------------------------------------------------------ opening
    async def open(self) -> RecoveryReport:
        """Open the session (recovering it after an unclean end); the state then says IDLE, or
        CLOSED with the reason.

        Raises:
            SessionLocked: it stayed locked by another process and retrying is off.
            ManifestError: the manifest is broken in a way ``repair`` must mend.
            SessionTooNew: a newer ccm-tui wrote the session.
            StoreError: its files cannot be read or created.
        """
        return await asyncio.wrap_future(self._thread.submit(self._open()))

    async def reopen(self, settings: Settings | None = None, llm: ChatModel | None = None) -> RecoveryReport:
        """Close and open again with other settings (a new model) — the chat so far stays.

        Raises:
            What :meth:`open` raises.
        """
        await asyncio.wrap_future(self._thread.submit(self._shut()))
        if settings is not None:
            self.settings = settings
        if llm is not None:
            self.llm = llm
        return await self.open()

    async def _open(self) -> RecoveryReport:
        self._opening = asyncio.current_task()
        self._retry_now = asyncio.Event()
        self._set_state(phase=Phase.OPENING, error=None, holder=None, retry_in=None, attempt=0)
        try:
            engine = await self._start_engine()
        except Exception as exc:
            self._set_state(phase=Phase.CLOSED, error=one_line(exc), retry_in=None)
            self._drop_queue(FAILED, f"the session could not be opened: {one_line(exc)}")
            raise
        self._engine = engine
        self._presence.hold()  # open here (a rename elsewhere waits until it is closed)
        report = engine.recovery or RecoveryReport()
        first = not self._opened_once
        history = engine.recent_lines() if first else []
        self._opened_once = True
        self._seen_ts = history[-1].ts if history else self._seen_ts
        self._publish()
        self._tell(SessionOpened(report, tuple(history), first))
        self._set_state(phase=Phase.IDLE, holder=None, retry_in=None, attempt=0, detail="")
        self._pump()
        return report

    async def _start_engine(self) -> Engine:
        """Open through the engine's door, saying so while another process holds the lock."""

        def locked(pid: int | None, retry_in: float | None, attempt: int) -> None:
            state = self.state
            if retry_in is not None or state.phase is not Phase.LOCKED:
                self._set_state(phase=Phase.LOCKED, holder=pid, retry_in=retry_in, attempt=attempt)

        assert self._retry_now is not None
        return await start_engine_when_free(
            self.session_dir,
            self.settings,
            self.options,
            llm=self.llm,
            on_locked=locked,
            retry_now=self._retry_now,
        )

    # ------------------------------------------------------------------ work
    def submit(self, intent: Intent) -> concurrent.futures.Future[Outcome]:
        """Take an intent (from any thread) and return at once; the future gets its outcome.
        Work runs one piece at a time: what comes while the session opens or works is queued.
        Never raises: what goes wrong ends the work in a failed outcome."""
        future: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        if isinstance(intent, Cancel):
            self.cancel()
            future.set_result(Outcome(turn=0, work=Work.CANCEL, status=CANCELLED))
            return future
        self._thread.call_soon(self._enqueue, intent, future)
        return future

    async def run(self, intent: Intent) -> Outcome:
        """:meth:`submit` and wait for the outcome. If the caller is cancelled meanwhile, the work
        is cancelled too and waited for (its partial reply is written) before the cancel goes on.

        Raises:
            asyncio.CancelledError: the caller was cancelled (after the work was).
        """
        waiter = asyncio.wrap_future(self.submit(intent))
        try:
            return await asyncio.shield(waiter)
        except asyncio.CancelledError:
            self.cancel()
            await waiter
            raise

    def cancel(self) -> None:
        """Escape: stop the running work (it keeps what came so far); with none running, withdraw
        the queued messages (they come back as cancelled outcomes, ``given_back``)."""
        self._thread.call_soon(self._cancel)

    def retry_now(self) -> None:
        """The session is locked and the user is waiting to send: try to open it again at once."""
        self._thread.call_soon(self._wake_open)

    def _wake_open(self) -> None:
        if self._retry_now is not None:
            self._retry_now.set()

    def _enqueue(self, intent: Intent, future: concurrent.futures.Future[Outcome]) -> None:
        self._queue.append((intent, future))
        self._show_queue()
        if self.state.phase is Phase.LOCKED and self.state.work is None:
            self._wake_open()
        self._pump()

    def _show_queue(self) -> None:
        queued = tuple(i.text for i, _ in self._queue if isinstance(i, SendMessage))
        if queued != self.state.queued:
            self._set_state(queued=queued)

    def _pump(self) -> None:
        """Start the next queued work if the session is open and idle."""
        if self._engine is None or self._task is not None or not self._queue:
            return
        intent, future = self._queue.popleft()
        self._show_queue()
        self._inner = inner = asyncio.ensure_future(self._perform(intent))  # what a cancel stops
        self._task = asyncio.get_running_loop().create_task(self._work(intent, inner, future))

    async def _work(
        self, intent: Intent, inner: asyncio.Future[Outcome], future: concurrent.futures.Future[Outcome]
    ) -> None:
        """One piece of work to its outcome. A cancel stops ``inner`` only, so the outcome is always
        told and the future always set — even when the cancel came before the work began."""
        try:
            outcome = await inner
        except asyncio.CancelledError:
            outcome = unrun_outcome(intent, CANCELLED, "cancelled", given_back=True)
        except Exception as exc:  # noqa: BLE001 - a bug must end the work, not the session
            outcome = unrun_outcome(
                intent, FAILED, f"{type(exc).__name__}: {exc}", cause=Cause.INTERNAL, given_back=True
            )
        self._inner = None
        try:
            self._tell(outcome)
            if outcome.work == "turn" and outcome.ok:
                await self._assist()
            if self._engine is not None:  # the manifest catches up once the queue is empty
                self._engine.settle(busy=bool(self._queue))
            self._seen_ts = now_iso()
            self._publish()
        except Exception as exc:  # noqa: BLE001 - the outcome stands (it is stored): say what failed after it
            self._tell(Banner(outcome.turn, f"after the {outcome.work}: {one_line(exc)}", kind="info"))
        finally:  # whatever failed after it, the caller gets its outcome and the queue moves on
            self._task = None
            self._set_state(phase=Phase.IDLE, work=None, detail="", holder=None)
            if not future.done():
                future.set_result(outcome)
        if self._disk_pending:
            self._disk_changed()
        self._pump()

    async def _perform(self, intent: Intent) -> Outcome:
        engine = self._engine
        if engine is None:
            raise SessionClosed("the session is not open")
        if isinstance(intent, RetryOrphan):
            orphan = engine.unanswered_turn()
            if orphan is None:
                return unrun_outcome(intent, FAILED, no_orphan_reason(engine.recovery), cause=Cause.REFUSED)
            intent = SendMessage(orphan.text)
        if isinstance(intent, Withdraw):  # withdraw the last exchange; regenerate then asks again
            self._set_state(phase=Phase.ACTION, work=Work.ACTION, detail=f"{intent.why} the last exchange")
            taken = await engine.withdraw(intent.why, self._during("action"))
            if not taken.ok or intent.why != "regenerate":
                return taken
            intent = SendMessage(taken.text)
        if isinstance(intent, SendMessage):
            self._set_state(phase=Phase.TURN, work=Work.TURN, detail="")
            return await engine.run_turn(intent.text, self._during("turn"))
        if isinstance(intent, SlashCommand) and intent.name == "forget":  # rewrites the session's files
            request, yes = forget_request(intent.argument)
            self._set_state(phase=Phase.ACTION, work=Work.ACTION, detail="forget")
            outcome = await engine.forget(request, dry_run=not yes)
            if outcome.ok and not yes and (outcome.result or {}).get("occurrences"):
                outcome = replace(outcome, reply=f"{outcome.reply} Send the same /forget with --yes first to forget.")
            return replace(outcome, work=Work.COMMAND, text="/forget")  # (the command's text is not kept)
        if isinstance(intent, SlashCommand):  # an effort command (the others are answered at once)
            spec = spec_of(intent)
            action = spec.action
            assert action is not None
            target, value = spec.split(intent.argument)
            outcome = await self._perform(EffortAction(action, target, reuse=action is Action.OPEN, value=value))
            return replace(outcome, work=Work.COMMAND, text=intent.line)
        if isinstance(intent, Remember):
            self._set_state(phase=Phase.ACTION, work=Work.ACTION, detail="remember")
            return await engine.remember(intent.text, intent.effort_id, self._during("action"), agent=intent.agent)
        assert isinstance(intent, EffortAction)
        detail = f"{intent.action.value} {intent.target}".strip()
        self._set_state(phase=Phase.ACTION, work=Work.ACTION, detail=detail)
        return await engine.run_action(
            intent.action,
            intent.target,
            self._during("action"),
            topic=intent.topic,
            reuse=intent.reuse,
            value=intent.value,
        )

    async def _assist(self) -> None:
        """After a turn: the app's help for a model that does not manage efforts (folds, proposals)."""
        engine = self._engine
        if engine is None:
            return
        for proposal in await engine.assist(self._tell):
            taken = self.settings.auto_efforts
            self._tell(Suggestion(proposal, taken=taken))
            for action in actions_for(proposal) if taken else ():  # before anything the user queued
                during = self._during("action")
                self._tell(await engine.run_action(action.action, action.target, during, topic=action.topic))

    def accept(self, proposal: Proposal) -> None:
        """Carry out a proposal the user said yes to (Ctrl+Y)."""
        for action in actions_for(proposal):
            self.submit(action)

    def _during(self, work: str) -> Callable[[TurnEvent], None]:
        """The work's events: passed on, with the run state following lock waits, and a new
        snapshot whenever an effort changed (the sidebar moves with the turn)."""
        phase = Phase.TURN if work == "turn" else Phase.ACTION

        def emit(event: TurnEvent) -> None:
            state = self.state
            if isinstance(event, Waiting) and event.cause == "lock":
                self._set_state(phase=Phase.LOCKED, holder=event.holder, detail=event.reason)
            elif state.phase is Phase.LOCKED and not isinstance(event, Waiting):
                self._set_state(phase=phase, holder=None, detail="")
            elif isinstance(event, TurnStarted) and state.phase is not phase and state.phase is not Phase.CANCELLING:
                self._set_state(phase=phase)
            self._tell(event)
            if isinstance(event, EffortChanged):
                self._publish()

        return emit

    def _cancel(self) -> None:
        inner = self._inner
        if inner is not None and not inner.done():
            self._set_state(phase=Phase.CANCELLING)
            inner.cancel()
            return
        self._drop_queue(CANCELLED, "cancelled")

    def _drop_queue(self, status: Status, reason: str) -> None:
        """End every queued intent unrun (``given_back``: their messages return to the input)."""
        while self._queue:
            intent, future = self._queue.popleft()
            outcome = unrun_outcome(intent, status, reason, given_back=True)
            self._tell(outcome)
            if not future.done():
                future.set_result(outcome)
        self._show_queue()

    # ------------------------------------------------------------------ what it tells
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every event from now on (on the session thread); returns the
        function that stops it."""
        with self._guard:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._guard:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _tell(self, event: ControllerEvent) -> None:
        with self._guard:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(event)

    @property
    def state(self) -> RunState:
        """The run state as last published (immutable; read from any thread)."""
        with self._guard:
            return self._state

    @property
    def snapshot(self) -> SessionSnapshot | None:
        """The session as last published (None until it is open)."""
        with self._guard:
            return self._snapshot

    def _set_state(self, **changes: Any) -> None:
        with self._guard:
            self._state = replace(self._state, **changes)
            state = self._state
        self._tell(StateChanged(state))

    def _publish(self) -> None:
        """A new snapshot of the session (on the session thread, between or during work)."""
        engine = self._engine
        if engine is None:
            return
        snapshot = SessionSnapshot(
            status=engine.status(),
            figures=engine.figures(),
            history=tuple(engine.history()),
            budget=engine.budget,
            has_model=engine.has_model,
            tools_enabled=engine.tools_enabled,
            usage=engine.usage(),
            session_usage=engine.session_usage(),
        )
        with self._guard:
            self._snapshot = snapshot
        self._tell(SnapshotChanged(snapshot))

    def valid_actions(self, effort_id: str) -> tuple[Action, ...]:
        """The actions valid for an effort now (none for an unknown id)."""
        snapshot = self.snapshot
        effort = snapshot.effort(effort_id) if snapshot is not None else None
        return effort.actions if effort is not None else ()

    # ------------------------------------------------------------------ questions
    # Answered on the session thread, never waiting for the running work. Each raises
    # SessionClosed when the session is not open, besides what it says.
    async def command(self, command: SlashCommand) -> Outcome:
        """Run a slash command: one that changes an effort is work like an action (queued behind
        what runs); ``/search``, ``/status`` and ``/help`` only read, and are answered at once."""
        if spec_of(command).action is not None or command.name == "forget":
            return await self.run(command)
        return await self._query(lambda engine: answer(engine, command))

    # the engine's reads, run on the session thread: same signatures, documented once, on the engine
    search = on_session_thread(Engine.search)
    effort_log = on_session_thread(Engine.effort_log)
    read_lines = on_session_thread(Engine.read_lines)
    older_lines = on_session_thread(Engine.older_lines)
    inspect = on_session_thread(Engine.inspect)
    export_effort = on_session_thread(Engine.export_effort)
    export_conversation = on_session_thread(Engine.export_conversation)

    async def _query(self, ask: Callable[[Engine], T]) -> T:
        """Run ``ask(engine)`` on the session thread."""
        return await asyncio.wrap_future(self._thread.submit(self._ask(ask)))

    async def _ask(self, ask: Callable[[Engine], T]) -> T:
        if self._engine is None:
            raise SessionClosed("the session is not open")
        return ask(self._engine)

    # ------------------------------------------------------------------ the world outside
    def changed_on_disk(self) -> None:
        """A watcher saw another process write: re-read the session once no work runs."""
        self._thread.call_soon(self._disk_changed)

    def _disk_changed(self) -> None:
        engine = self._engine
        if engine is None:
            return
        if self._task is not None:
            self._disk_pending = True
            return
        self._disk_pending = False
        if not engine.refresh():
            return
        lines = tuple(line for line in engine.recent_lines() if line.ts > self._seen_ts)
        if lines:
            self._seen_ts = lines[-1].ts
        self._tell(WrittenElsewhere(lines))
        self._publish()

    def preload_model(self) -> None:
        """Start loading the model's client library in the background (the UI has painted)."""
        self._thread.call_soon(lambda: self._engine is not None and self._engine.preload_model())

    async def check_model(self) -> None:
        """Off every event loop: the model's input window (the budget, when none is configured)
        and its provider's keys; a missing key becomes a :class:`Notice`."""
        await asyncio.wrap_future(self._thread.submit(self._check_model()))

    async def _check_model(self) -> None:
        if self.llm is not None:
            return  # an in-process model (the demo's) has no window or keys to check
        budget, warning = await model_checks(self.settings)
        if budget and self._engine is not None and self._task is None:
            self._engine.adopt_model_budget(budget)
            self._publish()
        if warning:
            self._tell(Notice(warning, title="No API key"))

    # ------------------------------------------------------------------ closing
    async def close(self) -> None:
        """Cancel what runs (waiting for it to write its partial reply), close the session and
        stop the session thread."""
        if not self._thread.running:
            return
        try:
            await asyncio.wrap_future(self._thread.submit(self._shut()))
        finally:  # (a close that failed still ends the thread: its loop holds descriptors)
            self._thread.stop()

    def close_blocking(self, timeout: float) -> None:
        """:meth:`close` for a thread that has no event loop (the TUI's watchdog after a hang-up, when
        the UI's own loop no longer answers): waits at most ``timeout`` seconds for the work to write
        what it has and the session to close.

        Raises:
            Nothing: a close that does not finish in time is left to the next start's recovery.
        """
        if not self._thread.running:
            return
        try:
            self._thread.submit(self._shut()).result(timeout)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError, RuntimeError, OSError, CcmError):
            return
        self._thread.stop(timeout)

    async def _shut(self) -> None:
        opening = self._opening
        if opening is not None and not opening.done() and opening is not asyncio.current_task():
            opening.cancel()  # still waiting for another process's lock
            await asyncio.wait([opening])
        self._cancel()  # the running work, or what is queued
        task = self._task
        if task is not None:
            await asyncio.wait([task])
        self._cancel()  # what was queued behind it
        engine, self._engine = self._engine, None
        try:
            if engine is not None:
                engine.close()
            await release_loop_clients()  # this thread's loop ends: its provider connections with it
        finally:
            self._presence.release()
            self._set_state(phase=Phase.CLOSED, work=None, detail="", queued=())


def actions_for(proposal: Proposal) -> list[EffortAction]:
    """What saying yes to a proposal does: open the topic's effort, which starts with the topic's
    exchanges — those of the ambient chat it was proposed from, or those on the new topic in the effort
    it replaces (concluded first)."""
    topic = (proposal.conclude or "ambient", *proposal.lines) if proposal.lines else None
    actions = [EffortAction(Action.CONCLUDE, proposal.conclude, topic)] if proposal.conclude else []
    return [*actions, EffortAction(Action.OPEN, proposal.name.replace("-", " "), topic)]


__all__ = ["ChatModel", "ContextInspection", "OpenOptions", "RecallSource", "SessionClosed", "SessionController"]
