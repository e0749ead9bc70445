"""A session read by a long-lived reader without run state: never the writer lock, never a wait on it.

The MCP server (``ccm-tui mcp``) answers other agents' questions about a session while
the TUI or ``ccm-tui send`` may be mid-turn on it. A :class:`SessionReader` keeps the
session open read-only — no lock; it is read again when another process wrote, which
every write marks in ``events.jsonl`` — and keeps its search index open. Before a search
it brings the index up to date without waiting: while another process holds the index's
write lock (the TUI indexing the exchange it just logged), it searches the index as it
is, stale by at most that exchange, and says so. Its methods are thread-safe.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ...config import Settings
from ...errors import EffortNotFound, InputError
from ..search import EffortIndex, SearchHit, SearchIndexBusy, SearchIndexError, without_folded
from ..search.sync import sync_index
from ..session.numbered_lines import AMBIENT, LogLines, file_lines, indexed_lines
from ..session.session import SEARCH_DB, Session
from ..storage.long_lines import READ_BYTES
from ..text.tokens import TokenCounter
from ..views.status import EffortView, effort_view

READ_WAIT = 1.0  # seconds a search may wait for a lock SQLite takes briefly (a WAL reader rarely meets one)


class ReadingSession(Session):
    """A session read for searches and listings, which build no context: the open efforts' logs and the
    ambient window stay on disk (line and token counts are the manifest's), so a huge message in
    one costs nothing to open."""

    open_logs = False

    def load_ambient_tail(self) -> None:
        """(No ambient window: nothing here shows it.)"""


class ReadError(InputError):
    """What was asked for is not in the session (an unknown effort, a line past the end)."""


@dataclass(frozen=True)
class SearchAnswer:
    hits: list[SearchHit]
    stale: bool = False  # another process was writing the index: it may miss the exchange being indexed


@dataclass(frozen=True)
class EffortEntry:
    """An effort as a listing shows it: its view, and the turn it was last used in (None: unknown)."""

    view: EffortView
    last_turn: int | None


def _past_end(what: str, total: int, line: int) -> str:
    return f"{what} has {total} log lines; line {line} does not exist (it is past the end)"


class SessionReader:
    """One session, read without its writer lock (see the module doc). Call :meth:`close` at the end."""

    def __init__(self, session_dir: Path, settings: Settings) -> None:
        self.dir = Path(session_dir)
        self.settings = settings
        self._lock = threading.RLock()
        self._session: Session | None = None
        self._index: EffortIndex | None = None
        self._index_ino: int | None = None
        self._synced = False  # the index holds what the session held when it was last read

    # ------------------------------------------------------------------ the session
    def _current(self) -> Session:
        """The session as on disk now (read again only when another process wrote to it)."""
        if self._session is None:
            self._session = ReadingSession.open(
                self.dir,
                readonly=True,
                ambient_window=self.settings.ambient_window,
                counter=TokenCounter(self.settings.model),
            )
            self._synced = False
        elif self._session.refresh_if_changed():
            self._synced = False
        return self._session

    def _open_index(self) -> EffortIndex:
        """The search index, opened again when its file was replaced (deleted and rebuilt)."""
        path = self.dir / SEARCH_DB
        try:
            ino: int | None = os.stat(path).st_ino
        except FileNotFoundError:
            ino = None
        if self._index is not None and (ino is None or ino != self._index_ino):
            self._index.close()
            self._index = None
        if self._index is None:
            self._index = EffortIndex(path)
            self._index_ino = os.stat(path).st_ino
            self._synced = False
        return self._index

    def _synced_index(self) -> tuple[EffortIndex, bool]:
        """The index, brought up to date unless another process holds its write lock now; and
        whether it may be stale."""
        session = self._current()
        index = self._open_index()
        if self._synced:
            return index, False
        try:
            with index.waiting_at_most(0):
                sync_index(index, session)  # one query when the index already holds the session
        except SearchIndexBusy:
            return index, True
        self._synced = True
        return index, False

    # ------------------------------------------------------------------ questions
    def search(self, query: str, limit: int = 10) -> SearchAnswer:
        """Ranked search over every effort and the ambient chat (raises SearchIndexError when the index
        cannot be opened at all)."""
        with self._lock:
            index, stale = self._synced_index()
            with index.waiting_at_most(READ_WAIT):
                hits = index.search(query, limit=limit)
            return SearchAnswer(without_folded(hits, self._current().state.ambient_folded_upto), stale)

    def efforts(self) -> list[EffortEntry]:
        """Every effort of the manifest, in its order, with the turn it was last used in."""
        with self._lock:
            session = self._current()
            view = session.view
            return [
                EffortEntry(
                    effort_view(session, e, in_context=False),  # (an open effort's log is not read to list it)
                    view.last_referenced.get(e.id, view.summaries.get(e.id)),
                )
                for e in session.efforts
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

    def read_lines(self, log: str, first: int, last: int, *, line: int | None = None) -> LogLines:
        """Lines ``first``..``last`` of an effort's log or of the ambient chat (``"ambient"``); the
        ambient log through the index's seek when the index is usable. ``line``: the line they were
        asked around, which must exist (else ``first`` must). :class:`ReadError` for an effort the
        manifest does not name or a line past the end (naming that line and the log's length)."""
        asked = line if line is not None else first
        with self._lock:
            session = self._current()
            if log == AMBIENT:
                return self._ambient_lines(session, first, last, asked)
            if session.efforts.get(log) is None:
                raise EffortNotFound(f"there is no effort '{log}' in this session")
            read = file_lines(session.effort_path(log), first, last)
            if asked > (read.total or 0):
                raise ReadError(_past_end(f"effort '{log}'", read.total or 0, asked))
            return read

    def _ambient_lines(self, session: Session, first: int, last: int, asked: int) -> LogLines:
        try:
            index, _ = self._synced_index()
            total = max(session.state.ambient_messages, index.ambient_line_count())
        except SearchIndexError:
            index, total = None, session.state.ambient_messages
        if asked > total:
            raise ReadError(_past_end("the ambient chat", total, asked))
        if index is None:
            return file_lines(session.raw_path, first, last)
        chosen = index
        return indexed_lines(
            lambda a, b: chosen.read_ambient_lines(session.raw_path, a, b, READ_BYTES), first, last, total
        )

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None
            if self._session is not None:
                self._session.close()
                self._session = None
