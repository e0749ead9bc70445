"""A long Markdown reply streamed in hundreds of pieces (issue 38, item 1), against the fake OpenAI server
through litellm: shown whole and exactly at the end, its pieces reaching the screen in a few batched
messages (not one each), the meter and sidebar redrawn a bounded number of times, the body never parsed
again whole, keys typed meanwhile in the input in order, and Escape keeping what came."""

from __future__ import annotations

from textual.widgets._markdown import MarkdownBlock, MarkdownFence, MarkdownTable

from ccm_tui.core.turn import events as te
from ccm_tui.ui.screens.chat import ChatScreen
from ccm_tui.ui.turn_presenter import TurnPresenter
from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.chat_message import LAST_BLOCK, reply_body
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, idle, ready, server_app, wait_until

SECTION = """## Step {n}

Paragraph {n} explains the pool: *transaction* mode, `max_client_conn`, and the **timeouts**.

- item one of {n}
- item two of {n}

```python
def handler_{n}(pool):
    return pool.acquire(timeout={n})
```

| setting | value |
|---------|-------|
| size {n} | {n}0 |
| wait {n} | {n} ms |

"""
REPLY = "# The pool\n\n" + "".join(SECTION.format(n=n) for n in range(1, 9)) + "That is all: the last line."


def count_calls(monkeypatch, cls: type, name: str) -> list[object]:
    """Every call of the one-argument method ``cls.name`` from now on (its argument), passed through."""
    calls: list[object] = []
    original = getattr(cls, name)

    def counted(self, argument):
        calls.append(argument)
        return original(self, argument)

    monkeypatch.setattr(cls, name, counted)
    return calls


async def test_a_long_streamed_reply_is_shown_exactly_after_few_batched_messages(tmp_path, llm_server, monkeypatch):
    llm_server.chunk_chars = 4  # about 500 pieces
    llm_server.push(text(REPLY))
    pieces = -(-len(REPLY) // llm_server.chunk_chars)
    assert pieces >= 450
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        events = count_calls(monkeypatch, TurnPresenter, "apply")
        snapshots = count_calls(monkeypatch, ChatScreen, "on_snapshot_arrived")
        figures = count_calls(monkeypatch, ChatScreen, "show_figures")
        updates = count_calls(monkeypatch, reply_body(), "update")
        screen.prompt.set_text("tell me about the pool")
        await pilot.press("enter")
        await idle(pilot, timeout=120)  # (litellm loads with the first turn)

        reply = screen.query_one(ChatLog).messages("assistant")[-1]
        assert reply.text == REPLY and reply.body.source == REPLY and not reply.streaming
        assert len(reply.body.query(MarkdownTable)) == 8 and len(reply.body.query(MarkdownFence)) == 8
        blocks = [b for b in reply.body.children if isinstance(b, MarkdownBlock)]
        assert [b.has_class(LAST_BLOCK) for b in blocks] == [False] * (len(blocks) - 1) + [True]
        assert "the last line" in str(blocks[-1].source)

        streamed = [e.text for e in events if isinstance(e, te.TextDelta)]
        assert "".join(streamed) == REPLY
        assert len(streamed) < pieces / 2, f"{len(streamed)} messages for {pieces} pieces"
        assert len(snapshots) <= 4 and len(figures) <= 6  # per request and per turn, never per piece
        assert [u for u in updates if u] == []  # drawn as it streamed: never parsed and mounted again whole
        # (its one update is the empty body it starts with)


async def test_keys_typed_while_a_reply_streams_reach_the_input_in_order(tmp_path, llm_server):
    llm_server.chunk_chars, llm_server.stream_delay = 4, 0.04  # about 13 s of stream
    llm_server.push(text(REPLY))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.set_text("tell me about the pool")
        await pilot.press("enter")
        log = screen.query_one(ChatLog)
        await wait_until(pilot, lambda: any(m.text for m in log.messages("assistant")), timeout=120, what="the stream")
        await pilot.press(*"next: [sic]")
        assert screen.busy, "the reply ended before the typing did: the test proves nothing"
        await idle(pilot, timeout=120)  # (litellm loads with the first turn)
        assert screen.prompt.text == "next: [sic]"
        assert log.messages("assistant")[-1].text == REPLY


async def test_escape_mid_stream_keeps_what_came(tmp_path, llm_server):
    llm_server.chunk_chars, llm_server.stream_delay = 4, 0.01  # about 5 s of stream
    llm_server.push(text(REPLY))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.set_text("tell me about the pool")
        await pilot.press("enter")
        log = screen.query_one(ChatLog)
        await wait_until(
            pilot, lambda: len([m for m in log.messages("assistant") if len(m.text) > 200]), timeout=120, what="text"
        )
        await pilot.press("escape")
        await idle(pilot, timeout=120)  # (litellm loads with the first turn)
        reply = log.messages("assistant")[-1]
        kept, mark = reply.text.rsplit("\n\n", 1)
        assert mark == "[… reply interrupted]"
        assert len(kept) > 200 and REPLY.startswith(kept) and len(kept) < len(REPLY)
        assert "interrupted" in reply.note and not reply.streaming
        assert screen.prompt.text == ""  # something came back: the message is not returned to the input
