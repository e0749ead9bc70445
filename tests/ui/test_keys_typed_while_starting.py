"""Keys typed while the TUI starts reach the chat input, once, in order, as typed.

``ccm-tui`` reads what was typed before it held the terminal (``commands/tui.py``); what comes after
sits in the terminal's queue until Textual's driver starts and reads it, before the chat screen is
mounted and its input focused. These tests hand the app such keys the way the driver does: raw
bytes through Textual's own parser, posted to the app when it loads, so they reach it before any
screen is ready — the moment a real terminal gives them.
"""

from __future__ import annotations

from textual import events
from textual._xterm_parser import XTermParser

from ccm_tui.config import Settings
from ccm_tui.core.storage.durable import read_jsonl
from ccm_tui.ui.app import CcmApp
from ccm_tui.ui.screens.welcome import WelcomeScreen
from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, idle, ready, wait_until


class KeysAtLoad(CcmApp):
    """The app with ``early`` (raw terminal bytes) waiting in its queue before anything is mounted
    (``quit_at_load``: a quit asked then too, as a SIGTERM or a hang-up at launch asks it)."""

    def __init__(self, *args, early: str = "", quit_at_load: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.early = early
        self.quit_at_load = quit_at_load

    def on_load(self) -> None:
        for event in terminal_events(self.early):
            self.post_message(event)
        if self.quit_at_load:
            self.call_later(self.run_action, "quit")


def terminal_events(raw: str) -> list[events.Event]:
    """What Textual's driver makes of ``raw`` read from the terminal (keys, pastes)."""
    parser = XTermParser()
    found = [*parser.feed(raw), *parser.tick()]
    return [e for e in found if isinstance(e, (events.Key, events.Paste))]


def app_for(tmp_path, base_url: str | None, early: str, **kwargs) -> KeysAtLoad:
    values = {"token_budget": 16_000}
    if base_url is not None:
        values |= {"model": "openai/fake-model", "api_base": base_url}
    settings = Settings().with_overrides("test", **values)
    return KeysAtLoad(settings, tmp_path / "s", watch=False, warm_up=False, early=early, **kwargs)


def logged_user_messages(directory) -> list[str]:
    records = read_jsonl(directory / "raw.jsonl").records if (directory / "raw.jsonl").exists() else []
    return [r["content"] for r in records if r.get("role") == "user"]


def sent(llm_server) -> list[str]:
    return [r["messages"][-1]["content"] for r in llm_server.chat_requests()]


async def test_keys_waiting_when_the_app_starts_are_sent_once_as_typed(tmp_path, llm_server):
    llm_server.push(text("Noted."))
    typed = "read it, edit it, then send the reader a note"  # r, e, d, q-free: letters bound elsewhere
    async with app_for(tmp_path, llm_server.base_url, typed + "\r").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await wait_until(pilot, lambda: screen.query_one(ChatLog).messages("assistant"), what="the reply")
        await idle(pilot)
        assert [m.text for m in screen.query_one(ChatLog).messages("user")] == [typed]
        assert screen.query_one(PromptInput).text == ""
    assert logged_user_messages(tmp_path / "s") == [typed]
    assert sent(llm_server) == [typed]


async def test_keys_waiting_and_keys_pressed_after_keep_their_order(tmp_path, llm_server):
    async with app_for(tmp_path, llm_server.base_url, "see the plan").run_test(size=SIZE) as pilot:
        await pilot.press(*" please")  # as soon as the app runs: before or after the input is ready
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        await wait_until(pilot, lambda: prompt.text == "see the plan please", what=f"the input, {prompt.text!r}")
        assert pilot.app.focused is prompt


async def test_a_paste_waiting_when_the_app_starts_goes_to_the_input(tmp_path, llm_server):
    early = "look: \x1b[200~one\rtwo\x1b[201~ end"  # a bracketed paste between typed keys
    async with app_for(tmp_path, llm_server.base_url, early).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        await wait_until(pilot, lambda: prompt.text.endswith(" end"), what=f"the input, {prompt.text!r}")
        assert prompt.text == "look: one\ntwo end"


async def test_lines_read_before_the_terminal_was_held_are_sent_before_the_keys_after(tmp_path, llm_server):
    llm_server.push(text("First."))
    llm_server.push(text("Second."))
    app = app_for(tmp_path, llm_server.base_url, "second one\r", typed="first one\r")
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        await wait_until(pilot, lambda: len(log.messages("assistant")) >= 2, what="both replies")
        await idle(pilot)
        assert [m.text for m in log.messages("user")] == ["first one", "second one"]
    assert sent(llm_server) == ["first one", "second one"]


async def test_ctrl_q_typed_while_the_app_starts_still_quits(tmp_path, llm_server):
    async with app_for(tmp_path, llm_server.base_url, "abc\x11").run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: pilot.app.return_code is not None, what="the app to quit")
    assert pilot.app.return_code == 0


async def test_a_quit_asked_while_the_app_starts_ends_it_cleanly(tmp_path, llm_server):
    app = app_for(tmp_path, llm_server.base_url, "", quit_at_load=True)
    async with app.run_test(size=SIZE) as pilot:  # (ending mid-mount raised NoMatches here, from the chat's widgets)
        await wait_until(pilot, lambda: app.return_code is not None, what="the app to quit")
    assert app.return_code == 0


async def test_the_welcome_screen_does_not_take_keys_typed_before_it_was_drawn(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no model saved anywhere
    monkeypatch.delenv("CCM_MODEL", raising=False)
    early = "see the draft, quick\r"  # s: Settings, d: the demo, q: quit — on the welcome screen
    async with app_for(tmp_path, None, early).run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, WelcomeScreen), what="the welcome")
        chat = pilot.app.chat_screen
        assert chat is not None
        prompt = chat.query_one(PromptInput)
        await wait_until(pilot, lambda: prompt.text, what="the typed text in the chat's input")
        await pilot.pause()
        assert isinstance(pilot.app.screen, WelcomeScreen)  # no binding of it ran
        assert len(pilot.app.screen_stack) == 2
        assert pilot.app.return_code is None
        assert prompt.text == "see the draft, quick\n"  # kept whole; the Enter a new line, as nothing can be sent
        await pilot.press("escape")  # typed once the welcome shows: it is the welcome's
        await wait_until(pilot, lambda: pilot.app.screen is chat, what="the chat")
        assert prompt.text == "see the draft, quick\n"
