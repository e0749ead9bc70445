"""The sidebar: efforts (open / expanded / concluded), the selected effort's details, the token meter."""

from __future__ import annotations

from collections.abc import Mapping

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ...core.api import EffortView
from ..messages import EffortSelected
from .effort_detail import EffortDetail
from .effort_list import EffortItem, SidebarEffortList
from .token_meter import TokenMeter


class Sidebar(Vertical):
    """Holds the latest status so the detail panel can follow the selection."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.efforts: dict[str, EffortView] = {}
        self.decay_threshold = 3

    def compose(self) -> ComposeResult:
        yield Static("EFFORTS", classes="sidebar-title")
        yield SidebarEffortList(id="effort-list")
        yield EffortDetail(id="effort-detail")
        yield Static("", classes="sidebar-spacer")
        yield Static("CONTEXT", classes="sidebar-title")
        yield TokenMeter(id="meter")

    async def show_efforts(
        self,
        efforts: tuple[EffortView, ...],
        decay_threshold: int,
        in_context: Mapping[str, int] | None = None,
        unlisted: int = 0,
    ) -> None:
        """``in_context``: tokens each open or expanded effort takes in the working context (as on the
        meter); ``unlisted``: concluded efforts the session holds beyond those given."""
        self.efforts = {e.id: e for e in efforts}
        self.decay_threshold = decay_threshold
        await self.query_one(SidebarEffortList).show(efforts, decay_threshold, in_context, unlisted)
        detail = self.query_one(EffortDetail)
        detail.display = bool(efforts)
        focused = self.app.focused
        selected = focused.effort_id if isinstance(focused, EffortItem) else None
        detail.show(self.efforts.get(selected) if selected else None, decay_threshold)

    def on_effort_selected(self, message: EffortSelected) -> None:
        self.select(message.effort_id)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        """The details follow the focused row only: once the focus leaves the list they give their
        rows back to it (a stale panel kept up to a dozen rows of an effort no longer looked at)."""
        self.call_after_refresh(self._unselect_unless_focused)

    def _unselect_unless_focused(self) -> None:
        if not isinstance(self.app.focused, EffortItem):
            self.select(None)

    def select(self, effort_id: str | None) -> None:
        self.query_one(EffortDetail).show(self.efforts.get(effort_id) if effort_id else None, self.decay_threshold)

    def focus_effort(self, effort_id: str | None = None) -> bool:
        """Focus an effort row (the given one, else the first); False when there is none. The focus moves
        at once (not on the next message), so the keys typed right after Ctrl+G reach the row."""
        items = list(self.query(EffortItem))
        for item in items:
            if effort_id is None or item.effort_id == effort_id:
                self.screen.set_focus(item)
                item.scroll_visible()
                return True
        return False

    @property
    def meter(self) -> TokenMeter:
        return self.query_one(TokenMeter)
