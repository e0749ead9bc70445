"""Reading a session: the one read-only reader behind every read (search, lines, a log, the status).

The engine's questions, ``ccm-tui search`` and ``ccm-tui status``, the MCP server's tools and the TUI's
palette all read through a :class:`SessionReader`, so a search brings the index up to date, leaves out
ambient chat folded into efforts and falls back when the index cannot be written in one way only;
lines are read by one function (:func:`~..session.numbered_lines.read_log_lines`); the status is
counted without a model.

A reader is either **standalone** — it opens the session read-only, never takes the writer lock and
never waits on it (the MCP server answers while the TUI is mid-turn): the session is read again when
another process wrote, and a search brings the index up to date without waiting, searching it as it
is while another process holds its write lock (stale by at most that exchange, and it says so) — or
**over an open engine** (:meth:`SessionReader.over`): it reads the engine's session and index, which
the engine keeps in step as it writes. Its methods are thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial, wraps
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from ...config import Settings, default_budget
from ..efforts.working_context import message_cap
from ..manifest.effort import Effort
from ..search import DerivedBusy, DerivedError, EffortIndex, SearchHit, without_folded
from ..search.sync import sync_index
from ..session.numbered_lines import AMBIENT, LogLines, read_log_lines
from ..session.session import Session
from ..storage.durable import JsonlRead, read_jsonl
from ..storage.long_lines import READ_BYTES, SHOW_BYTES, cut_size, shown_content
from ..text.tokens import TokenCounter
from ..turn.orchestrator import figures_at_rest
from ..views.status import EffortView, SessionStatus, effort_view, full_status, session_status, status_data

READ_WAIT = 1.0  # seconds a search may wait for a lock SQLite takes briefly (a WAL reader rarely meets one)

P = ParamSpec("P")
R = TypeVar("R")


class ReadingSession(Session):
    """A session read for searches and listings, which build no context: the open efforts' logs and the
    ambient window stay on disk (line and token counts are the manifest's), so a huge message in
    one costs nothing to open."""

    open_logs = False

    def load_ambient_tail(self) -> None:
        """(No ambient window: nothing here shows it.)"""


@dataclass(frozen=True)
class SearchAnswer:
    hits: list[SearchHit]
    stale: bool = False  # another process was writing the index: it may miss the exchange being indexed


@dataclass(frozen=True)
class EffortEntry:
    """An effort as a listing shows it: its view, and the turn it was last used in (None: unknown)."""

    view: EffortView
    last_turn: int | None


class SessionReader:
    """One session, read (see the module doc). A standalone reader is closed with :meth:`close` (or
    used as a context manager); one over an engine closes nothing of the engine's."""

    def __init__(self, session_dir: Path, settings: Settings) -> None:
        self.dir = Path(session_dir)
        self.settings = settings
        self._lock = threading.RLock()
        self._session: Session | None = None
        self._index: EffortIndex | None = None
        self._index_db: object = None  # the derived database the index reads
        self._synced = False  # the index holds what the session held when it was last read
        self._shared = False  # over an engine: its session, kept in step by its writes …
        self._engine_index: EffortIndex | None = None  # … and its index, when it has one open

    @classmethod
    def over(cls, session: Session, index: EffortIndex | None, settings: Settings) -> SessionReader:
        """A reader of an open engine's session and index (``index`` None: the engine has none open;
        a search then opens the file for itself)."""
        reader = cls(session.dir, settings)
        reader._session, reader._engine_index, reader._shared = session, index, True
        return reader

    def __enter__(self) -> SessionReader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the session
    def _current(self) -> Session:
        """The session as on disk now (a standalone reader reads it again only when another process
        wrote to it)."""
        if self._session is None:
            self._session = ReadingSession.open(
                self.dir,
                readonly=True,
                ambient_window=self.settings.ambient_window,
                counter=TokenCounter(self.settings.model),
            )
            self._synced = False
        elif not self._shared and self._session.refresh_if_changed():
            self._synced = False
        return self._session

    def _open_index(self) -> EffortIndex:
        """The search index, in the session's derived database (which the session reopens when
        another process replaced the file, and keeps in memory when the directory cannot be written)."""
        derived = self._current().derived
        assert derived is not None
        if self._index is None or self._index_db is not derived:
            self._index, self._index_db = EffortIndex(derived), derived
            self._synced = False
        return self._index

    def _synced_index(self) -> tuple[EffortIndex, bool]:
        """The index, brought up to date unless another process holds its write lock now; and
        whether it may be stale."""
        session = self._current()
        if self._engine_index is not None:
            return self._engine_index, False  # (the engine keeps it in step as it writes)
        index = self._open_index()
        if self._synced:
            return index, False
        try:
            with index.waiting_at_most(0):
                sync_index(index, session)  # one query when the index already holds the session
        except DerivedBusy:
            return index, True
        self._synced = not self._shared  # (an engine's session moves: its stand-in index syncs each time)
        return index, False

    # ------------------------------------------------------------------ questions
    def search(self, query: str, limit: int = 10) -> SearchAnswer:
        """Ranked search over every effort and the ambient chat, without the ambient chat folded into
        efforts (the efforts holding it are found instead).

        Raises:
            DerivedError: the index cannot be opened or read.
        """
        with self._lock:
            index, stale = self._synced_index()
            with index.waiting_at_most(READ_WAIT):
                hits = index.search(query, limit=limit)
            efforts = self._current().efforts
            hits = [h for h in hits if h.source != "effort" or not _merged(efforts.get(h.id))]
            return SearchAnswer(without_folded(hits, efforts.folded_upto()), stale)

    def logs_holding(self, words: list[str], on_disk: set[str]) -> set[str]:
        """The efforts whose log may hold a text made of ``words``, from the index brought up to date
        — every log's stat compared, even when the session's marker did not move (a line written
        behind the app's back is indexed too) — (:meth:`EffortIndex.logs_holding`; a forget reads
        and verifies them).

        Raises:
            DerivedError: the index cannot be opened or read (or another process is writing it).
        """
        with self._lock:
            index, stale = self._synced_index()
            if stale:
                raise DerivedBusy("the search index is being written by another process")
            with index.waiting_at_most(READ_WAIT):
                index.sync_session(self.dir)
                return index.logs_holding(words, on_disk)

    def read_lines(self, log: str, first: int, last: int, *, line: int | None = None, strict: bool = True) -> LogLines:
        """Lines ``first``..``last`` of an effort's log or of the ambient chat (``"ambient"``): the
        ambient log through the index's seek when the index is usable. ``line``: the line they were
        asked around, which must exist (else ``first`` must; ``strict`` False: lines past the end are
        simply none).

        Raises:
            EffortNotFound: ``log`` is not an effort of the session.
            LineRangeError: the line asked for is past the end of the log.
        """
        line = (line if line is not None else first) if strict else None
        with self._lock:
            session = self._current()
            if log != AMBIENT:
                return read_log_lines(session, log, first, last, asked=line, index=self._index)
            try:
                index, _ = self._synced_index()
            except DerivedError:
                return read_log_lines(session, log, first, last, asked=line)
            read = partial(index.read_ambient_lines, session.raw_path, cap=READ_BYTES)
            return read_log_lines(
                session,
                log,
                first,
                last,
                ambient=read,
                ambient_total=index.ambient_line_count(),
                asked=line,
                index=index,
            )

    def effort_log(self, effort_id: str) -> JsonlRead:
        """An effort's raw log as on disk, to show (unreadable lines counted, not fatal): a huge line by
        its head, its content saying how much is left out (:mod:`..storage.long_lines`)."""
        with self._lock:
            read = read_jsonl(self._current().effort_path(effort_id), line_cap=SHOW_BYTES)
        read.records = [{**r, "content": shown_content(r)} if cut_size(r) else r for r in read.records]
        return read

    def efforts(self) -> list[EffortEntry]:
        """Every effort of the manifest, in its order, with the turn it was last used in (a merged
        effort is left out: it lives on in the effort it went into)."""
        with self._lock:
            session = self._current()
            view = session.view
            return [
                EffortEntry(
                    effort_view(session, e, in_context=False),  # (an open effort's log is not read to list it)
                    view.last_referenced.get(e.id, view.summaries.get(e.id)),
                )
                for e in session.efforts
                if not e.merged_into
            ]

    def counts(self) -> tuple[int, int]:
        """How many efforts the session holds, and how many of them are open (without reading them all)."""
        with self._lock:
            session = self._current()
            return len(session.efforts), len(session.efforts.open_efforts())

    def effort(self, effort_id: str) -> EffortView | None:
        with self._lock:
            session = self._current()
            effort = session.efforts.get(effort_id)
            return effort_view(session, effort) if effort is not None else None

    @property
    def turn(self) -> int:
        with self._lock:
            return self._current().state.turn

    def status(self, *, every_effort: bool = False) -> tuple[SessionStatus, dict[str, Any]]:
        """The efforts and what the next request would carry, counted without a model (``ccm-tui
        status``; ``every_effort``: ``status --json``, every effort; else those in use and the newest
        concluded, so it costs the same at any size). The context needs the open efforts' logs and
        the ambient window: they are read for it, then let go.

        Raises:
            StoreError: the session cannot be read.
        """
        settings = self.settings
        with Session.open(
            self.dir, readonly=True, ambient_window=settings.ambient_window, counter=TokenCounter(settings.model)
        ) as session:
            budget = settings.token_budget or session.state.budget or default_budget()
            figures = figures_at_rest(session, settings, budget)
            cap = message_cap(settings.message_max_tokens, budget)
            status = full_status(session, cap) if every_effort else session_status(session, message_cap=cap)
            return status, status_data(session, status, figures)

    def close(self) -> None:
        """Let go of what the reader opened (never the engine's session or index)."""
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None
            if self._session is not None and not self._shared:
                self._session.close()
            self._session = None


def _merged(effort: Effort | None) -> bool:
    """A merged effort's lines are found under the effort it went into (its own hits are left out)."""
    return effort is not None and bool(effort.merged_into)


def read_status(
    session_dir: Path, settings: Settings, *, every_effort: bool = False
) -> tuple[SessionStatus, dict[str, Any]]:
    """The efforts and the context figures (``status``; ``status --json`` with ``every_effort``),
    without the writer lock and without a model (see :meth:`SessionReader.status`).

    Raises:
        StoreError: the session cannot be read.
    """
    with SessionReader(Path(session_dir), settings) as reader:
        return reader.status(every_effort=every_effort)


class HasReader(Protocol):
    """What holds a reader (the engine: one over its open session)."""

    @property
    def reader(self) -> SessionReader: ...


def read_through_reader(read: Callable[Concatenate[SessionReader, P], R]) -> Callable[Concatenate[HasReader, P], R]:
    """A method that is ``read`` of the owner's ``reader``: same signature, same documentation (a
    read is declared once, on :class:`SessionReader`; ``Engine.effort_log = read_through_reader(
    SessionReader.effort_log)``)."""

    @wraps(read)
    def forward(owner: HasReader, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return read(owner.reader, *args, **kwargs)

    return forward
