"""A turn as the chat presents it: a cut-off reply stays, marked; Escape before the first token leaves no
empty reply."""

from __future__ import annotations

from ccm_tui.ui.widgets.banner import BannerLine
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


async def test_a_cut_off_reply_is_said_discarded_everywhere_and_a_resend_shows_the_message_once(tmp_path, llm_server):
    """Issue 38: the cut stream said "kept as it arrived" while the partial was only in an event, and
    sending the message again showed it twice. Nothing of it is kept (the message went back to the
    input): the chat and the banner say discarded, raw.jsonl holds nothing of it, the next request
    carries none of it, and the message sent again is shown once."""
    import json

    from tests.helpers.openai_server import stream_cut

    reply = "Here is the first half of a long answer, and then the connection dies"
    llm_server.push(stream_cut(reply, after_chars=40), text("The whole answer."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log, prompt = screen.query_one(ChatLog), screen.query_one(PromptInput)
        done = lambda: not screen.busy and not screen.turns.pending  # noqa: E731
        prompt.set_text("tell me everything")
        await pilot.press("enter")
        await wait_until(pilot, lambda: done() and log.messages("assistant"), 120, "the partial")  # (litellm loads)
        assert "discarded" in log.messages("assistant")[-1].note
        banners = " ".join(str(b.render()) for b in screen.query(BannerLine))
        assert "40 characters that came were discarded" in banners
        raw = tmp_path / "s" / "raw.jsonl"
        assert not raw.exists() or "first half" not in raw.read_text()

        await pilot.press("enter")  # the message, back in the input, sent again
        await wait_until(pilot, lambda: done() and log.messages("assistant")[-1].text == "The whole answer.", 60)
        await wait_until(pilot, lambda: len(log.messages("user")) == 1, what="the failed attempt gone")
        assert [m.text for m in log.messages("user")] == ["tell me everything"]
        assert [m.text for m in log.messages("assistant")] == ["The whole answer."]
        sent = json.dumps(llm_server.chat_requests()[-1])
        assert "first half" not in sent and sent.count("tell me everything") == 1
        said = [json.loads(line) for line in raw.read_text().splitlines()]
        assert [(m["role"], m["content"]) for m in said] == [
            ("user", "tell me everything"),
            ("assistant", "The whole answer."),
        ]


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
