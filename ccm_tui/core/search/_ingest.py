"""Incremental ingest of a session into the search index: the manifest's efforts and their JSONL logs.

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
_CAMEL_RE = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _id_words(effort_id: str) -> str:
    """``fix-auth_bug`` → ``fix auth bug``; ``fixAuthBug`` → ``fix Auth Bug``."""
    return _CAMEL_RE.sub(" ", _ID_SEPARATORS_RE.sub(" ", effort_id)).strip()


@dataclass
class _EffortRow:
    num: int
    effort_id: str
    status: str
    summary: str | None
    name: str | None
    log: LogState


_ROW_COLUMNS = (
    "num, effort_id, status, summary, name, log_offset, log_lines, log_tail, "
    "log_size, log_mtime_ns, log_ino, indexed_lines"
)


def _row_from_tuple(t: Sequence[Any]) -> _EffortRow:
    log = LogState(t[5], t[6], bytes(t[7]), t[8], t[9], t[10], t[11])
    return _EffortRow(t[0], t[1], t[2], t[3], t[4], log)


def _safe_file_name(effort_id: str) -> bool:
    """True when ``<id>.jsonl`` names a file inside efforts/ (never a path out of it)."""
    return bool(effort_id) and effort_id not in (".", "..") and "/" not in effort_id and os.sep not in effort_id


def _effort_entry(entry: Any) -> tuple[str, str, str | None, str | None]:
    """(id, status, summary, name) from a manifest tuple or an Effort-like object."""
    if isinstance(entry, (tuple, list)):
        name = entry[3] if len(entry) > 3 else None
        return str(entry[0]), str(entry[1]), entry[2], name
    return entry.id, entry.status, entry.summary, getattr(entry, "name", None)


class Ingest:
    """Writes to the index: effort rows, meta documents and log messages; a session's sync brings the
    ambient log (:class:`~._ambient.AmbientLog`) up to date in the same transaction."""

    def __init__(self, db: IndexDatabase, ambient: AmbientLog) -> None:
        self.db = db
        self._ambient = ambient
        self._sync_cache: tuple[tuple[int, int, int], dict[str, tuple[Any, ...]]] | None = None

    # ------------------------------------------------------------------ effort rows

    def _row(self, effort_id: str) -> _EffortRow | None:
        sql = f"SELECT {_ROW_COLUMNS} FROM efforts WHERE effort_id = ? AND source = 'effort'"
        found = self.db.conn.execute(sql, (effort_id,)).fetchone()
        return _row_from_tuple(found) if found else None

    def _ensure_row(self, effort_id: str) -> _EffortRow:
        """The effort's row, created as an open effort without summary if unknown."""
        row = self._row(effort_id)
        if row is None:
            row = self._write_meta(None, effort_id, "open", None, None)
        return row

    def _write_meta(
        self, row: _EffortRow | None, effort_id: str, status: str, summary: str | None, name: str | None
    ) -> _EffortRow:
        """Insert or update an effort's row and meta document; no-op when unchanged."""
        db = self.db.conn
        if row is None:
            num = db.execute(
                "INSERT INTO efforts (effort_id, status, summary, name) VALUES (?, ?, ?, ?)",
                (effort_id, status, summary, name),
            ).lastrowid
            assert num is not None
            row = _EffortRow(num, effort_id, status, summary, name, LogState())
        elif (row.status, row.summary, row.name) == (status, summary, name):
            return row
        else:
            db.execute(
                "UPDATE efforts SET status = ?, summary = ?, name = ? WHERE num = ?",
                (status, summary, name, row.num),
            )
            text_changed = (row.summary, row.name) != (summary, name)
            row.status, row.summary, row.name = status, summary, name
            if not text_changed:  # the status lives in `efforts` only
                return row
        summary_text, name_text = normalise(summary or ""), normalise(name or "")
        db.execute(
            "INSERT OR REPLACE INTO meta_fts (rowid, effort_id, id_words, summary, name, grams)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                row.num,
                effort_id,
                _id_words(effort_id),
                summary_text,
                name_text,
                index_grams(f"{summary_text}\n{name_text}"),
            ),
        )
        return row

    def _delete_effort(self, row: _EffortRow) -> None:
        clear_messages(self.db.conn, row.num)
        self.db.conn.execute("DELETE FROM meta_fts WHERE rowid = ?", (row.num,))
        self.db.conn.execute("DELETE FROM efforts WHERE num = ?", (row.num,))

    def _save_log_state(self, num: int, log: LogState) -> None:
        self.db.conn.execute(
            "UPDATE efforts SET log_offset = ?, log_lines = ?, log_tail = ?, log_size = ?, log_mtime_ns = ?,"
            " log_ino = ?, indexed_lines = ? WHERE num = ?",
            (log.offset, log.lines, log.tail, log.size, log.mtime_ns, log.ino, log.indexed_lines, num),
        )

    # ------------------------------------------------------------------ public: updates

    @recovering
    def upsert_effort(self, effort_id: str, *, status: str, summary: str | None, name: str | None = None) -> None:
        """Create or update an effort's meta document (id, status, summary, name).

        ``name=None`` keeps the name already stored; pass ``""`` to clear it.
        Status and summary are always replaced (``None`` means no summary).
        """
        with self.db.write_txn():
            row = self._row(effort_id)
            keep_name = row.name if (row is not None and name is None) else name
            self._write_meta(row, effort_id, status, summary, keep_name)

    @recovering
    def remove_effort(self, effort_id: str) -> None:
        """Drop an effort and all its messages (no-op if unknown)."""
        with self.db.write_txn():
            row = self._row(effort_id)
            if row is not None:
                self._delete_effort(row)

    def add_messages(self, effort_id: str, messages: Iterable[dict[str, Any]], start_line: int) -> int:
        """Index log records appended at 0-based line ``start_line`` onwards.

        The records must be the ones written to the effort's log at those lines;
        a later :meth:`sync_effort_log` then skips them instead of re-reading.
        Unknown efforts are created as open efforts. Returns rows indexed.
        """
        return self._add_messages(effort_id, list(messages), start_line)  # a list survives a retry

    @recovering
    def _add_messages(self, effort_id: str, batch: list[dict[str, Any]], start_line: int) -> int:
        with self.db.write_txn():
            row = self._ensure_row(effort_id)
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
        last synced offset is re-indexed from scratch. Returns lines added.
        """
        with self.db.write_txn():
            row = self._ensure_row(effort_id)
            return self._sync_log(row, log_path)

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

    def sync_session(self, session_dir: Path, efforts: Iterable[Any]) -> int:
        """Bring the index up to date with a session's manifest and logs.

        ``efforts`` yields ``(id, status, summary)`` tuples (an optional fourth
        item is the name; ``Effort`` objects work too). Efforts missing from it
        are removed; changed status/summary/name are updated; logs whose
        (size, mtime_ns, inode) are unchanged are skipped without being opened.
        The ambient log (``raw.jsonl``) is synced too. Returns the number of
        log lines added.
        """
        wanted = {}
        for entry in efforts:
            effort_id, status, summary, name = _effort_entry(entry)
            wanted[effort_id] = (status, summary, name)
        return self._sync_session(session_dir, wanted)

    @recovering
    def _sync_session(self, session_dir: Path, wanted: dict[str, tuple[str, str | None, str | None]]) -> int:
        logs = os.path.join(os.fspath(session_dir), "efforts", "")
        added = pending = 0
        with self.db.write_txn():
            version = self.db.state_version()
            stored = self._sync_state(version)
            for effort_id in stored.keys() - wanted.keys():
                self._delete_effort(self._ensure_row(effort_id))
            for effort_id, (status, summary, name) in wanted.items():
                lines = self._sync_entry(stored.get(effort_id), effort_id, status, summary, name, logs)
                added, pending = added + lines, pending + lines
                if pending >= SYNC_BATCH_LINES:  # bound the WAL and memory of a big (re)build
                    self.db.commit_point()
                    pending = 0
            added += self._ambient.sync(os.path.join(os.fspath(session_dir), RAW_FILE))
            unchanged = self.db.state_version() == version
        self._sync_cache = (version, stored) if unchanged else None
        if added >= SYNC_BATCH_LINES:  # a big (re)build: give the WAL's disk space back
            self.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return added

    def _sync_state(self, version: tuple[int, int, int]) -> dict[str, tuple[Any, ...]]:
        """id → (status, summary, name, log_size, log_mtime_ns, log_ino), reused while unchanged."""
        if self._sync_cache is not None and self._sync_cache[0] == version:
            return self._sync_cache[1]
        return {
            t[0]: t[1:]
            for t in self.db.conn.execute(
                "SELECT effort_id, status, summary, name, log_size, log_mtime_ns, log_ino FROM efforts"
                " WHERE source = 'effort'"
            )
        }

    def _sync_entry(
        self,
        stored: tuple[Any, ...] | None,
        effort_id: str,
        status: str,
        summary: str | None,
        name: str | None,
        logs: str,
    ) -> int:
        """sync_session for one manifest entry; the common no-change case costs one stat()."""
        safe = _safe_file_name(effort_id)
        path = logs + effort_id + ".jsonl" if safe else None
        try:
            st = os.stat(path) if path else None
        except OSError:
            st = None
        if stored is not None and stored[:2] == (status, summary) and name in (None, stored[2]):
            if st is None and stored[3] is None:
                return 0
            if st is not None and stored[3:] == (st.st_size, st.st_mtime_ns, st.st_ino):
                return 0
        row = self._row(effort_id)
        keep_name = row.name if (row is not None and name is None) else name
        row = self._write_meta(row, effort_id, status, summary, keep_name)
        return self._sync_log(row, path) if path else 0

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
