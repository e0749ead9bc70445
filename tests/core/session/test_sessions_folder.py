"""The sessions of the data directory (the TUI's session picker): listing, sizes, names, new, rename."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from ccm_tui.config import Settings
from ccm_tui.core.engine.opening import open_engine
from ccm_tui.core.session import sessions_folder as catalog
from ccm_tui.core.session.lock import SessionLock
from ccm_tui.core.session.sessions_folder import (
    SessionExists,
    SessionInUse,
    SessionMissing,
    SessionNameError,
    check_rename,
    create_session,
    list_sessions,
    rename_session,
    session_paths,
    shown_age,
    shown_size,
)
from ccm_tui.demo import DEMO_MODEL, DemoModel, script_messages
from tests.helpers.sessionkit import held_by_another_process


def build_session(directory: Path, turns: int) -> Path:
    """A real session: the demo's first ``turns`` turns through the engine (3 turns: one effort, 6: two)."""
    engine = open_engine(directory, Settings(model=DEMO_MODEL), llm=DemoModel(delay=0), budget=6_000)

    async def play() -> None:
        for text in script_messages()[:turns]:
            await engine.run_turn(text)

    try:
        asyncio.run(play())
    finally:
        engine.close()
    return directory


def _session(root: Path, name: str, *, age: float, events: bytes = b'{"event":"session_start"}\n') -> Path:
    """A session directory written by hand: its event log, last written ``age`` seconds ago."""
    path = root / name
    path.mkdir(parents=True)
    (path / "events.jsonl").write_bytes(events)
    stamp = time.time() - age
    os.utime(path / "events.jsonl", (stamp, stamp))
    return path


def test_the_listing_is_newest_first_with_sizes_efforts_and_turns(tmp_path):
    root = tmp_path / "sessions"
    build_session(root / "trip", 6)  # a real session: two efforts in its catalog, six turns
    old = _session(root, "old", age=3 * 86400, events=b"x" * 5000)
    (old / "raw.jsonl").write_bytes(b"y" * 1000)
    os.utime(old / "raw.jsonl", (time.time() - 7200, time.time() - 7200))  # the newer of the two logs counts
    _session(root, "older", age=30 * 86400)
    (root / "not-a-session").mkdir()  # no session file in it
    (root / "stray.txt").write_text("x")
    (root / "bad\nname").mkdir()
    (root / "bad\nname" / "events.jsonl").write_text("{}\n")

    (root / "trip" / "derived.sqlite-wal").write_bytes(b"w" * 4_000_000)  # derived: not counted (issue 38)
    listed = list_sessions(root)
    files = [p for p in (root / "trip").rglob("*") if p.is_file()]  # (reading the catalog may leave SQLite's
    derived = [p for p in files if p.name.startswith("derived.sqlite")]  # shared memory: the size is as found)
    trip_bytes = sum(p.stat().st_size for p in files if p not in derived)

    assert [s.name for s in listed] == ["trip", "old", "older"]
    trip, old_info, older = listed
    assert (trip.efforts, trip.turns) == (2, 6)
    assert trip.size == trip_bytes  # the record's size: the derived index (with its WAL and shm) apart
    assert trip.size < trip.derived_size <= sum(p.stat().st_size for p in derived)
    assert old_info.size == 6000 and (old_info.efforts, old_info.turns) == (None, None)
    assert 7000 < time.time() - (old_info.last_used or 0) < 7400
    assert catalog.last_used_ago(old_info) == "2 h ago" and catalog.last_used_ago(older) == "4 weeks ago"


def test_a_corrupt_catalog_or_state_costs_only_its_count(tmp_path):
    path = _session(tmp_path, "s", age=60)
    (path / "derived.sqlite").write_bytes(b"not a database at all" * 100)
    (path / "session_state.json").write_text('{"turn": "many"}')
    info = list_sessions(tmp_path)[0]
    assert (info.efforts, info.turns) == (None, None)
    assert info.derived_size > 2000 and info.size < 2000


def test_the_listing_never_parses_the_manifest(tmp_path, monkeypatch):
    build_session(tmp_path / "s", 6)
    (tmp_path / "s" / "manifest.yaml").write_text("{{{ not yaml")  # a parser would fail on it
    assert list_sessions(tmp_path)[0].efforts == 2


def test_the_mcp_server_serves_every_session_the_picker_lists_but_no_link_out(tmp_path):
    _session(tmp_path, "plain", age=1)
    _session(tmp_path, "with space", age=1)
    os.symlink(tmp_path / "plain", tmp_path / "linked")
    assert [p.name for p in session_paths(tmp_path)] == ["linked", "plain", "with space"]
    from ccm_tui.memory_server.scope import Scope

    served = [p.name for p in session_paths(tmp_path, links=False)]
    assert served == Scope(root=tmp_path).names() == ["plain", "with space"]  # `ccm-tui mcp --all-sessions`
    assert session_paths(tmp_path / "missing") == []


@pytest.mark.parametrize("bad", ["", "  ", ".", "..", "a/b", "a\\b", "a\nb", "a\x1b[2Jb", "a\x9bb", "x" * 65])
def test_bad_names_are_refused_in_one_line(tmp_path, bad):
    with pytest.raises(SessionNameError) as caught:
        create_session(tmp_path, bad)
    assert "\n" not in str(caught.value) and "invalid session name" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_new_sessions_take_the_names_session_takes(tmp_path):
    assert create_session(tmp_path / "sessions", "  work notes ") == tmp_path / "sessions" / "work notes"
    assert create_session(tmp_path / "sessions", "日本-2") == tmp_path / "sessions" / "日本-2"
    # made and never opened (empty): taken again as it is; a session with files is not
    assert create_session(tmp_path / "sessions", "work notes") == tmp_path / "sessions" / "work notes"
    _session(tmp_path / "sessions", "used", age=1)
    with pytest.raises(SessionExists, match="already a session named 'used'"):
        create_session(tmp_path / "sessions", "used")


def test_rename_moves_the_whole_session(tmp_path):
    build_session(tmp_path / "trip", 3)
    before = sorted(p.relative_to(tmp_path / "trip") for p in (tmp_path / "trip").rglob("*"))
    target = rename_session(tmp_path, "trip", "japan trip")
    assert target == tmp_path / "japan trip" and not (tmp_path / "trip").exists()
    assert sorted(p.relative_to(target) for p in target.rglob("*")) == before
    assert [(s.name, s.turns) for s in list_sessions(tmp_path)] == [("japan trip", 3)]
    assert rename_session(tmp_path, "japan trip", "japan trip") == target  # the same name: nothing to do


def test_rename_never_replaces_another_session_or_an_empty_directory(tmp_path):
    _session(tmp_path, "a", age=1)
    b = _session(tmp_path, "b", age=1)
    (tmp_path / "empty").mkdir()  # os.rename alone would silently replace an empty directory
    for taken in ("b", "empty"):
        with pytest.raises(SessionExists, match=f"already a session named '{taken}'"):
            rename_session(tmp_path, "a", taken)
        with pytest.raises(SessionExists):
            check_rename(tmp_path, "a", taken)
    assert (tmp_path / "a" / "events.jsonl").exists() and (b / "events.jsonl").exists()
    with pytest.raises(SessionMissing):
        rename_session(tmp_path, "gone", "c")
    with pytest.raises(SessionNameError):
        rename_session(tmp_path, "a", "../escape")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "empty"]


def test_rename_is_refused_while_another_process_holds_the_lock(tmp_path):
    path = _session(tmp_path, "busy", age=1)
    with held_by_another_process(path) as pid:
        with pytest.raises(SessionInUse, match=f"'busy' is in use by pid {pid}: close it there first"):
            rename_session(tmp_path, "busy", "other")
        with pytest.raises(SessionInUse):
            check_rename(tmp_path, "busy", "other")
        assert path.is_dir() and not (tmp_path / "other").exists()
    # the holder is gone: the kernel dropped its lock, and the rename goes through (and releases it)
    target = rename_session(tmp_path, "busy", "other")
    assert SessionLock(target).try_acquire()


def test_the_lock_is_released_when_the_rename_fails(tmp_path):
    path = _session(tmp_path, "a", age=1)
    _session(tmp_path, "b", age=1)
    with pytest.raises(SessionExists):
        rename_session(tmp_path, "a", "b")
    assert SessionLock(path).try_acquire()


def test_ages_and_sizes_as_shown():
    assert [shown_age(s) for s in (None, 10, 90, 7300, 86400 * 3, 86400 * 40, 86400 * 800)] == [
        "never",
        "just now",
        "1 min ago",
        "2 h ago",
        "3 days ago",
        "5 weeks ago",
        "2 years ago",
    ]
    assert [shown_size(n) for n in (0, 812, 14_000, 1_258_291, 3 * 1024**3 + 400 * 1024**2)] == [
        "0 B",
        "812 B",
        "14 KB",
        "1.2 MB",
        "3.4 GB",
    ]


def test_the_same_session_however_it_is_named(tmp_path):
    path = _session(tmp_path, "s", age=1)
    os.symlink(path, tmp_path / "link")
    assert catalog.same_session(path, tmp_path / "link" / ".." / "s")
    assert catalog.same_session(tmp_path / "link", path)
    assert not catalog.same_session(path, tmp_path / "gone")


def test_a_session_open_in_a_tui_idle_between_turns_is_not_renamed_under_it(tmp_path):
    """The TUI holds the writer lock only during a turn; while it has the session open its presence
    (a shared lock on .open) keeps a rename elsewhere from moving the directory under it."""
    from ccm_tui.core.service.controller import SessionController
    from ccm_tui.core.session.sessions_folder import SessionOpen

    build_session(tmp_path / "work", 2)

    async def while_open() -> None:
        controller = SessionController(tmp_path / "work", Settings(model=DEMO_MODEL), llm=DemoModel(delay=0))
        await controller.open()
        try:
            with pytest.raises(SessionOpen, match="open in another ccm-tui"):
                catalog.rename_session(tmp_path, "work", "job")
            with pytest.raises(SessionOpen):
                catalog.check_rename(tmp_path, "work", "job")
            assert (tmp_path / "work").is_dir() and not (tmp_path / "job").exists()
        finally:
            await controller.close()

    asyncio.run(while_open())
    assert catalog.rename_session(tmp_path, "work", "job") == tmp_path / "job"
