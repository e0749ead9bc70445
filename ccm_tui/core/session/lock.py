"""The session's writer lock: one writer at a time, never stale.

An exclusive ``flock`` on ``<session>/.lock`` (with the holder's pid written in it,
so waiting processes can say who they wait for). The kernel drops the lock when
its process dies, so a lock left by a killed process never blocks anyone.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..storage.durable import StoreError, open_nofollow, read_bytes

LOCK_FILE = ".lock"
OPEN_FILE = ".open"  # shared locks of the processes that have the session open (see Presence)


class SessionLocked(StoreError):
    """Another live process holds the session's writer lock."""

    def __init__(self, path: Path, pid: int | None) -> None:
        who = f"pid {pid}" if pid else "another process"
        super().__init__(f"session {path} is in use by {who}; close it there or use another --session")
        self.pid = pid


class SessionLock:
    """An exclusive ``flock`` on ``<session>/.lock``; the kernel drops it when the process dies,
    so a lock left by a killed process is never stale."""

    def __init__(self, directory: Path, name: str = LOCK_FILE) -> None:
        self.path = directory / name
        self._fd: int | None = None
        # told once per wait, with the holder's pid, when the lock is busy (``send`` says it waits)
        self.on_wait: Callable[[int | None, float], None] | None = None

    def _waiting(self, wait: float) -> None:
        if self.on_wait is not None and wait > 0:
            self.on_wait(self.holder_pid(), wait)

    def holder_pid(self) -> int | None:
        try:
            text = read_bytes(self.path).decode("utf-8", "replace").strip()
            return int(text.split()[0]) if text else None
        except (OSError, ValueError, IndexError):
            return None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; never waits."""
        if self._fd is not None:
            return True
        fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            return False
        self._fd = fd
        # The holder's pid is a courtesy for "in use by pid N" (the flock is the lock): it is not
        # fsynced, since a crash releases the flock anyway. A full disk must not leak the lock.
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass
        return True

    def acquire(self, wait: float = 2.0) -> None:
        """Take the lock, waiting up to ``wait`` seconds for another process to finish."""
        for _ in self._tries(wait):
            time.sleep(0.05)

    async def acquire_async(self, wait: float = 10.0) -> None:
        """Like :meth:`acquire` without blocking the event loop."""
        for _ in self._tries(wait):
            await asyncio.sleep(0.05)

    def _tries(self, wait: float) -> Iterator[None]:
        """Try until the lock is taken: after each failed try, one pause for the caller to make (the
        wait told once); :class:`SessionLocked` after ``wait`` seconds."""
        deadline = time.monotonic() + wait
        told = False
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                raise SessionLocked(self.path.parent, self.holder_pid())
            if not told:
                self._waiting(wait)
                told = True
            yield

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


class Presence:
    """A shared ``flock`` on ``<session>/.open``, held while a process has the session open (a TUI, even
    idle between turns): any number at once, and no writer waits for them — but renaming the session
    is refused while one is held, since the process would go on writing to a path that no longer
    exists. The kernel drops it when the process dies."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / OPEN_FILE
        self._fd: int | None = None

    def hold(self) -> None:
        if self._fd is not None:
            return
        try:
            fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT)
        except OSError:
            return  # a read-only session, a full disk: it only guards renames, best effort
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops its lock
            self._fd = None


def open_elsewhere(directory: Path) -> bool:
    """Whether a process holds the session open (:class:`Presence`): this one's own hold counts too."""
    try:
        fd = open_nofollow(directory / OPEN_FILE, os.O_RDONLY)
    except OSError:
        return False  # never opened by a TUI of this version, or unreadable: nothing to go by
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EACCES)
    finally:
        os.close(fd)
    return False
