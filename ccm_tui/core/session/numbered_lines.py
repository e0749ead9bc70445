"""Reading a few lines of a raw log around a search hit: an effort's log or the ambient chat.

Search results carry line numbers; the model (``expand_effort(id, around_line=N)``),
the MCP server's read tool (around a line, or a page at a time) and the TUI read the
lines around them with this, without loading anything into the working context. Line
numbers are 1-based and count every line of the file (a line that is not a chat message
still counts), so they match the search index and ``sed -n``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import EffortNotFound, InputError
from ..storage.durable import is_message, open_nofollow
from ..storage.long_lines import READ_BYTES, cut_size, line_table, read_record
from .chat_line import note_author
from .withdrawn import withdrawn_lines

if TYPE_CHECKING:
    from .session import Session
    from .withdrawn import IndexedWithdrawals

RADIUS = 6  # lines either side of around_line
MAX_LINES = 60  # lines one read returns at most
MESSAGE_CHARS = 4_000  # characters of one message in a read
AMBIENT = "ambient"


class LineRangeError(InputError):
    """Lines asked for that a log does not have: in a way that means nothing (not a number, going
    down, below 1), or past its end (naming that line and the log's length)."""


@dataclass
class LogLines:
    """Lines ``first``..``last`` of a log (``total``: its line count when known)."""

    first: int
    last: int
    total: int | None
    messages: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"lines": [self.first, self.last], "total_lines": self.total, "messages": self.messages}


def _number(text: Any, what: str) -> int:
    try:
        number = int(str(text).strip())
    except (ValueError, OverflowError):
        raise LineRangeError(f"{what} must be a line number, got {str(text)[:40]!r}") from None
    if number < 1:
        raise LineRangeError(f"{what} must be 1 or more (lines are numbered from 1), got {number}")
    return number


def line_range(lines: Any = None, around: Any = None, *, radius: int = RADIUS) -> tuple[int, int]:
    """(first, last), 1-based inclusive, from ``lines`` ('120-140' or '130') or ``around`` (a line:
    ``radius`` lines either side); at most :data:`MAX_LINES` lines."""
    if lines:
        first_text, _, last_text = str(lines).partition("-")
        first = _number(first_text, "lines")
        last = _number(last_text, "lines") if last_text.strip() else first
        if last < first:
            raise LineRangeError(f"lines must go up, as in '120-140'; got {str(lines)[:40]!r}")
        return first, min(last, first + MAX_LINES - 1)
    line = _number(around, "around_line")
    return max(1, line - radius), min(line + radius, max(1, line - radius) + MAX_LINES - 1)


def page(offset: Any = 1, limit: Any = MAX_LINES) -> tuple[int, int]:
    """(first, last), 1-based inclusive: ``limit`` lines from line ``offset`` (paging through a log);
    at most :data:`MAX_LINES` lines."""
    first = _number(offset, "offset")
    count = _number(limit, "limit")
    return first, first + min(count, MAX_LINES) - 1


def message_line(number: int, record: Any) -> dict[str, Any] | None:
    """A log line as a read shows it (None for a line that is not a chat message): its content cut to
    MESSAGE_CHARS, with ``chars`` (its whole length) when cut, or ``line_bytes`` (the whole line's
    size) when the line was too long to read whole, and ``note_from`` (the agent) for a note."""
    if not isinstance(record, dict) or not is_message(record):
        return None
    content = record.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    shown: dict[str, Any] = {"line": number, "role": record.get("role"), "content": text[:MESSAGE_CHARS]}
    if (author := note_author(record)) is not None:
        shown["note_from"] = author  # an agent's note (its role says user): never shown as the user's words
    size = cut_size(record)
    if size is not None:
        shown["line_bytes"] = size  # read by its head: its length in characters is not known
    elif len(text) > MESSAGE_CHARS:
        shown["chars"] = len(text)
    return shown


def _numbered(path: Path, first: int, last: int, cap: int | None) -> tuple[int, list[tuple[int, Any]]]:
    """The log's line count, and the records of its lines ``first`` to ``last``, found through its
    line table (:func:`.long_lines.line_table`: a log read before is not scanned again); a line
    longer than ``cap`` bytes is parsed from its head. A missing file has no lines."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except FileNotFoundError:
        return 0, []
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fd).st_size
        table = line_table(fh)
        total = table.count(size)
        numbers = range(max(1, first), min(last, total) + 1)
        return total, [(n, read_record(fh, table.line(n, size), cap)) for n in numbers]


def file_lines(path: Path, first: int, last: int) -> LogLines:
    """Lines of a log file as a read shows them (long messages clipped); missing → empty."""
    total, records = _numbered(path, first, last, READ_BYTES)
    out = LogLines(first, min(last, total), total)
    out.messages = [shown for number, record in records if (shown := message_line(number, record)) is not None]
    return out


def file_records(path: Path, first: int, last: int) -> list[tuple[int, dict[str, Any]]]:
    """The chat messages of lines ``first``..``last`` of a log, whole and numbered."""
    return [(n, r) for n, r in _numbered(path, first, last, None)[1] if isinstance(r, dict) and is_message(r)]


def indexed_lines(read: Callable[[int, int], Iterable[tuple[int, Any]]], first: int, last: int, total: int) -> LogLines:
    """Lines of the ambient log through the search index's seek (``read(first, last)``), which
    finds the block holding ``first`` without reading the million lines before it."""
    out = LogLines(first, min(last, total), total)
    for number, record in read(first, last):
        if (shown := message_line(number, record)) is not None:
            out.messages.append(shown)
    return out


AmbientRead = Callable[[int, int], Iterable[tuple[int, Any]]]  # the index's seek into raw.jsonl: lines a..b


def read_log_lines(
    session: Session,
    log: str,
    first: int,
    last: int,
    *,
    ambient: AmbientRead | None = None,
    ambient_total: int = 0,
    asked: int | None = None,
    index: IndexedWithdrawals | None = None,
) -> LogLines:
    """Lines ``first``..``last`` of an effort's raw log or of the ambient chat (``log="ambient"``), read
    without loading anything into the working context — the one way every reader reads lines (the
    model's ``expand_effort`` with lines, the MCP server's read, the TUI's lines around a hit).

    The ambient chat is read through ``ambient`` (the search index's seek) when given, else from the
    file; ``ambient_total``: its line count as the index knows it. ``asked``: the line the reader asked
    for (around it, or the first), which must exist. A withdrawn line, and a withdrawal's marker, says
    ``"withdrawn": true`` (:func:`.withdrawn.withdrawn_lines`, through ``index`` when given).

    Raises:
        EffortNotFound: ``log`` is not an effort of the session.
        LineRangeError: ``asked`` is past the end of the log.
        OSError, StoreError: the log cannot be read.
    """
    if log == AMBIENT:
        total = max(session.state.ambient_lines, ambient_total)
        if asked is not None and asked > total:
            raise LineRangeError(_past_end("the ambient chat", total, asked))
        read = (
            indexed_lines(ambient, first, last, total)
            if ambient is not None
            else file_lines(session.raw_path, first, last)
        )
    else:
        if session.efforts.get(log) is None:
            raise EffortNotFound(f"there is no effort '{log}' in this session")
        read = file_lines(session.effort_path(log), first, last)
        if asked is not None and asked > (read.total or 0):
            raise LineRangeError(_past_end(f"effort '{log}'", read.total or 0, asked))
    if read.messages:
        gone = withdrawn_lines(session, log, read.messages[0]["line"], read.messages[-1]["line"], index=index)
        for shown in read.messages:
            if shown["line"] in gone:
                shown["withdrawn"] = True
    return read


def _past_end(what: str, total: int, line: int) -> str:
    return f"{what} has {total} log lines; line {line} does not exist (it is past the end)"
