"""The chat said earlier, a page at a time: at start-up (the newest page, :func:`recent_lines`), when
another process wrote to the session, and when the user scrolls back.

Which logs hold a page is read from the event log, backwards: every exchange a turn logged has a
``message_logged`` event naming its log (the ambient chat or an effort) and how many lines, every
note an agent left a ``note_added``, so only the logs the conversation wrote to are read — never the
thousands of imported or long-finished ones — each backwards from its end, in chunks, and only the
records those events account for: an imported transcript, or lines a switch or folding copied into
an effort, are never shown as chat. Banners of the same stretch of time come from the same events,
worded and placed as live (:mod:`.chat_history`).

A :class:`ScrollBack` remembers where it stopped in each file, so scrolling further back
continues from there; asked for a page before another line, it starts again from the ends.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..manifest.effort import SLUG_RE
from ..session.chat_line import END_OF_CHAT, ROLE_ORDER, LoggedLine, note_author
from ..session.session import Session
from ..session.withdrawn import RETRACTS, is_marker
from ..storage import eventlog as ev
from ..storage.durable import open_nofollow
from ..storage.long_lines import SHOW_BYTES, lines_backwards, read_record
from ._history_lines import above_replies, banners_between, line_records, turn_spans, with_usage

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
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (after, record) not handed yet
    # lines are numbered from the end — ``after``: the file lines after one, blank ones too — since
    # a withdrawal marker withdraws the file lines just before it (:mod:`..session.withdrawn`)
    oldest: tuple[int, int] | None = None  # (start, after) of the oldest line read
    size: int = 0  # the file's size when the first line was read
    withdrawn_through: int = -1  # lines with ``after`` up to this one were withdrawn by a marker read

    def previous_numbered(self) -> tuple[int, dict[str, Any]] | None:
        """The record before the ones handed so far and its ``after`` (None at the start of the file)."""
        while not self.records:
            if not self._read_step():
                return None
        return self.records.pop()

    @property
    def exhausted(self) -> bool:
        return not self.records and self.pos == 0

    def previous(self) -> dict[str, Any] | None:
        """The record before the ones handed so far (None at the start of the file)."""
        found = self.previous_numbered()
        return None if found is None else found[1]

    def _read_step(self) -> bool:
        """Read the records of about a chunk's worth of lines before ``pos`` (at least one line)."""
        if self.pos == 0:
            return False
        try:
            fd = open_nofollow(self.path, os.O_RDONLY)
        except OSError:
            self.pos = 0
            return False
        found: list[tuple[int, dict[str, Any]]] = []
        with os.fdopen(fd, "rb") as fh:
            if self.oldest is None:
                self.size = os.fstat(fd).st_size
            end, self.pos, scanned = self.pos, 0, 0  # 0: unless a line is left before the last one read
            for line in lines_backwards(fh, end):
                if scanned >= CHUNK:
                    self.pos = line.end + 1
                    break
                scanned += line.size + 1
                later, after = self.oldest if self.oldest is not None else (self.size, -1)
                after += 1 + max(0, later - line.end - 1)  # (blank lines between: lines too)
                self.oldest = (line.start, after)
                record = read_record(fh, line, SHOW_BYTES)
                if isinstance(record, dict):
                    found.append((after, record))  # a bad line costs itself only, as everywhere
        self.records = found[::-1]
        return True


@dataclass
class _Claims:
    """What the event log says was written to one log by the conversation, read so far (backwards):
    lines a turn logged (``message_logged`` counts) and notes left by agents (``note_added``), not yet
    matched to the log's records read from its end."""

    lines: int = 0
    notes: int = 0


class ScrollBack:
    """Pages of earlier chat for one session (see the module doc).

    Only what the conversation wrote is shown: a log's records are matched, from its end backwards,
    with the turns that logged them (``message_logged``: so many lines to that log) and the notes agents
    left (``note_added``). A record no event claims was written otherwise — an imported transcript, the
    lines a switch or folding copied into an effort (the chat showed them where they were said), a
    reopen's separator — and is never drawn into the chat as messages."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._before: tuple[str, int] | None = None  # where the last page ended (its oldest line)
        self._restart()

    def page(self, before: LoggedLine = END_OF_CHAT, limit: int = PAGE) -> HistoryPage:
        """Up to ``limit`` lines said before ``before`` (the oldest line the chat shows; the newest
        page by default)."""
        boundary = before.order
        if boundary != self._before:
            self._restart()
        targets = self._targets(boundary[0], limit)
        found: list[tuple[tuple[str, int], dict[str, Any], str]] = []
        for log in targets:
            taken = 0
            while taken < limit and (record := self._said(log)) is not None:
                if order_of(record) >= boundary:
                    continue  # said after the line asked about: shown already
                found.append((order_of(record), record, log))
                taken += 1
        found.sort(key=lambda item: item[0])
        for _, record, log in found[:-limit]:  # older than this page: for the next one
            self._held.setdefault(log, []).append(record)
        page = found[-limit:]
        lines: list[LoggedLine] = []
        for _, record, log in page:
            lines += line_records([record], log)
        more = bool(found[:-limit]) or not all(
            self._reader(log).exhausted and not self._held.get(log) for log in targets
        )
        more = more or not self._events.exhausted
        if page:
            self._before = page[0][0]
            oldest = page[0][0][0]
            seen = list(reversed(self._seen_events))
            span = [e for e in seen if oldest <= str(e.get("ts") or "") < boundary[0]]
            # (every turn read, not only the span's: the turn of the page's oldest line began before it)
            banners = above_replies(lines, banners_between(span, oldest, boundary[0]), turn_spans(seen))
            lines = sorted(with_usage(lines, seen) + banners, key=lambda line: line.order)
        else:
            self._before = boundary
            if boundary == END_OF_CHAT.order:  # nothing said yet: what happened to the session still shows
                # (a transcript restored into it while the app was closed: its banner, as a restore into
                # the open chat shows it, not a blank chat; the event log was read to its start to know)
                lines = banners_between(list(reversed(self._seen_events)), "")[-limit:]
        return HistoryPage(tuple(lines), more and bool(page))

    def _restart(self) -> None:
        self._events = _Backwards(self.session.events.path)
        self._logs: dict[str, _Backwards] = {}
        self._seen_events: list[dict[str, Any]] = []  # read backwards, newest first
        self._claims: dict[str, _Claims] = {}
        self._held: dict[str, list[dict[str, Any]]] = {}  # said, read for a page, left for the next (file order)
        self._oldest_event = "\uffff"  # the time of the oldest event read: every later one has been read

    def _reader(self, log: str) -> _Backwards:
        reader = self._logs.get(log)
        if reader is None:
            path = self.session.raw_path if log == "ambient" else self.session.effort_path(log)
            reader = self._logs[log] = _Backwards(path)
        return reader

    def _said(self, log: str) -> dict[str, Any] | None:
        """The next record of ``log`` (backwards) that the conversation said and that still stands:
        withdrawn exchanges, markers and records no event claims are passed over."""
        held = self._held.get(log)
        if held:
            return held.pop()
        reader, claims = self._reader(log), self._claims.setdefault(log, _Claims())
        while (found := reader.previous_numbered()) is not None:
            after, record = found
            if is_marker(record):
                reader.withdrawn_through = max(reader.withdrawn_through, after + int(record[RETRACTS]))
                continue
            if record.get("role") not in ("user", "assistant"):
                continue  # a reopen's separator and the like: its banner comes from the event log
            note = note_author(record) is not None
            while not (claims.notes if note else claims.lines) and self._may_claim(record):
                if not self._read_events(EVENTS_PER_STEP):
                    break
            if note:
                if claims.notes <= 0:
                    continue
                claims.notes -= 1
            elif claims.lines > 0:
                claims.lines -= 1
            else:
                continue  # nothing the conversation logged: imported, or a copy of lines said elsewhere
            if after <= reader.withdrawn_through:
                continue  # a withdrawn exchange (regenerated, edited): not shown
            return record
        return None

    def _may_claim(self, record: dict[str, Any]) -> bool:
        """Whether an event not read yet could have logged ``record``: one written at or after its time
        (an event is written after the lines it logs), when such events remain unread."""
        return not self._events.exhausted and str(record.get("ts") or "") <= self._oldest_event

    def _read_events(self, count: int) -> int:
        """Read up to ``count`` more events backwards; how many were read."""
        read = 0
        while read < count and (event := self._events.previous()) is not None:
            self._seen_events.append(event)
            self._claim(event)
            read += 1
        return read

    def _claim(self, event: dict[str, Any]) -> None:
        self._oldest_event = min(self._oldest_event, str(event.get("ts") or ""))
        log = _log_named(event)
        if log is None:
            return
        claims = self._claims.setdefault(log, _Claims())
        if event.get("event") == ev.MESSAGE_LOGGED:
            count = event.get("count")
            claims.lines += count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0
        else:
            claims.notes += 1

    def _targets(self, before_ts: str, limit: int) -> list[str]:
        """The logs that hold the ``limit`` lines before ``before_ts``: those the turns (and the agents'
        notes) of that stretch wrote to, read from the event log backwards, as far as needed."""
        counted, targets = 0, set[str]()
        for seen in self._seen_events:
            counted += self._count(seen, before_ts, targets)
        while counted < limit:
            start = len(self._seen_events)
            if not self._read_events(EVENTS_PER_STEP):
                break  # the start of the event log
            for event in self._seen_events[start:]:
                counted += self._count(event, before_ts, targets)
        return sorted(targets)

    @staticmethod
    def _count(event: dict[str, Any], before_ts: str, targets: set[str]) -> int:
        log = _log_named(event)
        if log is None:
            return 0
        targets.add(log)
        count = event.get("count", 1)
        return count if isinstance(count, int) and str(event.get("ts") or "") < before_ts else 0


def _log_named(event: dict[str, Any]) -> str | None:
    """The log a ``message_logged`` or ``note_added`` event wrote to (None for other events and bad names)."""
    kind = event.get("event")
    if kind == ev.MESSAGE_LOGGED:
        to = event.get("to")
    elif kind == ev.NOTE_ADDED:
        to = event.get("effort_id")
    else:
        return None
    if not isinstance(to, str) or not (to == "ambient" or SLUG_RE.fullmatch(to)):
        return None
    return to


def recent_lines(session: Session, limit: int = 40) -> list[LoggedLine]:
    """The newest ``limit`` lines the conversation logged, with the banners of the same stretch."""
    return list(ScrollBack(session).page(END_OF_CHAT, limit).lines)
