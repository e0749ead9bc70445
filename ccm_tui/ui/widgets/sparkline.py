"""A two-series column chart: context actually sent (ccm) over the naive context, per turn."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

EIGHTHS = " ▁▂▃▄▅▆▇█"


class DualSparkline(Widget):
    """Columns for the last turns: the ccm figure drawn over the naive figure, one shared scale."""

    COMPONENT_CLASSES = {"sparkline--ccm", "sparkline--naive", "sparkline--empty"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.points: list[tuple[int, int]] = []

    def set_points(self, points: list[tuple[int, int]]) -> None:
        self.points = [(max(0, int(c)), max(0, int(n))) for c, n in points]
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width, height = self.size.width, self.size.height
        bar, gap = self._geometry(width, len(self.points))
        points = self.points[-max(1, width // (bar + gap)) :] if width > 0 else []
        ccm_style = self.get_component_rich_style("sparkline--ccm")
        naive_style = self.get_component_rich_style("sparkline--naive")
        if not points:
            if y == height // 2:
                text = "the chart fills in as you chat"[:width]
                return Strip([Segment(text.center(width), self.get_component_rich_style("sparkline--empty"))])
            return Strip.blank(width)
        top = max(max(n, c) for c, n in points) or 1
        row_from_bottom = height - 1 - y
        segments = []
        for ccm, naive in points:
            c = self._level(ccm, top, height, row_from_bottom)
            n = self._level(naive, top, height, row_from_bottom)
            if c == 8:
                segments.append(Segment("█" * bar, ccm_style))
            elif c > 0:
                background = naive_style.color if n == 8 else None
                segments.append(Segment(EIGHTHS[c] * bar, ccm_style + Style(bgcolor=background)))
            elif n > 0:
                segments.append(Segment(EIGHTHS[n] * bar, naive_style))
            else:
                segments.append(Segment(" " * bar))
            if gap:
                segments.append(Segment(" " * gap))
        pad = width - len(points) * (bar + gap)
        if pad > 0:
            segments.append(Segment(" " * pad))
        return Strip(segments)

    @staticmethod
    def _geometry(width: int, count: int) -> tuple[int, int]:
        """Bar and gap widths: wider bars while there are few turns."""
        if count and count * 3 <= width:
            return 2, 1
        if count and count * 2 <= width:
            return 1, 1
        return 1, 0

    @staticmethod
    def _level(value: int, top: int, height: int, row: int) -> int:
        eighths = round(value / top * height * 8)
        if value > 0:
            eighths = max(eighths, 1)
        return max(0, min(8, eighths - row * 8))
