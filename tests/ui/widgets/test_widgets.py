"""Widget-level tests: a small host app mounts one widget with the real stylesheet and feeds it data.

Beside the Pilot flows (whole app, real core), these pin down what each widget draws from the typed
core values it is given: turn events, effort views, context figures.
"""

from __future__ import annotations

import html
import time

from ccm_tui.core.turn import events as te
from ccm_tui.core.views.status import EffortState, EffortView
from ccm_tui.ui.widgets.banner import PauseBanner
from ccm_tui.ui.widgets.effort_list import EffortItem, EffortList
from ccm_tui.ui.widgets.token_meter import TokenMeter
from ccm_tui.ui.widgets.turn_view import TurnView
from tests.helpers.tui import WidgetHost


def view(effort_id: str, state: EffortState, **values) -> EffortView:
    return EffortView(id=effort_id, name=effort_id, state=state, **values)


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
async def test_token_meter_shows_total_budget_and_savings():
    meter = TokenMeter()
    async with WidgetHost(meter).run_test() as pilot:
        meter.show(
            te.ContextFigures(turn=3, layers={"system": 800, "summaries": 200}, total=1_000, naive=4_000, budget=16_000)
        )
        await pilot.pause()
        text = " ".join(str(s.render()) for s in meter.query("Static"))
        assert "1,000" in text and "16,000" in text
        assert "saved" in text and "75%" in text


# --------------------------------------------------------------------------- EffortList
async def test_effort_list_groups_open_expanded_and_concluded_with_decay_counters():
    efforts = (
        view("trip", EffortState.ACTIVE, raw_tokens=1_200, messages=4),
        view(
            "auth-bug", EffortState.EXPANDED, raw_tokens=900, summary="fixed the token refresh", turns_since_reference=1
        ),
        view("old", EffortState.EVICTED, summary="an old topic", in_memory=False),
    )
    listing = EffortList()
    async with WidgetHost(listing).run_test() as pilot:
        await listing.show(efforts, 3)
        await pilot.pause()
        items = {item.effort_id: item for item in listing.query(EffortItem)}
        assert set(items) == {"trip", "auth-bug", "old"}
        assert items["trip"].has_class("-active")
        assert "collapses in 2 turns" in str(items["auth-bug"].render())
        assert items["old"].has_class("-evicted")


async def test_token_meter_in_a_narrow_sidebar_never_wraps_an_entry():
    """At the 34-column sidebar of a 100-column terminal, each layer stays one cell on one line."""
    meter = TokenMeter()
    meter.styles.width = 32
    layers = {"system": 846, "tools": 807, "summaries": 0, "ambient": 109, "expanded": 0, "open": 19, "turn": 0}
    figures = te.ContextFigures(turn=1, layers=layers, total=1_781, naive=1_900, budget=6_000)
    async with WidgetHost(meter).run_test(size=(60, 30)) as pilot:
        await pilot.pause()
        meter.show(figures)
        await pilot.pause()
        lines = str(meter.query_one(".meter-layers").render()).splitlines()
        assert len(lines) == 3, lines
        assert all(line.count("■") == 2 for line in lines), lines
        assert "amb. 109" in lines[1] and "open 19" in lines[2]
        total = str(meter.query_one(".meter-total").render())
        assert total == "1,781 / 6,000 · 30%"


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
