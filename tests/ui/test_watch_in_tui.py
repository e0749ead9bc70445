"""``watch_in_tui = true``: the TUI captures the agents' sessions while it is open (a thread running the
watch loop), and stops it when it quits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ccm_tui.config import Settings
from ccm_tui.core.api import search_all_sessions
from ccm_tui.ui.app import CcmApp
from tests.helpers.tui import SIZE, ready, wait_until
from tests.restore.test_capture import UUID, write_turns


async def test_the_tui_captures_while_open_and_stops_its_watcher_on_quit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-home-me-calc"
    folder.mkdir(parents=True)
    write_turns(folder / f"{UUID}.jsonl", [1, 2])
    monkeypatch.setenv("HOME", str(home))
    settings = Settings(model="openai/fake-model", token_budget=6_000, watch_in_tui=True)
    app = CcmApp(settings, tmp_path / "s", watch=False, warm_up=False, autoplay=False)
    sessions = Path(os.environ["CCM_HOME"]) / "sessions"
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        watcher = await wait_until(pilot, lambda: app.watcher, what="the watcher to start")
        await wait_until(pilot, watcher.followed.is_set, what="the backfill to end")
        assert watcher.failed == ""
        assert [h.session for h in search_all_sessions(sessions, "quokka2").hits] == ["capture-claude-code"]
        await app.action_quit()
    assert not watcher.thread.is_alive()
