"""Escape on a slow model, then typing (issue 38, item 3): the message given back comes selected, so
what is typed next replaces it; what reaches the model and the log is exactly what was sent; the
withdrawn message leaves the chat; a slash command glued after text is never sent as chat."""

from __future__ import annotations

import json

from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, idle, ready, server_app, wait_until


def logged_user_lines(screen) -> list[str]:
    raw = screen.link.session_dir / "raw.jsonl"
    lines = raw.read_text().splitlines() if raw.exists() else []
    return [r["content"] for r in map(json.loads, lines) if r.get("role") == "user"]


async def withdraw_before_the_first_token(pilot, prompt: PromptInput, llm_server, message: str) -> None:
    """Type ``message`` and Enter, then Escape once the request reached the (slow) server, before its
    first token: the message comes back in the input."""
    await pilot.press(*message, "enter")
    await wait_until(pilot, lambda: llm_server.chat_requests(), timeout=120, what="the request to reach the server")
    await pilot.press("escape")
    await idle(pilot, 120)
    await wait_until(pilot, lambda: prompt.text == message, what="the message back in the input")


async def test_escape_before_the_first_token_then_typing_sends_only_what_was_typed(tmp_path, llm_server):
    llm_server.stream_delay = 1.0  # the first token comes a second after the request
    llm_server.push(text("Why did the chicken…"), text("Nothing about Kyoto yet."))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        await withdraw_before_the_first_token(pilot, prompt, llm_server, "tell me a joke")
        assert prompt.selected_text == "tell me a joke"  # selected: typing replaces it
        assert not [m for m in screen.query_one(ChatLog).messages("user") if m.text == "tell me a joke"]
        llm_server.stream_delay = 0.0
        await pilot.press(*"search my past efforts for Kyoto", "enter")
        await idle(pilot, 120)
        assert prompt.text == ""
        assert llm_server.chat_requests()[-1]["messages"][-1]["content"] == "search my past efforts for Kyoto"
        assert logged_user_lines(screen)[-1] == "search my past efforts for Kyoto"
        assert "tell me a joke" not in " ".join(logged_user_lines(screen)[:-1])
        assert [m.text for m in screen.query_one(ChatLog).messages("user")] == ["search my past efforts for Kyoto"]


async def test_the_message_given_back_is_kept_by_arrows_and_home(tmp_path, llm_server):
    llm_server.stream_delay = 1.0
    llm_server.push(text("Sure."), text("Sure again."))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        await withdraw_before_the_first_token(pilot, prompt, llm_server, "tell me a joke")
        await pilot.press("home", *" please")  # Home leaves the selection: the text stays, edited
        assert prompt.text == " pleasetell me a joke"
        await pilot.press("ctrl+l")
        assert prompt.text == ""


async def test_a_slash_command_glued_after_text_is_not_sent_as_chat(tmp_path, llm_server):
    llm_server.push(text("Here you are."))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        await pilot.press(*"tell me a joke/status", "enter")
        await pilot.pause()
        assert prompt.text == "tell me a joke/status"  # back in the input, with a word why
        assert not llm_server.chat_requests()
        await pilot.press("enter")  # the same line again: sent as it is, meant so
        await idle(pilot, 120)
        assert llm_server.chat_requests()[-1]["messages"][-1]["content"] == "tell me a joke/status"
