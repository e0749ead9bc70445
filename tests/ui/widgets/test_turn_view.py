"""The turn view, mounted alone with the real stylesheet and fed turn events: rounds separated after tool
calls, a cut-off round dropped, a pause shown and resolved, a failed turn marked, control sequences never drawn."""

from __future__ import annotations

import html
import time

from ccm_tui.core.turn import events as te
from ccm_tui.ui.widgets.banner import PauseBanner
from ccm_tui.ui.widgets.turn_view import TurnView
from tests.helpers.tui import WidgetHost


# --------------------------------------------------------------------------- TurnView
async def test_turn_view_streams_and_separates_rounds_after_tool_calls():
    turn = TurnView("plan my trip")
    async with WidgetHost(turn).run_test() as pilot:
        turn.queued()
        assert turn.user.has_class("-queued") and "queued" in turn.user.note
        assert await turn.apply(te.TurnStarted(turn=1, user="plan my trip")) is None
        assert not turn.user.has_class("-queued") and not turn.user.note
        assert await turn.apply(te.TextDelta(turn=1, text="Let me open an effort.")) == "Writing"
        await turn.apply(
            te.ToolCalled(turn=1, name="open_effort", arguments={"name": "trip"}, result={"id": "trip"}, ok=True)
        )
        await turn.apply(te.TextDelta(turn=1, text="  Opened."))
        await pilot.pause()
        assert turn.assistant.text == "Let me open an effort.\n\nOpened."
        assert turn.assistant.has_class("-has-tools")


async def test_turn_view_drops_a_cut_off_round_and_finishes_with_the_logged_reply():
    turn = TurnView("hello")
    async with WidgetHost(turn).run_test() as pilot:
        await turn.apply(te.TextDelta(turn=1, text="first round"))
        await turn.apply(te.ToolCalled(turn=1, name="search_efforts", arguments={}, result={}, ok=True))
        await turn.apply(te.TextDelta(turn=1, text="half of a sec"))
        await turn.apply(te.RoundReset(turn=1))
        assert turn.assistant.text == "first round"
        await turn.finish("the whole reply", "trip")  # the outcome brings the reply as logged
        await pilot.pause()
        assert not turn.assistant.streaming and turn.assistant.text == "the whole reply"


async def test_turn_view_shows_a_pause_and_resolves_it_when_text_resumes():
    turn = TurnView("hello")
    async with WidgetHost(turn).run_test() as pilot:
        label = await turn.apply(te.Paused(turn=1, reason="rate limited", resume_at=time.time() + 30, attempt=1))
        assert label == "Paused by the provider"
        assert len(turn.query(PauseBanner)) == 1 and turn.pause is not None
        assert await turn.apply(te.Resumed(turn=1)) == "Thinking"
        assert turn.pause is None
        await pilot.pause()


async def test_a_failed_turn_without_text_removes_the_empty_reply_and_marks_the_message():
    turn = TurnView("hello")
    async with WidgetHost(turn).run_test() as pilot:
        await turn.fail()
        await pilot.pause()
        assert not turn.assistant.is_attached
        assert turn.user.has_class("-unanswered")


async def test_a_failed_turn_keeps_what_streamed_marked():
    turn = TurnView("hello")
    async with WidgetHost(turn).run_test() as pilot:
        await turn.apply(te.TextDelta(turn=1, text="partial answer"))
        await turn.fail()
        await pilot.pause()
        assert turn.assistant.is_attached and turn.assistant.text == "partial answer"
        assert turn.assistant.note == "(failed)"


# --------------------------------------------------------------------------- TokenMeter


# --------------------------------------------------------------------------- SidebarEffortList


async def test_a_hostile_reply_is_drawn_without_its_control_sequences():
    turn = TurnView("hi")
    hostile = "safe \x1b]52;c;ZXZpbA==\x07\x1b]0;PWNED\x07\x1b[2Jtext\x00 here"
    async with WidgetHost(turn).run_test() as pilot:
        await turn.apply(te.TextDelta(turn=1, text=hostile[:9]))
        await turn.apply(te.TextDelta(turn=1, text=hostile[9:]))
        await pilot.pause()
        assert "\x1b" not in turn.assistant.text and "\x07" not in turn.assistant.text
        await turn.finish(hostile, "ambient")
        await pilot.pause()
        assert turn.assistant.text == "safe text here"
        screen = html.unescape(pilot.app.export_screenshot()).replace("\xa0", " ")
        assert "safe" in screen and "here" in screen
        assert "52;c;" not in screen and "PWNED" not in screen and "[2J" not in screen
