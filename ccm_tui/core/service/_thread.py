"""A thread with an event loop of its own, where all of one session's work runs.

Turns write fsynced log lines, replace the manifest and re-index SQLite: none of
that may run on a UI's event loop. The session controller runs every engine call
on a :class:`SessionThread`, so the caller's loop (the TUI's, ``send``'s, the MCP
server's) only awaits results, and the engine is only ever touched by one thread.

The thread's loop is made by the caller of :meth:`SessionThread.start`, before the thread
starts: making one takes descriptors (an epoll and a socket pair), and when none is left
(``Too many open files``) the caller gets the OSError. Made in the thread, the loop's
failure ended the thread and left the caller waiting forever for a loop that never came
(the MCP server's whole event loop with it). A loop whose making fails halfway closes
what it had (:class:`_SessionLoop`), and a coroutine handed to a thread that cannot start
is closed, never left "never awaited".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import selectors
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _SessionLoop(asyncio.SelectorEventLoop):
    """The session thread's loop, over a selector made beforehand (an epoll: when none can be had, no
    loop is made). A loop half made (no descriptor for its socket pair) counts as closed: asyncio's
    close would fail on the socket pair it never had, and print that on stderr when it is collected."""

    def __init__(self, selector: selectors.BaseSelector) -> None:
        self._made = False
        super().__init__(selector)
        self._made = True

    def is_closed(self) -> bool:
        return not self._made or super().is_closed()

    @classmethod
    def make(cls) -> _SessionLoop:
        """A new loop.

        Raises:
            OSError: no descriptor for its epoll or its socket pair (what it had is closed).
        """
        selector = selectors.DefaultSelector()
        try:
            return cls(selector)
        except OSError:
            selector.close()
            raise


class SessionThread:
    def __init__(self, name: str = "ccm-session") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "the session thread is not started"
        return self._loop

    def start(self) -> None:
        """Start the thread and its loop (nothing when it runs).

        Raises:
            OSError: no descriptor is left for the loop (EMFILE), or no thread can be started.
        """
        if self.running:
            return
        loop = _SessionLoop.make()  # here, not in the thread: its failure is the caller's to see
        thread = threading.Thread(target=self._main, args=(loop,), name=self.name, daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:  # "can't start new thread"
            loop.close()
            raise OSError(f"cannot start the session thread: {exc}") from exc
        self._loop, self._thread = loop, thread

    def _main(self, loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
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
        """Run ``fn(*args)`` on the session thread (from any thread), soon.

        Raises:
            OSError: the thread was not running and cannot start (see :meth:`start`).
        """
        self.start()
        self.loop.call_soon_threadsafe(fn, *args)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run a coroutine on the session thread; its result (or exception) arrives in the future.

        Raises:
            OSError: the thread was not running and cannot start (see :meth:`start`); ``coro`` is closed.
        """
        try:
            self.start()
        except OSError:
            coro.close()
            raise
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the loop (after what is queued on it) and wait for the thread to end."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.in_thread():
            thread.join(timeout)
