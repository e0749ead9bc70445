"""Messages typed close together are sent once each, as typed, in order (issue 30, item 2).

While the screen is busy (a reply streaming, a resize being laid out, a burst of keys), the keys of the
next message reach the input before the screen has taken the one just sent. The input gives a message
up at Enter, so the next keys start the next message: never ``first?second`` sent after ``first?``.
"""

from __future__ import annotations

from pathlib import Path

from textual import events

from ccm_tui.core.storage.durable import read_jsonl
from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, idle, ready, server_app, wait_until

MESSAGES = [
    "by the way, what's the capital of Peru?",
    "ok the party plan is done, conclude it please",
    "and one more: [x] ticked?",
]


def logged_user_messages(directory: Path) -> list[str]:
    path = directory / "raw.jsonl"
    records = read_jsonl(path).records if path.exists() else []
    return [r["content"] for r in records if r.get("role") == "user"]


async def burst(prompt: PromptInput, messages: list[str]) -> None:
    """Every key of ``messages`` (each ended by Enter) handled by the input back to back, before the
    screen runs again: what a terminal delivers in one read while the app is busy."""
    for message in messages:
        for char in message:
            await prompt._on_key(events.Key(char if char.isalnum() else f"char_{ord(char)}", char))
        await prompt._on_key(events.Key("enter", "\r"))


def sent(directory: Path, server) -> tuple[list[str], list[str]]:
    return logged_user_messages(directory), [r["messages"][-1]["content"] for r in server.chat_requests()]


async def test_a_burst_while_a_reply_streams_sends_each_message_once_in_order(tmp_path, llm_server) -> None:
    llm_server.stream_delay = 0.02  # a reply that takes a while to come
    llm_server.push(text("A long answer, word by word. " * 8), *(text(f"Answer {n}.") for n in range(3)))
    directory = tmp_path / "s"
    async with server_app(directory, llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        await burst(prompt, ["first, a long question"])
        await wait_until(pilot, lambda: screen.busy, what="the first reply to start")
        await burst(prompt, MESSAGES)
        assert prompt.text == ""  # each message left the input at its Enter
        await wait_until(pilot, lambda: len(llm_server.chat_requests()) == 4, what="four requests")
        await idle(pilot)
        shown = [m.text for m in screen.query_one(ChatLog).messages("user")]
    expected = ["first, a long question", *MESSAGES]
    assert shown == expected
    assert sent(directory, llm_server) == (expected, expected)


async def test_a_burst_right_after_a_resize_is_not_glued(tmp_path, llm_server) -> None:
    llm_server.push(*(text(f"Answer {n}.") for n in range(3)))
    directory = tmp_path / "s"
    async with server_app(directory, llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        await pilot.resize_terminal(100, 30)
        await burst(prompt, MESSAGES)
        await pilot.resize_terminal(150, 45)
        await wait_until(pilot, lambda: len(llm_server.chat_requests()) == 3, what="three requests")
        await idle(pilot)
    assert sent(directory, llm_server) == (MESSAGES, MESSAGES)


async def test_a_message_that_cannot_be_sent_comes_back_without_eating_what_was_typed_since(tmp_path) -> None:
    """A bad slash command is refused; it comes back to an empty input, and never over new text."""
    from tests.helpers.tui import demo_app

    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()  # (the demo offers its next scripted message there)
        await burst(prompt, ["/nosuchcommand now"])
        await wait_until(pilot, lambda: prompt.text == "/nosuchcommand now", what="the command back in the input")
        prompt.clear()
        await burst(prompt, ["/nosuchcommand again"])
        for char in "new words":
            await prompt._on_key(events.Key(char if char.isalnum() else "space", char))
        await wait_until(pilot, lambda: any("not sent" in n.message for n in pilot.app._notifications))
        assert prompt.text == "new words"
