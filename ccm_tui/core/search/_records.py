"""Log records as the index stores them: their text, one row per line, and what is remembered of a log file.

Shared by the effort logs (:mod:`._ingest`) and the ambient log (:mod:`._ambient`).
Line numbers are 0-based inside the index (line ``n`` is preceded by ``n``
lines) and shown 1-based. A message row's rowid is ``num << 32 | line``, so the
rows of one document (an effort, or a block of the ambient log) are one
contiguous rowid range.
"""

from __future__ import annotations

import bisect
import json
import os
import sqlite3
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..session.chat_line import note_author
from ..session.withdrawn import span
from ..storage.durable import open_nofollow
from ._database import _LINE_BITS, _LINE_MASK
from ._unspaced import index_grams

TAIL_BYTES = 64  # bytes before the sync offset remembered to detect rewritten logs
MAX_MESSAGE_CHARS = 64_000  # a giant tool dump is indexed by its head only
AMBIENT_LOG = -1  # raw.jsonl's key in the withdrawn table (an effort log's key is its document number)


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


def open_log(path: str | Path) -> IO[bytes]:
    """Open a log for reading, never a FIFO (it would hang) nor through a link. The ingest and the
    ambient log call it through this module, so tests counting opened files or bytes read patch it here."""
    return os.fdopen(open_nofollow(Path(path), os.O_RDONLY), "rb")


def parse_line(raw: bytes) -> Any:
    """One JSONL line as a value, or None when it is not JSON."""
    try:
        return json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None


def shown_role(message: dict[str, Any]) -> str | None:
    """The role a passage or a recalled line shows: a note left by an agent says whose note it is,
    never ``user`` (its log line's role), so neither a search result nor the model's recall layer
    passes an agent's words off as the user's."""
    author = note_author(message)
    if author is not None:
        return f"note from {author}"
    role = message.get("role")
    return role if isinstance(role, str) else None


def insert_messages(
    db: sqlite3.Connection, num: int, numbered: Iterable[tuple[int, Any]], *, log_key: int | None = None
) -> int:
    """Index (line, record) pairs as rows of document ``num``; returns how many rows were written.

    A withdrawal marker (:func:`..session.withdrawn.span`) is not a row: it records the lines it withdraws — the
    ``retracts`` lines just before it, and itself — in ``withdrawn`` under ``log_key`` (by default
    ``num``), so that recall and folding never put them back however old they are."""
    rows, withdrawn = [], []
    base = num << _LINE_BITS
    key = num if log_key is None else log_key
    for line, message in numbered:
        if (taken := span(line, message)) is not None:
            withdrawn.append((key, *taken))
            continue
        text = message_text(message)
        if text is not None and 0 <= line <= _LINE_MASK:
            rows.append((base | line, text, shown_role(message), index_grams(text)))
    if rows:
        db.executemany("INSERT OR REPLACE INTO msg_fts (rowid, content, role, grams) VALUES (?, ?, ?, ?)", rows)
    if withdrawn:
        db.executemany("INSERT OR REPLACE INTO withdrawn (log, first, last) VALUES (?, ?, ?)", withdrawn)
    return len(rows)


def clear_messages(db: sqlite3.Connection, num: int) -> None:
    """Delete every row of document ``num`` (one rowid-range seek), and what it withdrew."""
    lo = num << _LINE_BITS
    db.execute("DELETE FROM msg_fts WHERE rowid BETWEEN ? AND ?", (lo, lo | _LINE_MASK))
    db.execute("DELETE FROM withdrawn WHERE log = ?", (num,))


def withdrawn_ranges(db: sqlite3.Connection, keys: Iterable[int]) -> dict[int, list[tuple[int, int]]]:
    """The withdrawn line ranges (0-based, inclusive, in order) of each log key."""
    keys = list(set(keys))
    out: dict[int, list[tuple[int, int]]] = {k: [] for k in keys}
    if keys:
        marks = ",".join("?" * len(keys))
        for key, first, last in db.execute(
            f"SELECT log, first, last FROM withdrawn WHERE log IN ({marks}) ORDER BY log, last", keys
        ):
            out[key].append((first, last))
    return out


def in_ranges(ranges: list[tuple[int, int]], line: int) -> bool:
    """Whether ``line`` is inside one of ``ranges`` (sorted by their last line, not overlapping)."""
    at = bisect.bisect_left(ranges, line, key=lambda r: r[1])
    return at < len(ranges) and ranges[at][0] <= line


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
