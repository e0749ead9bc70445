"""The token meter, mounted alone with the real stylesheet: the total against the budget, what efforts save,
each layer one cell on one line however narrow the sidebar."""

from __future__ import annotations

from ccm_tui.core.turn import events as te
from ccm_tui.ui.widgets.token_meter import TokenMeter
from tests.helpers.tui import WidgetHost


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
