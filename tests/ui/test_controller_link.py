"""The TUI's link to its session controller: a turn waiting for a session held elsewhere says who holds it,
then runs, or gives advice when the wait runs out; a streamed turn runs over a frozen heap, collected after
it, and the app's close gives the collector back what it froze."""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os

from ccm_tui.ui import controller_link
from ccm_tui.ui.widgets.chat_log import ChatLog
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, ready, server_app, wait_until


@contextlib.contextmanager
def session_held_elsewhere(session_dir):
    """The session's writer lock held through another open file description, pid written as a
    holding ccm-tui writes it (flock locks conflict between descriptions, even in one process)."""
    holder = os.open(session_dir / ".lock", os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(holder, 0)
        os.write(holder, f"{os.getpid()}\n".encode())
        yield
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)


async def test_a_turn_waiting_for_the_session_says_who_holds_it_then_runs(tmp_path, llm_server):
    """Another process (here: another open file description) holds the writer lock while the user sends:
    the status line names it instead of "Thinking", and the turn runs as soon as the lock is free."""
    from ccm_tui.ui.widgets.turn_status import TurnStatus

    llm_server.push(text("Hello once the session was free."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        with session_held_elsewhere(tmp_path / "s"):
            screen.prompt.set_text("hello")
            await pilot.press("enter")
            status = screen.query_one(TurnStatus)
            await wait_until(pilot, lambda: "Waiting for the session (used by pid" in status.label, what="the wait")
            assert not llm_server.chat_requests()  # nothing was sent while the lock was held
        await wait_until(pilot, lambda: not screen.busy and not screen.turns.pending, what="the turn to end")
        reply = screen.query_one(ChatLog).messages()[-1]
        assert "once the session was free" in reply.text


async def test_a_session_held_through_the_whole_wait_gives_tui_advice(tmp_path, llm_server, monkeypatch):
    from ccm_tui.ui.controller_link import SessionLink

    monkeypatch.setattr(SessionLink, "turn_lock_wait", 0.2)
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        with session_held_elsewhere(tmp_path / "s"):
            screen.prompt.set_text("hello")
            await pilot.press("enter")
            await wait_until(pilot, lambda: not screen.busy and screen.prompt.text == "hello", what="the text back")
        banners = " ".join(str(b.render()) for b in screen.query(".banner"))
        assert "still in use by pid" in banners and "send again once it is done" in banners
        assert "--session" not in banners  # command-line advice has no place in the TUI


async def test_a_streamed_turn_runs_over_a_frozen_heap_and_the_close_gives_it_back(tmp_path, llm_server, monkeypatch):
    """Issue 38: the collector's full passes walked litellm and the core (~400,000 objects) several times a
    reply, holding the event loop up to a second each. The first piece of a turn freezes the heap, full
    passes are rarer while the app runs, the turn's garbage is collected once it ends, and the close
    unfreezes all and puts the thresholds back (a test process runs many apps: nothing stays frozen)."""
    gc.unfreeze()  # (whatever an earlier test left)
    thresholds = gc.get_threshold()
    monkeypatch.setattr(controller_link, "TIDY_AFTER", 0.05)
    calls: list[str] = []
    freeze, collect = gc.freeze, gc.collect
    monkeypatch.setattr(gc, "freeze", lambda: (calls.append("freeze"), freeze())[1])
    monkeypatch.setattr(gc, "collect", lambda *a: (calls.append("collect"), collect(*a))[1])
    llm_server.chunk_chars = 8
    llm_server.push(text("A reply in **several** pieces, streamed over a frozen heap."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert gc.get_threshold()[2] >= controller_link.FULL_EVERY
        screen.prompt.set_text("hello")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: calls[-2:] == ["collect", "freeze"], timeout=120, what="the tidy after the turn"
        )
        assert calls.count("freeze") == 2  # the first piece, then the tidy (not once a piece)
        assert gc.get_freeze_count() > 0
        reply = screen.query_one(ChatLog).messages("assistant")[-1]
        assert reply.text == "A reply in **several** pieces, streamed over a frozen heap."
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds
