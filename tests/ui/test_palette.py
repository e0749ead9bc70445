"""The command palette: opening an effort from a query asks first, and the copy and clear keys are listed."""

from __future__ import annotations

from tests.helpers.tui import SIZE, build, demo_app, ready, wait_until


async def test_the_palette_asks_before_opening_an_effort_from_a_query(tmp_path):
    """A query that matches no command leaves 'Open a new effort: …' selected: Enter must not create it."""
    from textual.command import CommandList
    from textual.widgets import Input

    from ccm_tui.ui.palette import NEW_EFFORT_HELP
    from ccm_tui.ui.screens.question import PromptDialog

    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        before = [e.id for e in screen.snapshot.status.efforts]
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"zqxj wobble")

        def offered() -> list[str]:
            lists = pilot.app.screen.query(CommandList)
            return [str(option.prompt) for option in lists.first().options] if lists else []

        await wait_until(pilot, lambda: offered() == ["Open a new effort: zqxj wobble…\n" + NEW_EFFORT_HELP])
        await pilot.press("enter")
        dialog = await wait_until(pilot, lambda: isinstance(pilot.app.screen, PromptDialog) and pilot.app.screen)
        assert dialog.query_one(Input).value == "zqxj wobble"
        assert [e.id for e in screen.snapshot.status.efforts] == before  # nothing opened yet
        await pilot.press("escape")
        await pilot.pause()
        assert [e.id for e in screen.snapshot.status.efforts] == before


async def test_the_palette_shows_the_copy_and_clear_keys(tmp_path):
    from ccm_tui.ui.palette import app_commands

    async with demo_app(await build(tmp_path / "s", 2)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        helps = {name: help for name, _, help in app_commands(screen)}
        assert helps["Copy last reply"].endswith("(Alt+C)")
        assert helps["Copy last code block"].endswith("(Alt+K)")
        assert helps["Clear the input"].endswith("(Ctrl+L)")
