"""The Engine: an open session with its orchestrator and search index.

Opened by :mod:`.opening` (the one door: lock, schema check, crash recovery,
budget), it runs turns and effort actions — each to one
:class:`~.turn_events.Outcome` — and answers questions about the session with
typed, read-only views (:mod:`.views`). The session controller
(:mod:`.controller`) drives it for the TUI, the commands and the MCP server;
the replay and the restore landing use it directly. Its session, orchestrator
and index are private: nothing reaches past it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ...config import Settings
from ...errors import CcmError, EffortNotFound, NotFound
from ..efforts import lifecycle
from ..efforts.proposals import Proposal
from ..efforts.states import EDIT_ACTIONS, Action, ActionRefused
from ..efforts.working_context import WorkingContext
from ..manifest.effort import Effort
from ..models.client_setup import resolve_budget
from ..search import EffortIndex, SearchHit
from ..search.sync import IndexWatch, sync_log
from ..session.chat_line import LoggedLine
from ..session.session import OPEN_LOCK_WAIT, STATE_FILE, Session, SessionLocked
from ..session.snapshots import SCHEMA_VERSION
from ..storage.derived import DerivedError
from ..storage.durable import StoreError, disk_full, read_jsonl_tail
from ..storage.eventlog import SESSION_MIGRATED, TURN_FAILED
from ..text.tokens import TokenCounter
from ..turn import folding
from ..turn.events import (
    CANCELLED,
    DONE,
    FAILED,
    Cause,
    ContextFigures,
    EffortChanged,
    ExchangeWithdrawn,
    Outcome,
    TurnEvent,
    Waiting,
    WaitingFor,
    Work,
)
from ..turn.orchestrator import Emit, Orchestrator, UserInputError
from ..turn.recall import RecallSource
from ..views.markdown_export import export_conversation, export_effort
from ..views.scrollback import PAGE, HistoryPage, ScrollBack, recent_lines
from ..views.status import (
    EffortView,
    SessionStatus,
    concluded_views,
    effort_view,
    full_status,
    session_status,
    status_data,
)
from . import _notes as notes
from ._withdraw import CannotWithdraw, LastExchange, last_exchange, withdraw_exchange
from .forget import ForgetRequest, forget_locked
from .reader import SessionReader, read_through_reader
from .recovery import RecoveryReport, UnansweredTurn, effects_so_far, recover, turn_left_open, unanswered_turn

T = TypeVar("T")  # what a piece of work under the writer lock returns

TURN_LOCK_WAIT = 30.0
FLUSH_JOURNAL_BYTES = 8 << 20  # manifest.yaml is rewritten even while work is queued once it lags this far


@dataclass(frozen=True)
class ContextInspection:
    """Exactly what the model would receive next, for the inspector screen. ``recalled``: the passages
    the draft recalls (in ``context``'s recall layer), each with the words it was found by;
    ``last_recalled``: the last turn's, as it was sent (empty after a relaunch)."""

    context: WorkingContext
    tool_defs: list[dict[str, Any]]
    budget: int
    counter: TokenCounter
    recalled: tuple[RecallSource, ...] = ()
    last_recalled: tuple[RecallSource, ...] = ()


# ------------------------------------------------------------------ work that fails before the model's part
class SessionWriteError(StoreError):
    """A session file could not be written (disk full, I/O error); the run is marked unclean.
    ``given_back``: the user's message goes back to the input (false once the turn's tools changed
    efforts: the next start logs that turn, and sending it again would store it twice)."""

    def __init__(self, message: str, *, given_back: bool = True, note: str = "") -> None:
        super().__init__(message)
        self.given_back = given_back
        self.note = note  # said after the cause in any wording ("… an effort: do not send it again")


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


def still_locked(pid: int | None) -> str:
    """Why a turn or an action could not start: another process kept the session through the wait."""
    who = f"pid {pid}" if pid else "another process"
    return (
        f"the session is still in use by {who} (another ccm-tui or a ccm-tui send on this session); "
        "send again once it is done"
    )


def failed_outcome(turn: int, work: Work, text: str, exc: Exception, *, given_back: bool) -> Outcome:
    """The outcome of work that failed before (or outside) the model's part: invalid input, a
    session locked elsewhere, a failed write."""
    if isinstance(exc, SessionLocked):
        reason, cause = still_locked(exc.pid), Cause.LOCKED
    elif isinstance(exc, NotFound):
        reason, cause = str(exc), Cause.NOT_FOUND
    else:
        reason, cause = disk_full(exc) or str(exc), Cause.INPUT if isinstance(exc, UserInputError) else Cause.IO
        if isinstance(exc, SessionWriteError) and exc.note and exc.note not in reason:
            reason = f"{reason} ({exc.note})"
    return Outcome(turn=turn, work=work, status=FAILED, reason=reason, cause=cause, text=text, given_back=given_back)


class Engine:
    """An open session (see :func:`.opening.open_engine`): it runs work (turns, actions, notes, withdrawals)
    and answers questions (figures, views, inspection, logs, exports, the chat said earlier, search)."""

    def __init__(
        self, session: Session, orchestrator: Orchestrator, index: EffortIndex | None, settings: Settings
    ) -> None:
        self._session = session
        self._orchestrator = orchestrator
        self._index = index
        self.settings = settings
        self._scrollback: ScrollBack | None = None  # scrolling back: made on the first page asked for
        self.reader = SessionReader.over(session, index, settings)  # searches, lines, logs: the one reader
        self.recovery: RecoveryReport | None = None
        # seconds a turn or an action waits (and says so) for another process's writer lock
        self.lock_wait = TURN_LOCK_WAIT
        # where the budget came from: given | settings | model | default | last run
        self.budget_source = "settings" if settings.token_budget else "default"

    def start(self, *, lock_wait: float = OPEN_LOCK_WAIT) -> RecoveryReport:
        """Recover from an unclean end (under the writer lock), pick up other processes' writes,
        and take the budget the last run used when none is configured."""
        session = self._session
        held = session.lock.held
        if not held:
            session.lock.acquire(wait=lock_wait)
        watch = IndexWatch(self._index, session) if self._index is not None else None
        try:
            if watch is not None:
                watch.begin()
            report = recover(session)
            if watch is not None and not (report.torn_files or report.interrupted or report.notes):
                watch.end()  # recovery wrote events and state, not logs: the index still holds them all
            if session.migrated_from is not None:
                session.log_event(SESSION_MIGRATED, schema_from=session.migrated_from, schema=SCHEMA_VERSION)
                session.save_state()
                session.migrated_from = None
            elif not (session.dir / STATE_FILE).exists():
                session.save_state()  # a new session: its schema is on disk from its first start
            session.refresh_if_changed()
            session.flush_manifest()  # what a killed run journaled but did not write yet
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
        """Close the session; the index, in step before the last writes (``session_end``), is
        marked in step after them, so the next search syncs nothing."""
        index = self._index
        try:
            if index is None:
                self._session.close(clean=clean)
            else:
                self._session.close(clean=clean, while_locked=IndexWatch(index, self._session).kept)
        finally:
            if index is not None:
                index.close()

    # ------------------------------------------------------------------ running
    async def run_turn(self, text: str, emit: Emit | None = None) -> Outcome:
        """One turn, to its outcome. Nothing raises for what can go wrong in a turn: invalid input,
        a session locked elsewhere, a provider failure, a failed write (logged as ``turn_failed``,
        the run marked unclean so the next start recovers it) and a cancel all end in the outcome."""
        try:
            check_text(text)
        except UserInputError as exc:
            return failed_outcome(self.turn + 1, Work.TURN, text, exc, given_back=True)
        return await self._locked(
            lambda: self._orchestrator.run_turn(text, self._emit_through(emit)),
            emit,
            Work.TURN,
            text,
            turn=self.turn + 1,
            given_back=True,
            failures=(UserInputError, EffortNotFound),
        )

    async def run_action(
        self,
        action: Action,
        target: str = "",
        emit: Emit | None = None,
        *,
        topic: tuple[str, int, int] | None = None,
        reuse: bool = False,
        value: str = "",
    ) -> Outcome:
        """A user's action on an effort (``target``: its id, or a new effort's name; ``topic``,
        ``value``: see :class:`~.run_state.EffortAction`), to its outcome."""
        what = f"{action.value} {target}".strip()
        emit_to = self._emit_through(emit)

        async def act() -> Outcome:
            outcome = await self._orchestrator.run_action(
                action, target, emit_to, topic=topic, reuse=reuse, value=value
            )
            if outcome.ok and action in EDIT_ACTIONS:  # a new name, summary or lines: findable at once
                result = outcome.result or {}
                for effort_id in {str(result.get("id") or ""), str(result.get("into") or "")} - {""}:
                    self._reindex_effort(effort_id)
            return outcome

        return await self._locked(act, emit, Work.ACTION, what)

    async def remember(self, text: str, effort_id: str = "", emit: Emit | None = None, *, agent: str = "") -> Outcome:
        """A note another agent leaves (``ccm-tui mcp``'s remember): appended under the writer lock to
        ``effort_id``'s log, or to the notes effort (see :mod:`.notes`), and indexed, so a search finds
        it at once. The outcome's ``result`` says where it landed (effort id, line)."""

        async def leave_note() -> notes.Note:
            note = notes.append_note(self._session, text, effort_id, agent=agent)
            self._reindex_effort(note.effort_id)
            return note

        note = await self._locked(leave_note, emit, Work.NOTE, text, failures=(UserInputError, EffortNotFound))
        if isinstance(note, Outcome):
            return note
        result = note.as_dict()
        return Outcome(turn=self.turn, work=Work.NOTE, status=DONE, text=text, logged_to=note.effort_id, result=result)

    async def forget(self, request: ForgetRequest, *, dry_run: bool = False) -> Outcome:
        """Forget a text, an effort or lines of one in every file of this session (:mod:`.forget`),
        under the writer lock; the session is read again after it. ``dry_run``: say what would go.
        The outcome's ``reply`` says how many occurrences in how many files (never the text)."""
        what = "forget"
        try:
            async with self._session.writing(wait=self.lock_wait):
                try:
                    report = forget_locked(self._session.dir, request, dry_run=dry_run)
                finally:
                    if not dry_run:
                        self._session.load()
                        self._scrollback = None
        except asyncio.CancelledError:
            return Outcome(turn=self.turn, work=Work.ACTION, status=CANCELLED, reason="cancelled", text=what)
        except (CcmError, OSError) as exc:
            return failed_outcome(self.turn, Work.ACTION, what, exc, given_back=False)
        reply = report.line(request) if not dry_run else report.question(request)
        result = {"occurrences": report.occurrences, "files": report.files, "done": not dry_run}
        return Outcome(turn=self.turn, work=Work.ACTION, status=DONE, text=what, reply=reply, result=result)

    async def withdraw(self, why: Work, emit: Emit | None = None) -> Outcome:
        """Withdraw the last exchange (``why``: regenerate or edit; see :mod:`._withdraw`). The
        outcome's ``text`` is the user's message; refused in plain words when it cannot be done."""

        async def withdrawn() -> LastExchange:
            exchange = last_exchange(self._session)
            withdraw_exchange(self._session, exchange, why)
            if self._index is not None:  # the index records the marker (recall leaves it out)
                sync_log(self._index, self._session, exchange.log)
            return exchange

        exchange = await self._locked(withdrawn, emit, why, refusals=(CannotWithdraw,))
        if isinstance(exchange, Outcome):
            return exchange
        if emit is not None:
            emit(ExchangeWithdrawn(turn=self.turn, user=exchange.user, reply=exchange.reply, why=why))
        result = {"log": exchange.log, "user": exchange.user, "reply": exchange.reply}
        return Outcome(
            turn=self.turn, work=why, status=DONE, text=exchange.user, given_back=why == "edit", result=result
        )

    async def assist(self, emit: Emit | None = None) -> list[Proposal]:
        """After a turn, for a model that does not manage efforts: fold ambient chat that left the
        window into concluded efforts, and the proposal for now (see :mod:`.folding`). Never fails
        the turn: what cannot be done now is tried after the next one."""
        if self._index is None:
            return []
        try:
            async with self._writing(None):
                return await folding.assist(
                    self._session, self._index, tools_enabled=self.tools_enabled, emit=self._emit_through(emit)
                )
        except (OSError, StoreError, DerivedError, SessionLocked, ActionRefused, EffortNotFound):
            return []

    def settle(self, *, busy: bool = False) -> None:
        """After a piece of work is reported: rewrite ``manifest.yaml`` with what it saved (the
        journal in ``events.jsonl`` already holds it, so nobody waits for this). ``busy``: more work
        is queued, so the rewrite waits for the queue to empty unless the file lags the journal by
        more than FLUSH_JOURNAL_BYTES. Never fails: what cannot be written now is written by the next
        settle, the close or the next start."""
        session = self._session
        if session.readonly:
            return
        with contextlib.suppress(OSError, StoreError, DerivedError):
            if busy and session.efforts.unflushed_bytes() <= FLUSH_JOURNAL_BYTES:
                return
        held = session.lock.held
        if not held and not session.lock.try_acquire():
            return  # another process is writing: it writes the manifest when it is done
        try:
            session.flush_manifest()
        except (OSError, StoreError, DerivedError):  # (the derived rows could not catch up: later)
            pass
        finally:
            if not held:
                session.lock.release()

    @contextlib.asynccontextmanager
    async def _writing(self, emit: Emit | None) -> AsyncIterator[None]:
        """The writer lock around one turn or action (the TUI's way). While another process holds
        it, the wait is reported as ``Waiting("waiting for the session (used by pid N)")``, so it
        never looks like the model thinking; after ``lock_wait`` seconds :class:`SessionLocked`."""
        lock = self._session.lock
        told = lock.on_wait

        def waiting(pid: int | None, wait: float) -> None:
            if emit is not None:
                who = f"pid {pid}" if pid else "another process"
                reason = f"waiting for the session (used by {who})"
                emit(Waiting(turn=self.turn + 1, reason=reason, cause=WaitingFor.LOCK, holder=pid))
            if told is not None:
                told(pid, wait)

        lock.on_wait = waiting
        try:
            async with self._session.writing(wait=self.lock_wait):
                watch = IndexWatch(self._index, self._session) if self._index is not None else None
                if watch is not None:
                    watch.begin()
                yield
                if watch is not None:
                    watch.end()
        finally:
            lock.on_wait = told

    async def _locked(
        self,
        work: Callable[[], Awaitable[T]],
        emit: Emit | None,
        kind: Work,
        text: str = "",
        *,
        turn: int | None = None,
        given_back: bool = False,
        failures: tuple[type[Exception], ...] = (),
        refusals: tuple[type[Exception], ...] = (),
    ) -> T | Outcome:
        """``work`` under the writer lock (see :meth:`_writing`), or the outcome of what stopped it:
        a cancel, the session kept elsewhere (:class:`SessionLocked`), a failed write (an ``OSError``
        or :class:`StoreError` of ``work`` becomes a :class:`SessionWriteError`, the run marked
        unclean), one of ``failures`` (``failed_outcome``: input, not found), or one of ``refusals``
        (refused in its own words). ``turn`` defaults to the current one; ``given_back``: the text
        goes back to the input on a cancel or a failure (a failed write of a turn says itself)."""
        turn = self.turn if turn is None else turn
        failed: tuple[type[Exception], ...] = (SessionLocked, SessionWriteError, *failures)
        try:
            async with self._writing(emit):
                try:
                    return await work()
                except (OSError, StoreError) as exc:
                    raise self._write_failed(exc, in_turn=kind == Work.TURN) from None
        except asyncio.CancelledError:
            return Outcome(turn=turn, work=kind, status=CANCELLED, reason="cancelled", text=text, given_back=given_back)
        except refusals as exc:
            return Outcome(turn=turn, work=kind, status=FAILED, reason=str(exc), cause=Cause.REFUSED)
        except failed as exc:
            back = exc.given_back if isinstance(exc, SessionWriteError) and kind == Work.TURN else given_back
            return failed_outcome(turn, kind, text, exc, given_back=back)

    def _write_failed(self, exc: OSError | StoreError, *, in_turn: bool) -> SessionWriteError:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if isinstance(exc, OSError) and exc.filename:
            reason = f"{reason}: {exc.filename}"
        session = self._session
        session.mark_unclean(f"a write failed ({reason})")
        effects: list[str] = []
        if in_turn:
            try:
                events = read_jsonl_tail(session.events.path, 200)
                effects = effects_so_far(events)
                if turn_left_open(events):
                    session.log_event(
                        TURN_FAILED,
                        error=f"could not write the session: {reason}",
                        kind="io",
                        partial="",
                        partial_chars=0,
                    )
            except (OSError, StoreError):
                pass  # the event log itself cannot be written: recovery finds the open turn
        if in_turn and effects:  # its tools changed efforts: the next start logs the turn, never resend it
            note = f"the turn had already {', '.join(effects)} an effort: the next start logs it, do not send it again"
            return SessionWriteError(f"could not write to the session: {reason}", given_back=False, note=note)
        kept = " (your message is kept: retry once the disk is fixed)" if in_turn else ""
        return SessionWriteError(f"could not write to the session: {reason}{kept}")

    def preload_model(self) -> threading.Thread | None:
        """Start loading the model's client library in a background thread and return at once (the
        TUI paints first); the thread, or None when there is nothing to load. A turn sent before
        it finishes waits for it, reporting ``Waiting("loading the model client…")``."""
        llm = self._orchestrator.llm
        if llm is None or llm.loaded:
            return None
        thread = threading.Thread(target=llm.load, name="ccm-load-model-client", daemon=True)
        thread.start()
        return thread

    @property
    def model_client_loaded(self) -> bool:
        """False while the model's client library still has to be loaded (a turn would wait for it)."""
        llm = self._orchestrator.llm
        return llm is None or llm.loaded

    @property
    def tools_enabled(self) -> bool:
        """False when the model cannot use tools: the user manages efforts by hand."""
        return self.has_model and self._orchestrator.tools_enabled

    def refresh(self) -> bool:
        """Re-read the session if another process changed it (the TUI's watcher calls this)."""
        return self._session.refresh_if_changed()

    def _emit_through(self, emit: Emit | None) -> Emit:
        """Effort changes also reach the search index."""

        def wrapped(event: TurnEvent) -> None:
            if isinstance(event, EffortChanged):
                self._reindex_effort(event.effort_id)
            if emit is not None:
                emit(event)

        return wrapped

    def _reindex_effort(self, effort_id: str) -> None:
        """A saved change is findable at once: the meta documents follow the effort rows the save
        brought forward, then the effort's log is read. The index is derived data: if it is busy
        (another process syncing it) or broken, the turn goes on and the next sync catches up."""
        if self._index is None:
            return
        try:
            self._index.sync_efforts()
            if effort_id in self._session.efforts:
                self._index.sync_effort_log(effort_id, self._session.effort_path(effort_id))
        except DerivedError:
            pass

    # ------------------------------------------------------------------ imports
    def find_import(self, digest: str, max_turns: int | None) -> str | None:
        """The effort a transcript of this digest (and ``--max-turns``) was imported as, if any."""
        for effort in self._session.efforts.by_digest(digest):
            if (effort.source or {}).get("max_turns") == max_turns:
                return effort.id
        return None

    def land_import(
        self, name: str, messages: list[dict[str, Any]], summary: str, source: dict[str, Any], *, restored_at: str
    ) -> Effort:
        """A transcript from another agent lands as a concluded effort (atomic; see
        :func:`.lifecycle.land_imported`), indexed for search at once."""
        if self._index is None:
            return lifecycle.land_imported(self._session, name, messages, summary, source, restored_at=restored_at)
        with IndexWatch(self._index, self._session).kept():  # indexed as it lands: the next open syncs nothing
            effort = lifecycle.land_imported(self._session, name, messages, summary, source, restored_at=restored_at)
            self._reindex_effort(effort.id)
        return effort

    def land_imports(self, landings: list[lifecycle.Landing], *, restored_at: str) -> list[Effort]:
        """Several transcripts land as concluded efforts with one durable point for them all (see
        :func:`.lifecycle.land_imported_many`), indexed for search at once.

        Raises:
            StoreError: a log or the manifest cannot be written (what was journaled is stored).
        """
        if self._index is None:
            return lifecycle.land_imported_many(self._session, landings, restored_at=restored_at)
        with IndexWatch(self._index, self._session).kept():
            efforts = lifecycle.land_imported_many(self._session, landings, restored_at=restored_at)
            for effort in efforts:
                self._reindex_effort(effort.id)
        return efforts

    def count_roughly(self) -> None:
        """Count this engine's tokens as figures only (:attr:`TokenCounter.rough`: no tokenizer loaded,
        no text encoded): for a writer that never builds a request (``watch``'s capture)."""
        self._session.counter.rough = True

    def efforts_of_kind(self, kind: str) -> list[Effort]:
        """The efforts whose ``source.kind`` is ``kind`` (captured agent sessions: ``capture``)."""
        return self._session.efforts.by_source_kind(kind)

    def captured_records(self, effort_id: str) -> list[dict[str, Any]] | None:
        """The records of an effort's raw log as stored (None: there is no such effort)."""
        if self._session.efforts.get(effort_id) is None:
            return None
        return list(self._session.effort_log(effort_id))

    def append_capture(
        self, effort_id: str, messages: list[dict[str, Any]], source: dict[str, Any], summary: str
    ) -> None:
        """A captured agent session grew: its new records appended (fsynced) to the concluded effort's
        log before its ``source`` and summary are saved, and indexed at once. A kill in between
        leaves the records logged and the old entry: the capture reads the log, never the entry,
        to know what is logged, so nothing is appended twice.

        Raises:
            EffortNotFound: there is no such effort (forgotten meanwhile).
            StoreError: the log or the manifest cannot be written.
        """
        effort = self._session.efforts.get(effort_id)
        if effort is None:
            raise EffortNotFound(f"there is no effort '{effort_id}' in this session")
        if messages:
            self._session.append_effort(effort, messages)
        effort.source = source
        if summary != effort.summary:
            effort.summary = summary
            effort.summary_tokens = self._session.counter.count_text(summary)
        self._session.save_manifest()  # (a held effort's changes are saved with it)
        self._reindex_effort(effort_id)

    # ------------------------------------------------------------------ questions (reading only)
    @property
    def session_dir(self) -> Path:
        return self._session.dir

    @property
    def has_model(self) -> bool:
        return self._orchestrator.llm is not None

    @property
    def budget(self) -> int:
        return self._orchestrator.budget

    def set_budget(self, budget: int) -> None:
        self._orchestrator.budget = budget
        self._session.state.budget = budget

    @property
    def turn(self) -> int:
        return self._session.state.turn

    @property
    def counter(self) -> TokenCounter:
        """The session's token counter (one cache for every count)."""
        return self._session.counter

    @property
    def compactions(self) -> int:
        return self._session.state.compaction_count

    def status(self) -> SessionStatus:
        return session_status(self._session, message_cap=self._orchestrator.message_cap)

    def full_status(self) -> SessionStatus:
        """Every effort (reads the whole catalog: ``status --json``)."""
        return full_status(self._session, self._orchestrator.message_cap)

    def concluded_page(self, offset: int, limit: int) -> list[EffortView]:
        """Concluded efforts, the latest conclusion first (a page of the long list)."""
        return concluded_views(self._session, offset, limit)

    def effort(self, effort_id: str) -> EffortView | None:
        effort = self._session.efforts.get(effort_id)
        return effort_view(self._session, effort, self._orchestrator.message_cap) if effort is not None else None

    def active_effort(self) -> EffortView | None:
        active = self._session.efforts.active
        return effort_view(self._session, active, self._orchestrator.message_cap) if active is not None else None

    def figures(self) -> ContextFigures:
        return self._orchestrator.figures()

    def usage(self) -> dict[str, int]:
        """Tokens the provider reported for this run's requests (prompt, completion, total)."""
        return dict(self._orchestrator.calls.usage_total)

    def history(self) -> list[dict[str, int]]:
        """Per-turn context figures (``ccm`` and ``naive`` tokens), oldest first."""
        return list(self._session.state.history)

    def status_json(self, status: SessionStatus | None = None) -> dict[str, Any]:
        """``status --json`` (contract): every effort, unless ``status`` says which."""
        return status_data(self._session, status or self.full_status(), self.figures())

    def session_usage(self) -> dict[str, Any]:
        """What the provider reported for this session's requests, across launches (cost when known)."""
        return dict(self._session.state.usage)

    def inspect(self, draft: str = "") -> ContextInspection:
        """The next request, with ``draft`` as its message and the lines it would recall."""
        orchestrator = self._orchestrator
        turn = [{"role": "user", "content": draft}] if draft else []
        recalled = orchestrator.recall_preview(draft)
        last = orchestrator.last_recalled
        return ContextInspection(
            orchestrator.assemble(turn, orchestrator.offered_tools, recalled.text if recalled else ""),
            orchestrator.offered_tools or [],
            self.budget,
            self._session.counter,
            recalled=recalled.sources() if recalled else (),
            last_recalled=last.sources() if last else (),
        )

    # the reads of the session as on disk: the reader's, declared there
    effort_log = read_through_reader(SessionReader.effort_log)
    read_lines = read_through_reader(SessionReader.read_lines)

    def export_effort(self, effort_id: str, target: str | Path) -> Path:
        """An effort as Markdown, written to ``target`` (a directory: a file named for it there; a path
        as typed, so ``notes/`` is a directory to create).

        Raises:
            EffortNotFound: no effort has that id.
            OSError: the file cannot be written.
        """
        effort = self.effort(effort_id)
        if effort is None:
            raise EffortNotFound(f"there is no effort '{effort_id}'")
        return export_effort(effort, self._session.effort_path(effort_id), target)

    def export_conversation(self, target: str | Path) -> Path:
        """The whole conversation (ambient chat and every effort's log, in order) as one Markdown file.

        Raises:
            OSError: the file cannot be written.
        """
        session = self._session
        logs = sorted(session.effort_path(e.id) for e in self.full_status().efforts)
        return export_conversation(session.dir.name, session.raw_path, [p for p in logs if p.is_file()], target)

    def recent_lines(self, limit: int = 40) -> list[LoggedLine]:
        """The newest logged lines across the ambient log and recent effort logs (chat history)."""
        return recent_lines(self._session, limit)

    def older_lines(self, before: LoggedLine, limit: int = PAGE) -> HistoryPage:
        """The chat said before ``before`` (the oldest line the pane shows), a page: scrolling back."""
        if self._scrollback is None:
            self._scrollback = ScrollBack(self._session)
        return self._scrollback.page(before, limit)

    def unanswered_turn(self) -> UnansweredTurn | None:
        return unanswered_turn(self._session)

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The reader's ranked search (:meth:`SessionReader.search`), its hits: the engine keeps its
        index in step as it writes, so they are never stale.

        Raises:
            DerivedError: the index cannot be used.
        """
        return self.reader.search(query, limit).hits
