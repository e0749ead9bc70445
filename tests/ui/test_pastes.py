"""A large paste is folded: a marker in the input, a collapsed block in the chat, the whole text to
the model and the logs (issue 23, 'what daily users expect')."""

from __future__ import annotations

from textual import events
from textual.widgets import Collapsible

from ccm_tui.core.storage.durable import read_jsonl
from ccm_tui.ui.pastes import Pastes, long_message, segments
from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, idle, ready, server_app, wait_until

LOG = "\n".join(f"2024-05-01 12:00:{i % 60:02d} ERROR worker {i}: connection reset" for i in range(300))


def test_markers_expand_to_their_pastes_and_a_deleted_marker_takes_its_paste_with_it():
    pastes = Pastes()
    first, second = pastes.add(LOG), pastes.add("a\n" * 20)
    assert first == "[Pasted 300 lines #1]" and second == "[Pasted 20 lines #2]"
    typed = f"Why does this fail?\n{first}\nthanks"
    assert pastes.expand(typed) == f"Why does this fail?\n{LOG}\nthanks"
    assert pastes.kept(typed) == {1: LOG}
    assert segments(typed, pastes.kept(typed)) == [
        ("Why does this fail?\n", None),
        (LOG, "Pasted 300 lines"),
        ("\nthanks", None),
    ]
    assert pastes.expand("[Pasted 300 lines #7] stays as typed") == "[Pasted 300 lines #7] stays as typed"


def test_a_long_message_shown_again_keeps_its_first_lines_and_folds_the_rest():
    shown = long_message(LOG)
    assert shown is not None and shown[0] == ("\n".join(LOG.split("\n")[:3]), None)
    assert shown[1][1] == "297 more lines"
    assert long_message("short\nmessage") is None


async def test_a_large_paste_is_a_marker_in_the_input_a_folded_block_in_the_chat_and_whole_for_the_model(
    tmp_path, llm_server
):
    llm_server.push(text("The worker loses its connection."))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"Why?", "space")
        prompt.post_message(events.Paste(LOG))
        await wait_until(pilot, lambda: "[Pasted" in prompt.text, what="the marker")
        assert prompt.text == "Why? [Pasted 300 lines #1]"
        await pilot.press("enter")
        await idle(pilot)
        user = screen.query_one(ChatLog).messages("user")[-1]
        fold = user.query_one(Collapsible)
        assert fold.collapsed and fold.title == "Pasted 300 lines"
        assert user.text == "Why? " + LOG
        assert prompt.text == ""
    sent = llm_server.chat_requests()[-1]["messages"][-1]["content"]
    assert sent == "Why? " + LOG
    logged = [r["content"] for r in read_jsonl(tmp_path / "s" / "raw.jsonl").records if r["role"] == "user"]
    assert logged == ["Why? " + LOG]


async def test_a_message_given_back_keeps_its_paste_folded(tmp_path, llm_server):
    from tests.helpers.openai_server import fault

    for _ in range(4):
        llm_server.push(fault(401, "invalid api key"))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        prompt.post_message(events.Paste(LOG))
        await wait_until(pilot, lambda: "[Pasted" in prompt.text, what="the marker")
        await pilot.press("enter")
        await idle(pilot)
        assert prompt.text == "[Pasted 300 lines #1]"  # back as typed, the paste still behind it
        assert prompt.pastes.expand(prompt.text) == LOG


async def test_a_terminal_paste_with_carriage_returns_is_counted_in_lines(tmp_path, llm_server):
    """Terminals deliver a pasted text's line breaks as CR: 205 lines are '205 lines', not a character
    count, and reach the model as lines."""
    llm_server.push(text("Seen."))
    pasted = "\r".join(f"line {i} of the config" for i in range(205))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        prompt.post_message(events.Paste(pasted))
        await wait_until(pilot, lambda: "[Pasted" in prompt.text, what="the marker")
        assert prompt.text == "[Pasted 205 lines #1]"
        await pilot.press("enter")
        await idle(pilot)
    assert llm_server.chat_requests()[-1]["messages"][-1]["content"] == pasted.replace("\r", "\n")
