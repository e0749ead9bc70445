"""Forgetting from the TUI: Ctrl+G's "Forget it…" asks, then the effort leaves every file; the raw log
viewer's "f" forgets a line range, which stays as tombstones; the session goes on."""

from __future__ import annotations

import json

from ccm_tui.ui.screens.choice import ChoiceDialog
from tests.helpers.tui import SIZE, build, demo_app, ready, wait_until


def asking(pilot) -> bool:
    """The forget's question is up (not the effort menu it came from)."""
    screen = pilot.app.screen
    return isinstance(screen, ChoiceDialog) and [c.id for c in screen.choices] == ["forget", "cancel"]


async def test_ctrl_g_forget_asks_then_the_effort_is_gone(tmp_path):
    await build(tmp_path / "s", 2)
    log = tmp_path / "s" / "efforts" / "japan-trip.jsonl"
    assert log.exists()
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+g", "enter", "f")  # the effort's menu: its last entry
        await wait_until(pilot, lambda: asking(pilot), what="the question")
        await pilot.press("n")  # kept
        await pilot.pause()
        assert log.exists()
        await pilot.press("ctrl+g", "enter", "f")  # the effort's menu: its last entry
        await wait_until(pilot, lambda: asking(pilot), what="the question")
        await pilot.press("y")
        await wait_until(
            pilot,
            lambda: "japan-trip" not in [e.id for e in screen.snapshot.status.efforts] and not screen.busy,
            what="the effort forgotten",
        )
    assert not log.exists()
    for path in (tmp_path / "s").rglob("*"):
        if path.is_file() and not path.name.startswith("derived"):
            assert b"japan-trip" not in path.read_bytes(), path


async def test_the_log_viewer_forgets_a_line_range(tmp_path):
    from textual.widgets import Input

    from ccm_tui.ui.screens.log_viewer import EffortLogScreen
    from ccm_tui.ui.screens.question import PromptDialog

    await build(tmp_path / "s", 2)
    log = tmp_path / "s" / "efforts" / "japan-trip.jsonl"
    before = log.read_text().splitlines()
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+g", "l")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, EffortLogScreen), what="the log")
        await pilot.press("f")
        dialog = await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, PromptDialog) and pilot.app.screen.query(Input) and pilot.app.screen,
        )
        dialog.query_one(Input).value = "1-1"
        await pilot.press("enter")
        await wait_until(pilot, lambda: asking(pilot), what="the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: json.loads(log.read_text().splitlines()[0]).get("forgotten") is True)
    after = log.read_text().splitlines()
    assert len(after) == len(before) and after[1:] == before[1:]
