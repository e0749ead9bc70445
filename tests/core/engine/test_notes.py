"""The Remember intent through the session controller: a note lands in an effort's log (or the notes effort,
made for it) under the writer lock, is indexed at once, and every case ends in one outcome."""

from __future__ import annotations

import sqlite3

from ccm_tui.config import Settings
from ccm_tui.core.engine.reader import SessionReader
from ccm_tui.core.search import EffortIndex
from ccm_tui.core.service.controller import OpenOptions, SessionController
from ccm_tui.core.service.run_state import Remember
from ccm_tui.core.session.lock import SessionLock
from ccm_tui.core.storage import derived
from tests.helpers.mcp_session import log_lines

SETTINGS = Settings()


async def test_remember_goes_through_the_controller_and_ends_in_one_outcome(session_dir):
    options = OpenOptions(hold_lock=False, retry_delays=(), turn_lock_wait=0.3)
    controller = SessionController(session_dir, SETTINGS, options=options)
    await controller.open()
    try:
        made = await controller.run(Remember("The pump needs a 12 mm spanner."))
        into = await controller.run(Remember("Second thought on auth.", "auth-bug"))
        unknown = await controller.run(Remember("x", "nope"))
        empty = await controller.run(Remember("\x00 \n"))
        lock = SessionLock(session_dir)
        assert lock.try_acquire()  # the controller holds no lock between writes
        try:
            locked = await controller.run(Remember("while locked"))
        finally:
            lock.release()
    finally:
        await controller.close()
    assert made.ok and made.work == "note" and made.result == {"effort_id": "notes", "line": 1, "created": True}
    assert into.ok and into.result == {"effort_id": "auth-bug", "line": 9, "created": False}
    assert unknown.failed and unknown.cause == "not_found" and "there is no effort 'nope'" in unknown.reason
    assert empty.failed and empty.cause == "input" and "empty" in empty.reason
    assert locked.failed and locked.cause == "locked" and "still in use" in locked.reason
    assert [m["content"] for m in log_lines(session_dir / "efforts" / "notes.jsonl")] == [
        "The pump needs a 12 mm spanner."
    ]
    with EffortIndex(session_dir / "derived.sqlite") as index:
        assert index.search("spanner")[0].id == "notes"  # indexed by the write itself


async def test_a_note_whose_indexing_failed_busy_is_found_by_a_reader_that_was_in_step(session_dir, monkeypatch):
    """The note's own index update fails (another connection holds the index's write lock), the note is
    acknowledged all the same: a reader that was in step before it (its marker recorded) still finds it
    at its next search, as does a new reader — the write did not record the marker, and the line it
    appended to an existing effort's log changed the marker (events.jsonl grew)."""
    monkeypatch.setattr(derived, "BUSY_TIMEOUT", 0.05)  # the write's index update gives up at once
    options = OpenOptions(hold_lock=False, retry_delays=(), turn_lock_wait=0.3)
    with SessionReader(session_dir, SETTINGS) as reader:
        assert not reader.search("quux007").hits and not reader.search("quux007").stale  # in step
        controller = SessionController(session_dir, SETTINGS, options=options)
        await controller.open()
        blocker = sqlite3.connect(session_dir / "derived.sqlite", isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            noted = await controller.run(Remember("The vault code is quux007.", "auth-bug"))
            blocker.execute("ROLLBACK")
        finally:
            blocker.close()
            await controller.close()
        assert noted.ok, noted.reason
        with EffortIndex(session_dir / "derived.sqlite") as index:
            assert not index.search("quux007")  # (the write's own update did fail)
        assert [h.id for h in reader.search("quux007").hits] == ["auth-bug"]
    with SessionReader(session_dir, SETTINGS) as fresh:
        assert [h.id for h in fresh.search("quux007").hits] == ["auth-bug"]
