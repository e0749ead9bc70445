"""Typing at once after a crash: what is typed goes to the input, never to a dialog (issue 25, item 2).

A killed run leaves its last message unanswered; the next start offers to send it again. The offer
is a line under the input (Ctrl+Y, Up to edit), so keys typed while the app starts — letters that
were hotkeys of the old dialog included — reach the input and are sent as typed.
"""

from __future__ import annotations

from ccm_tui.core.session.session import Session
from ccm_tui.core.storage import eventlog as ev
from ccm_tui.core.storage.durable import read_jsonl
from ccm_tui.ui.screens.choice import Choice, ChoiceDialog
from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, chat, idle, ready, server_app, wait_until

ORPHAN = "Old question that never got an answer"


def crashed_session(tmp_path):
    directory = tmp_path / "s"
    session = Session.open(directory)
    session.log_event(ev.TURN_START, user=ORPHAN, next_turn=1)
    session.lock.release()  # the process "died" mid-turn
    return directory


def logged_user_messages(directory) -> list[str]:
    records = read_jsonl(directory / "raw.jsonl").records if (directory / "raw.jsonl").exists() else []
    return [r["content"] for r in records if r.get("role") == "user"]


async def test_typing_while_the_app_starts_goes_to_the_input_and_is_sent_as_typed(tmp_path, llm_server):
    llm_server.push(text("Here is the new plan."))
    directory = crashed_session(tmp_path)
    typed = "see the new plan please, read every detail"  # r, e, d: the old dialog's hotkeys
    async with server_app(directory, llm_server.base_url).run_test(size=SIZE) as pilot:
        await pilot.press(*typed)  # at once, before the session has opened
        await pilot.press("enter")
        screen = await ready(pilot)
        await wait_until(pilot, lambda: len(screen.query_one(ChatLog).messages("assistant")) >= 1, what="a reply")
        await idle(pilot)
        assert pilot.app.screen is screen
        assert [m.text for m in screen.query_one(ChatLog).messages("user")] == [typed]
        assert screen.unanswered is None  # sending something else moved on: the offer is gone
    assert logged_user_messages(directory) == [typed]  # the old message was not re-sent
    assert [r["messages"][-1]["content"] for r in llm_server.chat_requests()] == [typed]


async def test_keys_typed_after_the_offer_shows_are_text_and_up_brings_the_old_message_back(tmp_path, llm_server):
    llm_server.push(text("Answered."))
    directory = crashed_session(tmp_path)
    async with server_app(directory, llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await wait_until(pilot, lambda: screen.unanswered == ORPHAN, what="the offer")
        prompt = screen.query_one(PromptInput)
        await pilot.press(*"red")
        assert prompt.text == "red"
        await pilot.press("ctrl+l")
        await pilot.press("up")
        assert prompt.text == ORPHAN
        await pilot.press("end", *" and edited", "enter")
        await idle(pilot)
        assert screen.query_one(ChatLog).messages("user")[-1].text == ORPHAN + " and edited"
    assert logged_user_messages(directory) == [ORPHAN + " and edited"]


async def test_a_dialog_choice_key_pressed_twice_pops_one_screen(tmp_path, llm_server):
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        chosen: list[str | None] = []
        dialog = ChoiceDialog("Pick", [Choice("edit", "Edit", key="e"), Choice("drop", "Drop", key="d")])
        pilot.app.push_screen(dialog, chosen.append)
        await wait_until(pilot, lambda: pilot.app.screen is dialog)
        await pilot.press("e", "e", "d")
        await wait_until(pilot, lambda: chosen)
        await pilot.pause()
        assert chosen == ["edit"]
        assert pilot.app.screen is chat(pilot) is screen
        assert screen.query_one(PromptInput).text in ("", "ed")  # what came after went where keys go


async def test_keys_typed_before_the_app_held_the_terminal_are_sent_or_left_in_the_input(tmp_path, llm_server):
    from ccm_tui.config import Settings
    from ccm_tui.ui.app import CcmApp

    llm_server.push(text("Here is the plan."))
    settings = Settings().with_overrides(
        "test", model="openai/fake-model", api_base=llm_server.base_url, token_budget=16_000
    )
    typed = "see the new plan please\r\x1b[Aand then the"  # an Enter (line mode or not), an arrow key
    app = CcmApp(settings, tmp_path / "s", watch=False, warm_up=False, typed=typed)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await wait_until(pilot, lambda: screen.query_one(ChatLog).messages("assistant"), what="the reply")
        await idle(pilot)
        assert [m.text for m in screen.query_one(ChatLog).messages("user")] == ["see the new plan please"]
        assert screen.query_one(PromptInput).text == "and then the"
    assert [r["messages"][-1]["content"] for r in llm_server.chat_requests()] == ["see the new plan please"]
