"""The Remember intent through the session controller: a note lands in an effort's log (or the notes effort,
made for it) under the writer lock, is indexed at once, and every case ends in one outcome."""

from __future__ import annotations

from ccm_tui.config import Settings
from ccm_tui.core.search import EffortIndex
from ccm_tui.core.service.controller import OpenOptions, SessionController
from ccm_tui.core.service.run_state import Remember
from ccm_tui.core.session.lock import SessionLock
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
