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


async def test_only_the_last_block_of_a_streamed_reply_has_no_margin_under_it():
    """The reply's last block is marked (no blank line under it) as it streams; moving the mark restyles the
    two blocks only (issue 38: a class change restyled a whole table, cell by cell, on every append)."""
    from textual.widgets._markdown import MarkdownBlock, MarkdownTable

    from ccm_tui.ui.widgets.chat_message import LAST_BLOCK
    from tests.helpers.tui import WidgetHost

    message = ChatMessage("assistant", streaming=True)
    async with WidgetHost(message).run_test() as pilot:
        for piece in ("First paragraph.\n\n", "| a | b |\n|---|---|\n| 1 | 2 |\n\n", "Last paragraph."):
            await message.append(piece)
            await message._write()  # (not waiting for the 0.1 s write timer)
            await pilot.pause()
            await pilot.pause()
        restyled: list[object] = []
        update_nodes = pilot.app.stylesheet.update_nodes
        pilot.app.stylesheet.update_nodes = lambda nodes, **kw: (restyled.extend(nodes), update_nodes(nodes, **kw))[1]
        await message.append("\n\n| c | d |\n|---|---|\n| 3 | 4 |\n")
        await message.finish()
        await pilot.pause()
        blocks = [b for b in message.body.children if isinstance(b, MarkdownBlock)]
        assert [type(b).__name__ for b in blocks] == ["MarkdownParagraph", "MarkdownTable"] * 2
        assert [b.has_class(LAST_BLOCK) for b in blocks] == [False, False, False, True]
        assert [b.styles.margin.bottom for b in blocks][:3] == [1, 1, 1] and blocks[-1].styles.margin.bottom == 0
        assert isinstance(blocks[-1], MarkdownTable) and blocks[-1] in restyled
        assert not any(node in restyled for node in blocks[-1].walk_children())  # its cells: not restyled
