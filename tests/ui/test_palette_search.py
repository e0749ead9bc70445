"""The Ctrl+F search shows each result's passage: rendered as plain text, the match highlighted."""

from __future__ import annotations

from textual.command import CommandList
from textual.content import Content

from ccm_tui.core.search._results import Marked
from ccm_tui.ui.plain_text import MATCH_STYLE
from ccm_tui.ui.plain_text import highlighted as styled
from tests.helpers.tui import SIZE, build, demo_app, ready, wait_until


def highlighted(content: Content) -> list[str]:
    """The text of every span of ``content`` drawn in the match style."""
    return [content.plain[s.start : s.end] for s in content.spans if str(s.style) == MATCH_STYLE]


def test_a_passage_highlights_matches_and_shows_the_rest_as_written() -> None:
    found = Marked.from_markers("user: see [bold]this[/] and **really** \x02Nara\x03 here")
    content = styled(found.text, found.spans)
    assert content.plain == "user: see [bold]this[/] and **really** Nara here"
    assert highlighted(content) == ["Nara"]


async def test_palette_search_shows_the_rendered_passage_with_the_match_highlighted(tmp_path) -> None:
    async with demo_app(await build(tmp_path / "s", 5)).run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press(*"nara")

        def trip_prompt() -> Content | None:
            lists = pilot.app.screen.query(CommandList)
            if not lists:
                return None
            prompts = [option.prompt for option in lists.first().options]
            return next((p for p in prompts if isinstance(p, Content) and "japan-trip" in p.plain), None)

        prompt = await wait_until(pilot, trip_prompt, what="the japan-trip result")
        assert "lines " in prompt.plain
        assert "\x02" not in prompt.plain and "\x03" not in prompt.plain  # the index's markers are spans
        assert any(text.lower() == "nara" for text in highlighted(prompt))


async def test_ambient_chat_is_found_and_read_around_the_hit(tmp_path) -> None:
    from ccm_tui.ui.screens.lines_viewer import LinesScreen

    async with demo_app(await build(tmp_path / "s", 1)).run_test(size=SIZE) as pilot:  # turn 1 is ambient chat
        await ready(pilot)
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press(*"what is this app")

        def ambient_index() -> int | None:
            lists = pilot.app.screen.query(CommandList)
            if not lists:
                return None
            prompts = [str(getattr(option.prompt, "plain", option.prompt)) for option in lists.first().options]
            return next((i for i, p in enumerate(prompts) if p.startswith("Ambient chat")), None)

        index = await wait_until(pilot, lambda: ambient_index() is not None, what="the ambient result")
        assert index
        for _ in range(ambient_index() or 0):
            await pilot.press("down")
        await pilot.press("enter")
        viewer = await wait_until(pilot, lambda: isinstance(pilot.app.screen, LinesScreen) and pilot.app.screen)
        assert viewer.lines.first == 1 and viewer.query(".-hit")
        await pilot.press("escape")
