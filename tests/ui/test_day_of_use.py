"""A day of real use: what a person types, and what they must (not) get. One test per fault found."""

from __future__ import annotations

from ccm_tui.ui.screens.choice import ChoiceDialog
from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.effort_list import EffortItem
from ccm_tui.ui.widgets.message import ChatMessage
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.fakes.openai_server import text
from tests.ui.helpers import SIZE, build, demo_app, ready, send, server_app, wait_until


def state_of(screen, effort_id: str) -> str:
    return screen.engine.effort(effort_id).state.value


# ------------------------------------------------------------------ 1. keys on the effort list
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


async def test_conclude_from_a_key_asks_first(tmp_path):
    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+g", "d")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog), what="a confirmation")
        await pilot.press("n")
        await pilot.pause()
        assert state_of(screen, "japan-trip") == "active" and not screen.busy


# ------------------------------------------------------------------ 3. text shown as written
async def test_angle_brackets_and_line_breaks_survive_on_screen(tmp_path, llm_server):
    llm_server.push(text("Use `List<String>` or just List<String>; C needs #include <stdio.h> first."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        typed = "why does this fail?\nTraceback (most recent call last):\n  File \"<module>\", line 1"
        await send(pilot, typed)
        screen = await ready(pilot)
        user, reply = screen.query_one(ChatLog).messages()[-2:]
        shown_user = str(user.query_one(".message-body").render())
        assert "<module>" in shown_user and shown_user.count("\n") == 2
        shown_reply = " ".join(str(block.render()) for block in reply.body.query("*") if hasattr(block, "render"))
        assert "List<String>;" in shown_reply and "<stdio.h>" in shown_reply


async def test_a_user_message_is_plain_text_not_markdown(tmp_path):
    message = ChatMessage("user", "**not bold** and <b>not html</b>")
    from tests.ui.test_widgets import WidgetHost

    async with WidgetHost(message).run_test() as pilot:
        await pilot.pause()
        assert str(message.query_one(".message-body").render()) == "**not bold** and <b>not html</b>"


# ------------------------------------------------------------------ 2. Alt+Enter starts a new line
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
