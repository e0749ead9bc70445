"""The read tools' work: search, read, list, status — through the core's reader, never the writer lock.

One :class:`~ccm_tui.core.reading.SessionReader` per session stays open for the server's
life (its search index open, the session read again only when another process wrote),
so a search costs the ranking, not an open. Every failure becomes an :class:`InputError`
in plain words, naming sessions and files in them, never a local path: an unknown id, a
line past the end, a session that is not there, a manifest that does not parse.
"""

from __future__ import annotations

import threading
from pathlib import Path

from ..config import Settings
from ..core.log_lines import AMBIENT, LineRangeError, line_range, page
from ..core.reading import (
    EffortEntry,
    ReadError,
    SearchIndexError,
    SessionReader,
    StoreError,
    read_status,
    redact,
    status_text,
)
from . import render
from .scope import InputError, Scope, effort_id


def _plain(exc: Exception, scope: Scope, session: str | None = None) -> InputError:
    """``exc`` in plain words for the caller: no local path, no credential; a session that cannot be
    read (``session``: its name) says so first."""
    text = scope.private(redact(" ".join(str(exc).split())))
    if session and isinstance(exc, StoreError | OSError):
        text = f"session {session} cannot be read: {text}"
    return InputError(text)


class Reads:
    """The read tools over the sessions of a :class:`Scope` (thread-safe)."""

    def __init__(self, scope: Scope, settings: Settings) -> None:
        self.scope = scope
        self.settings = settings
        self._readers: dict[Path, SessionReader] = {}
        self._guard = threading.Lock()

    def reader(self, directory: Path) -> SessionReader:
        with self._guard:
            reader = self._readers.get(directory)
            if reader is None:
                reader = self._readers[directory] = SessionReader(directory, self.settings)
            return reader

    def close(self) -> None:
        with self._guard:
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()

    # ------------------------------------------------------------------ tools
    def search(self, query: str, limit: int, session: str | None = None) -> str:
        if not query.strip():
            raise InputError("the query is empty: give the words to look for (names, errors, file names …)")
        targets = self.scope.sessions(session)
        label = self.scope.all_sessions
        found: list[render.Found] = []
        stale, skipped = [], []
        for name, directory in targets:
            reader = self.reader(directory)
            try:
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
        reader = self.reader(directory)
        try:
            lines = reader.read_lines(log, first, last, line=around_line)
            if log == AMBIENT:
                title = render.ambient_title(lines.total or 0, label)
            else:
                view = reader.effort(log)
                assert view is not None  # read_lines checked it
                title = render.effort_title(view, lines.total, label)
        except (ReadError, StoreError, SearchIndexError, OSError) as exc:
            raise _plain(exc, self.scope, name) from None
        return render.read_text(title, lines.messages, lines.first, lines.last, lines.total)

    def list(self, state: str, limit: int, offset: int, session: str | None = None) -> str:
        name, directory = self.scope.session(session)
        reader = self.reader(directory)
        try:
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
                total, opened = self.reader(self.scope.root / name).counts()
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
