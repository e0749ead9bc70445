"""One search over every session of the data directory (``ccm-tui search --all-sessions``).

Each session is searched through its own :class:`~.reader.SessionReader` (never the writer
lock) and the hits are merged best first. A hit in a captured agent session (``ccm-tui watch``)
carries what :func:`~..session.sessions_folder.capture_of` says of it: agent, project, start
date, the command that resumes it, and whether its file is gone. Filters (agent, project,
dates) keep only captured sessions that match.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import Settings
from ..search import DerivedError, SearchHit
from ..session.sessions_folder import CAPTURE_PREFIX, capture_of, session_paths
from ..storage.durable import StoreError
from .reader import SessionReader

FILTERED_DEPTH = 20  # with a filter, each session is asked for this many times the results wanted
MAX_DEPTH = 2_000


@dataclass(frozen=True)
class CaptureFilter:
    """Which captured sessions a search keeps (all None: every hit, captured or not)."""

    agent: str | None = None
    project: str | None = None
    since: str | None = None  # ISO dates, inclusive
    until: str | None = None

    @property
    def active(self) -> bool:
        return any((self.agent, self.project, self.since, self.until))

    def keeps(self, capture: dict[str, Any] | None) -> bool:
        if not self.active:
            return True
        if capture is None:
            return False
        if self.agent and str(capture.get("agent") or "").lower() != self.agent.lower():
            return False
        if self.project and str(capture.get("project") or "").lower() != self.project.lower():
            return False
        started = str(capture.get("started") or "")
        if self.since and (not started or started < self.since):
            return False
        return not (self.until and (not started or started > self.until))


@dataclass(frozen=True)
class SessionHit:
    session: str
    hit: SearchHit
    capture: dict[str, Any] | None


@dataclass
class AllSessionsAnswer:
    hits: list[SessionHit]
    skipped: list[str] = field(default_factory=list)  # one line per session that could not be searched


def search_all_sessions(
    root: Path, query: str, limit: int = 10, *, where: CaptureFilter | None = None, settings: Settings | None = None
) -> AllSessionsAnswer:
    """The best ``limit`` hits over every session under ``root`` (the data directory's ``sessions/``).
    A session that cannot be read is skipped with one line (the others are still searched)."""
    where = where or CaptureFilter()
    settings = settings or Settings()
    depth = min(MAX_DEPTH, limit * FILTERED_DEPTH) if where.active else limit
    answer = AllSessionsAnswer([])
    for directory in session_paths(root, links=False) if root.is_dir() else []:
        if where.agent and not directory.name.startswith(CAPTURE_PREFIX):
            continue
        try:
            with SessionReader(directory, settings) as reader:
                found = reader.search(query, depth).hits
                for hit in found:
                    view = reader.effort(hit.id) if hit.source != "ambient" else None
                    capture = capture_of(view.source if view is not None else None)
                    if where.keeps(capture):
                        answer.hits.append(SessionHit(directory.name, hit, capture))
        except (StoreError, DerivedError, OSError) as exc:
            answer.skipped.append(f"session {directory.name} skipped: {' '.join(str(exc).split())}")
    answer.hits.sort(key=lambda h: -h.hit.score)
    del answer.hits[limit:]
    return answer
