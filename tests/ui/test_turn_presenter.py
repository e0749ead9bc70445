"""A turn as the chat presents it: a cut-off reply stays, marked; Escape before the first token leaves no
empty reply."""

from __future__ import annotations

from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, ready, send, server_app, wait_until


async def test_a_cut_off_reply_stays_on_screen_marked(tmp_path, llm_server):
    from tests.helpers.openai_server import stream_cut

    reply = "Here is the first half of a long answer, and then the connection dies"
    llm_server.push(stream_cut(reply, after_chars=40))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "tell me everything")
        screen = await ready(pilot)
        shown = screen.query_one(ChatLog).messages("assistant")[-1]
        assert shown.text == reply[:40].strip()
        assert "cut off" in shown.note
        assert screen.query_one(PromptInput).text == "tell me everything"


async def test_escape_before_the_first_token_leaves_no_empty_reply(tmp_path, llm_server):
    from tests.helpers.openai_server import hang

    llm_server.push(hang(30, text("too late")))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.set_text("are you there?")
        await pilot.press("enter")
        await wait_until(pilot, lambda: llm_server.chat_requests(), what="the request")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.busy and not screen.turns.pending, what="the cancel")
        await pilot.pause()
        assert not screen.query_one(ChatLog).messages("assistant")
        assert "interrupted" not in " ".join(str(s.render()) for s in screen.query(".message-header"))
        assert prompt.text == "are you there?"
