"""core/session/session.py: opening and closing a session keep nothing open behind them — an open that fails
after ``derived.sqlite`` was opened closes it (a server opening session after session ran out of descriptors
on the connections failed opens left behind), and a close that cannot open the lock file (no descriptor left)
still closes the database, leaving the end unmarked for the next start to recover."""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path

import pytest

from ccm_tui.core.session.session import Session
from ccm_tui.core.storage.durable import StoreError
from tests.helpers.sessionkit import make_session

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")


def open_files(directory: Path) -> list[str]:
    """The files under ``directory`` this process holds open."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory)):
            held.append(target)
    return held


def test_an_open_that_fails_after_the_derived_database_closes_it(tmp_path):
    session = make_session(tmp_path)
    session.close()
    os.symlink("/etc/hostname", session.dir / "efforts" / "elsewhere.jsonl")  # refused after the load
    with pytest.raises(StoreError, match="symbolic link") as refused:
        Session.open(session.dir)
    assert open_files(session.dir) == [], refused.value  # (the traceback still holds the failed session)
    assert not session.lock.held and session.lock.try_acquire()  # the writer lock was let go too
    session.lock.release()


@pytest.mark.skipif(sys.platform == "win32", reason="descriptor limits are POSIX")
def test_a_close_with_no_descriptor_for_the_lock_still_closes_the_database(tmp_path):
    made = make_session(tmp_path)
    made.close()
    session = Session.open(made.dir, hold_lock=False)  # (as the TUI and the MCP writes: the lock around writes)
    assert any(path.endswith("derived.sqlite") for path in open_files(session.dir))
    free = os.open(os.devnull, os.O_RDONLY)
    os.close(free)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (free, hard))  # no descriptor left for the lock file
    try:
        session.close()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert open_files(session.dir) == []
    again = Session.open(made.dir)  # the end went unmarked: the next start recovers, nothing is lost
    assert {e.id for e in again.efforts} == {"db-pool", "alpha", "beta"}
    again.close()
