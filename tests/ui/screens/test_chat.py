"""Pilot tests of the chat flows against the fake OpenAI-compatible server and the demo model."""

from __future__ import annotations

import json

from ccm_tui.core.service.run_state import Phase, RunState
from ccm_tui.core.storage.durable import read_jsonl
from ccm_tui.ui.screens.choice import ChoiceDialog
from ccm_tui.ui.widgets.banner import BannerLine
from ccm_tui.ui.widgets.chat_log import ChatLog
from ccm_tui.ui.widgets.effort_list import EffortItem
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import call, fault, text, tool_calls
from tests.helpers.tui import SIZE, build, chat, demo_app, idle, ready, send, server_app, wait_until


def banners(screen) -> list[str]:
    return [str(b.render()) for b in screen.query(BannerLine)]


def item(screen, effort_id: str) -> EffortItem:
    return next(i for i in screen.query(EffortItem) if i.effort_id == effort_id)


async def test_send_a_message_and_see_the_reply(tmp_path, llm_server):
    llm_server.push(text("Hello from the **fake** model."))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hi there")
        screen = chat(pilot)
        replies = screen.query_one(ChatLog).messages("assistant")
        assert replies[-1].text == "Hello from the **fake** model."
        assert replies[-1].logged_to == "ambient"
        assert screen.query_one(PromptInput).text == ""
        assert llm_server.chat_requests()[-1]["messages"][-1]["content"] == "hi there"
        assert llm_server.models_seen() == ["fake-model"]


async def test_open_and_conclude_an_effort_through_the_model(tmp_path, llm_server):
    llm_server.push(
        tool_calls(call("open_effort", {"name": "auth bug"}), content="Let's dig in."),
        text("The 401 comes from an expired token."),
        tool_calls(call("close_effort", {})),
        text("Auth bug: expired JWT; fixed by refreshing tokens."),  # the summary request
        text("Closed."),
    )
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "let's debug the auth bug")
        screen = chat(pilot)
        assert "--- Opened effort: auth-bug ---" in banners(screen)
        assert item(screen, "auth-bug").has_class("-active")
        reply = screen.query_one(ChatLog).messages("assistant")[-1]
        assert reply.text == "Let's dig in.\n\nThe 401 comes from an expired token."
        assert reply.logged_to == "auth-bug"
        assert [n for n, _ in reply.tools] == ["open_effort"]

        await send(pilot, "fixed, we're done")
        assert "--- Concluded effort: auth-bug ---" in banners(screen)
        row = item(screen, "auth-bug")
        assert row.has_class("-concluded")
        assert row.tooltip == "Auth bug: expired JWT; fixed by refreshing tokens."
        meter = str(screen.query_one(".meter-savings").render())
        assert "saved" in meter


async def test_click_expand_then_reopen_in_the_sidebar(tmp_path):
    async with demo_app(await build(tmp_path / "s", 5)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)  # the trip effort is concluded
        assert item(screen, "japan-trip").has_class("-concluded")

        await pilot.click(item(screen, "japan-trip"))
        dialog = await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog) and pilot.app.screen)
        views, edits = ["expand", "reopen", "log", "export", "start"], ["rename", "summary", "pin", "merge"]
        assert [c.id for c in dialog.choices] == [*views, *edits, "forget"]
        await pilot.press("e")
        await idle(pilot)
        row = item(screen, "japan-trip")
        assert row.has_class("-expanded")
        assert "collapses in 3 turns" in str(row.render())
        assert any(b.startswith("--- Expanded effort: japan-trip") for b in banners(screen))

        await pilot.click(item(screen, "japan-trip"))
        dialog = await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog) and pilot.app.screen)
        assert [c.id for c in dialog.choices] == ["collapse", "reopen", "log", "export", "start", *edits, "forget"]
        await pilot.press("r")
        await idle(pilot)
        row = item(screen, "japan-trip")
        assert row.has_class("-open") and row.has_class("-active")
        assert "--- Reopened effort: japan-trip ---" in banners(screen)
        log = read_jsonl(screen.link.session_dir / "efforts" / "japan-trip.jsonl").records
        assert log[-1]["content"] == "--- Effort reopened ---"


async def test_effort_keys_offer_only_valid_actions(tmp_path):
    async with demo_app(await build(tmp_path / "s", 2)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+g")
        row = await wait_until(pilot, lambda: isinstance(pilot.app.focused, EffortItem) and pilot.app.focused)
        assert row.check_action("effort", ("conclude",))
        assert not row.check_action("effort", ("expand",))
        assert not row.check_action("effort", ("reopen",))
        assert not row.check_action("effort", ("switch",))  # it is already active
        await pilot.press("e")  # not valid: nothing happens
        await pilot.pause()
        assert not screen.busy and isinstance(pilot.app.screen, type(screen))


async def test_escape_cancels_a_streaming_reply(tmp_path, llm_server):
    llm_server.stream_delay = 0.05
    llm_server.push(text("word " * 400))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.query_one(PromptInput).set_text("tell me a long story")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: screen.turns.current and len(screen.turns.current.assistant.text) > 20, what="streaming"
        )
        await pilot.press("escape")
        await idle(pilot)
        reply = screen.query_one(ChatLog).messages("assistant")[-1]
        assert reply.note == "(interrupted)"
        assert 20 < len(reply.text) < len("word " * 400)
        raw = read_jsonl(screen.link.session_dir / "raw.jsonl").records
        assert raw[-1]["interrupted"] is True and raw[-2]["content"] == "tell me a long story"


async def test_provider_error_puts_the_text_back(tmp_path, llm_server):
    llm_server.push(fault(401, {"error": {"message": "bad key", "type": "invalid_request_error"}}))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "are you there?")
        screen = chat(pilot)
        assert screen.query_one(PromptInput).text == "are you there?"
        assert any("The reply failed" in b for b in banners(screen))
        assert not screen.query_one(ChatLog).messages("assistant")


async def test_rate_limit_shows_a_paused_banner_then_answers(tmp_path, llm_server):
    llm_server.push(fault(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "1"}), text("ok now"))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.query_one(PromptInput).set_text("hello")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(b.startswith("SESSION PAUSED") for b in banners(screen)), what="pause")
        await idle(pilot)
        assert screen.query_one(ChatLog).messages("assistant")[-1].text == "ok now"
        assert any("resumed" in b for b in banners(screen))


async def test_palette_search_finds_an_effort_and_enter_reads_its_passage(tmp_path):
    from textual.command import CommandList

    from ccm_tui.ui.screens.lines_viewer import LinesScreen

    def results() -> list[str]:
        lists = pilot.app.screen.query(CommandList)
        return (
            [str(getattr(option.prompt, "plain", option.prompt)) for option in lists.first().options] if lists else []
        )

    async with demo_app(await build(tmp_path / "s", 5)).run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press(*"nara")  # only in the trip's summary and raw log
        await wait_until(pilot, lambda: any("japan-trip" in r for r in results()), what="live search results")
        assert any(r.startswith("Open a new effort: nara") for r in results())
        await pilot.press("enter")  # (the trip's hit is first: Enter reads its passage's lines, as for ambient chat)
        viewer = await wait_until(pilot, lambda: isinstance(pilot.app.screen, LinesScreen) and pilot.app.screen)
        assert viewer.title_text == "Effort log — japan-trip" and viewer.query(".-hit")


async def test_palette_lists_every_action(tmp_path):
    from ccm_tui.ui.palette import app_commands, effort_commands

    async with demo_app(await build(tmp_path / "s", 2)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        names = [name for name, *_ in app_commands(screen)] + [name for name, *_ in effort_commands(screen)]
        for expected in (
            "Open effort…",
            "Search efforts…",
            "Context inspector",
            "Settings",
            "Switch model…",
            "Conclude: japan-trip",
            "View raw log: japan-trip",
            "Export to Markdown: japan-trip",
        ):
            assert expected in names
        assert "Cancel the running turn" not in names  # only while a turn runs
        screen.run_state = RunState(phase=Phase.TURN, work="turn")  # as the controller says while a turn runs
        assert "Cancel the running turn" in [name for name, *_ in app_commands(screen)]
        screen.run_state = RunState(phase=Phase.IDLE)


async def test_open_effort_by_name_from_the_keyboard(tmp_path):
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        await pilot.press(*"release notes", "enter")
        await wait_until(pilot, lambda: any(i.effort_id == "release-notes" for i in screen.query(EffortItem)))
        await idle(pilot)
        assert "--- Opened effort: release-notes ---" in banners(screen)


async def test_settings_save_writes_config_toml(tmp_path):
    from ccm_tui import config
    from ccm_tui.ui.screens.settings import SettingsScreen

    async with server_app(tmp_path / "s", "http://127.0.0.1:9/v1").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f4")
        settings = await wait_until(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen) and pilot.app.screen)
        settings.query_one("#field-model").value = "ollama/llama3.1"
        settings.query_one("#field-api_base").value = "http://localhost:11434"
        settings.query_one("#field-decay_threshold").value = "5"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: pilot.app.screen is screen)
        await ready(pilot)
        written = config.config_file().read_text()
        assert 'model = "ollama/llama3.1"' in written
        assert 'api_base = "http://localhost:11434"' in written
        assert "decay_threshold = 5" in written
        await wait_until(pilot, lambda: screen.settings.model == "ollama/llama3.1" and screen.is_open)
        assert screen.settings.decay_threshold == 5


async def test_theme_is_remembered(tmp_path):
    from ccm_tui import config

    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        await ready(pilot)
        pilot.app.theme = "nord"
        await pilot.pause()
        assert 'theme = "nord"' in config.config_file().read_text()


async def test_first_run_without_a_model_offers_the_demo(tmp_path):
    from ccm_tui.config import Settings
    from ccm_tui.ui.app import CcmApp
    from ccm_tui.ui.screens.welcome import WelcomeScreen

    app = CcmApp(Settings(), tmp_path / "s", watch=False, warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, WelcomeScreen))
        await pilot.press("d")
        screen = await ready(pilot)
        assert screen.demo and pilot.app.demo
        assert screen.query_one(PromptInput).text  # the first scripted message is ready to send


async def test_prompt_keys_enter_sends_ctrl_j_inserts_a_newline(tmp_path):
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.set_text("")
        await pilot.press(*"one", "ctrl+j", *"two", "shift+enter", *"three")
        assert prompt.text == "one\ntwo\nthree"
        await pilot.press("enter")
        await idle(pilot)
        assert screen.query_one(ChatLog).messages("user")[-1].text == "one\ntwo\nthree"


async def test_inspector_shows_each_section_with_tokens(tmp_path):
    from ccm_tui.ui.screens.inspector import InspectorScreen

    async with demo_app(await build(tmp_path / "s", 3)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.query_one(PromptInput).set_text("draft question")
        await pilot.press("f2")
        inspector = await wait_until(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen) and pilot.app.screen)
        titles = [s.title for s in inspector.context.sections]
        assert titles[0] == "System prompt" and "Active: japan-trip" in titles and titles[-1] == "This turn"
        assert "draft question" in inspector.texts[-2]
        assert inspector.context.total == sum(inspector.context.layers.values())
        await pilot.press("escape")
        await wait_until(pilot, lambda: pilot.app.screen is screen)


async def test_log_viewer_and_export(tmp_path, monkeypatch):
    from ccm_tui.ui.screens.log_viewer import EffortLogScreen

    monkeypatch.chdir(tmp_path)
    async with demo_app(await build(tmp_path / "s", 5)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.efforts.run("japan-trip", "log")
        viewer = await wait_until(pilot, lambda: isinstance(pilot.app.screen, EffortLogScreen) and pilot.app.screen)
        assert len(viewer.records) == 6
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("enter")  # accept the default: ./japan-trip.md
        await wait_until(pilot, lambda: (tmp_path / "japan-trip.md").exists())
        exported = (tmp_path / "japan-trip.md").read_text()
        assert exported.startswith("# Effort: japan-trip")
        assert "## Summary" in exported and "Nara" in exported


async def test_changes_from_another_process_appear_live(tmp_path):
    from ccm_tui.config import Settings
    from ccm_tui.core.engine.opening import open_engine
    from ccm_tui.demo import DEMO_MODEL, DemoModel, script_messages
    from ccm_tui.ui.app import CcmApp

    directory = tmp_path / "s"
    app = CcmApp(
        Settings(model=DEMO_MODEL, token_budget=6_000), directory, demo=True, demo_delay=0, watch=True, warm_up=False
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await wait_until(pilot, lambda: screen.link.watching, what="the watcher")
        other = open_engine(directory, Settings(model=DEMO_MODEL), llm=DemoModel(delay=0), budget=6_000)
        try:
            for message in script_messages()[:2]:
                await other.run_turn(message)
        finally:
            other.close()
        await wait_until(
            pilot,
            lambda: any(i.effort_id == "japan-trip" for i in screen.query(EffortItem)),
            what="the sidebar to show the other process's effort",
        )
        texts = [m.text for m in screen.query_one(ChatLog).messages("user")]
        assert script_messages()[1] in texts


async def test_recovery_report_offers_to_retry_the_orphaned_message(tmp_path):
    from ccm_tui.core.session.session import Session
    from ccm_tui.core.storage import eventlog as ev
    from ccm_tui.ui.widgets.prompt_hint import PromptHint

    directory = tmp_path / "s"
    session = Session.open(directory)
    session.log_event(ev.TURN_START, user="Hi! What is this app?", next_turn=1)
    session.lock.release()  # the process "died" mid-turn

    async with demo_app(directory).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await wait_until(pilot, lambda: screen.unanswered == "Hi! What is this app?", what="the offer")
        assert "Ctrl+Y sends it again" in str(screen.query_one(PromptHint).render())
        assert any(b.startswith("RECOVERY") for b in banners(screen))
        assert pilot.app.screen is screen  # an offer under the input, never a dialog that takes keys
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: screen.query_one(ChatLog).messages("assistant"))
        await idle(pilot)
        assert "offline scripted model" in screen.query_one(ChatLog).messages("assistant")[-1].text
        assert screen.query_one(ChatLog).messages("user")[-1].text == "Hi! What is this app?"
        assert screen.unanswered is None


async def test_startup_does_not_import_litellm(tmp_path):
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import asyncio, sys
        from ccm_tui.config import Settings
        from ccm_tui.ui.app import CcmApp
        async def main():
            app = CcmApp(Settings(model="openai/fake-model", token_budget=16000), {str(tmp_path / "s")!r},
                         watch=False, warm_up=False)
            async with app.run_test(size=(150, 45)) as pilot:
                for _ in range(500):
                    await pilot.pause(0.01)
                    if app.chat_screen.is_open:
                        break
                print(json.dumps({{"ready": app.chat_screen.is_open,
                                  "litellm": "litellm" in sys.modules}}))
        import json
        asyncio.run(main())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"ready": True, "litellm": False}


async def test_the_demo_plays_through_by_pressing_enter(tmp_path):
    from ccm_tui.demo import script_messages

    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        for expected in script_messages():
            await wait_until(pilot, lambda e=expected: prompt.text == e, what="the scripted message")
            await pilot.press("enter")
            await wait_until(
                pilot,
                lambda e=expected: (
                    screen.query_one(ChatLog).messages("user")[-1:]
                    and screen.query_one(ChatLog).messages("user")[-1].text == e
                ),
            )
            await idle(pilot)
        shown = banners(screen)
        for banner in (
            "--- Opened effort: japan-trip ---",
            "--- Concluded effort: japan-trip ---",
            # the figure is the expanded layer on the meter (issue 14: one counter), not the bare log
            "--- Expanded effort: japan-trip (858 tokens loaded) ---",
            "--- Auto-collapsed effort: japan-trip (inactive for 3 turns) ---",
            "--- Reopened effort: japan-trip ---",
        ):
            assert banner in shown
        assert any(b.startswith("End of the demo script") for b in shown)
        routes = [m.logged_to for m in screen.query_one(ChatLog).messages("assistant")]
        assert routes[0] == "ambient" and routes[3] == "ambient" and routes[-1] == "japan-trip"


async def test_a_missing_provider_key_is_explained(tmp_path, monkeypatch):
    from ccm_tui.config import Settings
    from ccm_tui.ui.app import CcmApp

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    app = CcmApp(Settings(model="openai/gpt-4o-mini"), tmp_path / "s", watch=False, warm_up=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await wait_until(pilot, lambda: any("No API key found" in b for b in banners(screen)), timeout=30)
        assert any("OPENAI_API_KEY" in b for b in banners(screen))
        assert screen.snapshot.budget == 16_000  # resolved from litellm's model map in the background


async def test_a_broken_session_is_explained_not_a_traceback(tmp_path):
    directory = tmp_path / "s"
    directory.mkdir()
    (directory / "manifest.yaml").write_text("efforts: [ {id: 'Bad Id!'} ]\n")
    async with demo_app(directory).run_test(size=SIZE) as pilot:
        screen = chat(pilot)
        await wait_until(pilot, lambda: screen.run_state.error, what="the error")
        assert "invalid id" in screen.run_state.error
        await wait_until(pilot, lambda: any(b.startswith("Cannot open the session") for b in banners(screen)))
        screen.query_one(PromptInput).set_text("hello")
        await pilot.press("enter")  # refused with a notification, no crash
        await pilot.pause()
        assert not screen.is_open and not screen.busy


async def test_settings_save_keeps_flags_and_writes_only_what_changed(tmp_path, monkeypatch):
    from ccm_tui import config
    from ccm_tui.config import load_settings, save_config_file
    from ccm_tui.ui.app import CcmApp
    from ccm_tui.ui.screens.settings import SettingsScreen

    save_config_file({"model": "openai/file-model"})
    monkeypatch.setenv("CCM_API_BASE", "http://127.0.0.1:9/v1")
    app = CcmApp(load_settings(model="openai/flag-model"), tmp_path / "s", watch=False, warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f4")
        settings = await wait_until(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen) and pilot.app.screen)
        assert settings.query_one("#field-model").value == "openai/file-model"  # the file, not the flag
        assert settings.query_one("#field-api_base").value == ""  # the environment is not the file
        notes = [str(n.render()) for n in settings.query(".field-note")]
        assert any("command line" in n for n in notes) and any("environment" in n for n in notes)
        settings.query_one("#field-decay_threshold").value = "5"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: pilot.app.screen is screen)
        written = config.config_file().read_text()
        assert "decay_threshold = 5" in written and 'model = "openai/file-model"' in written
        assert "api_base" not in written
        await wait_until(pilot, lambda: screen.settings.decay_threshold == 5 and screen.is_open)
        assert screen.settings.model == "openai/flag-model"  # --model still wins for this run
        assert screen.settings.api_base == "http://127.0.0.1:9/v1"


async def test_a_locked_session_is_retried_and_the_queued_message_sent(tmp_path, monkeypatch):
    from ccm_tui.core.session.session import SessionLock
    from ccm_tui.demo import script_messages
    from ccm_tui.ui.controller_link import SessionLink

    monkeypatch.setattr(SessionLink, "lock_wait", 0.1)
    monkeypatch.setattr(SessionLink, "retry_delays", (0.2, 0.4))
    directory = await build(tmp_path / "s", 0)
    other = SessionLock(directory)
    assert other.try_acquire()
    try:
        async with demo_app(directory).run_test(size=SIZE) as pilot:
            screen = chat(pilot)
            await wait_until(pilot, lambda: screen.run_state.retry_in is not None, what="a retry to be scheduled")
            assert screen.run_state.error is None and not screen.is_open
            screen.query_one(PromptInput).set_text(script_messages()[0])
            await pilot.press("enter")  # queued, not refused
            await wait_until(pilot, lambda: screen.run_state.attempt >= 2, what="another attempt")
            queued = screen.query(".message.-user")  # shown at once, marked as waiting to be sent
            assert not screen.is_open and len(queued) == 1 and queued[0].has_class("-queued")
            other.release()
            await wait_until(pilot, lambda: not screen.query(".message.-queued"), what="the queued message to be sent")
            await idle(pilot)
            assert screen.query_one(ChatLog).messages("assistant")[-1].text
    finally:
        other.release()


async def test_escape_before_the_turn_begins_gives_the_message_back(tmp_path):
    from ccm_tui.core.session.session import SessionLock
    from ccm_tui.demo import script_messages

    first = script_messages()[0]
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        other = SessionLock(tmp_path / "s")
        assert other.try_acquire()  # the turn waits for the writer lock: it has not begun
        try:
            await wait_until(pilot, lambda: screen.query_one(PromptInput).text == first)
            await pilot.press("enter")
            await wait_until(pilot, lambda: screen.turns.current is not None and screen.run_state.work == "turn")
            await pilot.press("escape")
            await idle(pilot)
        finally:
            other.release()
        assert screen.query_one(PromptInput).text == first
        assert not screen.query_one(ChatLog).messages("assistant")
        assert not screen.query_one(ChatLog).messages("user")  # back in the input, it left the chat
        assert screen.driver.next == 0  # the demo offers the same message again


async def test_escape_on_a_queued_message_gives_it_back(tmp_path, monkeypatch):
    """Sent while the session is still held by another process: the message waits, queued; Escape
    withdraws it (nothing was logged) and puts it back in the input, ready to send again."""
    from ccm_tui.core.session.session import SessionLock
    from ccm_tui.ui.controller_link import SessionLink

    monkeypatch.setattr(SessionLink, "lock_wait", 0.1)
    monkeypatch.setattr(SessionLink, "retry_delays", (30.0,))
    directory = await build(tmp_path / "s", 0)
    other = SessionLock(directory)
    assert other.try_acquire()
    try:
        async with demo_app(directory).run_test(size=SIZE) as pilot:
            screen = chat(pilot)
            await wait_until(pilot, lambda: screen.run_state.retry_in is not None, what="the locked open")
            screen.query_one(PromptInput).set_text("hello there")
            await pilot.press("enter")
            await wait_until(pilot, lambda: screen.run_state.queued == ("hello there",), what="the queue")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen.turns.pending, what="the withdrawal")
            assert screen.query_one(PromptInput).text == "hello there"
            assert not [m for m in screen.query_one(ChatLog).messages("user") if m.text == "hello there"]
            assert not screen.run_state.queued
            other.release()
            screen.link.retry_now()
            screen = await ready(pilot)
            await pilot.press("enter")  # and it can be sent again
            await wait_until(pilot, lambda: screen.query_one(ChatLog).messages("assistant"))
            await idle(pilot)
    finally:
        other.release()
    # the withdrawn message never reached the session: only the second send did
    assert (directory / "events.jsonl").read_text().count('"user":"hello there"') == 1


async def test_escape_on_the_welcome_screen_goes_back_to_the_chat(tmp_path):
    from ccm_tui.config import Settings
    from ccm_tui.ui.app import CcmApp
    from ccm_tui.ui.screens.welcome import WelcomeScreen

    app = CcmApp(Settings(), tmp_path / "s", watch=False, warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, WelcomeScreen))
        await pilot.press("escape")
        screen = await ready(pilot)
        assert pilot.app.is_running and pilot.app.screen is screen
        screen.query_one(PromptInput).set_text("hello")
        await pilot.press("enter")  # no model: the welcome screen again
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, WelcomeScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: pilot.app.screen is screen)
        assert pilot.app.is_running


async def test_the_token_meter_stays_visible_with_many_efforts(tmp_path):
    from ccm_tui.ui.widgets.sidebar import Sidebar
    from ccm_tui.ui.widgets.token_meter import TokenMeter

    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        for n in range(9):  # one at a time: an action while one runs is refused with a warning
            await wait_until(pilot, lambda: not screen.link.state.busy)
            screen.efforts.open(f"topic {n}")
            await wait_until(pilot, lambda n=n: len(screen.query(EffortItem)) >= n + 1)
        screen.action_focus_efforts()  # the details of the selected effort show too
        await pilot.pause()
        sidebar, meter = screen.query_one(Sidebar).region, screen.query_one(TokenMeter).region
        assert meter.height > 5 and meter.bottom <= sidebar.bottom


def test_effort_details_keep_their_keys_above_a_long_summary():
    from ccm_tui.core.views.status import EffortState, EffortView
    from ccm_tui.ui.widgets.effort_detail import describe

    effort = EffortView(id="long", name="long", state=EffortState.CONCLUDED, raw_tokens=900, summary="word " * 200)
    lines = describe(effort, 3, clip=True).plain.splitlines()
    assert len(lines) <= 12 and lines[-1].endswith("…")
    assert "expand" in lines[2]  # the key line is right under the state line


async def test_a_model_change_runs_the_warm_up_again(tmp_path, monkeypatch):
    from dataclasses import replace

    from ccm_tui.config import Settings
    from ccm_tui.core.service.controller import SessionController
    from ccm_tui.ui.app import CcmApp

    checked: list[str] = []

    async def check(self):
        checked.append(self.settings.model)

    monkeypatch.setattr(SessionController, "check_model", check)
    settings = Settings().with_overrides("test", model="openai/one", api_base="http://127.0.0.1:9/v1")
    async with CcmApp(settings, tmp_path / "s", watch=False, warm_up=True).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert checked == ["openai/one"]
        screen.apply_settings(replace(screen.settings, model="openai/two"))
        await wait_until(pilot, lambda: checked == ["openai/one", "openai/two"], what="a second warm-up")
        screen.apply_settings(replace(screen.settings, decay_threshold=7))  # same model: not again
        await wait_until(pilot, lambda: screen.is_open and screen.settings.decay_threshold == 7)
        await pilot.pause()
        assert checked == ["openai/one", "openai/two"]


async def test_garbage_collection_turned_off_for_the_start_is_back_once_the_first_frame_is_painted(tmp_path):
    import gc

    gc.disable()  # as `ccm-tui` does before importing the UI
    try:
        async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
            await ready(pilot)
            await wait_until(pilot, gc.isenabled, what="the collector back on")
    finally:
        gc.enable()


async def test_an_app_that_ends_without_quit_still_closes_its_session(tmp_path, llm_server):
    """Quit closes the session itself; any other end (an exit from elsewhere, a test's) closes it on unmount:
    the session's hold, files and thread are let go, so a process that runs app after app keeps none."""
    from ccm_tui.core.session.lock import open_elsewhere

    llm_server.push(text("Noted."))
    app = server_app(tmp_path / "s", llm_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        link = chat(pilot).link
        assert open_elsewhere(tmp_path / "s")
        app.exit()
    assert link.state.phase is Phase.CLOSED
    assert not open_elsewhere(tmp_path / "s")


async def test_a_message_sent_while_a_reply_runs_is_queued_then_sent(tmp_path, llm_server):
    from tests.helpers.openai_server import hang
    from tests.helpers.tui import idle

    llm_server.push(hang(3, text("First answer.")))
    llm_server.push(text("Second answer."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        prompt.set_text("first question")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.busy and llm_server.chat_requests(), what="the first reply to run")
        prompt.set_text("second question")
        await pilot.press("enter")  # queued, not refused
        await wait_until(pilot, lambda: screen.query(".message.-user.-queued"), what="the queued message")
        assert prompt.text == ""
        await idle(pilot, timeout=30)
        shown = [m.text for m in screen.chat_log.messages()]
        assert shown == ["first question", "First answer.", "second question", "Second answer."]
        assert not screen.query(".message.-queued")
