"""Slash commands in the TUI input: run without the model, completed with Tab, explained when wrong."""

from __future__ import annotations

from ccm_tui.ui.widgets.command_result import CommandResult
from ccm_tui.ui.widgets.effort_list import EffortItem
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.tui import SIZE, demo_app, ready, server_app, wait_until


async def test_open_search_and_status_from_the_input(tmp_path, llm_server):
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.set_text("/open Japan trip")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(i.effort_id == "japan-trip" for i in screen.query(EffortItem)))
        assert prompt.text == "" and not llm_server.chat_requests()  # no model was asked
        prompt.set_text("/status")
        await pilot.press("enter")
        result = await wait_until(
            pilot, lambda: screen.query(CommandResult).last() if screen.query(CommandResult) else None
        )
        await wait_until(pilot, lambda: "japan-trip" in str(result.answer.render()), what="the status")
        prompt.set_text("/search nothing-like-this")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(screen.query(CommandResult)) == 3)
        last = screen.query(CommandResult).last()
        await wait_until(pilot, lambda: "no matching" in str(last.answer.render()), what="the search answer")


async def test_tab_completes_commands_and_effort_ids(tmp_path):
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.set_text("/op")
        await pilot.press("tab")
        assert prompt.text == "/open "
        await pilot.press(*"trip", "enter")
        await wait_until(pilot, lambda: any(i.effort_id == "trip" for i in screen.query(EffortItem)))
        prompt.set_text("/done t")
        await pilot.press("tab")
        assert prompt.text == "/done trip"
        assert prompt.has_focus  # Tab completed; it did not move the focus


async def test_an_unknown_command_is_explained_and_the_text_stays(tmp_path):
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.set_text("/frobnicate now")
        await wait_until(pilot, lambda: "unknown command" in str(screen.query_one("#prompt-hint").render()))
        await pilot.press("enter")
        await pilot.pause()
        assert prompt.text == "/frobnicate now" and not screen.query(CommandResult)
        assert any("unknown command /frobnicate" in str(n.message) for n in pilot.app._notifications)


async def test_a_proposed_effort_is_opened_with_ctrl_y(tmp_path, llm_server):
    from tests.helpers.openai_server import text
    from tests.helpers.tui import send

    llm_server.refuse_tools = True  # the model cannot open efforts: the app proposes them
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        for message in (
            "Let's plan a trip to Japan in April",
            "Which cities in Japan should we visit, Kyoto or Osaka?",
            "How many days in Kyoto for the temples of Japan?",
        ):
            llm_server.push(text("Happy to help with that."))
            await send(pilot, message)
        await wait_until(pilot, lambda: screen.suggestion is not None, what="a proposal")
        assert "Ctrl+Y" in str(screen.query_one("#prompt-hint").render())
        name = screen.suggestion.name
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: any(i.effort_id == name for i in screen.query(EffortItem)))
        assert screen.suggestion is None


async def test_an_offer_is_dropped_once_the_session_moves_on_without_it(tmp_path, llm_server):
    """A proposal made after a reply no longer fits once that reply is withdrawn or an effort changes:
    it leaves the line under the input, and Ctrl+Y cannot carry out a stale one."""
    from tests.helpers.openai_server import fault, text
    from tests.helpers.tui import send

    llm_server.refuse_tools = True
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        hint = screen.query_one("#prompt-hint")
        messages = (
            "Let's plan a trip to Japan in April",
            "Which cities in Japan should we visit, Kyoto or Osaka?",
            "How many days in Kyoto for the temples of Japan?",
        )
        for message in messages:
            llm_server.push(text("Happy to help with that."))
            await send(pilot, message)
        await wait_until(pilot, lambda: screen.suggestion is not None, what="a proposal")
        await wait_until(pilot, lambda: not screen.run_state.busy, what="the session idle")
        llm_server.push(fault(400))  # the regenerated reply fails: no turn ends, so no new proposal
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.suggestion is None, what="the offer dropped by the regenerate")
        await wait_until(pilot, lambda: not screen.run_state.busy, what="the regenerate to end")
        assert screen.suggestion is None and "Ctrl+Y" not in str(hint.render())

        llm_server.push(text("Kyoto first, then Osaka."))
        await send(pilot, "So which city in Japan first, Kyoto or Osaka?")
        suggestion = await wait_until(pilot, lambda: screen.suggestion, what="a proposal again")
        await wait_until(pilot, lambda: not screen.run_state.busy, what="the session idle")
        prompt = screen.query_one(PromptInput)
        prompt.set_text("/open packing list")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.suggestion is None, what="the offer dropped by /open")
        await wait_until(pilot, lambda: any(i.effort_id == "packing-list" for i in screen.query(EffortItem)))
        await pilot.press("ctrl+y")  # nothing is offered any more: no effort for the stale proposal
        await pilot.pause()
        assert suggestion.name not in {i.effort_id for i in screen.query(EffortItem)}


async def test_an_offer_is_dropped_when_another_process_writes_to_the_session(tmp_path):
    """`ccm-tui send` or the memory server ran a turn meanwhile: the offer described the talk before it."""
    from ccm_tui.core.efforts.proposals import Proposal
    from ccm_tui.ui import messages as msg

    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.offers.propose(Proposal("open", "japan-trip"))
        assert "Ctrl+Y" in str(screen.query_one("#prompt-hint").render())
        screen.post_message(msg.ChangedElsewhere(()))
        await wait_until(pilot, lambda: screen.suggestion is None, what="the offer dropped")
        assert "Ctrl+Y" not in str(screen.query_one("#prompt-hint").render())


async def test_search_in_the_chat_bolds_the_words_found_and_shows_the_text_as_logged(tmp_path):
    """``/search`` printed raw ``**term**``: its report comes with the spans of the words found (issue 30, 10)."""
    from tests.helpers.tui import build

    async with demo_app(await build(tmp_path / "s", 5)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.set_text("/search nara")
        await pilot.press("enter")
        result = await wait_until(
            pilot, lambda: screen.query(CommandResult).last() if screen.query(CommandResult) else None
        )
        lines = await wait_until(pilot, lambda: list(result.query(".-report")), what="the report")
        contents = [line.render() for line in lines]
        shown = "\n".join(c.plain for c in contents)
        assert "japan-trip" in shown and "\x02" not in shown
        bold = [c.plain[s.start : s.end] for c in contents for s in c.spans if "bold" in str(s.style)]
        assert any(word.lower() == "nara" for word in bold)
