"""The one door to a session: every way of opening one goes through here.

:func:`open_engine` opens a session for writing (the writer lock, the schema
check and migration, the search index, the orchestrator with its model and
budget); :func:`start_engine` also recovers from an unclean end and picks up
other processes' writes — what the session controller, ``send``, the restore
landing and the replay use. :func:`search_session` (``search``) reads a session without the writer lock (through the one
reader, :mod:`.reader`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...config import Settings, retry_base_seconds
from ..models.client_setup import model_client, resolve_budget
from ..models.interface import ChatModel
from ..search import DerivedError, EffortIndex, RecallHit, SearchHit
from ..search.sync import sync_index, sync_log
from ..session.session import OPEN_LOCK_WAIT, Session, SessionLocked
from ..storage.long_lines import READ_BYTES
from ..text.tokens import TokenCounter
from ..turn.orchestrator import Orchestrator
from ..turn.tools import ToolError
from .engine import TURN_LOCK_WAIT, Engine
from .reader import SessionReader

LOCK_POLL = 0.05  # seconds between attempts while the first lock wait lasts
NO_MODEL: Any = object()  # open_engine(llm=NO_MODEL): a session opened for work that needs no model


def open_index(session: Session) -> EffortIndex:
    """The session's search index, in its derived database (the connection the session owns)."""
    assert session.derived is not None
    return EffortIndex(session.derived)


class IndexHooks:
    """How a turn uses the session's search index. The index is derived data: when it is busy or
    broken, a tool gets a plain error (try again), recall and re-indexing skip this turn."""

    def __init__(self, index: EffortIndex, session: Session) -> None:
        self.index = index
        self.session = session

    def search(self, query: str, limit: int) -> list[SearchHit]:
        try:
            return self.index.search(query, limit=limit)
        except DerivedError as exc:
            raise ToolError(f"the search index is unavailable right now ({exc}); try again") from None

    def read_ambient(self, first: int, last: int) -> list[tuple[int, Any]]:
        try:
            return self.index.read_ambient_lines(self.session.raw_path, first, last, READ_BYTES)
        except DerivedError as exc:
            raise ToolError(f"the search index is unavailable right now ({exc}); try again") from None

    def recall(self, message: str, skip: Any) -> list[RecallHit]:
        try:
            return self.index.recall(message, skip=skip)
        except DerivedError:
            return []

    def on_logged(self, to: str, records: list[dict[str, Any]]) -> None:
        """A logged exchange is findable at once (effort logs and the ambient chat alike)."""
        sync_log(self.index, self.session, to)


def open_engine(
    session_dir: Path,
    settings: Settings,
    *,
    budget: int | None = None,
    retry_base: float | None = None,
    lock_wait: float = OPEN_LOCK_WAIT,
    hold_lock: bool = True,
    llm: ChatModel | None = None,
    sleep: Any = None,
    probe_model_window: bool = True,
    on_lock_wait: Any = None,
) -> Engine:
    """Open a session for writing, with its search index and an orchestrator (no recovery yet:
    :func:`start_engine` does that).

    ``hold_lock=False`` (the TUI) takes the writer lock only around each turn or
    action, so ``ccm-tui send`` from another terminal can write between them; the
    TUI sees those changes through its watcher. ``llm`` replaces the litellm client
    (the offline demo's scripted model, the replay's model); ``NO_MODEL`` opens it
    without one (importing transcripts).
    """
    counter = TokenCounter(settings.model)
    session = Session.open(
        session_dir,
        ambient_window=settings.ambient_window,
        lock_wait=lock_wait,
        hold_lock=hold_lock,
        counter=counter,
        on_lock_wait=on_lock_wait,
    )
    try:
        index = open_index(session)
        session.indexed = index  # withdrawn.py reads what it has read of the logs through it
        sync_index(index, session)
        if llm is NO_MODEL:
            llm = None
        elif llm is None:
            llm = model_client(settings)

        hooks = IndexHooks(index, session)
        extra = {"sleep": sleep} if sleep is not None else {}
        probe = probe_model_window and not budget and not settings.token_budget and bool(settings.model)
        orchestrator = Orchestrator(
            session,
            settings,
            llm,
            budget=budget or resolve_budget(settings, probe_model=probe),
            search=hooks.search,
            read_ambient=hooks.read_ambient,
            recall=hooks.recall,
            on_logged=hooks.on_logged,
            retry_base=retry_base_seconds() if retry_base is None else retry_base,
            **extra,
        )
    except BaseException:
        session.close(clean=False)
        raise
    session.state.budget = orchestrator.budget
    engine = Engine(session, orchestrator, index, settings)
    if budget:
        engine.budget_source = "given"
    elif probe:
        engine.budget_source = "model"
    return engine


def start_engine(session_dir: Path, settings: Settings, **options: Any) -> Engine:
    """:func:`open_engine`, then recovery: the session-open sequence of every writer."""
    lock_wait = options.get("lock_wait", OPEN_LOCK_WAIT)
    engine = open_engine(session_dir, settings, **options)
    try:
        engine.start(lock_wait=lock_wait)
    except BaseException:
        engine.close(clean=False)
        raise
    return engine


@dataclass(frozen=True)
class OpenOptions:
    """How a session controller opens its session.

    ``hold_lock`` keeps the writer lock from open to close (``send``); without it the lock is
    taken around each turn or action (the TUI), so other processes can write in between.
    ``lock_wait``: how long an open waits for another process's lock; after that it retries on
    ``retry_delays`` (the last one repeating), or fails with :class:`SessionLocked` when there
    are none. ``turn_lock_wait``: how long a turn or an action waits for it (saying so).
    ``probe_model_window``: take the budget from the model's input window now."""

    hold_lock: bool = False
    lock_wait: float = 5.0
    retry_delays: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 15.0)
    turn_lock_wait: float = TURN_LOCK_WAIT
    probe_model_window: bool = False
    retry_base: float | None = None


async def start_engine_when_free(
    session_dir: Path,
    settings: Settings,
    options: OpenOptions,
    *,
    llm: ChatModel | None,
    on_locked: Callable[[int | None, float | None, int], None],
    retry_now: asyncio.Event,
) -> Engine:
    """:func:`start_engine`, waiting while another process holds the session (see
    :class:`OpenOptions`): ``on_locked(pid, None, 0)`` during the first wait, ``on_locked(pid,
    delay, attempt)`` before each retry. ``retry_now`` cuts a delay short (the user waits to send)."""
    deadline = time.monotonic() + options.lock_wait
    attempt = 0
    while True:
        try:
            engine = start_engine(
                session_dir,
                settings,
                lock_wait=LOCK_POLL,  # a short blocking wait per attempt: the loop stays responsive
                on_lock_wait=lambda pid, _wait: on_locked(pid, None, 0),
                hold_lock=options.hold_lock,
                llm=llm,
                probe_model_window=options.probe_model_window,
                retry_base=options.retry_base,
            )
            engine.lock_wait = options.turn_lock_wait
            return engine
        except SessionLocked as exc:
            if time.monotonic() < deadline:
                on_locked(exc.pid, None, 0)
                await asyncio.sleep(0)  # let a cancel in
                continue
            if not options.retry_delays:
                raise
            delay = options.retry_delays[min(attempt, len(options.retry_delays) - 1)]
            attempt += 1
            on_locked(exc.pid, delay, attempt)
            retry_now.clear()
            try:  # (not wait_for: on 3.11 it can swallow a cancel that arrives as the event is set)
                async with asyncio.timeout(delay):
                    await retry_now.wait()
            except TimeoutError:
                pass


def load_model_library(settings: Settings) -> None:
    """Import litellm (seconds) before a session is opened, so that the writer lock is held only
    for the work that needs it and two ``send``s started seconds apart do not collide."""
    if settings.model:
        from ..models.litellm_client import import_litellm

        import_litellm()


def search_session(session_dir: Path, query: str, limit: int = 10) -> list[SearchHit]:
    """Search a session without opening it for writing (``ccm-tui search``): through a standalone
    :class:`~.reader.SessionReader`, as every search. Never imports litellm.

    Raises:
        DerivedError: the index cannot be opened or read.
        StoreError: the session cannot be read.
    """
    with SessionReader(Path(session_dir), Settings()) as reader:
        return reader.search(query, limit).hits
