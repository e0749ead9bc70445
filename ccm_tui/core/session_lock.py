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
from collections.abc import Callable
from pathlib import Path

from .store import StoreError, open_nofollow, read_bytes

LOCK_FILE = ".lock"


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
        try:  # the holder's pid is a courtesy for "in use by pid N": a full disk must not leak the lock
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            os.fsync(fd)
        except OSError:
            pass
        return True

    def acquire(self, wait: float = 2.0) -> None:
        """Take the lock, waiting up to ``wait`` seconds for another process to finish."""
        deadline = time.monotonic() + wait
        told = False
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                raise SessionLocked(self.path.parent, self.holder_pid())
            if not told:
                self._waiting(wait)
                told = True
            time.sleep(0.05)

    async def acquire_async(self, wait: float = 10.0) -> None:
        """Like :meth:`acquire` without blocking the event loop."""
        deadline = time.monotonic() + wait
        told = False
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                raise SessionLocked(self.path.parent, self.holder_pid())
            if not told:
                self._waiting(wait)
                told = True
            await asyncio.sleep(0.05)

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
