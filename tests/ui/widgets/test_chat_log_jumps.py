"""Long sessions are quick to walk (issue 38, item 6): Ctrl+Home reaches the session's first message in
one press, an effort's row jumps to where it started, and history drawn as the session opens goes
above what was asked meanwhile (a command's answer stays at the bottom)."""

from __future__ import annotations

from textual.widgets import Static

from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.effort_list import EffortItem
from tests.helpers.tui import SIZE, WidgetHost, build, ready, server_app, wait_until
from tests.ui.widgets.test_chat_log_long_history import chat


def in_view(log: ChatLog, widget) -> bool:
    top = log.scroll_offset.y
    return top <= widget.virtual_region.y < top + log.scrollable_content_region.height


async def test_ctrl_home_goes_to_the_first_message_in_one_press(tmp_path, llm_server) -> None:
    directory = await chat(tmp_path / "s", 50)
    async with server_app(directory, llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        await pilot.pause()
        assert log.messages()[0].text != "question 1"
        await pilot.press("ctrl+home")
        first = await wait_until(
            pilot, lambda: next((m for m in log.messages() if m.text == "question 1"), None), timeout=60
        )
        await pilot.pause()
        await pilot.pause()
        assert log.messages()[0] is first and in_view(log, first)
        assert log.newer_hidden  # the present was let go: scrolling down (or Ctrl+End) brings it back
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: "End of answer 50." in log.messages()[-1].text, timeout=60)


async def test_an_effort_row_jumps_to_where_the_effort_started(tmp_path, llm_server) -> None:
    app = server_app(await build(tmp_path / "s", 11), llm_server.base_url)
    async with app.run_test(size=(80, 24)) as pilot:  # small: the effort's start is not drawn at first
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        opened = "--- Opened effort: flaky-login-test ---"
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: isinstance(pilot.app.focused, EffortItem))
        screen.show_sidebar = True
        while pilot.app.focused.effort_id != "flaky-login-test":
            await pilot.press("down")
        await pilot.press("j")
        banner = await wait_until(
            pilot, lambda: next((b for b in log.query(".banner") if str(b.render()) == opened), None), timeout=60
        )
        await pilot.pause()
        await pilot.pause()
        assert in_view(log, banner)
        assert isinstance(pilot.app.focused, EffortItem)  # the keys stay in the list


async def test_history_drawn_as_the_session_opens_goes_above_a_command_asked_meanwhile() -> None:
    from ccm_tui.core.session.chat_line import LoggedLine

    log = ChatLog()
    async with WidgetHost(log).run_test() as pilot:
        asked = Static("/status answer")
        await log.add(asked)
        lines = [LoggedLine("user", f"message {n}", f"2026-01-01T00:00:{n:02d}", "ambient") for n in range(3)]
        await log.add_history(lines, start=True, before=asked)
        await pilot.pause()
        assert log.children[-1] is asked
        assert log.messages()[0].text == "message 0"
