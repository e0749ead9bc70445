"""A long history stays light: the chat draws a few screens around what is seen, never the whole
history, and a long earlier reply shows its first lines (issue 30, item 3)."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.config import Settings
from ccm_tui.core.engine.opening import open_engine
from ccm_tui.core.models.interface import Completion, InProcessChatModel
from ccm_tui.ui.widgets.chat_log import MAX_SCREENS, NEWER_HIDDEN, ChatLog
from ccm_tui.ui.widgets.chat_message import MoreLines
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, idle, ready, scroll_to_start, server_app, wait_until


def reply(n: int, lines: int = 12) -> str:
    body = "\n".join(f"- point {i} of answer {n}" for i in range(lines))
    return f"Answer {n} begins.\n\n{body}\n\nEnd of answer {n}."


class Replies(InProcessChatModel):
    model = "test/replies"

    def __init__(self, long_every: int = 0) -> None:
        self.n, self.long_every = 0, long_every

    async def stream_chat(self, messages, tools, on_delta=None):
        self.n += 1
        long = self.long_every and self.n % self.long_every == 0
        said = reply(self.n, 150 if long else 12)
        if on_delta:
            on_delta(said)
        return Completion(content=said, finish_reason="stop")

    async def complete(self, messages, max_tokens=None, summary=True):
        return Completion(content="A summary.", finish_reason="stop")


async def chat(directory: Path, turns: int, long_every: int = 0) -> Path:
    engine = open_engine(directory, Settings(model=Replies.model, recall="off"), llm=Replies(long_every))
    try:
        for n in range(turns):
            assert (await engine.run_turn(f"question {n + 1}")).ok
    finally:
        engine.close()
    return directory


async def back_to_the_newest(pilot, log: ChatLog) -> None:
    log.scroll_end(animate=False, immediate=True)
    log.want_newest()
    await wait_until(pilot, lambda: not log.newer_hidden, what="the newest lines again")
    await wait_until(pilot, lambda: "End of answer 40." in log.messages()[-1].text)
    assert not any(str(d.render()) == NEWER_HIDDEN for d in log.query(".divider"))


def widgets(log: ChatLog) -> int:
    return len(log.query("*"))


async def test_widgets_are_bounded_by_the_screen_not_by_the_history(tmp_path, llm_server) -> None:
    small, big = await chat(tmp_path / "small", 3), await chat(tmp_path / "big", 40)
    counts = {}
    for name, directory in (("small", small), ("big", big)):
        async with server_app(directory, llm_server.base_url).run_test(size=SIZE) as pilot:
            screen = await ready(pilot)
            log = screen.query_one(ChatLog)
            await pilot.pause()
            counts[name] = widgets(log)
            if name == "big":
                assert "End of answer 40." in log.messages()[-1].text  # the newest is drawn
                assert len(log.messages()) < 40  # not the whole page the session sent
                await scroll_to_start(pilot, log)
                assert log.messages()[0].text == "question 1"  # the whole history is reachable …
                assert log.newer_hidden  # … and the newest was let go on the way
                rows = sum(w.outer_size.height for w in log.children)
                assert rows <= (MAX_SCREENS + 2) * log.size.height
                counts["scrolled"] = widgets(log)
                await back_to_the_newest(pilot, log)
    assert counts["big"] <= 3 * counts["small"] + 100  # a few screens' worth, whatever the history
    assert counts["scrolled"] <= 4 * counts["big"]


async def test_a_message_sent_while_reading_old_history_shows_the_present(tmp_path, llm_server) -> None:
    llm_server.push(text("The newest answer."))
    directory = await chat(tmp_path / "s", 40)
    async with server_app(directory, llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        await scroll_to_start(pilot, log)
        assert log.newer_hidden
        screen.send("and now?")
        await idle(pilot)
        assert not log.newer_hidden
        assert [m.text for m in log.messages()][-2:] == ["and now?", "The newest answer."]
        await scroll_to_start(pilot, log)  # scrolling back still reaches everything
        assert log.messages()[0].text == "question 1"


async def test_a_long_earlier_reply_shows_its_first_lines_and_the_rest_on_enter(tmp_path, llm_server) -> None:
    directory = await chat(tmp_path / "s", 2, long_every=2)
    async with server_app(directory, llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        more = await wait_until(pilot, lambda: log.query(MoreLines).first() if log.query(MoreLines) else None)
        assert "more lines" in str(more.render())
        message = log.messages("assistant")[-1]
        assert "point 149 of answer 2" not in str(message.body.source)
        more.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: "point 149 of answer 2" in str(message.body.source), what="the whole reply")
        assert not log.query(MoreLines)
