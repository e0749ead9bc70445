"""Regenerate the last reply (Ctrl+R) and edit the last message (F5) in the TUI: the old exchange leaves
the chat, the new reply takes its place, an edited message comes back into the input."""

from __future__ import annotations

from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, idle, send, server_app, wait_until


async def test_ctrl_r_replaces_the_last_reply_with_a_new_one(tmp_path, llm_server):
    llm_server.push(text("First answer."))
    llm_server.push(text("Second answer."))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Tell me a fact")
        screen = app.chat_screen
        log = screen.query_one(ChatLog)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: [m.text for m in log.messages("assistant")] == ["Second answer."])
        await idle(pilot)
        assert [m.text for m in log.messages("user")] == ["Tell me a fact"]
    assert "First answer." not in str(llm_server.chat_requests()[-1]["messages"])


async def test_f5_puts_the_last_message_back_in_the_input_and_takes_its_exchange_off(tmp_path, llm_server):
    llm_server.push(text("Noted: Aprl."))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "We fly in Aprl")
        screen = app.chat_screen
        log, prompt = screen.query_one(ChatLog), screen.query_one(PromptInput)
        await pilot.press("f5")
        await wait_until(pilot, lambda: prompt.text == "We fly in Aprl", what="the message back in the input")
        await idle(pilot)
        assert log.messages() == []


async def test_nothing_to_take_back_says_why(tmp_path, llm_server):
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        from tests.helpers.tui import ready

        screen = await ready(pilot)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: any("no exchange" in str(n.message) for n in app._notifications))
        assert screen.query_one(ChatLog).messages() == []
