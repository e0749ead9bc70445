"""Helpers for the UI tests: build apps, wait for conditions (never fixed sleeps), drive the demo."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widget import Widget

from ccm_tui.config import Settings
from ccm_tui.demo import DEMO_MODEL, script_messages
from ccm_tui.ui.app import CcmApp, stylesheets
from ccm_tui.ui.screens.chat import ChatScreen
from ccm_tui.ui.widgets.prompt_input import PromptInput

SIZE = (150, 45)


def demo_app(session_dir: Path, **settings: Any) -> CcmApp:
    """The offline demo (scripted model, no delays), optionally with other thresholds."""
    base = Settings(model=DEMO_MODEL, token_budget=6_000)
    return CcmApp(
        base.with_overrides("test", **settings) if settings else base,
        session_dir,
        demo=True,
        demo_delay=0,
        watch=False,
        warm_up=False,
        autoplay=False,
    )


def server_app(session_dir: Path, base_url: str, *, watch: bool = False, **settings: Any) -> CcmApp:
    """A real session against the fake OpenAI-compatible server."""
    values = {"model": "openai/fake-model", "api_base": base_url, "token_budget": 16_000, **settings}
    return CcmApp(Settings().with_overrides("test", **values), session_dir, watch=watch, warm_up=False)


async def wait_until(pilot: Pilot, condition: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)


def chat(pilot: Pilot) -> ChatScreen:
    screen = pilot.app.chat_screen
    assert screen is not None
    return screen


async def ready(pilot: Pilot) -> ChatScreen:
    screen = chat(pilot)
    await wait_until(pilot, lambda: screen.is_open and screen.snapshot is not None, what="the session to open")
    await pilot.pause()
    return screen


async def idle(pilot: Pilot, timeout: float = 30.0) -> None:
    screen = chat(pilot)
    # sent messages are on screen at once: wait until each has its outcome and the session is idle
    await wait_until(pilot, lambda: not screen.busy and not screen.turns.pending, timeout, "the turn to end")
    await pilot.pause()


async def send(pilot: Pilot, text: str) -> None:
    """Type into the prompt (as a paste) and press Enter; wait until the turn has ended."""
    screen = await ready(pilot)
    prompt = screen.query_one(PromptInput)
    prompt.focus()
    prompt.set_text(text)
    before = len(screen.query(".message.-user"))
    await pilot.press("enter")
    await wait_until(pilot, lambda: len(screen.query(".message.-user")) > before, what="the message to be sent")
    await idle(pilot)


async def play_demo(pilot: Pilot, turns: int) -> ChatScreen:
    """Send the first ``turns`` scripted demo messages."""
    screen = await ready(pilot)
    for text in script_messages()[:turns]:
        await send(pilot, text)
    return screen


def freeze(pilot: Pilot) -> None:
    """No blinking cursors in snapshots (the prompt's cursor is hidden: its blink phase is timing)."""
    for widget in pilot.app.screen.query("Input, TextArea"):
        widget.cursor_blink = False
        if hasattr(widget, "show_cursor"):
            widget.show_cursor = False


async def settle(pilot: Pilot) -> None:
    freeze(pilot)
    await pilot.pause()
    await asyncio.sleep(0.05)
    await pilot.pause()


async def build(directory: Path, turns: int, **settings: Any) -> Path:
    """Run the first ``turns`` demo turns straight through the engine (fast, no UI)."""
    from ccm_tui.core.engine.opening import open_engine
    from ccm_tui.demo import DemoModel

    base = Settings(model=DEMO_MODEL, token_budget=6_000)
    engine = open_engine(
        directory, base.with_overrides("test", **settings) if settings else base, llm=DemoModel(delay=0), budget=6_000
    )
    try:
        for text in script_messages()[:turns]:
            await engine.run_turn(text)
    finally:
        engine.close()
    return directory


def build_session(directory: Path, turns: int, **settings: Any) -> Path:
    """:func:`build` for synchronous tests (snapshots)."""
    return asyncio.run(build(directory, turns, **settings))


async def scroll_to_start(pilot: Pilot, log: Any) -> None:
    """Scroll the chat back until the session's first message is drawn (the pane draws a few screens
    at a time)."""
    for _ in range(500):
        if not log.held and not log.more_before:
            return
        log.scroll_home(animate=False, immediate=True)
        log.want_older()
        await pilot.pause()
        await wait_until(pilot, lambda: not log.loading_older, what="the older page")
    raise AssertionError("the chat did not reach its first message")


class WidgetHost(App[None]):
    """Mounts the one widget under test, styled by the app's real .tcss files."""

    def __init__(self, widget: Widget) -> None:
        super().__init__(css_path=stylesheets())
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


def state_of(screen, effort_id: str) -> str:
    """An effort's state as the screen's last snapshot has it."""
    return screen.snapshot.effort(effort_id).state.value
