"""The session picker (Ctrl+S, "Sessions…"): switch, new, rename, and what is refused (issue 23)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input

from ccm_tui import config
from ccm_tui.ui.screens.sessions import SessionsScreen
from ccm_tui.ui.widgets.header import AppHeader
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import hang, text
from tests.helpers.sessionkit import held_by_another_process
from tests.helpers.tui import SIZE, build, ready, send, server_app, wait_until


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded() -> None:
    """litellm imported once, before any app runs: its first import (seconds on a loaded machine)
    is not a turn's time."""
    import litellm  # noqa: F401


def _root() -> Path:
    return config.sessions_dir()  # under the test's own $CCM_HOME (tests/conftest.py)


async def _picker(pilot) -> SessionsScreen:
    await pilot.press("ctrl+s")
    picker = await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen) and pilot.app.screen)
    await wait_until(pilot, lambda: picker.loaded, what="the sessions to be listed")
    return picker


def _rows(picker: SessionsScreen) -> list[tuple[str, str]]:
    table = picker.query_one(DataTable)
    return [(str(table.get_row_at(i)[0]), str(table.get_row_at(i)[1])) for i in range(table.row_count)]


async def _to_row(pilot, picker: SessionsScreen, name: str) -> None:
    table = picker.query_one(DataTable)
    row = [s.name for s in picker.sessions].index(name)
    table.move_cursor(row=row)
    await pilot.pause()


async def _answer(pilot, typed: str) -> None:
    """Type into the dialog's one-line input (replacing what it offers) and press Enter."""
    field = await wait_until(pilot, lambda: pilot.app.screen.query(Input) and pilot.app.screen.query_one(Input))
    field.value = typed
    await pilot.press("enter")
    await pilot.pause()


def _noted(pilot, words: str) -> bool:
    return any(words in n.message for n in pilot.app._notifications)


def _header(pilot) -> str:
    return pilot.app.chat_screen.query_one(AppHeader).session_name


def _chat_text(pilot) -> str:
    return "\n".join(m.text for m in pilot.app.chat_screen.chat_log.messages())


async def test_switching_shows_the_other_sessions_history_and_its_draft(tmp_path, llm_server):
    await build(_root() / "trip", 3)  # the demo's first turns: the Japan trip
    llm_server.push(text("Hello from default."))
    async with server_app(_root() / "default", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "a message in default")
        screen = pilot.app.chat_screen
        screen.query_one(PromptInput).focus()
        await pilot.press("up")  # default's prompts
        assert screen.query_one(PromptInput).text == "a message in default"
        screen.query_one(PromptInput).set_text("half-typed in default")

        picker = await _picker(pilot)
        assert _rows(picker) == [("●", "default"), ("", "trip")]  # newest first, the open one marked
        await _to_row(pilot, picker, "trip")
        await pilot.press("enter")

        await wait_until(pilot, lambda: screen.link.session_dir == _root() / "trip", what="the switch")
        await ready(pilot)
        await wait_until(pilot, lambda: "Japan" in _chat_text(pilot), what="trip's history in the chat")
        assert "a message in default" not in _chat_text(pilot)
        assert _header(pilot) == "trip"
        assert screen.query_one(PromptInput).text == ""  # default's draft stayed with default
        screen.query_one(PromptInput).focus()
        await pilot.press("up")  # trip's prompts: none sent there from this input (default's were)
        assert screen.query_one(PromptInput).text == ""
        assert (_root() / "default" / "prompt_draft.txt").read_text() == "half-typed in default"

        picker = await _picker(pilot)
        assert _rows(picker)[0] == ("●", "trip")
        await _to_row(pilot, picker, "default")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "a message in default" in _chat_text(pilot), what="default's history")
        assert _header(pilot) == "default"
        assert screen.query_one(PromptInput).text == "half-typed in default"


async def test_n_makes_a_new_session_and_opens_it(tmp_path, llm_server):
    llm_server.push(text("Fresh start."))
    async with server_app(_root() / "default", llm_server.base_url).run_test(size=SIZE) as pilot:
        await ready(pilot)
        picker = await _picker(pilot)
        await pilot.press("n")
        await _answer(pilot, "a/b")  # refused in one line; the picker stays
        await wait_until(pilot, lambda: _noted(pilot, "invalid session name 'a/b'"), what="the refusal")
        assert isinstance(pilot.app.screen, SessionsScreen)
        assert not (_root() / "a").exists()
        await pilot.press("n")
        await _answer(pilot, "default")
        await wait_until(pilot, lambda: _noted(pilot, "already a session named 'default'"), what="the refusal")
        assert isinstance(pilot.app.screen, SessionsScreen)
        notes = [n.message for n in pilot.app._notifications]
        assert any("invalid session name 'a/b'" in m for m in notes), notes
        assert any("already a session named 'default'" in m for m in notes), notes

        await pilot.press("n")
        await _answer(pilot, "work notes")
        await wait_until(pilot, lambda: _header(pilot) == "work notes", what="the header to follow")
        await send(pilot, "first words here")
        assert "Fresh start." in _chat_text(pilot)
        assert b"first words here" in (_root() / "work notes" / "raw.jsonl").read_bytes()
        assert picker.closing


async def test_renaming_another_session_and_the_current_one(tmp_path, llm_server):
    await build(_root() / "trip", 3)
    llm_server.push(text("Noted."), text("Still here."))
    async with server_app(_root() / "default", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "remember the blue door")
        screen = pilot.app.chat_screen
        picker = await _picker(pilot)
        await _to_row(pilot, picker, "trip")
        await pilot.press("r")
        await _answer(pilot, "japan 2025")
        await wait_until(pilot, lambda: [s.name for s in picker.sessions] == ["default", "japan 2025"])
        assert not (_root() / "trip").exists()

        await _to_row(pilot, picker, "default")
        await pilot.press("r")
        await _answer(pilot, "doors")
        await wait_until(pilot, lambda: screen.link.session_dir == _root() / "doors", what="the reopen")
        await wait_until(pilot, lambda: ("●", "doors") in _rows(picker), what="the list to follow")
        assert _header(pilot) == "doors" and not (_root() / "default").exists()
        await pilot.press("escape")
        await ready(pilot)
        await wait_until(pilot, lambda: "blue door" in _chat_text(pilot), what="the history, reopened")
        await send(pilot, "after the rename")
        assert b"after the rename" in (_root() / "doors" / "raw.jsonl").read_bytes()
        assert not (_root() / "default").exists()  # nothing wrote to the old place


async def test_rename_is_refused_while_another_process_holds_the_session(tmp_path, llm_server):
    await build(_root() / "trip", 1)
    async with server_app(_root() / "default", llm_server.base_url).run_test(size=SIZE) as pilot:
        await ready(pilot)
        with held_by_another_process(_root() / "trip") as pid:
            picker = await _picker(pilot)
            await _to_row(pilot, picker, "trip")
            await pilot.press("r")
            await _answer(pilot, "elsewhere")
            message = f"Not renamed: the session 'trip' is in use by pid {pid}: close it there first"
            await wait_until(pilot, lambda: any(n.message == message for n in pilot.app._notifications))
        assert (_root() / "trip").is_dir() and not (_root() / "elsewhere").exists()
        assert isinstance(pilot.app.screen, SessionsScreen)


async def test_switching_while_a_reply_is_written_is_refused(tmp_path, llm_server):
    await build(_root() / "trip", 1)
    llm_server.push(hang(30, text("too late")))
    async with server_app(_root() / "default", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.query_one(PromptInput).set_text("a slow question")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.busy, what="the turn to start")
        picker = await _picker(pilot)
        await _to_row(pilot, picker, "trip")
        await pilot.press("enter")
        await pilot.press("n")
        wording = "Wait for the current reply to finish before you switch sessions (Esc cancels it)."
        assert [n.message for n in pilot.app._notifications].count(wording) == 2
        assert pilot.app.screen is picker and screen.link.session_dir == _root() / "default"
        await pilot.press("escape")  # closes the picker
        await pilot.press("escape")  # cancels the reply
        await wait_until(pilot, lambda: not screen.busy, what="the cancel")


async def test_the_demo_keeps_its_own_session(tmp_path):
    from tests.helpers.tui import demo_app

    async with demo_app(tmp_path / "demo").run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, SessionsScreen)
        assert any("demo runs in a session of its own" in n.message for n in pilot.app._notifications)


# ------------------------------------------------------------------ the picker as it looks
def _made_by_hand(root: Path, name: str, *, age: float, size: int, efforts: int | None, turns: int) -> None:
    """A session of known size and use (nothing opens it: its logs need not parse)."""
    import json
    import os
    import sqlite3
    import time

    from ccm_tui.core.storage.derived import DERIVED_FILE, DerivedDB

    path = root / name
    (path / "efforts").mkdir(parents=True)
    (path / "session_state.json").write_text(json.dumps({"schema": 2, "turn": turns}))
    if efforts is not None:  # our schema exactly (the listing reads no other), with the effort rows it counts
        DerivedDB.for_session(path).close()
        db = sqlite3.connect(path / DERIVED_FILE)
        rows = [(f"effort-{i}", i, "concluded", 0, "{}", 0) for i in range(efforts)]
        db.executemany(
            "INSERT INTO entries (id, ord, status, raw_tokens, entry, dirty) VALUES (?, ?, ?, ?, ?, ?)", rows
        )
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    taken = sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.name.startswith(DERIVED_FILE))
    (path / "raw.jsonl").write_bytes(b"x" * (size - taken))  # the record's size (the derived file is apart)
    stamp = time.time() - age
    os.utime(path / "raw.jsonl", (stamp, stamp))


def test_the_picker_snapshot(snap_compare, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # the picker says where the sessions are: "~/…" on every machine
    monkeypatch.setenv("CCM_HOME", str(tmp_path / ".local" / "share" / "ccm-tui"))
    monkeypatch.setenv("CCM_CONFIG", "/home/user/.config/ccm-tui/config.toml")
    # the open session's size is its record's, exact to the byte: its lock and events hold the pid
    monkeypatch.setattr("os.getpid", lambda: 424242)
    root = _root()
    _made_by_hand(root, "japan-trip", age=2 * 3600 + 60, size=1_258_291, efforts=14, turns=212)
    _made_by_hand(root, "work notes", age=3 * 86400 + 60, size=348_160, efforts=5, turns=48)
    _made_by_hand(root, "recipes", age=36 * 86400, size=12_400, efforts=None, turns=6)

    async def run_before(pilot):
        from tests.helpers.tui import settle

        await ready(pilot)
        await settle(pilot)  # the chat's prompt, behind the picker, blinks no cursor
        await _picker(pilot)
        await settle(pilot)

    app = server_app(root / "default", "http://127.0.0.1:9/v1")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_archiving_hides_a_session_until_h_shows_it_and_delete_asks_then_leaves_nothing(tmp_path, llm_server):
    await build(_root() / "trip", 3)
    await build(_root() / "old", 3)
    llm_server.push(text("Hello."))
    async with server_app(_root() / "default", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "a message in default")
        picker = await _picker(pilot)
        assert sorted(s.name for s in picker.sessions) == ["default", "old", "trip"]
        size = next(s for s in picker.sessions if s.name == "trip").size
        assert size < 64 * 1024  # the record's size: the derived index with its WAL is not counted
        await _to_row(pilot, picker, "old")
        await pilot.press("a")
        await wait_until(pilot, lambda: sorted(s.name for s in picker.sessions) == ["default", "trip"])
        assert (_root() / "old" / "archived.json").is_file()
        await pilot.press("h")  # archived ones shown, marked
        await wait_until(pilot, lambda: "old (archived)" in [name for _, name in _rows(picker)])
        await _to_row(pilot, picker, "old")
        await pilot.press("a")  # back in the list
        await wait_until(pilot, lambda: "old" in [name for _, name in _rows(picker)])
        assert not (_root() / "old" / "archived.json").exists()

        await _to_row(pilot, picker, "default")
        await pilot.press("d")  # the session open here is never deleted
        await wait_until(pilot, lambda: _noted(pilot, "open here"))
        await _to_row(pilot, picker, "trip")
        await pilot.press("d")
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, SessionsScreen))
        await pilot.press("n")  # "keep it"
        await wait_until(pilot, lambda: pilot.app.screen is picker)
        assert (_root() / "trip").is_dir()
        await pilot.press("d")
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, SessionsScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: _noted(pilot, "trip is deleted"))
        await wait_until(pilot, lambda: sorted(s.name for s in picker.sessions) == ["default", "old"])
        assert sorted(p.name for p in _root().iterdir()) == ["default", "old"]
    async with server_app(_root() / "default", llm_server.base_url).run_test(size=SIZE) as pilot:  # relaunch
        picker = await _picker(pilot)
        assert sorted(s.name for s in picker.sessions) == ["default", "old"]


async def test_f_forks_a_session_at_a_turn_and_the_fork_opens(tmp_path, llm_server):
    await build(_root() / "trip", 3)  # turn 1 ambient, turn 2 opens the Japan trip
    before = {p.name: p.read_bytes() for p in (_root() / "trip").rglob("*.jsonl")}
    async with server_app(_root() / "default", llm_server.base_url).run_test(size=SIZE) as pilot:
        await ready(pilot)
        picker = await _picker(pilot)
        await _to_row(pilot, picker, "trip")
        await pilot.press("f")
        await _answer(pilot, "trip early")
        await _answer(pilot, "1")
        await wait_until(pilot, lambda: _noted(pilot, "trip early: trip up to turn 1"))
        await wait_until(pilot, lambda: "trip early" in [s.name for s in picker.sessions])
        fork = next(s for s in picker.sessions if s.name == "trip early")
        assert fork.turns == 1
        await _to_row(pilot, picker, "trip early")
        await pilot.press("enter")  # switch to the fork: it opens with turn 1's state
        screen = pilot.app.chat_screen
        await wait_until(pilot, lambda: screen.link.session_dir == _root() / "trip early", what="the switch")
        await ready(pilot)
        await wait_until(pilot, lambda: screen.snapshot is not None and screen.snapshot.turn == 1)
        assert screen.snapshot.status.efforts == ()
    assert {p.name: p.read_bytes() for p in (_root() / "trip").rglob("*.jsonl")} == before
