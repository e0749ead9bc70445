"""A message in the chat shows what was written: angle brackets and line breaks kept, the user's text never
read as Markdown."""

from __future__ import annotations

from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.chat_message import ChatMessage
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, ready, send, server_app


async def test_angle_brackets_and_line_breaks_survive_on_screen(tmp_path, llm_server):
    llm_server.push(text("Use `List<String>` or just List<String>; C needs #include <stdio.h> first."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        typed = 'why does this fail?\nTraceback (most recent call last):\n  File "<module>", line 1'
        await send(pilot, typed)
        screen = await ready(pilot)
        user, reply = screen.query_one(ChatLog).messages()[-2:]
        shown_user = str(user.query_one(".message-body").render())
        assert "<module>" in shown_user and shown_user.count("\n") == 2
        shown_reply = " ".join(str(block.render()) for block in reply.body.query("*") if hasattr(block, "render"))
        assert "List<String>;" in shown_reply and "<stdio.h>" in shown_reply


async def test_a_user_message_is_plain_text_not_markdown(tmp_path):
    message = ChatMessage("user", "**not bold** and <b>not html</b>")
    from tests.helpers.tui import WidgetHost

    async with WidgetHost(message).run_test() as pilot:
        await pilot.pause()
        assert str(message.query_one(".message-body").render()) == "**not bold** and <b>not html</b>"
