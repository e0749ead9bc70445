"""The budget bar: the working context per layer, stacked, against the token budget."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

LAYER_STYLES = {
    "system": "$primary",
    "tools": "$primary-lighten-2",
    "summaries": "$success",
    "recall": "$warning",
    "ambient": "$secondary",
    "expanded": "$error-lighten-1",
    "open": "$accent",
    "turn": "$foreground",
}


class BudgetBar(Widget):
    """One line: a coloured segment per layer, the rest of the budget as a dim track."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.layer_tokens: dict[str, int] = {}
        self.budget = 1

    def set_figures(self, layers: dict[str, int], budget: int) -> None:
        self.layer_tokens = dict(layers)
        self.budget = max(1, budget)
        self.refresh()

    def render(self) -> Content:
        width = self.size.width
        if width <= 0:
            return Content("")
        total = sum(self.layer_tokens.values())
        scale = width / max(self.budget, total, 1)
        parts = []
        used = 0
        exact = 0.0
        for layer, style in LAYER_STYLES.items():
            exact += self.layer_tokens.get(layer, 0) * scale
            cells = round(exact) - used
            if cells > 0:
                parts.append(("█" * cells, style))
                used += cells
        if total > 0 and used == 0:
            parts.append(("▌", LAYER_STYLES["system"]))
            used = 1
        parts.append(("░" * max(0, width - used), "$panel-lighten-2"))
        return Content.assemble(*parts)
