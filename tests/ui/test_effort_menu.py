"""What is done to efforts from the keys and the menu: concluding asks first, a concluded effort's name
offers to reopen it, the conversation exports in the order it was said."""

from __future__ import annotations

from ccm_tui.ui.screens.choice import ChoiceDialog
from tests.helpers.tui import SIZE, build, demo_app, ready, state_of, wait_until


async def test_the_whole_conversation_exports_to_markdown_in_the_order_it_was_said(tmp_path):
    from textual.widgets import Input

    from ccm_tui.ui.palette import app_commands
    from ccm_tui.ui.screens.question import PromptDialog

    await build(tmp_path / "s", 7)  # ambient chat, an effort concluded, another open, an aside
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        command = {name: run for name, run, _ in app_commands(screen)}["Export the conversation…"]
        command()
        dialog = await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, PromptDialog) and pilot.app.screen.query(Input) and pilot.app.screen,
        )
        dialog.query_one(Input).value = str(tmp_path / "out" / "all.md")
        await pilot.press("enter")
        await wait_until(pilot, lambda: (tmp_path / "out" / "all.md").is_file(), what="the export")
    text = (tmp_path / "out" / "all.md").read_text(encoding="utf-8")
    order = [text.index(s) for s in ("Hi! What is this app?", "## Effort: japan-trip", "Quick aside", "flaky")]
    assert order == sorted(order)
    assert text.count("### You") == 7


async def test_exporting_to_a_path_ending_in_a_slash_creates_that_directory(tmp_path):
    """Issue 38: ``out/`` that did not exist became a file named ``out``; it is a directory to create."""
    from textual.widgets import Input

    from ccm_tui.ui.palette import app_commands
    from ccm_tui.ui.screens.question import PromptDialog

    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        {name: run for name, run, _ in app_commands(screen)}["Export the conversation…"]()
        dialog = await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, PromptDialog) and pilot.app.screen.query(Input) and pilot.app.screen,
        )
        dialog.query_one(Input).value = str(tmp_path / "out") + "/"
        await pilot.press("enter")
        written = tmp_path / "out" / "s.md"
        await wait_until(pilot, written.is_file, what="the export in the new directory")
    assert (tmp_path / "out").is_dir()
    assert "### You" in written.read_text(encoding="utf-8")


async def test_conclude_from_a_key_asks_first(tmp_path):
    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+g", "d")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog), what="a confirmation")
        await pilot.press("n")
        await pilot.pause()
        assert state_of(screen, "japan-trip") == "active" and not screen.busy


async def test_ctrl_o_with_a_concluded_effort_name_offers_to_reopen_it(tmp_path):
    await build(tmp_path / "s", 5)  # the Japan trip is concluded
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        before = [e.id for e in screen.snapshot.status.efforts]
        screen.efforts.open("Japan Trip")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog), what="the offer")
        assert "reopen" in [c.id for c in pilot.app.screen.choices]
        await pilot.press("r")
        await wait_until(pilot, lambda: state_of(screen, "japan-trip") == "active" and not screen.busy)
        assert [e.id for e in screen.snapshot.status.efforts] == before  # no japan-trip-2


async def test_rename_edit_the_summary_and_pin_from_the_keys_and_the_menu_survive_a_relaunch(tmp_path):
    from textual.widgets import Input

    from ccm_tui.ui.screens.question import PromptDialog
    from ccm_tui.ui.widgets.effort_list import EffortItem

    async def answer(pilot, typed: str) -> None:
        field = await wait_until(
            pilot, lambda: isinstance(pilot.app.screen, PromptDialog) and pilot.app.screen.query_one(Input)
        )
        field.value = typed
        await pilot.press("enter")

    def view(screen):
        return screen.snapshot.effort("japan-trip")

    await build(tmp_path / "s", 5)  # the Japan trip is concluded
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+g", "n")  # rename from its key
        await answer(pilot, "Japan 2027")
        await wait_until(pilot, lambda: view(screen).name == "Japan 2027" and not screen.busy, what="the rename")
        await wait_until(pilot, lambda: any("Japan 2027" in str(i.render()) for i in screen.query(EffortItem)))
        await pilot.press("ctrl+g", "enter")  # the menu offers the edits too
        menu = await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog) and pilot.app.screen)
        assert {"rename", "summary", "pin", "merge"} <= {c.id for c in menu.choices}
        await pilot.press("t")
        await answer(pilot, "Ten days in Japan; Nara on day 6.")
        await wait_until(pilot, lambda: view(screen).summary == "Ten days in Japan; Nara on day 6." and not screen.busy)
        await pilot.press("ctrl+g", "p")
        await wait_until(pilot, lambda: view(screen).pinned and not screen.busy, what="the pin")
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:  # relaunch
        screen = await ready(pilot)
        effort = view(screen)
        assert (effort.name, effort.summary, effort.pinned, effort.summary_by) == (
            "Japan 2027",
            "Ten days in Japan; Nara on day 6.",
            True,
            "user",
        )
