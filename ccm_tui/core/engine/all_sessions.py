"""One search over every session of the data directory (``ccm-tui search --all-sessions``).

Each session's index is searched alone when it holds all of its session (its marker matches the
session's files: :func:`~..session.session.index_marker_of`), without opening the session — its
derived database read-only, the hits' entries read from the effort rows, the same filters as a
reader's (merged efforts, folded ambient chat). Otherwise (the index behind, another process
writing, a rebuilt file) the session is searched through its own :class:`~.reader.SessionReader`,
which brings the index up to date (never the writer lock). The hits are merged best first. A hit in a captured agent session (``ccm-tui watch``)
carries what :func:`~..session.sessions_folder.capture_of` says of it: agent, project, start
date, the command that resumes it, and whether its file is gone. Filters (agent, project,
dates) keep only captured sessions that match.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import Settings
from ..manifest.effort_list import EffortList, file_stamp, journal_entries
from ..search import DerivedError, EffortIndex, SearchHit, without_folded
from ..session.session import index_marker_of, refuse_links
from ..session.sessions_folder import CAPTURE_PREFIX, capture_of, session_paths
from ..storage.derived import IN_MEMORY, DerivedDB, derived_path
from ..storage.durable import StoreError, file_size
from .reader import READ_WAIT, SessionReader

JOURNAL_TAIL = 2**20  # bytes of events past the effort rows read to see they hold no entry (more: a reader)
FILTERED_DEPTH = 20  # with a filter, each session is asked for this many times the results wanted
MAX_DEPTH = 2_000


@dataclass(frozen=True)
class CaptureFilter:
    """Which captured sessions a search keeps (all None: every hit, captured or not)."""

    agent: str | None = None
    project: str | None = None
    since: str | None = None  # ISO dates, inclusive
    until: str | None = None
    captures_only: bool = False  # only the captured agents' sessions (``search_captures``)

    @property
    def active(self) -> bool:
        return any((self.agent, self.project, self.since, self.until, self.captures_only))

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
        if (where.agent or where.captures_only) and not directory.name.startswith(CAPTURE_PREFIX):
            continue
        try:
            found = _index_alone(directory, query, depth)
            if found is None:
                found = _through_reader(directory, settings, query, depth)
        except (StoreError, DerivedError, OSError) as exc:
            answer.skipped.append(f"session {directory.name} skipped: {' '.join(str(exc).split())}")
            continue
        answer.hits += [SessionHit(directory.name, hit, capture) for hit, capture in found if where.keeps(capture)]
    answer.hits.sort(key=lambda h: -h.hit.score)
    del answer.hits[limit:]
    return answer


Found = list[tuple[SearchHit, dict[str, Any] | None]]


def _index_alone(directory: Path, query: str, depth: int) -> Found | None:
    """The session's hits from its index alone, or None when the index may not hold all of the session
    (or cannot be read alone now): the reader then syncs it."""
    if not derived_path(directory).is_file():
        return None
    refuse_links(directory, logs=False)  # (as a reader does: no session file may be a link)
    db = DerivedDB(derived_path(directory))
    try:
        if db.path == IN_MEMORY:
            return None
        index = EffortIndex(db)
        with index.waiting_at_most(0):
            if index.synced_marker() != index_marker_of(directory, db):
                return None
            efforts = EffortList(db, directory)
            if not _rows_current(efforts, db):
                return None
        with index.waiting_at_most(READ_WAIT):
            hits = index.search(query, depth)
        found: Found = []
        for hit in without_folded(hits, efforts.folded_upto()):
            effort = efforts.get(hit.id) if hit.source != "ambient" else None
            if effort is not None and effort.merged_into:
                continue
            found.append((hit, capture_of(effort.source if effort is not None else None)))
        return found
    except DerivedError:
        return None
    finally:
        db.close()


def _rows_current(efforts: EffortList, db: DerivedDB) -> bool:
    """The effort rows hold the record as it is now: they took in this manifest, and the events
    after their offset (a turn's, a restore's) journal no entry."""
    if efforts.current():
        return True
    known = db.run(db.meta, "manifest")
    if not isinstance(known, dict) or known.get("stamp") != file_stamp(efforts.manifest):
        return False
    start = db.run(db.meta, "journal") or 0
    if not isinstance(start, int) or not 0 <= file_size(efforts.events) - start <= JOURNAL_TAIL:
        return False
    return not journal_entries(efforts.events, start)[0]


def _through_reader(directory: Path, settings: Settings, query: str, depth: int) -> Found:
    with SessionReader(directory, settings) as reader:
        found: Found = []
        for hit in reader.search(query, depth).hits:
            view = reader.effort(hit.id) if hit.source != "ambient" else None
            found.append((hit, capture_of(view.source if view is not None else None)))
        return found
