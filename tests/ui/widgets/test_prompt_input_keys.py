"""Keys at the input: typing always reaches it, Enter sends and the newline keys (as terminals send them)
insert a line, page keys scroll the chat, F1 lists every key, a giant paste is refused before it is drawn."""

from __future__ import annotations

from ccm_tui.ui.screens.choice import ChoiceDialog
from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.chat_message import ChatMessage
from ccm_tui.ui.widgets.effort_list import EffortItem
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.tui import SIZE, build, demo_app, ready, state_of, wait_until


async def test_typing_after_visiting_the_effort_list_goes_to_the_input(tmp_path):
    await build(tmp_path / "s", 2)  # the Japan trip is open and active
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        await pilot.press("ctrl+g")
        assert isinstance(screen.focused, EffortItem)
        await pilot.press("escape")
        assert screen.focused is prompt

        await pilot.press("ctrl+g")
        await pilot.press(*"ok do it")
        assert screen.focused is prompt
        assert prompt.text == "ok do it"
        assert state_of(screen, "japan-trip") == "active"
        assert not isinstance(pilot.app.screen, ChoiceDialog)


def test_alt_enter_as_terminals_send_it_is_alt_enter():
    from textual._xterm_parser import XTermParser

    from ccm_tui.ui import terminal_keys

    terminal_keys.install()

    def keys(data: str) -> list[str]:
        parser = XTermParser(debug=False)
        return [e.key for e in [*parser.feed(data), *parser.feed("")] if hasattr(e, "key")]

    assert keys("\x1b\r") == ["alt+enter"]  # ESC + CR: tmux, xterm, GNOME Terminal, iTerm2 (Esc+ mode)
    assert keys("\r") == ["enter"]
    assert keys("\x1b[13;3u") == ["alt+enter"]  # the kitty keyboard protocol
    assert keys("\x1bx") == ["alt+x"]


async def test_newline_keys_insert_a_line_and_enter_sends(tmp_path):
    await build(tmp_path / "s", 0)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        await pilot.press("a", "alt+enter", "b", "ctrl+j", "c", "shift+enter", "d")
        assert prompt.text == "a\nb\nc\nd" and not screen.busy


async def test_page_keys_scroll_the_chat_while_typing(tmp_path):
    await build(tmp_path / "s", 6)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        await wait_until(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y, what="history")
        bottom = log.scroll_y
        await pilot.press("pageup")
        await wait_until(pilot, lambda: log.scroll_y < bottom, what="a page up")
        for _ in range(20):  # at the top, what was said before is drawn above (the view stays): again
            await pilot.press("ctrl+home")
            await wait_until(pilot, lambda: log.scroll_y == 0 or log.held or log.more_before, what="the top")
            await pilot.pause()
            if log.scroll_y == 0 and not log.held and not log.more_before:
                break
        assert log.scroll_y == 0 and screen.query(ChatMessage).first().content_region.y >= 0  # the oldest line
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: log.scroll_y == log.max_scroll_y, what="the newest line")
        assert screen.focused is screen.query_one(PromptInput)


async def test_f1_lists_every_key_and_ctrl_l_clears_the_input(tmp_path):
    from ccm_tui.ui.screens.help import HelpScreen

    await build(tmp_path / "s", 0)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen), what="the help screen")
        listed = " ".join(
            str(cell)
            for rows in pilot.app.screen.query(".help-rows")
            for column in rows.content.columns  # a two-column table: keys, what they do
            for cell in column.cells
        )
        for words in (
            "Copy reply",
            "Copy code",
            "Clear input",
            "Scroll the chat up",
            "Cancel the reply",
            "Conclude",
            "New line",
        ):
            assert words in listed
        await pilot.press("escape")
        await pilot.pause()
        assert pilot.app.screen is screen
        screen.query_one(PromptInput).set_text("some draft")
        await pilot.press("ctrl+l")
        assert screen.query_one(PromptInput).text == ""


async def test_a_giant_paste_is_refused_before_it_is_drawn(tmp_path):
    from textual import events

    await build(tmp_path / "s", 0)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        pilot.app.post_message(events.Paste("x" * 210_000))  # as a terminal paste arrives
        await pilot.pause()
        assert prompt.text == ""
        assert any("Paste refused" in (n.title or "") for n in pilot.app._notifications)
        pilot.app.post_message(events.Paste("a normal paste"))
        await pilot.pause()
        assert prompt.text == "a normal paste"
