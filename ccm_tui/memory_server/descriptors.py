"""The process's file descriptors: how many it may hold, and a failure that came from having none left.

The server keeps session readers and write controllers open, each holding a few descriptors;
how many stay open at once is a share of the limit (``ulimit -n``). When descriptors run out
anyway (a limit smaller than the server's own needs, a burst of requests), the failure shows
in several guises: ``OSError`` EMFILE from ``open`` or ``scandir``, SQLite's "unable to open
database file", wrapped by the core in its own errors. :func:`out_of_descriptors` recognises
them all, so the tools answer with one line saying what to do (:class:`OutOfDescriptors`),
never with a reason that points at a session's files as if they were broken.
"""

from __future__ import annotations

import errno
import os
import sqlite3

from .scope import ToolInputError

UNLIMITED = 1 << 16  # what RLIM_INFINITY counts as
UNKNOWN = 256  # what an unknown limit counts as (no resource module)
SQLITE_CANTOPEN = 14
SQLITE_FILES = 3  # what SQLite opens for a database in WAL mode: the file, its -wal, its -shm
EXHAUSTED = (errno.EMFILE, errno.ENFILE)


def descriptor_limit() -> int:
    """The process's soft limit on open descriptors (``ulimit -n``)."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return UNKNOWN
    return UNLIMITED if limit < 0 else limit


def out_of_descriptors(exc: BaseException, need: int = SQLITE_FILES) -> bool:
    """Whether ``exc`` (or what caused it) is a failure to get a descriptor: EMFILE/ENFILE, or
    SQLite's "unable to open database file" while fewer than ``need`` descriptors (what the failed
    work takes) can be had now. SQLite does not say why it could not open a file, and what failed
    has closed what it had by the time its error arrives here: were ``need`` free, it would have
    had them, so a file missing or unreadable is told from a process out of descriptors."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    cantopen = False
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and cause.errno in EXHAUSTED:
            return True
        if isinstance(cause, sqlite3.Error) and getattr(cause, "sqlite_errorcode", None) == SQLITE_CANTOPEN:
            cantopen = True
        if "too many open files" in str(cause).lower():
            return True  # (an error that kept only the words: SessionCatalogError, a core StoreError)
        cause = cause.__cause__ or cause.__context__
    return cantopen and not _free(need)


def _free(count: int) -> bool:
    """Whether the process can open ``count`` more descriptors right now."""
    probes: list[int] = []
    try:
        for _ in range(count):
            probes.append(os.open(os.devnull, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)))
    except OSError as exc:
        return exc.errno not in EXHAUSTED
    finally:
        for probe in probes:
            os.close(probe)
    return True


class OutOfDescriptors(ToolInputError):
    """The process has no descriptor left for what a tool needs: what the caller can do about it."""

    def __init__(self, advice: str) -> None:
        super().__init__(f"too many open files: raise `ulimit -n` (now {descriptor_limit()}) or {advice}")
