"""Log records as the index stores them: their text, one row per line, and what is remembered of a log file.

Shared by the effort logs (:mod:`.ingest`) and the ambient log (:mod:`.ambient`).
Line numbers are 0-based inside the index (line ``n`` is preceded by ``n``
lines) and shown 1-based. A message row's rowid is ``num << 32 | line``, so the
rows of one document (an effort, or a block of the ambient log) are one
contiguous rowid range.
"""

from __future__ import annotations

import json
import os
import sqlite3
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any

from .database import _LINE_BITS, _LINE_MASK
from .unspaced import index_grams

TAIL_BYTES = 64  # bytes before the sync offset remembered to detect rewritten logs
MAX_MESSAGE_CHARS = 64_000  # a giant tool dump is indexed by its head only


def normalise(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def message_text(message: Any) -> str | None:
    """The searchable text of one log record, or None when it has none."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):  # multi-part content: keep the text parts
        parts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, dict))]
        content = "\n".join(p for p in parts if isinstance(p, str))
    if not isinstance(content, str) or not content.strip():
        return None
    text = content[:MAX_MESSAGE_CHARS]
    # a lone surrogate (a JSON escape like "\\ud83d" in a hand-edited log) cannot be stored as UTF-8
    return normalise(text.encode("utf-8", "replace").decode("utf-8") if not text.isascii() else text)


def parse_line(raw: bytes) -> Any:
    """One JSONL line as a value, or None when it is not JSON."""
    try:
        return json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None


def insert_messages(db: sqlite3.Connection, num: int, numbered: Iterable[tuple[int, Any]]) -> int:
    """Index (line, record) pairs as rows of document ``num``; returns how many rows were written."""
    rows = []
    base = num << _LINE_BITS
    for line, message in numbered:
        text = message_text(message)
        if text is not None and 0 <= line <= _LINE_MASK:
            role = message.get("role")
            rows.append((base | line, text, role if isinstance(role, str) else None, index_grams(text)))
    if rows:
        db.executemany("INSERT OR REPLACE INTO msg_fts (rowid, content, role, grams) VALUES (?, ?, ?, ?)", rows)
    return len(rows)


def clear_messages(db: sqlite3.Connection, num: int) -> None:
    """Delete every row of document ``num`` (one rowid-range seek)."""
    lo = num << _LINE_BITS
    db.execute("DELETE FROM msg_fts WHERE rowid BETWEEN ? AND ?", (lo, lo | _LINE_MASK))


@dataclass
class LogState:
    """What the index remembers about one log file."""

    offset: int = 0
    lines: int = 0
    tail: bytes = b""
    size: int | None = None
    mtime_ns: int | None = None
    ino: int | None = None
    indexed_lines: int = 0

    def unchanged(self, st: os.stat_result) -> bool:
        """True when the file has the size, mtime and inode seen at the last sync."""
        return (self.size, self.mtime_ns, self.ino) == (st.st_size, st.st_mtime_ns, st.st_ino)

    def replaced(self, st: os.stat_result) -> bool:
        """True when the file is not the one indexed so far (new inode or shrunk)."""
        if self.offset == 0 and self.indexed_lines == 0:
            return False
        return (self.ino is not None and self.ino != st.st_ino) or st.st_size < self.offset

    def advance(self, complete: bytes, lines: int) -> None:
        """Record that ``complete`` (whole lines, ``lines`` of them) after the offset was consumed."""
        end = len(complete)
        self.tail = complete[-TAIL_BYTES:] if end >= TAIL_BYTES else (self.tail + complete)[-TAIL_BYTES:]
        self.offset += end
        self.lines += lines

    def tail_matches(self, fh: IO[bytes]) -> bool:
        """True when the bytes just before the offset are still the ones consumed (not rewritten)."""
        fh.seek(self.offset - len(self.tail))
        return fh.read(len(self.tail)) == self.tail
