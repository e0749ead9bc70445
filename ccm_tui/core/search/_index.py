"""The search index as callers see it: :class:`EffortIndex`, one object made of parts that share a database."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Self

from ._ambient import AmbientLog
from ._database import _LINE_BITS, DerivedError, IndexDatabase
from ._ingest import Ingest
from ._ranking import Ranking
from ._rare_words import EVIDENCE, MAX_HITS, Evidence, RareWordRecall, RecallHit
from ._records import MAX_MESSAGE_CHARS
from ._results import Results, SearchHit
from ._scoring import Weights


class EffortIndex:
    """A persistent, incrementally updated BM25 search index over a session's efforts.

    The index lives in the session's derived database (``<session>/derived.sqlite``, see
    :mod:`ccm_tui.core.storage.derived`), beside the effort list's rows. It is derived data: deleting
    it loses nothing, the next :meth:`sync_session` rebuilds it from the effort list's rows, the
    ``efforts/<id>.jsonl`` logs and ``raw.jsonl``. Thread-safe (one lock around the connection). Made
    over a session's :class:`DerivedDB` it borrows that connection (``close`` leaves it open); made
    over a path (benchmarks, tests) it owns a database of its own. Use as a context manager or call
    :meth:`close`.

    It owns one database and parts that each hold it, and hands each public method to the part that
    does the work:

    * :class:`~ccm_tui.core.storage.derived.DerivedDB` — the connection, the schema, transactions, and
      recovery: a corrupt, foreign or read-only file is deleted and rebuilt, and an operation that met
      corruption runs once more on the new file (every public method of a part runs that way).
    * :class:`~._ambient.AmbientLog` — the ambient log ``raw.jsonl`` as fixed blocks of lines: its
      incremental ingest, and reading the lines around a hit with one seek.
    * :class:`~._ingest.Ingest` — the efforts and their logs: documents, meta documents (from the
      effort list's rows), messages; the sync of a whole session (the ambient log's included) and its
      marker.
    * :class:`~._ranking.Ranking` — a query's ranked hits (postings, short-list, scores), with
      :class:`~._results.Results` building each hit's snippet and passage.
    * :class:`~._rare_words.RareWordRecall` — the rare-word lookup behind recall, and the lines a
      withdrawal took back.
    """

    def __init__(self, db: IndexDatabase | Path) -> None:
        self._owned = not isinstance(db, IndexDatabase)
        self._database = db = IndexDatabase(db) if not isinstance(db, IndexDatabase) else db
        self._ambient = AmbientLog(db)
        self._ingest = Ingest(db, self._ambient)
        self._ranking = Ranking(db, Results(db))
        self._recall = RareWordRecall(db)

    # ------------------------------------------------------------------ the database

    @property
    def path(self) -> Path:
        """The SQLite file (``IN_MEMORY`` for an index written nowhere)."""
        return self._database.path

    @property
    def database(self) -> IndexDatabase:
        """The derived database the index lives in (the effort list's rows are beside it)."""
        return self._database

    @property
    def recreated(self) -> bool:
        """True when this instance created the db from scratch (new, corrupt or foreign file): the
        caller should run :meth:`sync_session`."""
        return self._database.recreated

    @property
    def failures(self) -> int:
        """Operations that failed so far: an update may be missing (see :meth:`mark_synced`)."""
        return self._database.failures

    def close(self) -> None:
        """Close the database when this index opened it (idempotent)."""
        if self._owned:
            self._database.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def waiting_at_most(self, seconds: float) -> AbstractContextManager[None]:
        """Statements inside wait at most ``seconds`` for another connection's lock (0: not at all),
        then raise ``DerivedBusy`` (see :meth:`.IndexDatabase.waiting_at_most`)."""
        return self._database.waiting_at_most(seconds)

    def optimize(self) -> None:
        """Merge the FTS5 segments (worth it after a large rebuild; takes seconds at 1M rows)."""
        self._database.run(self._optimize)

    def _optimize(self) -> None:
        with self._database.write_txn() as db:
            db.execute("INSERT INTO meta_fts (meta_fts) VALUES ('optimize')")
            db.execute("INSERT INTO msg_fts (msg_fts) VALUES ('optimize')")

    # ------------------------------------------------------------------ the ambient log

    def sync_ambient_log(self, log_path: Path) -> int:
        """Index the complete lines appended to ``<session>/raw.jsonl`` since the last sync; rows added."""
        return self._ambient.sync_ambient_log(log_path)

    def ambient_line_count(self) -> int:
        """Lines of the ambient log indexed so far (every complete line, chat or not)."""
        return self._ambient.ambient_line_count()

    def ambient_block_start(self, line: int) -> tuple[int, int] | None:
        """(1-based line, byte offset) where the indexed block holding 1-based ``line`` of the ambient
        log starts; None when the line is not indexed."""
        return self._ambient.ambient_block_start(line)

    def read_ambient_lines(
        self, log_path: Path, first: int, last: int, cap: int | None = None
    ) -> list[tuple[int, Any]]:
        """Lines ``first``..``last`` (1-based) of the ambient log as (line number, parsed record or
        None), read with one seek (:meth:`.AmbientLog.read_ambient_lines`)."""
        return self._ambient.read_ambient_lines(log_path, first, last, cap)

    # ------------------------------------------------------------------ efforts and their logs

    def sync_efforts(self) -> int:
        """Bring the meta documents forward from the effort list's rows (those whose summary or name
        changed, new or deleted efforts): what a save just changed is findable at once; documents
        written (:meth:`.Ingest.sync_efforts`)."""
        return self._ingest.sync_efforts()

    def add_messages(self, effort_id: str, messages: Iterable[dict[str, Any]], start_line: int) -> int:
        """Index log records written to the effort's log at 0-based line ``start_line`` onwards; rows
        indexed (:meth:`.Ingest.add_messages`)."""
        return self._ingest.add_messages(effort_id, messages, start_line)

    def sync_effort_log(self, effort_id: str, log_path: Path) -> int:
        """Index the complete lines appended to ``log_path`` since the last sync; lines added."""
        return self._ingest.sync_effort_log(effort_id, log_path)

    def sync_session(self, session_dir: Path) -> int:
        """Bring the index up to date with a session: the effort list's rows (in the same database),
        the efforts' logs and ``raw.jsonl``; log lines added (:meth:`.Ingest.sync_session`)."""
        return self._ingest.sync_session(session_dir)

    def synced_marker(self) -> Any:
        """What the session looked like when the index last held all of it (None: not known)."""
        return self._ingest.synced_marker()

    def mark_synced(self, marker: Any) -> None:
        """The index holds all of the session as ``marker`` describes it (``Session.index_marker``)."""
        self._ingest.mark_synced(marker)

    # ------------------------------------------------------------------ reading

    def search(
        self, query: str, limit: int = 10, status: str | None = None, *, weights: Weights | None = None
    ) -> list[SearchHit]:
        """Efforts (and stretches of ambient chat) matching ``query`` (free text), best first, ties
        broken by id; ``status`` keeps one status (``"ambient"``: ambient chat only); ``weights``
        replaces the ranking's parameters, for benchmarks (:meth:`.Ranking.search`)."""
        return self._ranking.search(query, limit, status, weights=weights)

    def logs_holding(self, words: list[str], on_disk: set[str]) -> set[str]:
        """The efforts of ``on_disk`` whose log may hold a text made of ``words`` (a forget's
        candidates, read and verified by the caller): those with an indexed line holding every word,
        those the index holds only in part (a line past the indexed head, withdrawn lines, not all
        lines indexed) and those it does not know."""
        query = " ".join('"' + w.replace('"', '""') + '"' for w in words)
        return self._database.run(self._logs_holding, query, on_disk)

    def _logs_holding(self, query: str, on_disk: set[str]) -> set[str]:
        conn = self._database.conn
        nums = {r[0] >> _LINE_BITS for r in conn.execute("SELECT rowid FROM msg_fts WHERE msg_fts MATCH ?", (query,))}
        known: set[str] = set()
        found: set[str] = set()
        for num, effort_id in conn.execute("SELECT num, effort_id FROM efforts WHERE source = 'effort'"):
            known.add(effort_id)
            if num in nums:
                found.add(effort_id)
        partial = (
            "SELECT effort_id FROM efforts WHERE source = 'effort' AND (log_size IS NULL OR log_size > ?"
            " OR indexed_lines < log_lines OR num IN (SELECT log FROM withdrawn))"
        )
        found.update(r[0] for r in conn.execute(partial, (MAX_MESSAGE_CHARS,)))
        return (found | (on_disk - known)) & on_disk

    def recall(
        self,
        message: str,
        *,
        skip: Callable[[str, str, int], bool] | None = None,
        limit: int = MAX_HITS,
        evidence: Evidence = EVIDENCE,
    ) -> list[RecallHit]:
        """The strongest passages for ``message`` among the logged lines ``skip(source, log, line)``
        does not leave out; none when nothing answers it strongly enough (:meth:`.RareWordRecall.recall`)."""
        return self._recall.recall(message, skip=skip, limit=limit, evidence=evidence)

    def withdrawn_lines(self, log: str, first: int, last: int) -> set[int]:
        """The lines of ``first..last`` (1-based) of ``log`` ("ambient" or an effort id) that a
        withdrawal took back, their markers included."""
        return self._recall.withdrawn_lines(log, first, last)

    def withdrawals_read(self, log: str, first: int, last: int) -> tuple[set[int], int, int] | None:
        """The withdrawn lines of ``first..last`` of ``log`` the index has read, and how far it read
        the log (bytes, lines); None when the index cannot answer (busy, broken, closed): the caller
        reads the markers from the log instead (:class:`..session.withdrawn.IndexedWithdrawals`)."""
        try:
            return self._recall.withdrawals_read(log, first, last)
        except (DerivedError, sqlite3.ProgrammingError):  # (closed)
            return None
