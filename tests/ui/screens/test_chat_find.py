"""Find in the chat: every matching message reached, newest first."""

from __future__ import annotations

from tests.helpers.tui import SIZE, build, demo_app, ready, wait_until


async def test_find_in_the_chat_reaches_each_matching_message_newest_first(tmp_path):
    from textual.widgets import Input

    from ccm_tui.ui.palette import app_commands
    from ccm_tui.ui.screens.question import PromptDialog

    await build(tmp_path / "s", 7)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        helps = {name: help for name, _, help in app_commands(screen)}
        assert helps["Find in the chat…"].endswith("(F3)")
        await pilot.press("f3")  # nothing looked for yet: it asks
        dialog = await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, PromptDialog) and pilot.app.screen.query(Input) and pilot.app.screen,
        )
        dialog.query_one(Input).value = "kyoto"
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.finder.found is not None, what="a match")
        hits = [m for m in screen.chat_log.messages() if "kyoto" in m.text.casefold()]
        assert len(hits) >= 2 and screen.finder.found is hits[-1] and hits[-1].has_class("-found")
        await pilot.press("f3")
        assert screen.finder.found is hits[-2] and not hits[-1].has_class("-found")
        log = screen.chat_log
        assert log.scroll_offset.y <= hits[-2].virtual_region.y < log.scroll_offset.y + log.size.height
