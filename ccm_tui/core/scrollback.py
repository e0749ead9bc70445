"""Scrolling back through the chat: the logged lines said before the ones shown, a page at a time.

At start-up the chat pane shows the newest lines (:func:`.chat_history.recent_lines`). When the
user scrolls to the top, the pane asks for the page before its oldest line. Which logs hold
that page is read from the event log, backwards: every exchange a turn logged has a
``message_logged`` event naming its log (the ambient chat or an effort), so only the logs the
conversation wrote to are read — never the thousands of imported or long-finished ones — and
each of them backwards from its end, in chunks. Banners of the same stretch of time come from
the same events, worded and placed as live (:mod:`.chat_history`).

A :class:`ScrollBack` remembers where it stopped in each file, so scrolling further back
continues from there; asked for a page before another line, it starts again from the ends.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import eventlog as ev
from .chat_history import (
    above_replies,
    banners_between,
    line_records,
    turn_spans,
    with_usage,
)
from .efforts import SLUG_RE
from .logged_line import ROLE_ORDER, LoggedLine
from .long_lines import SHOW_BYTES, lines_backwards, read_record
from .session import Session
from .store import RETRACTS, is_retraction, open_nofollow

PAGE = 60  # lines per page: a few screens of chat
CHUNK = 65536
EVENTS_PER_STEP = 400  # events read backwards at a time while looking for a page's logs


@dataclass(frozen=True)
class HistoryPage:
    """Lines said before a given one, oldest first, and whether anything older may be left."""

    lines: tuple[LoggedLine, ...]
    more: bool


def order_of(record: dict[str, Any]) -> tuple[str, int]:
    return (str(record.get("ts") or ""), ROLE_ORDER.get(str(record.get("role")), 1))


@dataclass
class _Backwards:
    """A JSONL file read from the end towards its start, a record at a time (a huge line by its head:
    see :mod:`.long_lines`). The file is opened for each step, never held between pages."""

    path: Path
    pos: int | None = None  # the start of the oldest line read; None: nothing read yet
    records: list[dict[str, Any]] = field(default_factory=list)  # read, not handed yet (file order)
    withdrawn: int = 0  # records still to skip: a retraction marker read (later in the file) withdraws them

    @property
    def exhausted(self) -> bool:
        return not self.records and self.pos == 0

    def previous(self) -> dict[str, Any] | None:
        """The record before the ones handed so far (None at the start of the file)."""
        while not self.records:
            if not self._read_step():
                return None
        return self.records.pop()

    def push_back(self, record: dict[str, Any]) -> None:
        self.records.append(record)

    def _read_step(self) -> bool:
        """Read the records of about a chunk's worth of lines before ``pos`` (at least one line)."""
        if self.pos == 0:
            return False
        try:
            fd = open_nofollow(self.path, os.O_RDONLY)
        except OSError:
            self.pos = 0
            return False
        found: list[dict[str, Any]] = []
        with os.fdopen(fd, "rb") as fh:
            end, self.pos, scanned = self.pos, 0, 0  # 0: unless a line is left before the last one read
            for line in lines_backwards(fh, end):
                if scanned >= CHUNK:
                    self.pos = line.end + 1
                    break
                scanned += line.size + 1
                record = read_record(fh, line, SHOW_BYTES)
                if isinstance(record, dict):
                    found.append(record)  # a bad line costs itself only, as everywhere
        self.records = found[::-1]
        return True


class ScrollBack:
    """Pages of earlier chat for one session (see the module doc)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._before: tuple[str, int] | None = None  # where the last page ended (its oldest line)
        self._events = _Backwards(session.events.path)
        self._logs: dict[str, _Backwards] = {}
        self._seen_events: list[dict[str, Any]] = []  # read backwards, newest first

    def page(self, before: LoggedLine, limit: int = PAGE) -> HistoryPage:
        """Up to ``limit`` lines said before ``before`` (the oldest line the chat shows)."""
        boundary = before.order
        if boundary != self._before:
            self._restart()
        targets = self._targets(boundary[0], limit)
        found: list[tuple[tuple[str, int], dict[str, Any], str]] = []
        for log in targets:
            reader = self._reader(log)
            taken = 0
            while taken < limit and (record := reader.previous()) is not None:
                if is_retraction(record):
                    reader.withdrawn += int(record[RETRACTS])
                    continue
                if reader.withdrawn > 0:
                    reader.withdrawn -= 1  # a withdrawn exchange (regenerated, edited): not shown
                    continue
                if order_of(record) >= boundary:
                    continue  # said after the line asked about: shown already
                found.append((order_of(record), record, log))
                taken += 1
        found.sort(key=lambda item: item[0])
        for _, record, log in found[:-limit]:  # older than this page: for the next one
            self._logs[log].push_back(record)
        page = found[-limit:]
        lines: list[LoggedLine] = []
        for _, record, log in page:
            lines += line_records([record], log)
        more = bool(found[:-limit]) or not all(self._reader(log).exhausted for log in targets)
        more = more or not self._events.exhausted
        if page:
            self._before = page[0][0]
            oldest = page[0][0][0]
            span = [e for e in reversed(self._seen_events) if oldest <= str(e.get("ts") or "") < boundary[0]]
            banners = above_replies(lines, banners_between(span, oldest, boundary[0]), turn_spans(span))
            lines = sorted(with_usage(lines, list(reversed(self._seen_events))) + banners, key=lambda line: line.order)
        else:
            self._before = boundary
        return HistoryPage(tuple(lines), more and bool(page))

    def _restart(self) -> None:
        self._events = _Backwards(self.session.events.path)
        self._logs = {}
        self._seen_events = []

    def _reader(self, log: str) -> _Backwards:
        reader = self._logs.get(log)
        if reader is None:
            path = self.session.raw_path if log == "ambient" else self.session.effort_path(log)
            reader = self._logs[log] = _Backwards(path)
        return reader

    def _targets(self, before_ts: str, limit: int) -> list[str]:
        """The logs that hold the ``limit`` lines before ``before_ts``: those the turns of that
        stretch logged to (read from the event log backwards, as far as needed)."""
        counted, targets = 0, set[str]()
        for seen in self._seen_events:
            counted += self._count(seen, before_ts, targets)
        while counted < limit:
            step = 0
            while step < EVENTS_PER_STEP and (event := self._events.previous()) is not None:
                self._seen_events.append(event)
                counted += self._count(event, before_ts, targets)
                step += 1
            if step < EVENTS_PER_STEP:
                break  # the start of the event log
        return sorted(targets)

    @staticmethod
    def _count(event: dict[str, Any], before_ts: str, targets: set[str]) -> int:
        if event.get("event") != ev.MESSAGE_LOGGED:
            return 0
        to = event.get("to")
        if not isinstance(to, str) or not (to == "ambient" or SLUG_RE.fullmatch(to)):
            return 0
        targets.add(to)
        count = event.get("count")
        return count if isinstance(count, int) and str(event.get("ts") or "") < before_ts else 0
