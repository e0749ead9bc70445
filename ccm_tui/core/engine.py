"""The Engine: the one core object the UI and the commands use.

It opens a session (writer lock, crash recovery, the budget), runs turns and
effort actions, and answers every question the UI and the commands ask about
the session with typed, read-only views (:mod:`.views`). Nothing outside the
core reaches past it to the session, the orchestrator or the search index.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings, default_budget, retry_base_seconds
from .chat_history import LoggedLine, recent_lines
from .chat_model import ChatModel
from .context import WorkingContext
from .efforts import ManifestError, load_manifest
from .eventlog import TURN_FAILED, now_iso, redact
from .export import export_effort
from .llm import LLMError
from .model_setup import missing_api_keys, model_client, resolve_budget
from .orchestrator import Emit, Orchestrator, TurnResult, UserInputError
from .recovery import RecoveryReport, UnansweredTurn, recover, turn_left_open, unanswered_turn
from .repair import RepairNotNeeded, rebuild_manifest
from .search import EffortIndex, SearchHit, SearchIndexError
from .session import MANIFEST_FILE, SEARCH_DB, Session, SessionLocked
from .store import JsonlRead, StoreError, read_jsonl, read_jsonl_tail
from .tokens import TokenCounter
from .tools import ToolError, ToolOutcome
from .turn_events import ContextFigures, EffortChanged, TurnEvent, Waiting
from .views import EffortView, SessionStatus, effort_view, session_status

# What callers handle, from here so that the UI and the commands import only this module of the core.
__all__ = [
    "ContextInspection",
    "Engine",
    "LLMError",
    "ManifestError",
    "RecoveryReport",
    "RepairNotNeeded",
    "SearchIndexError",
    "SessionLocked",
    "SessionWriteError",
    "StoreError",
    "TokenCounter",
    "UserInputError",
    "missing_api_keys",
    "load_model_library",
    "model_client",
    "now_iso",
    "open_engine",
    "open_read_only",
    "rebuild_manifest",
    "redact",
    "resolve_budget",
    "search_session",
    "start_engine",
]


class SessionWriteError(StoreError):
    """A session file could not be written (disk full, I/O error); the run is marked unclean."""


def check_text(text: str) -> None:
    """A message that cannot be stored as UTF-8 (undecodable bytes from a pipe or a terminal)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start].encode("utf-8", "surrogateescape")
        raise UserInputError(
            f"the message is not valid UTF-8 (byte 0x{bad.hex()} at character {exc.start + 1}); "
            "convert it first, e.g. with iconv -f latin1 -t utf-8"
        ) from None


def open_index(session_dir: Path) -> EffortIndex:
    return EffortIndex(Path(session_dir) / SEARCH_DB)


def sync_index(index: EffortIndex, session: Session) -> None:
    index.sync_session(session.dir, session.efforts)  # with their names


@dataclass(frozen=True)
class ContextInspection:
    """Exactly what the model would receive next, for the inspector screen."""

    context: WorkingContext
    tool_defs: list[dict[str, Any]]
    budget: int
    counter: TokenCounter


TURN_LOCK_WAIT = 30.0


class Engine:
    """An open session with its orchestrator and search index (see :func:`open_engine`)."""

    def __init__(
        self, session: Session, orchestrator: Orchestrator, index: EffortIndex | None, settings: Settings
    ) -> None:
        self.session = session  # core-internal: the UI and the commands use the methods below
        self.orchestrator = orchestrator
        self.index = index
        self.settings = settings
        self.recovery: RecoveryReport | None = None
        # seconds a turn or an action waits (and says so) for another process's writer lock
        self.lock_wait = TURN_LOCK_WAIT
        # where the budget came from: given | settings | model | default | last run
        self.budget_source = "settings" if settings.token_budget else "default"

    # ------------------------------------------------------------------ opening
    def start(self, *, lock_wait: float = 2.0) -> RecoveryReport:
        """Recover from an unclean end (under the writer lock), pick up other processes' writes,
        and take the budget the last run used when none is configured. Both the TUI and
        ``send`` open a session this way."""
        session = self.session
        held = session.lock.held
        if not held:
            session.lock.acquire(wait=lock_wait)
        try:
            report = recover(session)
            session.refresh_if_changed()
        finally:
            if not held:
                session.lock.release()
        if self.budget_source == "default" and session.state.budget:
            self.set_budget(session.state.budget)
            self.budget_source = "last run"
        self.recovery = report
        return report

    def adopt_model_budget(self, budget: int | None = None) -> int:
        """Take the budget from the model's input window (``budget``, or looked up now), unless
        one was configured or given."""
        if self.budget_source not in ("given", "settings"):
            self.set_budget(budget or resolve_budget(self.settings))
            self.budget_source = "model"
        return self.budget

    def close(self, *, clean: bool = True) -> None:
        try:
            if self.index is not None:
                self.index.close()
        finally:
            self.session.close(clean=clean)

    # ------------------------------------------------------------------ running
    async def run_turn(self, text: str, emit: Emit | None = None) -> TurnResult:
        """One turn. A failed write (disk full, I/O error) logs ``turn_failed``, marks this run
        unclean (the next start recovers it) and raises :class:`SessionWriteError`."""
        check_text(text)
        async with self._writing(emit):
            try:
                return await self.orchestrator.run_turn(text, self._emit_through(emit))
            except (OSError, StoreError) as exc:
                raise self._write_failed(exc, in_turn=True) from None

    async def run_action(self, tool_name: str, arguments: dict[str, Any], emit: Emit | None = None) -> ToolOutcome:
        async with self._writing(emit):
            try:
                return await self.orchestrator.run_action(tool_name, arguments, self._emit_through(emit))
            except (OSError, StoreError) as exc:
                raise self._write_failed(exc, in_turn=False) from None

    @contextlib.asynccontextmanager
    async def _writing(self, emit: Emit | None) -> AsyncIterator[None]:
        """The writer lock around one turn or action (the TUI's way). While another process holds
        it, the wait is reported as ``Waiting("waiting for the session (used by pid N)")``, so it
        never looks like the model thinking; after ``lock_wait`` seconds :class:`SessionLocked`."""
        lock = self.session.lock
        told = lock.on_wait

        def waiting(pid: int | None, wait: float) -> None:
            if emit is not None:
                who = f"pid {pid}" if pid else "another process"
                emit(Waiting(turn=self.session.state.turn + 1, reason=f"waiting for the session (used by {who})"))
            if told is not None:
                told(pid, wait)

        lock.on_wait = waiting
        try:
            async with self.session.writing(wait=self.lock_wait):
                yield
        finally:
            lock.on_wait = told

    def _write_failed(self, exc: OSError | StoreError, *, in_turn: bool) -> SessionWriteError:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if isinstance(exc, OSError) and exc.filename:
            reason = f"{reason}: {exc.filename}"
        session = self.session
        session.mark_unclean(f"a write failed ({reason})")
        if in_turn:
            try:
                if turn_left_open(read_jsonl_tail(session.events.path, 200)):
                    session.log_event(
                        TURN_FAILED,
                        error=f"could not write the session: {reason}",
                        kind="io",
                        partial="",
                        partial_chars=0,
                    )
            except (OSError, StoreError):
                pass  # the event log itself cannot be written: recovery finds the open turn
        kept = " (your message is kept: retry once the disk is fixed)" if in_turn else ""
        return SessionWriteError(f"could not write to the session: {reason}{kept}")

    def preload_model(self) -> threading.Thread | None:
        """Start importing litellm in a background thread and return at once (the TUI paints
        first); the thread, or None when there is nothing to load. A turn sent before it
        finishes waits for it, reporting ``Waiting("loading the model client…")``."""
        from .llm import LLMClient

        llm = self.orchestrator.llm
        if not isinstance(llm, LLMClient) or llm.loaded:
            return None
        thread = threading.Thread(target=llm.load, name="ccm-load-model-client", daemon=True)
        thread.start()
        return thread

    @property
    def model_client_loaded(self) -> bool:
        """False while litellm still has to be imported (a turn would wait for it)."""
        return bool(getattr(self.orchestrator.llm, "loaded", True))

    @property
    def tools_enabled(self) -> bool:
        """False when the model cannot use tools: the user manages efforts by hand."""
        return self.has_model and self.orchestrator.tools_enabled

    def refresh(self) -> bool:
        """Re-read the session if another process changed it (the TUI's watcher calls this)."""
        return self.session.refresh_if_changed()

    def _emit_through(self, emit: Emit | None) -> Emit:
        """Effort changes also reach the search index."""

        def wrapped(event: TurnEvent) -> None:
            if isinstance(event, EffortChanged):
                self._reindex_effort(event.effort_id)
            if emit is not None:
                emit(event)

        return wrapped

    def _reindex_effort(self, effort_id: str) -> None:
        """The index is derived data: if it is busy (another process syncing it) or broken, the
        turn goes on and the next sync catches up."""
        if self.index is None:
            return
        effort = self.session.efforts.get(effort_id)
        try:
            if effort is None:
                self.index.remove_effort(effort_id)
            else:
                self.index.upsert_effort(effort.id, status=effort.status, summary=effort.summary, name=effort.name)
                self.index.sync_effort_log(effort.id, self.session.effort_path(effort.id))
        except SearchIndexError:
            pass

    # ------------------------------------------------------------------ questions
    @property
    def session_dir(self) -> Path:
        return self.session.dir

    @property
    def has_model(self) -> bool:
        return self.orchestrator.llm is not None

    @property
    def budget(self) -> int:
        return self.orchestrator.budget

    def set_budget(self, budget: int) -> None:
        self.orchestrator.budget = budget
        self.session.state.budget = budget

    @property
    def turn(self) -> int:
        return self.session.state.turn

    def status(self) -> SessionStatus:
        return session_status(self.session)

    def effort(self, effort_id: str) -> EffortView | None:
        effort = self.session.efforts.get(effort_id)
        return effort_view(self.session, effort) if effort is not None else None

    def active_effort(self) -> EffortView | None:
        active = self.session.efforts.active
        return effort_view(self.session, active) if active is not None else None

    def figures(self) -> ContextFigures:
        return self.orchestrator.figures()

    def usage(self) -> dict[str, int]:
        """Tokens the provider reported for this run's requests (prompt, completion, total)."""
        return dict(self.orchestrator.usage_total)

    def history(self) -> list[dict[str, int]]:
        """Per-turn context figures (``ccm`` and ``naive`` tokens), oldest first."""
        return list(self.session.state.history)

    def status_json(self) -> dict[str, Any]:
        """``status --json`` (contract)."""
        data = self.status().as_json()
        data["context"] = self.figures().as_dict()
        data["session_dir"] = str(self.session.dir)
        data["clean_shutdown"] = self.session.state.clean_shutdown
        data["compactions"] = self.session.state.compaction_count
        return data

    def inspect(self, draft: str = "") -> ContextInspection:
        turn = [{"role": "user", "content": draft}] if draft else []
        return ContextInspection(
            self.orchestrator.working_context(turn),
            self.orchestrator.offered_tools or [],
            self.budget,
            self.session.counter,
        )

    def effort_log(self, effort_id: str) -> JsonlRead:
        """An effort's whole raw log as on disk (unreadable lines counted, not fatal)."""
        return read_jsonl(self.session.effort_path(effort_id))

    def export_effort(self, effort_id: str, target: Path) -> Path:
        effort = self.effort(effort_id)
        if effort is None:
            raise StoreError(f"there is no effort '{effort_id}'")
        return export_effort(effort, self.session.effort_path(effort_id), target)

    def recent_lines(self, limit: int = 40) -> list[LoggedLine]:
        """The newest logged lines across the ambient log and recent effort logs (chat history)."""
        return recent_lines(self.session, limit)

    def unanswered_turn(self) -> UnansweredTurn | None:
        return unanswered_turn(self.session)

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """Ranked search over every effort (raises :class:`SearchIndexError` when the index is unusable)."""
        if self.index is None:
            return search_session(self.session.dir, query, limit)
        return self.index.search(query, limit=limit)


def open_engine(
    session_dir: Path,
    settings: Settings,
    *,
    budget: int | None = None,
    retry_base: float | None = None,
    lock_wait: float = 2.0,
    hold_lock: bool = True,
    llm: ChatModel | None = None,
    sleep: Any = None,
    probe_model_window: bool = True,
    on_lock_wait: Any = None,
) -> Engine:
    """Open a session for writing, with its search index and an orchestrator (no recovery yet:
    :meth:`Engine.start` does that, :func:`start_engine` both).

    ``hold_lock=False`` (the TUI) takes the writer lock only around each turn or
    action, so ``ccm-tui send`` from another terminal can write between them; the
    TUI sees those changes through its watcher. ``llm`` replaces the litellm client
    (the offline demo's scripted model, the replay's model).
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
        index = open_index(session.dir)
        sync_index(index, session)
        if llm is None:
            llm = model_client(settings)

        def search(query: str, limit: int) -> list[SearchHit]:
            try:
                return index.search(query, limit=limit)
            except SearchIndexError as exc:
                raise ToolError(f"the search index is unavailable right now ({exc}); try again") from None

        def on_logged(to: str, records: list[dict[str, Any]]) -> None:
            if to != "ambient" and session.efforts.get(to) is not None:
                try:
                    index.sync_effort_log(to, session.effort_path(to))
                except SearchIndexError:
                    pass  # derived data: the next sync catches up

        extra = {"sleep": sleep} if sleep is not None else {}
        probe = probe_model_window and not budget and not settings.token_budget and bool(settings.model)
        orchestrator = Orchestrator(
            session,
            settings,
            llm,
            budget=budget or resolve_budget(settings, probe_model=probe),
            search=search,
            on_logged=on_logged,
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
    """:func:`open_engine` then :meth:`Engine.start`: the session-open sequence of the TUI and ``send``."""
    lock_wait = options.get("lock_wait", 2.0)
    engine = open_engine(session_dir, settings, **options)
    try:
        engine.start(lock_wait=lock_wait)
    except BaseException:
        engine.close(clean=False)
        raise
    return engine


def load_model_library(settings: Settings) -> None:
    """Import litellm (seconds) before a session is opened, so that the writer lock is held only
    for the work that needs it and two ``send``s started seconds apart do not collide."""
    if settings.model:
        from .llm import import_litellm

        import_litellm()


def open_read_only(session_dir: Path, settings: Settings) -> Engine:
    """A session opened for reading (``status``): no lock, no index, no model client."""
    session = Session.open(
        session_dir, readonly=True, ambient_window=settings.ambient_window, counter=TokenCounter(settings.model)
    )
    budget = settings.token_budget or session.state.budget or default_budget()
    orchestrator = Orchestrator(session, settings, None, budget=budget)
    return Engine(session, orchestrator, None, settings)


def search_session(session_dir: Path, query: str, limit: int = 10) -> list[SearchHit]:
    """Search a session without opening it for writing (``ccm-tui search``): reads the manifest,
    brings the derived index up to date, ranks. Never imports litellm."""
    efforts = load_manifest(Path(session_dir) / MANIFEST_FILE)
    with open_index(session_dir) as index:
        index.sync_session(Path(session_dir), efforts)  # with their names
        return index.search(query, limit=limit)
