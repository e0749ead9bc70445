"""Copying from the chat: Alt+C (the last reply) and Alt+K (its last code block) copy whatever holds the
focus, and never type their letter."""

from __future__ import annotations

from textual import events

from ccm_tui.ui.widgets.effort_list import EffortItem
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, build, demo_app, ready, send, server_app, wait_until


async def press_as_terminal(pilot, key: str, character: str) -> None:
    """A key as the terminal's parser gives it: ESC c is ``alt+c`` *with* the character ``c``."""
    pilot.app.post_message(events.Key(key, character))
    await pilot.pause()
    await pilot.pause()


async def test_alt_c_and_alt_k_copy_with_the_input_or_the_effort_list_focused(tmp_path):
    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        prompt.focus()
        copied: list[str] = []
        pilot.app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await press_as_terminal(pilot, "alt+c", "c")
        await press_as_terminal(pilot, "alt+k", "k")
        assert prompt.text == ""
        assert copied, "Alt+C copied nothing"

        await pilot.press("ctrl+g")
        assert isinstance(screen.focused, EffortItem)
        before = len(copied)
        await press_as_terminal(pilot, "alt+c", "c")
        await wait_until(pilot, lambda: len(copied) > before, what="Alt+C on the effort list to copy")
        assert isinstance(screen.focused, EffortItem)
        assert prompt.text == ""


async def test_copy_code_takes_the_models_last_code_block_not_the_users_paste(tmp_path, llm_server):
    llm_server.push(text("Try this:\n\n```python\nprint('from the model')\n```\n"))
    llm_server.push(text("That traceback means the file is missing."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "how do I print?")
        await send(pilot, "it fails:\n\n```\nTraceback: FileNotFoundError\n```")
        copied: list[str] = []
        pilot.app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("alt+k")
        assert copied == ["print('from the model')"]
