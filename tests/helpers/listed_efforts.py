"""An effort list for tests of the search index alone: the index reads each effort's status, summary and
name from the list's rows in its own database, so a test writes the list as a session would have it
(``manifest.yaml``) and brings the rows forward, as a session's load does."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ccm_tui.core.manifest.effort import Effort
from ccm_tui.core.manifest.effort_list import EffortList, save_manifest
from ccm_tui.core.search import EffortIndex

#: (id, status, summary) or (id, status, summary, name)
Listed = tuple[str, ...] | tuple[str, str, str | None] | tuple[str, str, str | None, str]


def list_efforts(index: EffortIndex, root: Path, entries: Iterable[Listed]) -> None:
    """``root/manifest.yaml`` lists ``entries`` (in order), and the rows of the index's database say so."""
    efforts = [Effort(id=e[0], status=e[1], summary=e[2], name=e[3] if len(e) > 3 else "") for e in entries]
    save_manifest(Path(root) / "manifest.yaml", efforts)
    EffortList(index.database, Path(root)).catch_up()


def sync_listed(index: EffortIndex, root: Path, entries: Iterable[Listed] = ()) -> int:
    """:func:`list_efforts`, then the index's sync of the session at ``root``; log lines added."""
    list_efforts(index, root, entries)
    return index.sync_session(Path(root))
