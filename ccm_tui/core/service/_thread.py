"""A thread with an event loop of its own, where all of one session's work runs.

Turns write fsynced log lines, replace the manifest and re-index SQLite: none of
that may run on a UI's event loop. The session controller runs every engine call
on a :class:`SessionThread`, so the caller's loop (the TUI's, ``send``'s, the MCP
server's) only awaits results, and the engine is only ever touched by one thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class SessionThread:
    def __init__(self, name: str = "ccm-session") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "the session thread is not started"
        return self._loop

    def start(self) -> None:
        if self.running:
            return
        self._started.clear()
        self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)
        self._thread.start()
        self._started.wait()

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._started.set()
        try:
            loop.run_forever()
        finally:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    def in_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the session thread (from any thread), soon."""
        self.start()
        self.loop.call_soon_threadsafe(fn, *args)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run a coroutine on the session thread; its result (or exception) arrives in the future."""
        self.start()
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the loop (after what is queued on it) and wait for the thread to end."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.in_thread():
            thread.join(timeout)
