"""core/service/_thread.py: the session thread's loop is made by the caller, so a process with no descriptor
left gets an OSError from ``start`` — the thread used to make it, die of EMFILE, and leave ``start`` waiting
forever (the MCP server's event loop with it). Run in a child process under a lowered limit: the test's own
process keeps its descriptors, and a ``start`` that waits forever is a timeout, not a hung test run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent(
    """
    import asyncio, errno, gc, os, resource, warnings
    from ccm_tui.core.service._thread import SessionThread

    warnings.simplefilter("error")  # (a coroutine never awaited, a loop half made and collected: fail)

    async def answer():
        return 42

    free = os.open(os.devnull, os.O_RDONLY)  # the lowest free descriptor: with the limit there, none is left
    os.close(free)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    thread = SessionThread()
    for room in (0, 1):  # no descriptor (for the epoll), one (the epoll, not the socket pair)
        resource.setrlimit(resource.RLIMIT_NOFILE, (free + room, hard))
        try:
            thread.start()
        except OSError as exc:
            print("refused", exc.errno == errno.EMFILE, thread.running)
        coro = answer()
        try:
            thread.submit(coro)
        except OSError:
            print("submit refused, coroutine closed:", coro.cr_frame is None)
        gc.collect()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        probe = os.open(os.devnull, os.O_RDONLY)  # (what the failed start had is closed: the same one is free)
        print("nothing left open", probe == free)
        os.close(probe)
    print("then", thread.submit(answer()).result(10))
    thread.stop()
    print("stopped", not thread.running)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="descriptor limits are POSIX")
def test_a_thread_that_cannot_make_its_loop_is_refused_at_once_and_starts_later():
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail("SessionThread.start waited for a loop its thread could not make")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "refused True False",
        "submit refused, coroutine closed: True",
        "nothing left open True",
        "refused True False",
        "submit refused, coroutine closed: True",
        "nothing left open True",
        "then 42",
        "stopped True",
    ], done.stderr
    assert done.stderr == ""
