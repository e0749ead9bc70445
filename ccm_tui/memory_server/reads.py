"""The read tools' work: search, read, list, status — through the core's reader, never the writer lock.

A :class:`~ccm_tui.core.api.SessionReader` per session stays open (its search index open,
the session read again only when another process wrote), so a search costs the ranking, not
an open — for the sessions used last: each holds up to :data:`FDS_PER_READER` descriptors,
so only :func:`readers_kept` readers are ever open at once, in use or kept (a share of the
process's descriptor limit). A request for another session closes the one used longest ago
that no request is using, or waits for one to be done (requests come in parallel: the
readers in use were not bounded before, and a burst of them ran the process out of
descriptors). A reader in use is never closed under its caller. When descriptors run out
all the same, the idle readers are closed and the session tried once more; then the tool
answers with one line saying what to do (:class:`~.descriptors.OutOfDescriptors`). Every
failure becomes an :class:`ToolInputError` in plain words, naming sessions and files in them,
never a local path: an unknown id, a line past the end, a session that is not there, a
manifest that does not parse.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from ..config import Settings
from ..core.api import (
    AMBIENT,
    DerivedError,
    EffortEntry,
    EffortView,
    LineRangeError,
    LogLines,
    SearchAnswer,
    SearchHit,
    SessionReader,
    StoreError,
    line_range,
    page,
    read_status,
    redact,
    status_text,
)
from ..errors import EffortNotFound
from . import render
from .descriptors import OutOfDescriptors, descriptor_limit, out_of_descriptors
from .scope import Scope, ToolInputError, effort_id

# Measured (a reader of a built session, WAL on: /proc/self/fd counted and open/close traced around
# opening it, a search, reads of the ambient chat and of an effort, a listing): 3 held between calls
# (derived.sqlite, its -wal and its -shm), 4 at most within a call (a session file read meanwhile:
# manifest.yaml, raw.jsonl, an effort's log, one at a time). Counting 3 under-budgets the call.
FDS_PER_READER = 4
MAX_READERS = 64
TAKE_WAIT = 30.0  # seconds a request waits for a reader another request is using
AGAIN = "ask again in a moment"
FEWER = "search fewer sessions (name one with session)"

T = TypeVar("T")


def readers_kept(limit: int | None = None) -> int:
    """How many session readers may be open at once: a quarter of the process's descriptor limit (the
    rest is the SDK's, the writes', the logs'), at least 2, at most MAX_READERS."""
    limit = descriptor_limit() if limit is None else limit
    return max(2, min(MAX_READERS, limit // (4 * FDS_PER_READER)))


@dataclass
class _Kept:
    reader: SessionReader
    users: int = 0


def _plain(exc: Exception, scope: Scope, session: str | None = None) -> ToolInputError:
    """``exc`` in plain words for the caller: no local path, no credential; a session that cannot be
    read (``session``: its name) says so first."""
    text = scope.private(redact(" ".join(str(exc).split())))
    if session and isinstance(exc, StoreError | OSError):
        text = f"session {session} cannot be read: {text}"
    return ToolInputError(text)


class Reads:
    """The read tools over the sessions of a :class:`Scope` (thread-safe)."""

    def __init__(self, scope: Scope, settings: Settings, *, kept: int | None = None, wait: float = TAKE_WAIT) -> None:
        self.scope = scope
        self.settings = settings
        self.kept = kept if kept is not None else readers_kept()
        self.wait = wait
        self._readers: OrderedDict[Path, _Kept] = OrderedDict()  # least recently used first
        self._free = threading.Condition()  # notified when a reader is given back

    @contextmanager
    def reader(self, directory: Path) -> Iterator[SessionReader]:
        """The session's reader, open while the caller uses it (then kept, or closed for another).

        Raises:
            ToolInputError: every reader stayed in use by other requests for ``wait`` seconds.
        """
        entry = self._take(directory)
        try:
            yield entry.reader
        finally:
            with self._free:
                entry.users -= 1
                self._free.notify_all()

    def _take(self, directory: Path) -> _Kept:
        """The session's reader marked in use: the one kept, or a new one in a free place (the idle
        reader used longest ago closed for it), waiting while every place holds a reader in use."""
        deadline = time.monotonic() + self.wait
        with self._free:
            while (entry := self._readers.pop(directory, None)) is None and len(self._readers) >= self.kept:
                idle = next((d for d, kept in self._readers.items() if not kept.users), None)
                if idle is not None:
                    self._readers.pop(idle).reader.close()  # (closing: no I/O but the database's own)
                    continue
                left = deadline - time.monotonic()
                if left <= 0 or not self._free.wait(left):
                    raise ToolInputError(
                        f"the {self.kept} sessions this server may read at once (a share of its descriptor "
                        f"limit) stayed in use by other requests for {self.wait:g} s; nothing was read — ask "
                        "again in a moment"
                    )
            entry = entry or _Kept(SessionReader(directory, self.settings))  # (it opens on first use)
            self._readers[directory] = entry
            entry.users += 1
            return entry

    def _using(self, directory: Path, ask: Callable[[SessionReader], T], advice: str = AGAIN) -> T:
        """``ask`` on the session's reader, through :meth:`_retrying`."""

        def once() -> T:
            with self.reader(directory) as reader:
                return ask(reader)

        return self._retrying(once, advice)

    def _retrying(self, ask: Callable[[], T], advice: str = AGAIN) -> T:
        """``ask()``; when the process ran out of descriptors, the idle readers closed (the one that
        failed too: what it opened before failing) and asked once more; then :class:`OutOfDescriptors`
        with ``advice``. Other failures are raised as they come."""
        for attempt in range(2):
            try:
                return ask()
            except (StoreError, DerivedError, OSError) as exc:
                if not out_of_descriptors(exc, FDS_PER_READER):
                    raise
                self.close_idle()
                if attempt:
                    raise OutOfDescriptors(advice) from None
        raise AssertionError("unreachable")

    def close_idle(self) -> None:
        """Close the readers no request is using (their descriptors, for another use)."""
        with self._free:
            idle = [d for d, entry in self._readers.items() if not entry.users]
            for directory in idle:
                self._readers.pop(directory).reader.close()

    def close(self) -> None:
        with self._free:
            readers = [entry.reader for entry in self._readers.values()]
            self._readers.clear()
        for reader in readers:
            reader.close()

    # ------------------------------------------------------------------ tools
    def search(self, query: str, limit: int, session: str | None = None) -> str:
        if not query.strip():
            raise ToolInputError("the query is empty: give the words to look for (names, errors, file names …)")
        targets = self.scope.sessions(session)
        label = self.scope.all_sessions
        advice = FEWER if len(targets) > 1 else AGAIN
        found: list[render.Found] = []
        stale, skipped = [], []
        for name, directory in targets:
            try:
                answer, hits = self._using(directory, partial(_search_one, query=query, limit=limit), advice)
            except (StoreError, DerivedError, OSError) as exc:
                if len(targets) == 1:
                    raise _plain(exc, self.scope, name) from None
                skipped.append(f"session {name} skipped: {_plain(exc, self.scope)}")
                continue
            found.extend(render.Found(h, name if label else None, view) for h, view in hits)
            if answer.stale:
                where = f"session {name}: " if label else ""
                stale.append(f"{where}ccm-tui was writing the search index; the newest exchange may be missing")
        found.sort(key=lambda f: -f.hit.score)
        return render.search_text(query, found[:limit], stale=stale, skipped=skipped)

    def read(self, effort: str, around_line: int | None, offset: int, limit: int, session: str | None = None) -> str:
        log = effort_id(effort, ambient=True)
        name, directory = self.scope.session(session)
        label = name if self.scope.all_sessions else None
        try:
            first, last = (
                line_range(around=around_line, radius=min(limit, 60) // 2) if around_line else page(offset, limit)
            )
        except LineRangeError as exc:
            raise ToolInputError(str(exc)) from None

        def lines_and_title(reader: SessionReader) -> tuple[LogLines, list[str]]:
            lines = reader.read_lines(log, first, last, line=around_line)
            if log == AMBIENT:
                return lines, render.ambient_title(lines.total or 0, label)
            view = reader.effort(log)
            assert view is not None  # read_lines checked it
            return lines, render.effort_title(view, lines.total, label)

        try:
            lines, title = self._using(directory, lines_and_title)
        except (LineRangeError, EffortNotFound, StoreError, DerivedError, OSError) as exc:
            raise _plain(exc, self.scope, name) from None
        return render.read_text(title, lines.messages, lines.first, lines.last, lines.total)

    def list(self, state: str, limit: int, offset: int, session: str | None = None) -> str:
        name, directory = self.scope.session(session)
        try:
            entries, turn = self._using(directory, lambda reader: (reader.efforts(), reader.turn))
        except (StoreError, DerivedError, OSError) as exc:
            raise _plain(exc, self.scope, name) from None
        chosen = [e for e in entries if _in_state(e, state)]
        chosen.sort(key=_recency, reverse=True)
        return render.list_text(name, turn, chosen, chosen[offset : offset + limit], state, offset)

    def status(self, session: str | None = None) -> str:
        if self.scope.all_sessions and not session:
            return self._sessions_text()
        name, directory = self.scope.session(session)
        try:
            status, data = self._retrying(partial(read_status, directory, self.settings))
        except (StoreError, DerivedError, OSError) as exc:
            raise _plain(exc, self.scope, name) from None
        return status_text(status, {**data, "session_dir": name})  # its name, not where it is on this machine

    def _sessions_text(self) -> str:
        names = self.scope.names()
        if not names:
            return "no sessions yet (the first ccm-tui or ccm-tui send makes one)"
        out = [f"{len(names)} session(s) (name one for its status, list or reads):"]
        for name in names:
            assert self.scope.root is not None
            try:
                total, opened = self._using(self.scope.root / name, lambda reader: reader.counts())
                out.append(f"{name} · {total} efforts, {opened} open")
            except (StoreError, DerivedError, OSError) as exc:
                out.append(f"{name} · unreadable: {_plain(exc, self.scope)}")
        return "\n".join(out)


def _search_one(
    reader: SessionReader, *, query: str, limit: int
) -> tuple[SearchAnswer, list[tuple[SearchHit, EffortView | None]]]:
    """One session's answer, and its hits each with its effort's view (None for the ambient chat)."""
    answer = reader.search(query, limit)
    return answer, [(h, None if h.source == AMBIENT else reader.effort(h.id)) for h in answer.hits]


def _in_state(entry: EffortEntry, state: str) -> bool:
    value = entry.view.state
    if state == "any":
        return True
    if state == "open":
        return value.is_open
    if state == "concluded":
        return not value.is_open
    return value.value == state


def _recency(entry: EffortEntry) -> tuple[int, str]:
    view = entry.view
    return (entry.last_turn if entry.last_turn is not None else -1, view.concluded_at or view.created or "")
