"""Withdrawn lines: the one answer to "is this line withdrawn?".

Raw logs only grow, so a withdrawn exchange (regenerate the last reply, edit and resend the last
message) is not cut out: a marker line is appended to the log it was written to —
``{"role": "system", "content": "--- …withdrawn… ---", "retracts": N}`` at file line *m* — and it
withdraws lines *m − N … m*, itself included. The marker is the record of the withdrawal (its
fsynced append is the commit point); nothing else records it, so nothing can disagree with it.
Lines are file lines: 1-based, every line of the file counted (blank ones, unreadable ones and
lines that are no chat message too), as search, reads and ``sed -n`` number them.

Every reader asks here (issue 32):

* whole-log and tail readers (the context's ambient window and open-effort logs, exports, counts,
  the chat history) keep :func:`live` of their numbered records;
* readers of single lines (recall's skip, folding, a switch's moved lines, reads of lines) ask
  :func:`withdrawn_lines`: the withdrawals the search index read (its ``withdrawn`` table, every
  marker however old) plus the markers in the part of the log it has not read yet, read from the
  log itself — so a marker is seen the moment it is appended;
* :func:`window_lines`: which file lines the ambient window holds.

Appending a marker (taking back the newest exchange) is the engine's (``engine/_withdraw.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..storage.durable import open_nofollow
from ..storage.long_lines import line_table, lines_forward

RETRACTS = "retracts"  # a marker line's key: how many lines before it are withdrawn
MARKER_BYTES = 4096  # a marker line is short: a longer line is not read whole to look for one
R = TypeVar("R")


def is_marker(record: Any) -> bool:
    """A marker line that withdraws the lines before it (a regenerated or edited exchange)."""
    if not isinstance(record, dict):
        return False
    count = record.get(RETRACTS)
    return record.get("role") == "system" and isinstance(count, int) and not isinstance(count, bool) and count > 0


def span(line: int, record: Any) -> tuple[int, int] | None:
    """The lines a marker at ``line`` withdraws — the ``retracts`` lines just before it — and itself,
    as (first, last); None when ``record`` is no marker. (A withdrawal is made only when the exchange
    is the newest thing in its log, so its lines are the ones right before the marker.) The search
    index stores these spans as it reads a log: this is the only copy of the rule."""
    if not is_marker(record):
        return None
    return max(0, line - int(record[RETRACTS])), line


def live(numbered: Iterable[tuple[int, R]]) -> list[tuple[int, R]]:
    """``numbered`` (file line, record) pairs in log order, without the markers and the lines they
    withdraw: what the context, exports, counts and the chat history keep."""
    out: list[tuple[int, R]] = []
    for line, record in numbered:
        taken = span(line, record)
        if taken is None:
            out.append((line, record))
            continue
        while out and out[-1][0] >= taken[0]:
            out.pop()
    return out


class IndexedWithdrawals(Protocol):
    """What the search index has read of a log (``EffortIndex.withdrawals_read``): the withdrawn lines
    of ``first..last`` among them and how far it read (bytes, lines); None when it cannot say."""

    def withdrawals_read(self, log: str, first: int, last: int) -> tuple[set[int], int, int] | None: ...


class SessionLogs(Protocol):
    """What the answers read of a session: where its logs are, its index, its ambient window. (A
    :class:`~.session.Session`; named by what is used so that the session may ask here too.)"""

    indexed: IndexedWithdrawals | None

    @property
    def raw_path(self) -> Path: ...

    def effort_path(self, effort_id: str) -> Path: ...

    def ambient_numbered(self) -> list[tuple[int, dict[str, Any]]]: ...


def log_path(session: SessionLogs, log: str) -> Path:
    return session.raw_path if log == "ambient" else session.effort_path(log)


def withdrawn_lines(
    session: SessionLogs, log: str, first: int, last: int, *, index: IndexedWithdrawals | None = None
) -> set[int]:
    """The lines of ``first..last`` (1-based file lines) of ``log`` ("ambient" or an effort id) that a
    withdrawal took back, their markers included: from the index's ``withdrawn`` table for what it
    has read of the log (``index``, by default ``session.indexed``: the engine's), and from the
    markers in the rest of the log."""
    if last < first:
        return set()
    out: set[int] = set()
    start: tuple[int, int] | None = None  # (byte, line) the scan of the log starts at
    index = index if index is not None else session.indexed
    read = index.withdrawals_read(log, first, last) if index is not None else None
    if read is not None:
        out, offset, lines = read
        if lines + 1 >= first:
            start = (offset, lines + 1)
    for line, record in _markers(log_path(session, log), first, start):
        taken = span(line, record)
        if taken is not None:
            out.update(range(max(first, taken[0]), min(last, taken[1]) + 1))
    return out


def _markers(path: Path, first: int, start: tuple[int, int] | None) -> Iterator[tuple[int, Any]]:
    """The marker lines of ``path`` from line ``first`` on; ``start``: a (byte, line) known to begin a
    line at or before ``first`` (else the log's line table finds line ``first``)."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fd).st_size
        if start is None or start[0] > size:  # (an index of a log since rewritten: not trusted)
            table = line_table(fh)
            if first > table.count(size):
                return
            start = (table.line(first, size).start, first)
        for number, line in enumerate(lines_forward(fh, start[0]), start[1]):
            if number < first or line.size > MARKER_BYTES:
                continue
            data = line.data
            if data is None:  # (it spans two reads: read again, without moving the scan)
                data = os.pread(fd, line.size, line.start)
            if RETRACTS.encode() in data:
                try:
                    record = json.loads(data.decode("utf-8", errors="replace"))
                except (ValueError, RecursionError):
                    continue
                if is_marker(record):
                    yield number, record


def window_lines(session: SessionLogs) -> dict[int, int]:
    """The ``raw.jsonl`` lines the ambient window holds, each to its place in the window."""
    return {line: at for at, (line, _message) in enumerate(session.ambient_numbered())}
