"""The effort list, mounted alone with the real stylesheet: open, expanded and concluded efforts grouped, with
their decay counters."""

from __future__ import annotations

from ccm_tui.core.views.status import EffortState, EffortView
from ccm_tui.ui.widgets.effort_list import EffortItem, SidebarEffortList
from tests.helpers.tui import WidgetHost


def view(effort_id: str, state: EffortState, **values) -> EffortView:
    return EffortView(id=effort_id, name=effort_id, state=state, **values)


async def test_effort_list_groups_open_expanded_and_concluded_with_decay_counters():
    efforts = (
        view("trip", EffortState.ACTIVE, raw_tokens=1_200, messages=4),
        view(
            "auth-bug", EffortState.EXPANDED, raw_tokens=900, summary="fixed the token refresh", turns_since_reference=1
        ),
        view("old", EffortState.EVICTED, summary="an old topic", in_memory=False),
    )
    listing = SidebarEffortList()
    async with WidgetHost(listing).run_test() as pilot:
        await listing.show(efforts, 3)
        await pilot.pause()
        items = {item.effort_id: item for item in listing.query(EffortItem)}
        assert set(items) == {"trip", "auth-bug", "old"}
        assert items["trip"].has_class("-active")
        assert "collapses in 2 turns" in str(items["auth-bug"].render())
        assert items["old"].has_class("-evicted")
