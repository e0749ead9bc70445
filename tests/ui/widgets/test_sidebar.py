"""The sidebar: the active effort kept in view, the details of an effort that changed dropped."""

from __future__ import annotations


def efforts_view(active: str, concluded: int):
    from ccm_tui.core.views.status import EffortState, EffortView

    open_ = [
        EffortView(id=name, name=name, state=EffortState.ACTIVE if name == active else EffortState.BACKGROUND)
        for name in ("alpha", "beta")
    ]
    done = [
        EffortView(id=f"done-{i}", name=f"done-{i}", state=EffortState.CONCLUDED, summary="A summary.")
        for i in range(concluded)
    ]
    return tuple(open_ + done)


def in_view(scroller, widget) -> bool:
    top = scroller.scroll_offset.y
    return (
        top <= widget.virtual_region.y
        and widget.virtual_region.bottom <= top + scroller.scrollable_content_region.height
    )


async def test_the_sidebar_brings_the_active_effort_into_view_and_drops_stale_details():
    from textual.widgets import TextArea

    from ccm_tui.ui.widgets.effort_detail import HINT, EffortDetail
    from ccm_tui.ui.widgets.effort_list import SidebarEffortList
    from ccm_tui.ui.widgets.sidebar import Sidebar
    from tests.helpers.tui import WidgetHost

    class Host(WidgetHost):
        def compose(self):
            yield TextArea(id="elsewhere")
            yield self.widget

    sidebar = Sidebar()
    async with Host(sidebar).run_test(size=(60, 30)) as pilot:
        await sidebar.show_efforts(efforts_view("alpha", 25), 3)
        await pilot.pause()
        efforts = sidebar.query_one(SidebarEffortList)
        efforts.scroll_end(animate=False)
        await pilot.pause()
        await sidebar.show_efforts(efforts_view("beta", 25), 3)  # the model switched efforts
        await pilot.pause()
        await pilot.pause()
        active = efforts.item("beta")
        assert active is not None and active.has_class("-active")
        assert in_view(efforts, active)

        detail = sidebar.query_one(EffortDetail)
        efforts.item("done-3").focus()
        await pilot.pause()
        assert detail.effort_id == "done-3"
        pilot.app.query_one("#elsewhere").focus()  # back to the input
        await pilot.pause()
        await pilot.pause()
        assert detail.effort_id is None and str(detail.render()) == HINT
        await sidebar.show_efforts(efforts_view("beta", 26), 3)  # a redraw does not bring it back
        assert detail.effort_id is None
