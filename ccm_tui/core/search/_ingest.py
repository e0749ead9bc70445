"""Incremental ingest of a session into the search index: the effort list's meta documents and the JSONL logs.

An effort's meta document (the words of its id, its summary and its name, in ``meta_fts``) is derived
from its row of the effort list (``entries``, kept by :mod:`ccm_tui.core.manifest.effort_list` in the
same database). The list marks the rows whose summary or name changed (``fts_stale``, new rows too)
and a trigger records the ids of deleted ones (``entries_gone``), so bringing the documents forward
costs what changed, not a comparison of every effort. Status, summary and name are never copied here:
a search reads them from ``entries``.

Log lines: line numbers are 0-based (line ``n`` is preceded by ``n`` lines), the
same count as ``Effort.messages``. Only complete lines (ending in ``\\n``) are
indexed; a torn tail left by a crash is picked up once completed. Lines that
are not a JSON object are skipped but still count. A log is re-read only when
its (size, mtime_ns, inode) changed, and then only after the offset already
indexed (unless it shrank, was replaced or rewritten: then from scratch).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from . import _records as records
from ._ambient import RAW_FILE, AmbientLog
from ._database import IndexDatabase, recovering
from ._records import LogState, clear_messages, insert_messages, normalise, parse_line
from ._unspaced import index_grams

SYNC_BATCH_LINES = 100_000  # sync_session commits after about this many new lines

_ID_SEPARATORS_RE = re.compile(r"[-_./:\s]+")
_CHANGED = "SELECT EXISTS (SELECT 1 FROM entries WHERE fts_stale = 1) OR EXISTS (SELECT 1 FROM entries_gone)"
_GONE = (  # the documents of deleted rows (an id deleted and listed again keeps its document)
    "SELECT d.num FROM entries_gone g CROSS JOIN efforts d ON d.effort_id = g.id"  # (CROSS: from the few gone)
    " WHERE d.source = 'effort' AND g.id NOT IN (SELECT id FROM entries)"
)
_STALE = (
    "SELECT id, json_extract(entry, '$.summary'), json_extract(entry, '$.name') FROM entries"
    " WHERE fts_stale = 1 ORDER BY ord"  # (in list order: a new effort's document number follows it)
)
_DOCUMENTS = (  # once the rows are synced, the documents are the listed efforts, one each; in number order:
    # the messages of a rebuild then reach FTS5 in rowid order, which keeps its segments few
    "SELECT effort_id, log_size, log_mtime_ns, log_ino FROM efforts WHERE source = 'effort' ORDER BY num"
)


def _id_words(effort_id: str) -> str:
    """``fix-auth_bug`` → ``fix auth bug``."""
    return _ID_SEPARATORS_RE.sub(" ", effort_id).strip()


@dataclass
class _EffortRow:
    num: int
    effort_id: str
    log: LogState


_ROW_COLUMNS = "num, effort_id, log_offset, log_lines, log_tail, log_size, log_mtime_ns, log_ino, indexed_lines"


def _row_from_tuple(t: Sequence[Any]) -> _EffortRow:
    return _EffortRow(t[0], t[1], LogState(t[2], t[3], bytes(t[4]), t[5], t[6], t[7], t[8]))


def _safe_file_name(effort_id: str) -> bool:
    """True when ``<id>.jsonl`` names a file inside efforts/ (never a path out of it)."""
    return bool(effort_id) and effort_id not in (".", "..") and "/" not in effort_id and os.sep not in effort_id


class Ingest:
    """Writes to the index: effort documents, meta documents and log messages; a session's sync brings the
    ambient log (:class:`~._ambient.AmbientLog`) up to date in the same transaction."""

    def __init__(self, db: IndexDatabase, ambient: AmbientLog) -> None:
        self.db = db
        self._ambient = ambient

    # ------------------------------------------------------------------ effort documents

    def _row(self, effort_id: str) -> _EffortRow | None:
        sql = f"SELECT {_ROW_COLUMNS} FROM efforts WHERE effort_id = ? AND source = 'effort'"
        found = self.db.conn.execute(sql, (effort_id,)).fetchone()
        return _row_from_tuple(found) if found else None

    def _new_row(self, effort_id: str) -> _EffortRow:
        num = self.db.conn.execute("INSERT INTO efforts (effort_id) VALUES (?)", (effort_id,)).lastrowid
        assert num is not None
        return _EffortRow(num, effort_id, LogState())

    def _listed_row(self, effort_id: str) -> _EffortRow | None:
        """The effort's document, created if the effort list holds it; None if it does not (an effort
        not yet saved, or deleted): the index holds documents of listed efforts only."""
        row = self._row(effort_id)
        if row is None and self.db.conn.execute("SELECT 1 FROM entries WHERE id = ?", (effort_id,)).fetchone():
            row = self._new_row(effort_id)
        return row

    def _write_meta(self, num: int, effort_id: str, summary: str | None, name: str | None) -> None:
        summary_text, name_text = normalise(summary or ""), normalise(name or "")
        self.db.conn.execute(
            "INSERT OR REPLACE INTO meta_fts (rowid, effort_id, id_words, summary, name, grams)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                num,
                effort_id,
                _id_words(effort_id),
                summary_text,
                name_text,
                index_grams(f"{summary_text}\n{name_text}"),
            ),
        )

    def _delete_effort(self, num: int) -> None:
        clear_messages(self.db.conn, num)
        self.db.conn.execute("DELETE FROM meta_fts WHERE rowid = ?", (num,))
        self.db.conn.execute("DELETE FROM efforts WHERE num = ?", (num,))

    def _save_log_state(self, num: int, log: LogState) -> None:
        self.db.conn.execute(
            "UPDATE efforts SET log_offset = ?, log_lines = ?, log_tail = ?, log_size = ?, log_mtime_ns = ?,"
            " log_ino = ?, indexed_lines = ? WHERE num = ?",
            (log.offset, log.lines, log.tail, log.size, log.mtime_ns, log.ino, log.indexed_lines, num),
        )

    # ------------------------------------------------------------------ public: updates

    @recovering
    def sync_efforts(self) -> int:
        """Bring the meta documents forward from the effort list's rows: write those whose summary or
        name changed (new efforts included), drop those of efforts deleted from the list. Costs what
        changed; when nothing did, one read and no write lock. Returns the documents written."""
        if not self.db.conn.execute(_CHANGED).fetchone()[0]:
            return 0
        with self.db.write_txn():
            return self._sync_efforts()

    def _sync_efforts(self) -> int:
        conn = self.db.conn
        for (num,) in conn.execute(_GONE).fetchall():
            self._delete_effort(num)
        conn.execute("DELETE FROM entries_gone")
        stale = conn.execute(_STALE).fetchall()
        for effort_id, summary, name in stale:
            self._write_meta((self._row(effort_id) or self._new_row(effort_id)).num, effort_id, summary, name)
        conn.execute("UPDATE entries SET fts_stale = 0 WHERE fts_stale = 1")
        return len(stale)

    def add_messages(self, effort_id: str, messages: Iterable[dict[str, Any]], start_line: int) -> int:
        """Index log records appended at 0-based line ``start_line`` onwards.

        The records must be the ones written to the effort's log at those lines;
        a later :meth:`sync_effort_log` then skips them instead of re-reading.
        Returns rows indexed (none for an effort the list does not hold).
        """
        return self._add_messages(effort_id, list(messages), start_line)  # a list survives a retry

    @recovering
    def _add_messages(self, effort_id: str, batch: list[dict[str, Any]], start_line: int) -> int:
        with self.db.write_txn():
            row = self._listed_row(effort_id)
            if row is None:
                return 0
            added = insert_messages(self.db.conn, row.num, enumerate(batch, start_line))
            if start_line <= row.log.indexed_lines < start_line + len(batch):
                self.db.conn.execute(
                    "UPDATE efforts SET indexed_lines = ? WHERE num = ?", (start_line + len(batch), row.num)
                )
            return added

    @recovering
    def sync_effort_log(self, effort_id: str, log_path: Path) -> int:
        """Index the complete lines appended to ``log_path`` since the last sync.

        A log that shrank, was replaced (new inode) or rewritten before the
        last synced offset is re-indexed from scratch. Returns lines added (none for an effort the
        list does not hold).
        """
        with self.db.write_txn():
            row = self._listed_row(effort_id)
            return 0 if row is None else self._sync_log(row, log_path)

    @recovering
    def synced_marker(self) -> Any:
        """What the session looked like when the index last held all of it (None: not known)."""
        return self.db.meta("logs_marker")

    @recovering
    def mark_synced(self, marker: Any) -> None:
        """The index holds all of the session as ``marker`` describes it: a later sync with the same
        marker has nothing to do (see ``Session.index_marker``)."""
        with self.db.write_txn():
            self.db.set_meta(logs_marker=marker)

    @recovering
    def sync_session(self, session_dir: Path) -> int:
        """Bring the index up to date with a session: the meta documents with its effort list's rows
        (:meth:`sync_efforts`), then the log of every effort in the list whose (size, mtime_ns, inode)
        changed (the others are not opened), then the ambient log (``raw.jsonl``). Returns the number
        of log lines added."""
        logs = os.path.join(os.fspath(session_dir), "efforts", "")
        added = pending = 0
        with self.db.write_txn():
            self._sync_efforts()
            for effort_id, *stamp in self.db.conn.execute(_DOCUMENTS).fetchall():
                lines = self._sync_entry(effort_id, stamp, logs)
                added, pending = added + lines, pending + lines
                if pending >= SYNC_BATCH_LINES:  # bound the WAL and memory of a big (re)build
                    self.db.commit_point()
                    pending = 0
            added += self._ambient.sync(os.path.join(os.fspath(session_dir), RAW_FILE))
        if added >= SYNC_BATCH_LINES:  # a big (re)build: give the WAL's disk space back
            self.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return added

    def _sync_entry(self, effort_id: str, stamp: list[Any], logs: str) -> int:
        """sync_session for one effort of the list (``stamp``: of its log at the last sync); the common
        no-change case costs one stat()."""
        path = logs + effort_id + ".jsonl" if _safe_file_name(effort_id) else None
        try:
            st = os.stat(path) if path else None
        except OSError:
            st = None
        if stamp == ([None] * 3 if st is None else [st.st_size, st.st_mtime_ns, st.st_ino]):
            return 0
        row = self._row(effort_id)
        return self._sync_log(row, path) if path and row else 0

    # ------------------------------------------------------------------ log syncing

    def _sync_log(self, row: _EffortRow, path: str | Path) -> int:
        """Index what was appended to ``path`` since ``row.log``; update the stored state.

        A log whose (size, mtime_ns, inode) match the last sync is not opened.
        """
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if row.log.offset or row.log.indexed_lines or row.log.size is not None:
                self._reset_log(row)
                self._save_log_state(row.num, row.log)
            return 0
        if row.log.unchanged(st):
            return 0
        with records.open_log(path) as fh:
            st = os.fstat(fh.fileno())
            if row.log.replaced(st):
                self._reset_log(row)
            data = self._read_after(fh, row.log)
            if data is None:  # bytes before the offset changed: the log was rewritten
                self._reset_log(row)
                data = self._read_after(fh, row.log)
                assert data is not None
        added = self._consume(row, data)
        row.log.size, row.log.mtime_ns, row.log.ino = st.st_size, st.st_mtime_ns, st.st_ino
        self._save_log_state(row.num, row.log)
        return added

    def _reset_log(self, row: _EffortRow) -> None:
        """Forget everything indexed from the effort's log."""
        clear_messages(self.db.conn, row.num)
        row.log = LogState()

    @staticmethod
    def _read_after(fh: IO[bytes], log: LogState) -> bytes | None:
        """Bytes after ``log.offset``, or None if the remembered tail no longer matches."""
        start = log.offset - len(log.tail)
        fh.seek(start)
        data = fh.read()
        if not data.startswith(log.tail):
            return None
        return data[len(log.tail) :]

    def _consume(self, row: _EffortRow, data: bytes) -> int:
        """Index the complete lines of ``data`` (which starts at ``row.log.offset``)."""
        end = data.rfind(b"\n") + 1
        if end == 0:
            return 0
        complete = data[:end]
        lines = complete.split(b"\n")[:-1]
        first = row.log.lines
        skip = max(0, row.log.indexed_lines - first)  # already indexed by add_messages
        records = ((first + i, parse_line(raw)) for i, raw in enumerate(lines) if i >= skip)
        added = insert_messages(self.db.conn, row.num, records)
        row.log.advance(complete, len(lines))
        row.log.indexed_lines = max(row.log.indexed_lines, row.log.lines)
        return added
