"""The ambient log (``<session>/raw.jsonl``) in the search index, so every exchange stays findable.

The ambient log is one file that only grows (to a million lines and more), so
it is indexed as *blocks* of AMBIENT_BLOCK_LINES lines that never move once
full: block ``k`` holds lines ``k·N .. k·N + N - 1`` (0-based). Each block is a
document ranked like an effort (a row of ``efforts`` with ``source =
'ambient'``, id ``ambient:<k>``; a hit's status is ``ambient``, no summary), its lines are
message rows numbered by their line in ``raw.jsonl``, and the best passage is
picked inside the block, so a hit carries raw.jsonl line numbers.

Syncing is incremental like an effort log's: the file's (size, mtime_ns, inode),
the byte offset of the complete lines consumed and the bytes just before it are
remembered (table ``ambient_log``); only what was appended is read, in chunks;
a torn tail is picked up once completed; a file that shrank, was replaced or
rewritten is indexed again from scratch. Each block remembers the byte offset
of its first line, so the lines around a hit are read with one seek
(:meth:`AmbientLog.read_ambient_lines`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from ..storage.long_lines import lines_forward, read_record
from . import _records as records
from ._database import IndexDatabase, recovering
from ._records import AMBIENT_LOG, LogState, clear_messages, insert_messages, parse_line

RAW_FILE = "raw.jsonl"
AMBIENT_BLOCK_LINES = 20  # lines of raw.jsonl per ranked document (10 exchanges, the ambient window)
AMBIENT_PREFIX = "ambient:"  # + block number: the block's id in `efforts` (never a slug: it has a colon)
AMBIENT = "ambient"  # the id, status and source of an ambient hit
READ_CHUNK_BYTES = 4 << 20  # raw.jsonl is read this much at a time
COMMIT_LINES = 100_000  # a long first sync commits after about this many lines
MAX_READ_LINES = 200  # read_ambient_lines returns at most this many lines


class AmbientLog:
    """Ingest of the ambient log as blocks, and cheap reads of its lines."""

    def __init__(self, db: IndexDatabase) -> None:
        self.db = db

    # ------------------------------------------------------------------ public

    @recovering
    def sync_ambient_log(self, log_path: Path) -> int:
        """Index the complete lines appended to the ambient log ``log_path`` (``<session>/raw.jsonl``)
        since the last sync; :meth:`sync_session` does this too. Returns rows added."""
        with self.db.write_txn():
            return self.sync(log_path)

    @recovering
    def ambient_line_count(self) -> int:
        """Lines of the ambient log indexed so far (every complete line, chat or not)."""
        return self._ambient_state().lines

    @recovering
    def ambient_block_start(self, line: int) -> tuple[int, int] | None:
        """(1-based line, byte offset) of the start of the indexed block holding 1-based ``line`` of the
        ambient log: where to seek to read that line. None when the line is not indexed."""
        block = (line - 1) // AMBIENT_BLOCK_LINES
        found = self.db.conn.execute(
            "SELECT first_line, first_byte FROM efforts WHERE effort_id = ? AND source = 'ambient'",
            (f"{AMBIENT_PREFIX}{block}",),
        ).fetchone()
        if line < 1 or found is None or found[1] is None:
            return None
        return found[0] + 1, found[1]

    def read_ambient_lines(
        self, log_path: Path, first: int, last: int, cap: int | None = None
    ) -> list[tuple[int, Any]]:
        """Lines ``first``..``last`` (1-based, at most MAX_READ_LINES) of the ambient log as
        (line number, parsed record or None), read from the file with one seek to the indexed block
        that holds ``first`` — or from the start when the file is not the one indexed. A line before
        ``first`` is scanned for its newline, never held; with ``cap`` (a reader that shows lines) one
        longer than ``cap`` bytes is parsed from its head (storage/long_lines.py)."""
        first, last = max(1, first), min(last, max(1, first) + MAX_READ_LINES - 1)
        state, start = self._seek_point(first)
        out: list[tuple[int, Any]] = []
        with records.open_log(log_path) as fh:
            indexed = state.ino == os.fstat(fh.fileno()).st_ino and state.tail_matches(fh)
            number, offset = start if start is not None and indexed else (1, 0)
            for line in lines_forward(fh, offset):
                if number > last or not line.complete:
                    break
                if number >= first:
                    out.append((number, read_record(fh, line, cap)))
                number += 1
        return out

    # ------------------------------------------------------------------ state

    def _ambient_state(self) -> LogState:
        found = self.db.conn.execute(
            "SELECT log_offset, log_lines, log_tail, log_size, log_mtime_ns, log_ino FROM ambient_log"
        ).fetchone()
        if found is None:
            return LogState()
        offset, lines, tail, size, mtime_ns, ino = found
        return LogState(offset, lines, bytes(tail), size, mtime_ns, ino, lines)

    def _save_ambient_state(self, log: LogState) -> None:
        self.db.conn.execute(
            "INSERT OR REPLACE INTO ambient_log (id, log_offset, log_lines, log_tail, log_size, log_mtime_ns,"
            " log_ino) VALUES (0, ?, ?, ?, ?, ?, ?)",
            (log.offset, log.lines, log.tail, log.size, log.mtime_ns, log.ino),
        )

    @recovering
    def _seek_point(self, line: int) -> tuple[LogState, tuple[int, int] | None]:
        """What is remembered of the ambient log, and where the block of 1-based ``line`` starts."""
        return self._ambient_state(), self.ambient_block_start(line)

    def _reset_ambient(self) -> None:
        """Forget every block of the ambient log."""
        for (num,) in self.db.conn.execute("SELECT num FROM efforts WHERE source = 'ambient'").fetchall():
            clear_messages(self.db.conn, num)
        self.db.conn.execute("DELETE FROM efforts WHERE source = 'ambient'")
        self.db.conn.execute("DELETE FROM ambient_log")
        self.db.conn.execute("DELETE FROM withdrawn WHERE log = ?", (AMBIENT_LOG,))

    # ------------------------------------------------------------------ syncing

    def sync(self, log_path: str | Path) -> int:
        """Index what was appended to the ambient log since the last sync (inside a write transaction:
        the caller's, :meth:`sync_ambient_log` or the ingest's sync of the whole session)."""
        log = self._ambient_state()
        try:
            st = os.stat(log_path)
        except FileNotFoundError:
            if log.offset or log.size is not None:
                self._reset_ambient()
            return 0
        if log.unchanged(st):
            return 0
        with records.open_log(log_path) as fh:
            st = os.fstat(fh.fileno())
            if log.replaced(st) or not log.tail_matches(fh):
                self._reset_ambient()
                log = LogState()
            added = self._consume_ambient(fh, log, st.st_size)
        log.size, log.mtime_ns, log.ino = st.st_size, st.st_mtime_ns, st.st_ino
        self._save_ambient_state(log)
        return added

    def _consume_ambient(self, fh: IO[bytes], log: LogState, size: int) -> int:
        """Index the complete lines between ``log.offset`` and ``size``, a chunk at a time."""
        fh.seek(log.offset)
        carry, added, pending = b"", 0, 0
        remaining = size - log.offset
        while remaining > 0:
            chunk = fh.read(min(READ_CHUNK_BYTES, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            data = carry + chunk
            end = data.rfind(b"\n") + 1
            complete, carry = data[:end], data[end:]
            if complete:
                lines = complete.split(b"\n")[:-1]
                added += self._index_ambient_lines(log, lines)
                log.advance(complete, len(lines))
                pending += len(lines)
            if pending >= COMMIT_LINES:  # bound the WAL of a long first sync
                self._save_ambient_state(log)
                self.db.commit_point()
                pending = 0
        return added

    def _index_ambient_lines(self, log: LogState, lines: list[bytes]) -> int:
        """Index ``lines`` (the complete lines starting at ``log.offset``, line ``log.lines``) into
        their blocks; returns rows written."""
        added, i, byte = 0, 0, log.offset
        while i < len(lines):
            line = log.lines + i
            block, in_block = divmod(line, AMBIENT_BLOCK_LINES)
            take = min(len(lines) - i, AMBIENT_BLOCK_LINES - in_block)
            num = self._ambient_block(block, byte if in_block == 0 else None)
            records = ((line + j, parse_line(lines[i + j])) for j in range(take))
            added += insert_messages(self.db.conn, num, records, log_key=AMBIENT_LOG)
            size = sum(len(raw) + 1 for raw in lines[i : i + take])
            self.db.conn.execute(  # log_offset/log_lines of a block: its bytes and lines (the ranking's length)
                "UPDATE efforts SET indexed_lines = ?, log_offset = log_offset + ?, log_lines = log_lines + ?"
                " WHERE num = ?",
                (in_block + take, size, take, num),
            )
            byte += size
            i += take
        return added

    def _ambient_block(self, block: int, first_byte: int | None) -> int:
        """The document number of ambient block ``block``, created (at ``first_byte``) if new."""
        effort_id = f"{AMBIENT_PREFIX}{block}"
        found = self.db.conn.execute("SELECT num FROM efforts WHERE effort_id = ?", (effort_id,)).fetchone()
        if found is not None:
            return int(found[0])
        num = self.db.conn.execute(
            "INSERT INTO efforts (effort_id, source, first_line, first_byte) VALUES (?, ?, ?, ?)",
            (effort_id, AMBIENT, block * AMBIENT_BLOCK_LINES, first_byte),
        ).lastrowid
        assert num is not None
        return num
