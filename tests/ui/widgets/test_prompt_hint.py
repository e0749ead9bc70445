"""The hint under the input: a model without tools is said once, and the hint shows the keys for efforts by
hand."""

from __future__ import annotations

from ccm_tui.ui.widgets.chat_log import ChatLog
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, ready, send, server_app, wait_until


async def test_a_model_without_tools_is_said_once_and_the_hint_shows_efforts_by_hand(tmp_path, llm_server):

    llm_server.refuse_tools = True
    llm_server.push(text("Hello! How can I help?"))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "hi there")
        screen = await ready(pilot)
        await wait_until(pilot, lambda: not screen.busy and not screen.turns.pending, what="the turn to end")
        banners = " ".join(str(b.render()) for b in screen.query(".banner"))
        assert banners.count("cannot use tools") == 1
        hint = str(screen.query_one("#prompt-hint").render())
        assert hint.startswith("no tools: Ctrl+O opens an effort")
        assert screen.query_one(ChatLog).messages()[-1].text == "Hello! How can I help?"
