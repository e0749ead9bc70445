"""An 80-column terminal: the footer, the inspector and the keys' help still fit, and the sidebar waits to
be asked for."""

from __future__ import annotations

from ccm_tui.ui.widgets.chat_log import ChatLog
from tests.helpers.tui import build, demo_app, ready, wait_until


def screen_rows(app) -> list[str]:
    return ["".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips()]


async def test_at_80_columns_the_footer_has_no_stray_character(tmp_path):
    from textual.widgets import Footer

    await build(tmp_path / "s", 7)
    async with demo_app(tmp_path / "s").run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        await pilot.pause()
        footer = screen.query_one(Footer)
        assert footer.virtual_size.width > 80  # the keys overflow under the palette key …
        assert screen_rows(pilot.app)[-1].endswith("^p Commands ")  # … which covers the last column


async def test_at_80_columns_the_inspector_leaves_the_text_room_for_its_headers(tmp_path):
    from textual.widgets import OptionList, TextArea

    await build(tmp_path / "s", 7)
    async with demo_app(tmp_path / "s").run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("f2")
        text = await wait_until(pilot, lambda: pilot.app.screen.query("#inspector-text").results(TextArea))
        text = next(iter(text))
        await pilot.pause()
        sections = pilot.app.screen.query_one("#inspector-sections", OptionList)
        assert sections.size.width <= 32
        header = text.text.splitlines()[0]
        assert header.startswith("── [1] system")
        assert len(header) <= text.content_size.width  # on one line, not wrapped over three
        rows = screen_rows(pilot.app)
        assert any("system · " in row for row in rows)  # the prompt alone: the summaries are a section of their own


async def test_at_80_columns_the_keys_help_indents_wrapped_descriptions(tmp_path):
    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "HelpScreen")
        await pilot.pause()
        rows = screen_rows(pilot.app)
        at = next(i for i, row in enumerate(rows) if "Cancel the reply being written" in row)
        column = rows[at].index("Cancel")
        following = rows[at + 1]
        assert following[:column].strip(" █▌▐▎▊▏│") == "", following  # the wrapped rest stays in its column


async def test_narrow_terminals_hide_the_sidebar_until_asked(tmp_path):
    from ccm_tui.ui.widgets.sidebar import Sidebar

    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        sidebar = screen.query_one(Sidebar)
        assert not sidebar.display
        assert screen.query_one(ChatLog).size.width >= 70
        assert "Ctrl+B" in str(screen.query_one("#prompt-hint").render())
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert sidebar.display and sidebar.outer_size.width == 34
    async with demo_app(tmp_path / "s").run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        assert screen.query_one(Sidebar).display and screen.query_one(Sidebar).outer_size.width == 34
