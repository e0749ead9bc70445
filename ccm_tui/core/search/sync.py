"""Keeping the search index in step with the session, at the cost of one query when it already is.

The index (in ``derived.sqlite``) is derived data, updated as each exchange and effort change is
logged. It records the session's :meth:`~ccm_tui.core.session.session.Session.index_marker` whenever it
is known to hold all of it (after a full sync, and after each piece of work that indexed
everything it wrote); a reader or a writer that finds the same marker has nothing to sync. A
different marker (another process's write that did not index, a hand edit, a deleted index)
means a full sync: the meta documents of the effort rows that changed are written again, and every
log whose size, mtime or inode changed is read from where the index stopped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..session.session import Session
from . import DerivedError, EffortIndex


def sync_log(index: EffortIndex, session: Session, log: str) -> None:
    """Index what was just written to one log ("ambient" or an effort id) so that it is findable at
    once. Never fails: a busy or broken index catches up at the next sync."""
    try:
        if log == "ambient":
            index.sync_ambient_log(session.raw_path)
        elif session.efforts.get(log) is not None:
            index.sync_effort_log(log, session.effort_path(log))
    except DerivedError:
        pass


def sync_index(index: EffortIndex, session: Session) -> None:
    """Bring ``index`` up to date with ``session`` (raises DerivedError)."""
    if index.synced_marker() == session.index_marker():
        return
    session.refuse_symlinks()  # the sync reads every log: none may lead out of the session
    for _ in range(2):  # a file rebuilt during the sync (found corrupt) lost the effort rows: they catch up first
        generation = index.database.generation
        session.efforts.catch_up()  # (two stats when the rows are current)
        marker = session.index_marker()
        index.sync_session(session.dir)
        if index.database.generation == generation:
            index.mark_synced(marker)
            return


class IndexWatch:
    """Whether a piece of work kept the index complete: it was in step when the work began and
    no index update failed during it. Then the marker after the work is recorded."""

    def __init__(self, index: EffortIndex, session: Session) -> None:
        self.index = index
        self.session = session
        self._in_step = False
        self._failures = 0

    def begin(self) -> None:
        try:
            self._in_step = self.index.synced_marker() == self.session.index_marker()
        except DerivedError:
            self._in_step = False
        self._failures = self.index.failures

    def end(self) -> None:
        if not self._in_step or self.index.failures != self._failures:
            return
        try:
            self.index.mark_synced(self.session.index_marker())
        except DerivedError:
            pass

    @contextlib.contextmanager
    def kept(self) -> Iterator[None]:
        """:meth:`begin`, the block, :meth:`end` (the end only when the block did not raise)."""
        self.begin()
        yield
        self.end()
