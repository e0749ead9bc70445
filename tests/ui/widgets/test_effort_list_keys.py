"""Keys meant for the effort list stay in it, at any speed and while it redraws (issue 38, item 2): the
focused row keeps the focus through a redraw, an action key is applied or dropped, never typed into the
input, and Up/Down walk the list, never the input's history."""

from __future__ import annotations

import asyncio

import pytest
from textual import events

from ccm_tui.ui import messages as msg
from ccm_tui.ui.widgets.effort_list import EffortItem, SidebarEffortList
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.tui import SIZE, build, idle, ready, server_app, state_of, wait_until


def focused_row(pilot) -> str | None:
    focused = pilot.app.focused
    return focused.effort_id if isinstance(focused, EffortItem) else None


@pytest.mark.parametrize("gap", [0.05, 0.5])
async def test_expand_then_collapse_keys_stay_in_the_list(tmp_path, llm_server, gap):
    app = server_app(await build(tmp_path / "s", 11), llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.remind("an earlier message")  # what Up would recall, had it reached the input
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: focused_row(pilot) is not None, what="the list to take the focus")
        await pilot.press("down")
        assert focused_row(pilot) == "flaky-login-test" and state_of(screen, "flaky-login-test") == "concluded"
        await pilot.press("e")
        await pilot.pause(gap)
        await pilot.press("c")
        await pilot.pause(gap)
        await pilot.press("up", "up")
        await idle(pilot)
        await pilot.pause()
        assert screen.query_one(PromptInput).text == ""
        assert isinstance(pilot.app.focused, EffortItem)
        assert screen.chat_log.query(".banner")  # the expansion ran
        assert state_of(screen, "flaky-login-test") in ("expanded", "concluded")  # collapse applied or dropped
        # the footer names the focused row's keys, not the input's
        assert any(b.binding.id == "effort.leave" for b in screen.active_bindings.values())


async def test_keys_that_arrive_while_the_list_redraws_stay_in_it(tmp_path, llm_server):
    app = server_app(await build(tmp_path / "s", 11), llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.remind("an earlier message")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: focused_row(pilot) is not None, what="the list to take the focus")
        listing = screen.query_one(SidebarEffortList)
        before = listing.item("flaky-login-test")
        for key in ["c", "down", "x", "up", "up"]:  # c: not valid for an open effort; x: export (a dialog)
            listing._shown = ()  # the next snapshot redraws every row
            screen.post_message(msg.SnapshotArrived(screen.snapshot))
            await asyncio.sleep(0)  # the redraw has begun when the key arrives
            pilot.app.post_message(events.Key(key, key if len(key) == 1 else None))
            await pilot.pause()
            if key == "x":  # the export dialog opened for the row: close it
                await wait_until(pilot, lambda: pilot.app.screen is not screen, what="the export dialog")
                await pilot.press("escape")
                await wait_until(pilot, lambda: pilot.app.screen is screen, what="the dialog to close")
        await pilot.pause()
        assert screen.query_one(PromptInput).text == ""
        assert focused_row(pilot) == "flaky-login-test"  # Up from the second row wraps to the last one
        assert listing.item("flaky-login-test") is before  # redrawn in place, never remounted
