"""The read tools' work: search, read, list, status — through the core's reader, never the writer lock.

A :class:`~ccm_tui.core.api.SessionReader` per session stays open (its search index open,
the session read again only when another process wrote), so a search costs the ranking, not
an open — for the sessions used last: each holds about six file descriptors, so with every
session served (``--all-sessions``) only :func:`readers_kept` stay open (a share of the
process's descriptor limit) and the one used longest ago is closed for the next. A reader in
use is never closed under its caller. Every failure becomes an :class:`InputError`
in plain words, naming sessions and files in them, never a local path: an unknown id, a
line past the end, a session that is not there, a manifest that does not parse.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..config import Settings
from ..core.api import (
    AMBIENT,
    EffortEntry,
    LineRangeError,
    SearchIndexError,
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
from .scope import InputError, Scope, effort_id

FDS_PER_READER = 6  # a reader: its derived.sqlite (the file, its WAL, its shared memory) and room for a log it reads
MAX_READERS = 64


def readers_kept(limit: int | None = None) -> int:
    """How many session readers stay open: a quarter of the process's descriptor limit (the rest is
    the SDK's, the writes', the logs'), at least 2, at most MAX_READERS."""
    if limit is None:
        try:
            import resource

            limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        except (ImportError, OSError, ValueError):
            limit = 256
        if limit < 0:  # RLIM_INFINITY
            limit = 1 << 16
    return max(2, min(MAX_READERS, limit // (4 * FDS_PER_READER)))


@dataclass
class _Kept:
    reader: SessionReader
    users: int = 0


def _plain(exc: Exception, scope: Scope, session: str | None = None) -> InputError:
    """``exc`` in plain words for the caller: no local path, no credential; a session that cannot be
    read (``session``: its name) says so first."""
    text = scope.private(redact(" ".join(str(exc).split())))
    if session and isinstance(exc, StoreError | OSError):
        text = f"session {session} cannot be read: {text}"
    return InputError(text)


class Reads:
    """The read tools over the sessions of a :class:`Scope` (thread-safe)."""

    def __init__(self, scope: Scope, settings: Settings, *, kept: int | None = None) -> None:
        self.scope = scope
        self.settings = settings
        self.kept = kept if kept is not None else readers_kept()
        self._readers: OrderedDict[Path, _Kept] = OrderedDict()  # least recently used first
        self._guard = threading.Lock()

    @contextmanager
    def reader(self, directory: Path) -> Iterator[SessionReader]:
        """The session's reader, open while the caller uses it (then kept, or closed for another)."""
        with self._guard:
            entry = self._readers.pop(directory, None) or _Kept(SessionReader(directory, self.settings))
            self._readers[directory] = entry
            entry.users += 1
        try:
            yield entry.reader
        finally:
            with self._guard:
                entry.users -= 1
                closing = self._over_limit()
            for reader in closing:
                reader.close()

    def _over_limit(self) -> list[SessionReader]:
        """The readers used longest ago and not in use, beyond ``kept`` (taken out: the caller closes them)."""
        idle = [d for d, entry in self._readers.items() if not entry.users]
        return [self._readers.pop(d).reader for d in idle[: max(0, len(self._readers) - self.kept)]]

    @property
    def open_readers(self) -> int:
        return len(self._readers)

    def close(self) -> None:
        with self._guard:
            readers = [entry.reader for entry in self._readers.values()]
            self._readers.clear()
        for reader in readers:
            reader.close()

    # ------------------------------------------------------------------ tools
    def search(self, query: str, limit: int, session: str | None = None) -> str:
        if not query.strip():
            raise InputError("the query is empty: give the words to look for (names, errors, file names …)")
        targets = self.scope.sessions(session)
        label = self.scope.all_sessions
        found: list[render.Found] = []
        stale, skipped = [], []
        for name, directory in targets:
            try:
                with self.reader(directory) as reader:
                    answer = reader.search(query, limit)
                    found.extend(
                        render.Found(h, name if label else None, None if h.source == AMBIENT else reader.effort(h.id))
                        for h in answer.hits
                    )
            except (StoreError, SearchIndexError, OSError) as exc:
                if len(targets) == 1:
                    raise _plain(exc, self.scope, name) from None
                skipped.append(f"session {name} skipped: {_plain(exc, self.scope)}")
                continue
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
            raise InputError(str(exc)) from None
        try:
            with self.reader(directory) as reader:
                lines = reader.read_lines(log, first, last, line=around_line)
                if log == AMBIENT:
                    title = render.ambient_title(lines.total or 0, label)
                else:
                    view = reader.effort(log)
                    assert view is not None  # read_lines checked it
                    title = render.effort_title(view, lines.total, label)
        except (LineRangeError, EffortNotFound, StoreError, SearchIndexError, OSError) as exc:
            raise _plain(exc, self.scope, name) from None
        return render.read_text(title, lines.messages, lines.first, lines.last, lines.total)

    def list(self, state: str, limit: int, offset: int, session: str | None = None) -> str:
        name, directory = self.scope.session(session)
        try:
            with self.reader(directory) as reader:
                entries = reader.efforts()
                turn = reader.turn
        except (StoreError, OSError) as exc:
            raise _plain(exc, self.scope, name) from None
        chosen = [e for e in entries if _in_state(e, state)]
        chosen.sort(key=_recency, reverse=True)
        return render.list_text(name, turn, chosen, chosen[offset : offset + limit], state, offset)

    def status(self, session: str | None = None) -> str:
        if self.scope.all_sessions and not session:
            return self._sessions_text()
        name, directory = self.scope.session(session)
        try:
            status, data = read_status(directory, self.settings)
        except (StoreError, OSError) as exc:
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
                with self.reader(self.scope.root / name) as reader:
                    total, opened = reader.counts()
                out.append(f"{name} · {total} efforts, {opened} open")
            except (StoreError, OSError) as exc:
                out.append(f"{name} · unreadable: {_plain(exc, self.scope)}")
        return "\n".join(out)


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
