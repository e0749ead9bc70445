"""A day of real use: what a person types, and what they must (not) get. One test per fault found."""

from __future__ import annotations

import contextlib
import fcntl
import os

from ccm_tui.ui.screens.choice import ChoiceDialog
from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.chat_message import ChatMessage
from ccm_tui.ui.widgets.effort_list import EffortItem
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, build, demo_app, ready, scroll_to_start, send, server_app, wait_until


def state_of(screen, effort_id: str) -> str:
    return screen.snapshot.effort(effort_id).state.value


# ------------------------------------------------------------------ 1. keys on the effort list
async def test_typing_after_visiting_the_effort_list_goes_to_the_input(tmp_path):
    await build(tmp_path / "s", 2)  # the Japan trip is open and active
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        await pilot.press("ctrl+g")
        assert isinstance(screen.focused, EffortItem)
        await pilot.press("escape")
        assert screen.focused is prompt

        await pilot.press("ctrl+g")
        await pilot.press(*"ok do it")
        assert screen.focused is prompt
        assert prompt.text == "ok do it"
        assert state_of(screen, "japan-trip") == "active"
        assert not isinstance(pilot.app.screen, ChoiceDialog)


async def test_conclude_from_a_key_asks_first(tmp_path):
    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+g", "d")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog), what="a confirmation")
        await pilot.press("n")
        await pilot.pause()
        assert state_of(screen, "japan-trip") == "active" and not screen.busy


# ------------------------------------------------------------------ 3. text shown as written
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
    from tests.ui.widgets.test_widgets import WidgetHost

    async with WidgetHost(message).run_test() as pilot:
        await pilot.pause()
        assert str(message.query_one(".message-body").render()) == "**not bold** and <b>not html</b>"


# ------------------------------------------------------------------ 2. Alt+Enter starts a new line
def test_alt_enter_as_terminals_send_it_is_alt_enter():
    from textual._xterm_parser import XTermParser

    from ccm_tui.ui import terminal_keys

    terminal_keys.install()

    def keys(data: str) -> list[str]:
        parser = XTermParser(debug=False)
        return [e.key for e in [*parser.feed(data), *parser.feed("")] if hasattr(e, "key")]

    assert keys("\x1b\r") == ["alt+enter"]  # ESC + CR: tmux, xterm, GNOME Terminal, iTerm2 (Esc+ mode)
    assert keys("\r") == ["enter"]
    assert keys("\x1b[13;3u") == ["alt+enter"]  # the kitty keyboard protocol
    assert keys("\x1bx") == ["alt+x"]


async def test_newline_keys_insert_a_line_and_enter_sends(tmp_path):
    await build(tmp_path / "s", 0)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        await pilot.press("a", "alt+enter", "b", "ctrl+j", "c", "shift+enter", "d")
        assert prompt.text == "a\nb\nc\nd" and not screen.busy


# ------------------------------------------------------------------ 7. scrolling from the keyboard
async def test_page_keys_scroll_the_chat_while_typing(tmp_path):
    await build(tmp_path / "s", 6)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        await wait_until(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y, what="history")
        bottom = log.scroll_y
        await pilot.press("pageup")
        await wait_until(pilot, lambda: log.scroll_y < bottom, what="a page up")
        for _ in range(20):  # at the top, what was said before is drawn above (the view stays): again
            await pilot.press("ctrl+home")
            await wait_until(pilot, lambda: log.scroll_y == 0 or log.held or log.more_before, what="the top")
            await pilot.pause()
            if log.scroll_y == 0 and not log.held and not log.more_before:
                break
        assert log.scroll_y == 0 and screen.query(ChatMessage).first().content_region.y >= 0  # the oldest line
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: log.scroll_y == log.max_scroll_y, what="the newest line")
        assert screen.focused is screen.query_one(PromptInput)


# ------------------------------------------------------------------ 9. a cut-off stream keeps its text
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


# ------------------------------------------------------------------ 11. narrow terminals
async def test_narrow_terminals_hide_the_sidebar_until_asked(tmp_path):
    from ccm_tui.ui.widgets.sidebar import Sidebar

    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        sidebar = screen.query_one(Sidebar)
        assert not sidebar.display
        assert screen.query_one(ChatLog).size.width >= 70
        assert "Ctrl+B" in str(screen.query_one("#prompt-hint").render())
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert sidebar.display and sidebar.outer_size.width == 34
    async with demo_app(tmp_path / "s").run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        assert screen.query_one(Sidebar).display and screen.query_one(Sidebar).outer_size.width == 34


# ------------------------------------------------------------------ 12. keys people can find
async def test_f1_lists_every_key_and_ctrl_l_clears_the_input(tmp_path):
    from ccm_tui.ui.screens.help import HelpScreen

    await build(tmp_path / "s", 0)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen), what="the help screen")
        listed = " ".join(
            str(cell)
            for rows in pilot.app.screen.query(".help-rows")
            for column in rows.content.columns  # a two-column table: keys, what they do
            for cell in column.cells
        )
        for words in (
            "Copy reply",
            "Copy code",
            "Clear input",
            "Scroll the chat up",
            "Cancel the reply",
            "Conclude",
            "New line",
        ):
            assert words in listed
        await pilot.press("escape")
        await pilot.pause()
        assert pilot.app.screen is screen
        screen.query_one(PromptInput).set_text("some draft")
        await pilot.press("ctrl+l")
        assert screen.query_one(PromptInput).text == ""


# ------------------------------------------------------------------ 14. a giant paste
async def test_a_giant_paste_is_refused_before_it_is_drawn(tmp_path):
    from textual import events

    await build(tmp_path / "s", 0)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        pilot.app.post_message(events.Paste("x" * 210_000))  # as a terminal paste arrives
        await pilot.pause()
        assert prompt.text == ""
        assert any("Paste refused" in (n.title or "") for n in pilot.app._notifications)
        pilot.app.post_message(events.Paste("a normal paste"))
        await pilot.pause()
        assert prompt.text == "a normal paste"


# ------------------------------------------------------------------ 5. no accidental efforts
async def test_ctrl_o_with_a_concluded_effort_name_offers_to_reopen_it(tmp_path):
    await build(tmp_path / "s", 5)  # the Japan trip is concluded
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        before = [e.id for e in screen.snapshot.status.efforts]
        screen.efforts.open("Japan Trip")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog), what="the offer")
        assert "reopen" in [c.id for c in pilot.app.screen.choices]
        await pilot.press("r")
        await wait_until(pilot, lambda: state_of(screen, "japan-trip") == "active" and not screen.busy)
        assert [e.id for e in screen.snapshot.status.efforts] == before  # no japan-trip-2


# ------------------------------------------------------------------ 6. history after a relaunch
async def test_history_after_a_relaunch_shows_the_effort_banners(tmp_path):
    from ccm_tui.ui.widgets.banner import BannerLine

    await build(tmp_path / "s", 7)  # opened, concluded, another opened, the first expanded
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await scroll_to_start(pilot, screen.query_one(ChatLog))
        shown = [str(b.render()) for b in screen.query(BannerLine)]
        for banner in (
            "--- Opened effort: japan-trip ---",
            "--- Concluded effort: japan-trip ---",
            "--- Opened effort: flaky-login-test ---",
        ):
            assert banner in shown
        assert any(b.startswith("--- Expanded effort: japan-trip (") for b in shown)
        assert shown.index("--- Opened effort: japan-trip ---") < shown.index("--- Concluded effort: japan-trip ---")


# ------------------------------------------------------------------ 10. waiting for the session's lock
@contextlib.contextmanager
def session_held_elsewhere(session_dir):
    """The session's writer lock held through another open file description, pid written as a
    holding ccm-tui writes it (flock locks conflict between descriptions, even in one process)."""
    holder = os.open(session_dir / ".lock", os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(holder, 0)
        os.write(holder, f"{os.getpid()}\n".encode())
        yield
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)


async def test_a_turn_waiting_for_the_session_says_who_holds_it_then_runs(tmp_path, llm_server):
    """Another process (here: another open file description) holds the writer lock while the user sends:
    the status line names it instead of "Thinking", and the turn runs as soon as the lock is free."""
    from ccm_tui.ui.widgets.turn_status import TurnStatus

    llm_server.push(text("Hello once the session was free."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        with session_held_elsewhere(tmp_path / "s"):
            screen.prompt.set_text("hello")
            await pilot.press("enter")
            status = screen.query_one(TurnStatus)
            await wait_until(pilot, lambda: "Waiting for the session (used by pid" in status.label, what="the wait")
            assert not llm_server.chat_requests()  # nothing was sent while the lock was held
        await wait_until(pilot, lambda: not screen.busy and not screen.turns.pending, what="the turn to end")
        reply = screen.query_one(ChatLog).messages()[-1]
        assert "once the session was free" in reply.text


async def test_a_session_held_through_the_whole_wait_gives_tui_advice(tmp_path, llm_server, monkeypatch):
    from ccm_tui.ui.controller_link import SessionLink

    monkeypatch.setattr(SessionLink, "turn_lock_wait", 0.2)
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        with session_held_elsewhere(tmp_path / "s"):
            screen.prompt.set_text("hello")
            await pilot.press("enter")
            await wait_until(pilot, lambda: not screen.busy and screen.prompt.text == "hello", what="the text back")
        banners = " ".join(str(b.render()) for b in screen.query(".banner"))
        assert "still in use by pid" in banners and "send again once it is done" in banners
        assert "--session" not in banners  # command-line advice has no place in the TUI


# ------------------------------------------------------------------ a model without tools (issue 15)
async def test_a_model_without_tools_is_said_once_and_the_hint_shows_efforts_by_hand(tmp_path, llm_server):

    llm_server.refuse_tools = True
    llm_server.push(text("Hello! How can I help?"))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "hi there")
        screen = await ready(pilot)
        await wait_until(pilot, lambda: not screen.busy and not screen.turns.pending, what="the turn to end")
        banners = " ".join(str(b.render()) for b in screen.query(".banner"))
        assert banners.count("cannot use tools") == 1
        hint = str(screen.query_one("#prompt-hint").render())
        assert hint.startswith("no tools: Ctrl+O opens an effort")
        assert screen.query_one(ChatLog).messages()[-1].text == "Hello! How can I help?"


async def test_the_palette_asks_before_opening_an_effort_from_a_query(tmp_path):
    """A query that matches no command leaves 'Open a new effort: …' selected: Enter must not create it."""
    from textual.command import CommandList
    from textual.widgets import Input

    from ccm_tui.ui.palette import NEW_EFFORT_HELP
    from ccm_tui.ui.screens.question import PromptDialog

    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        before = [e.id for e in screen.snapshot.status.efforts]
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"zqxj wobble")

        def offered() -> list[str]:
            lists = pilot.app.screen.query(CommandList)
            return [str(option.prompt) for option in lists.first().options] if lists else []

        await wait_until(pilot, lambda: offered() == ["Open a new effort: zqxj wobble…\n" + NEW_EFFORT_HELP])
        await pilot.press("enter")
        dialog = await wait_until(pilot, lambda: isinstance(pilot.app.screen, PromptDialog) and pilot.app.screen)
        assert dialog.query_one(Input).value == "zqxj wobble"
        assert [e.id for e in screen.snapshot.status.efforts] == before  # nothing opened yet
        await pilot.press("escape")
        await pilot.pause()
        assert [e.id for e in screen.snapshot.status.efforts] == before


async def test_the_palette_shows_the_copy_and_clear_keys(tmp_path):
    from ccm_tui.ui.palette import app_commands

    async with demo_app(await build(tmp_path / "s", 2)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        helps = {name: help for name, _, help in app_commands(screen)}
        assert helps["Copy last reply"].endswith("(Alt+C)")
        assert helps["Copy last code block"].endswith("(Alt+K)")
        assert helps["Clear the input"].endswith("(Ctrl+L)")
