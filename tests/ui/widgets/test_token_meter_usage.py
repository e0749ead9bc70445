"""Tokens per message on demand (Ctrl+T) and the session's total in the meter, kept across launches."""

from __future__ import annotations

from ccm_tui.ui.widgets.chat_log import ChatLog
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, ready, send, server_app, wait_until


async def test_ctrl_t_shows_each_replys_tokens_and_the_meter_the_sessions_after_a_relaunch(tmp_path, llm_server):
    llm_server.push(text("Hello.", usage={"prompt_tokens": 2345, "completion_tokens": 67}))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hi")
        screen = app.chat_screen
        log = screen.query_one(ChatLog)
        usage = log.messages("assistant")[-1].query_one(".message-usage")
        assert not usage.display or not log.has_class("-show-usage")
        await pilot.press("ctrl+t")
        assert log.has_class("-show-usage")
        assert "2,345 tokens sent · 67 received" in str(usage.render())
        meter = screen.query_one(".meter-cost")
        await wait_until(pilot, lambda: "session 2,345 sent · 67 received" in str(meter.render()))

    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        await wait_until(pilot, lambda: log.messages("assistant"), what="the history")
        assert log.messages("assistant")[-1].usage == (2345, 67, None)
        await wait_until(pilot, lambda: "session 2,345 sent" in str(screen.query_one(".meter-cost").render()))
