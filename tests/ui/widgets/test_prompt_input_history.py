"""The input's memory: Up and Down walk the session's sent messages across launches, and the draft survives
a relaunch."""

from __future__ import annotations

from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, ready, send, server_app


async def test_up_and_down_in_an_empty_input_walk_the_sessions_prompts_across_launches(tmp_path, llm_server):
    from ccm_tui.core.session.prompt_history import HISTORY_FILE

    llm_server.push(text("One."))
    llm_server.push(text("Two."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "first question")
        await send(pilot, "second question\nwith two lines")
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        assert prompt.text == ""
        await pilot.press("up")
        assert prompt.text == "second question\nwith two lines"
        await pilot.press("up")
        assert prompt.text == "first question"
        await pilot.press("up")  # nothing older: stays
        assert prompt.text == "first question"
        await pilot.press("down", "down")
        assert prompt.text == ""
        await pilot.press("up")
        prompt.insert(" edited")  # an edited entry: the arrows move the cursor again
        await pilot.press("up")
        assert prompt.text == "second question\nwith two lines edited"
    assert (tmp_path / "s" / HISTORY_FILE).is_file()

    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        prompt.focus()
        await pilot.press("up")
        assert prompt.text == "second question\nwith two lines"


async def test_a_draft_survives_quitting_and_relaunching(tmp_path, llm_server):
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.query_one(PromptInput).set_text("half a thought, to finish tomorrow")
        await pilot.press("ctrl+q")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.query_one(PromptInput).text == "half a thought, to finish tomorrow"
        screen.query_one(PromptInput).clear()
        await pilot.press("ctrl+q")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.query_one(PromptInput).text == ""  # a cleared input leaves no draft behind
