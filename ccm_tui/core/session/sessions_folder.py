"""The sessions under the data directory: which there are, when each was last used, how big it is;
making a new one, renaming, archiving and deleting one.

A directory of ``sessions/`` is a session when it holds one of its files (:data:`SESSION_FILES`).
What a listing shows is cheap to learn at any size: the last use is the newest mtime of the two
logs, the size a walk of the directory's entries (no file is read), the number of efforts a count of
the effort rows in ``derived.sqlite`` (last known: the journal after them is not applied here, and
``manifest.yaml``, which may be 40 MB, is never parsed) and the turns ``session_state.json``'s counter.

Names follow ``--session``'s rule (:func:`ccm_tui.config.session_name`). A rename is one
``os.rename`` inside ``sessions/``, done while holding the session's writer lock, so it never moves
a session another process is writing to (it says by whom), and never replaces another session: the
new name is claimed first with an exclusive ``mkdir``, and a directory is renamed only onto that
empty claim.

**Archived** (the one rule every lister honours): a session whose directory holds ``archived.json``.
:func:`session_paths` and :func:`list_sessions` leave archived sessions out unless asked
(``archived=True``), so the picker, ``sessions list``, ``search --all-sessions`` and the MCP server's
``--all-sessions`` all skip them alike; a session named explicitly (``--session``) still opens.

**Delete** leaves nothing on disk: under the session's writer lock (refused while another process
holds it or has it open) the directory is first moved out of ``sessions/`` into ``sessions/.deleting/``
in one ``os.rename`` (from then on it is gone for every lister), then removed file by file. A kill
between the two leaves it in ``.deleting/``, which the next delete or listing empties.

**Size** is the record's: the logs, the manifest and the small state files. ``derived.sqlite`` with
its WAL and shared memory (rebuilt from the record when missing) is counted apart (``derived_size``).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...atomic_file import fsync_dir
from ...config import session_name
from ...errors import NotFound, Refused
from ..storage.derived import DERIVED_FILE, peek
from ..storage.durable import atomic_write_json
from ..storage.eventlog import now_iso
from .lock import SessionLock, open_elsewhere

SESSION_FILES = ("manifest.yaml", "events.jsonl", "raw.jsonl")  # any of them: a directory is a session
USE_FILES = ("events.jsonl", "raw.jsonl")  # written by every turn: their newest mtime is the last use
STATE_FILE = "session_state.json"
MAX_STATE_BYTES = 1 << 20  # a state file larger than this is not a state file: no turn count
ARCHIVE_FILE = "archived.json"  # its presence: the session is archived (out of listings unless asked)
DELETING_DIR = ".deleting"  # sessions being deleted are moved here first (never a session: no session file)


class SessionCatalogError(Refused):
    """A session cannot be made or renamed as asked; the message says why, on one line."""


class SessionNameError(SessionCatalogError):
    """The name is not a session name."""


class SessionExists(SessionCatalogError):
    def __init__(self, name: str) -> None:
        super().__init__(f"there is already a session named {name!r}")


class SessionMissing(SessionCatalogError, NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(f"there is no session {name!r} (renamed or removed meanwhile?)")


class SessionInUse(SessionCatalogError):
    def __init__(self, name: str, pid: int | None) -> None:
        who = f"pid {pid}" if pid else "another process"
        super().__init__(f"the session {name!r} is in use by {who}: close it there first")
        self.pid = pid


class SessionOpen(SessionCatalogError):
    def __init__(self, name: str) -> None:
        super().__init__(f"the session {name!r} is open in another ccm-tui: quit it there first")


@dataclass(frozen=True)
class SessionInfo:
    name: str
    path: Path
    last_used: float | None  # seconds since the epoch; None: never used (no log yet)
    size: int  # bytes of its record (logs, state), not of the derived databases rebuilt from it
    efforts: int | None  # None: not known cheaply (no catalog)
    turns: int | None  # None: no readable session_state.json
    archived: bool = False
    derived_size: int = 0  # bytes of derived.sqlite with its WAL and shm (rebuilt when missing): not in size


def check_name(name: str) -> str:
    """The name as it will be used (stripped), or :class:`SessionNameError`."""
    try:
        return session_name(name)
    except ValueError as exc:
        raise SessionNameError(str(exc)) from None


def _valid_name(name: str) -> bool:
    try:
        return session_name(name) == name
    except ValueError:
        return False


def is_session(path: Path) -> bool:
    return path.is_dir() and any((path / f).is_file() for f in SESSION_FILES)


def is_archived(path: Path) -> bool:
    """Whether the session at ``path`` is archived (the one rule: see the module's docstring)."""
    return os.path.lexists(path / ARCHIVE_FILE)


def session_paths(
    root: Path, *, accept: Callable[[str], object] = _valid_name, links: bool = True, archived: bool = False
) -> list[Path]:
    """The sessions under ``root``, sorted by name: directories holding a session file whose names
    ``accept`` takes (by default ``--session``'s rule); ``links=False`` leaves out symbolic links
    (the MCP server serves no session that leads out of the data directory); archived sessions only
    with ``archived=True``. No directory yet: none;
    one that cannot be read (too many open files, no permission) is an error, never "none"."""
    try:
        entries = list(root.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise SessionCatalogError(f"cannot list the sessions in {root}: {(exc.strerror or str(exc)).lower()}") from None
    return sorted(
        (
            p
            for p in entries
            if accept(p.name) and (links or not p.is_symlink()) and is_session(p) and (archived or not is_archived(p))
        ),
        key=lambda p: p.name,
    )


def same_session(a: Path, b: Path) -> bool:
    """The same directory, however each path names it (``--session-dir`` may use a link or ``..``)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.absolute() == b.absolute()


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _size(directory: Path) -> tuple[int, int]:
    """Bytes of the files under ``directory`` (links not followed; what cannot be read counts 0): the
    record's, and apart those of ``derived.sqlite`` with its WAL and shm (at the top only)."""
    total, derived, pending = 0, 0, [directory]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(info.st_mode):
                        pending.append(Path(entry.path))
                    elif stat.S_ISREG(info.st_mode):
                        if entry.name.startswith(DERIVED_FILE) and Path(entry.path).parent == directory:
                            derived += info.st_size
                        else:
                            total += info.st_size
        except OSError:
            continue
    return total, derived


def _efforts(directory: Path) -> int | None:
    """How many effort rows ``derived.sqlite`` holds; None without a usable one (never parses the
    manifest, never writes)."""
    path = directory / DERIVED_FILE
    if not path.is_file() or path.is_symlink():
        return None
    db = peek(path)  # (None unless exactly ours: a view in place of a table would never end)
    if db is None:
        return None
    try:
        return int(db.execute("SELECT count(*) FROM entries").fetchone()[0])
    except sqlite3.Error:  # a damaged derived file only costs the count
        return None
    finally:
        db.close()


def _turns(directory: Path) -> int | None:
    path = directory / STATE_FILE
    try:
        if path.stat().st_size > MAX_STATE_BYTES:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    turn = data.get("turn") if isinstance(data, dict) else None
    return turn if isinstance(turn, int) and not isinstance(turn, bool) and turn >= 0 else None


def describe(path: Path) -> SessionInfo:
    uses = [t for t in (_mtime(path / f) for f in USE_FILES) if t is not None]
    size, derived = _size(path)
    return SessionInfo(
        name=path.name,
        path=path,
        last_used=max(uses) if uses else None,
        size=size,
        efforts=_efforts(path),
        turns=_turns(path),
        archived=is_archived(path),
        derived_size=derived,
    )


def list_sessions(root: Path, *, archived: bool = False) -> list[SessionInfo]:
    """Every session under ``root``, the most recently used first (never used ones last, by name);
    archived ones only with ``archived=True``. Leftovers of a delete a kill interrupted are removed."""
    sweep_deleted(root)
    found = [describe(p) for p in session_paths(root, archived=archived)]
    return sorted(found, key=lambda s: (s.last_used is None, -(s.last_used or 0.0), s.name))


def create_session(root: Path, name: str) -> Path:
    """A new, empty session directory (its files come with its first opening). An empty directory
    of that name (a session made and never opened) is taken as it is."""
    clean = check_name(name)
    path = root / clean
    try:
        root.mkdir(parents=True, exist_ok=True)
        path.mkdir()
    except FileExistsError:
        if path.is_symlink() or not path.is_dir() or any(path.iterdir()):
            raise SessionExists(clean) from None
    except OSError as exc:
        raise SessionCatalogError(f"cannot make the session {clean!r}: {exc.strerror or exc}") from None
    return path


def check_rename(root: Path, old: str, new: str, *, shown_here: bool = False) -> Path:
    """What :func:`rename_session` would do, without doing it: the new path, or why not. (The
    TUI asks before it closes the session it shows — ``shown_here``: its own hold on the session does
    not count — and the rename itself checks everything again.)"""
    clean = check_name(new)
    source, target = root / old, root / clean
    if not is_session(source):
        raise SessionMissing(old)
    if clean != old and (target.exists() or target.is_symlink()):
        raise SessionExists(clean)
    _check_free(source, old, shown_here=shown_here)
    return target


def _check_free(path: Path, name: str, *, shown_here: bool) -> None:
    """Refuse a session another process writes to (its writer lock) or has open (unless
    ``shown_here``: the TUI's own hold on the session it shows)."""
    lock = SessionLock(path)
    if not _try_lock(lock, name):
        raise SessionInUse(name, lock.holder_pid())
    lock.release()
    if not shown_here and open_elsewhere(path):
        raise SessionOpen(name)


def rename_session(root: Path, old: str, new: str) -> Path:
    """Rename the session ``old`` to ``new`` (both under ``root``); returns its new path. Refused
    while another process holds its writer lock, and when ``new`` is taken."""
    clean = check_name(new)
    source, target = root / old, root / clean
    if not _valid_name(old) or not is_session(source):  # a name, never a path out of the data directory
        raise SessionMissing(old)
    if clean == old:
        return source
    with held(source, old, "rename"):
        if open_elsewhere(source):
            raise SessionOpen(old)
        claim(target, clean)
        try:
            os.rename(source, target)  # onto the empty claim, atomically
        except OSError:
            target.rmdir()
            raise
    return target


@contextmanager
def held(path: Path, name: str, doing: str) -> Iterator[None]:
    """The session's writer lock, held while ``doing`` it (refused while another process holds it);
    an ``OSError`` meanwhile is said in one line (``cannot rename 'x': …``).

    Raises:
        SessionInUse: another process holds the lock.
        SessionCatalogError: the lock cannot be taken, or a file cannot be written meanwhile.
    """
    lock = SessionLock(path)
    if not _try_lock(lock, name):
        raise SessionInUse(name, lock.holder_pid())
    try:
        yield
    except OSError as exc:
        raise SessionCatalogError(f"cannot {doing} {name!r}: {exc.strerror or exc}") from None
    finally:
        lock.release()


def claim(target: Path, name: str) -> None:
    """Claim a session's name with its empty directory (exclusive: no session is ever replaced).

    Raises:
        SessionExists: the name is taken.
    """
    try:
        target.mkdir()
    except FileExistsError:
        raise SessionExists(name) from None


def _existing(root: Path, name: str) -> Path:
    path = root / name
    if not _valid_name(name) or path.is_symlink() or not is_session(path):
        raise SessionMissing(name)
    return path


def archive_session(root: Path, name: str, *, archived: bool = True) -> bool:
    """Archive the session ``name`` (or, ``archived=False``, bring it back); whether it changed. The
    session is not touched otherwise: an archived session still opens when named."""
    path = _existing(root, name)
    marker = path / ARCHIVE_FILE
    if archived == is_archived(path):
        return False
    try:
        if archived:
            atomic_write_json(marker, {"archived_at": now_iso()})
        else:
            marker.unlink()
            fsync_dir(path)
    except OSError as exc:
        raise SessionCatalogError(f"cannot {'' if archived else 'un'}archive {name!r}: {exc.strerror or exc}") from None
    return True


def check_delete(root: Path, name: str, *, shown_here: bool = False) -> Path:
    """What :func:`delete_session` would do, without doing it: the session's path, or why not (its
    writer lock held elsewhere; open in another ccm-tui, unless ``shown_here``: the TUI's own hold)."""
    path = _existing(root, name)
    _check_free(path, name, shown_here=shown_here)
    return path


def delete_session(root: Path, name: str) -> None:
    """Delete the session ``name`` with every file it holds (nothing is left on disk). Refused while
    another process holds its writer lock or has it open. The directory leaves ``sessions/`` in one
    rename first, so a kill midway leaves it in ``.deleting/`` (emptied by the next delete or listing),
    never a half session in the list."""
    path = _existing(root, name)
    with held(path, name, "delete"):
        if open_elsewhere(path):
            raise SessionOpen(name)
        trash = root / DELETING_DIR
        trash.mkdir(exist_ok=True)
        gone = trash / f"{os.getpid()}-{time.monotonic_ns()}"
        os.rename(path, gone)
        fsync_dir(root)
        _remove_tree(gone)
        fsync_dir(trash)
    sweep_deleted(root)


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):  # one more pass (another sweep raced us); then what is left is an error
        shutil.rmtree(path)


def sweep_deleted(root: Path) -> None:
    """Remove what deletes a kill interrupted left in ``.deleting/`` (best effort, never raises; a
    delete still running in another process holds its lock and is left to finish)."""
    trash = root / DELETING_DIR
    try:
        if trash.is_symlink() or not trash.is_dir():
            return
        entries = list(trash.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink() or not entry.is_dir():
            continue
        lock = SessionLock(entry)
        try:
            if not lock.try_acquire():
                continue
        except OSError:
            continue
        try:
            shutil.rmtree(entry, ignore_errors=True)
        finally:
            lock.release()
    try:
        trash.rmdir()
    except OSError:
        pass


def _try_lock(lock: SessionLock, name: str) -> bool:
    try:
        return lock.try_acquire()
    except OSError as exc:
        raise SessionCatalogError(f"cannot lock the session {name!r}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------- as shown
# (under this many minutes, one unit is this many minutes, its name, its plural)
_AGES = ((60, 1, "min", "min"), (1440, 60, "h", "h"), (10080, 1440, "day", "days"), (525960, 10080, "week", "weeks"))


def shown_age(seconds_ago: float | None) -> str:
    """``just now``, ``5 min ago``, ``2 h ago``, ``3 days ago``, ``5 weeks ago``, ``2 years ago``; ``never``."""
    if seconds_ago is None:
        return "never"
    minutes = max(0.0, seconds_ago) / 60
    if minutes < 1:
        return "just now"
    for limit, size, one, many in _AGES:
        if minutes < limit:
            count = int(minutes // size)
            return f"{count} {one if count == 1 else many} ago"
    years = int(minutes // 525960)
    return f"{years} year{'' if years == 1 else 's'} ago"


def shown_size(size: int) -> str:
    """``812 B``, ``14 KB``, ``1.2 MB``, ``3.4 GB`` (powers of 1,024)."""
    if size < 1024:
        return f"{max(0, size)} B"
    value, units = size / 1024, ["KB", "MB", "GB", "TB"]
    while value >= 1024 and len(units) > 1:
        value /= 1024
        units.pop(0)
    return f"{value:.1f} {units[0]}" if value < 10 else f"{value:.0f} {units[0]}"


def last_used_ago(info: SessionInfo, now: float | None = None) -> str:
    """How long ago the session was last used, as :func:`shown_age` says it."""
    return shown_age(None if info.last_used is None else (time.time() if now is None else now) - info.last_used)


# --------------------------------------------------------------------------- captures
CAPTURE_PREFIX = "capture-"  # the sessions `ccm-tui watch` captures other agents' sessions into


def capture_of(source: dict[str, object] | None) -> dict[str, object] | None:
    """What a search hit says of a captured agent session (its effort's ``source.capture``): the
    agent, the project, the date it started (ISO), the command that resumes it (or None), and
    ``source_gone`` when its file is not there any more. None for an effort that is no capture."""
    capture = (source or {}).get("capture")
    if not isinstance(capture, dict):
        return None
    file = capture.get("source")
    return {
        "agent": capture.get("agent"),
        "project": capture.get("project") or None,
        "started": capture.get("started"),
        "resume": capture.get("resume"),
        "source_gone": not (isinstance(file, str) and os.path.exists(file)),
    }
