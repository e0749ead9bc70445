"""A session never follows a symbolic link: writing through one would truncate or append to a file
outside the session. (The session directory itself may be a link: where the user keeps it is their
choice.) Reads and appends open with ``O_NOFOLLOW`` too; this check says so plainly, up front.

Looking at every effort log costs one directory listing — 100,000 entries in a big session — so a
writer records the stamp of ``efforts/`` it found clean, and the next open looks again only when
that directory changed (a file created, removed or renamed in it changes its mtime).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..storage.derived import DERIVED_FILE, OLD_FILES, SUFFIXES
from ..storage.durable import symlink_refused
from .lock import LOCK_FILE

SESSION_FILES = (
    "raw.jsonl",
    "manifest.yaml",
    "efforts",
    "expanded.json",
    "session_state.json",
    "events.jsonl",
    LOCK_FILE,
    *(name + suffix for name in (DERIVED_FILE, *OLD_FILES) for suffix in SUFFIXES),
)


def _stamp(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return [st.st_mtime_ns, st.st_ino, st.st_size]


def refuse_links(directory: Path, *, logs: bool, checked: Any = None) -> list[int] | None:
    """Raise StoreError if a session file (and, with ``logs``, an effort log) is a symbolic link.
    ``checked``: the stamp of ``efforts/`` when it was last found clean (its logs are not listed
    again while it is the same). Returns the stamp of ``efforts/`` found clean now, if listed."""
    for name in SESSION_FILES:
        if (directory / name).is_symlink():
            raise symlink_refused(directory / name)
    if not logs:
        return None
    efforts = directory / "efforts"
    stamp = _stamp(efforts)
    if stamp is None or stamp == checked:
        return None
    with os.scandir(efforts) as entries:
        for entry in entries:
            if entry.is_symlink():
                raise symlink_refused(Path(entry.path))
    return stamp if _stamp(efforts) == stamp else None
