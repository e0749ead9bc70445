"""The token meter: working context vs budget, per layer, savings vs naive, per-turn chart, cost."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from ...core.turn_events import ContextFigures
from .budget_bar import LAYER_STYLES, BudgetBar
from .sparkline import DualSparkline

LAYER_LABELS = {
    "system": "system",
    "tools": "tools",
    "summaries": "summaries",
    "ambient": "ambient",
    "expanded": "expanded",
    "open": "open efforts",
    "turn": "this turn",
}


def layers_content(layers: dict[str, int], width: int) -> Content:
    """The per-layer breakdown in two columns, zero layers dimmed."""
    names = [n for n in LAYER_LABELS if n != "turn" or layers.get("turn")]
    column = max(18, width // 2)
    lines = []
    for i in range(0, len(names), 2):
        cells = []
        for name in names[i : i + 2]:
            value = layers.get(name, 0)
            label = f"{LAYER_LABELS[name]} {value:,}"
            cells.append(
                Content.assemble(("■ ", LAYER_STYLES[name]), (label.ljust(column - 2), "" if value else "$text-muted"))
            )
        lines.append(Content("").join(cells).rstrip())
    return Content("\n").join(lines)


class TokenMeter(Vertical):
    """Fed with :class:`~ccm_tui.core.turn_events.ContextFigures` and the per-turn history."""

    def compose(self) -> ComposeResult:
        yield Static("", classes="meter-total")
        yield BudgetBar(id="budget-bar")
        yield Static("", classes="meter-layers")
        yield Static("", classes="meter-savings")
        yield DualSparkline(id="sparkline")
        yield Static(
            Content.assemble(
                ("━ ", "$accent"),
                ("sent to the model   ", "$text-muted"),
                ("━ ", "$secondary"),
                ("naive (everything)", "$text-muted"),
            ),
            classes="meter-legend",
        )
        yield Static("", classes="meter-cost")

    def show(self, figures: ContextFigures, history: list[dict[str, int]] | None = None) -> None:
        total, budget, naive = figures.total, figures.budget, figures.naive
        share = total / budget if budget else 0.0
        style = "$error" if share > 0.9 else "$warning" if share > 0.7 else "$success"
        self.query_one(".meter-total", Static).update(
            Content.assemble(
                (f"{total:,}", "bold"),
                (f" / {budget:,} tokens", "$text-muted"),
                ("  ", ""),
                (f"{share:.0%} of budget", style),
            )
        )
        self.query_one(BudgetBar).set_figures(figures.layers, budget)
        width = self.query_one(".meter-layers", Static).size.width or 40
        self.query_one(".meter-layers", Static).update(layers_content(figures.layers, width))
        self.query_one(".meter-savings", Static).update(
            Content.assemble(
                ("naive ", "$text-muted"),
                (f"{naive:,}", ""),
                (" tokens · saved ", "$text-muted"),
                (f"{figures.savings:.0%}", "bold $success"),
            )
        )
        if history is not None:
            self.query_one(DualSparkline).set_points([(h.get("ccm", 0), h.get("naive", 0)) for h in history])
        cost = figures.cost
        cost_line = self.query_one(".meter-cost", Static)
        cost_line.update(Content.assemble(("cost this run ", "$text-muted"), (f"${cost:,.4f}", "")) if cost else "")
        cost_line.display = bool(cost)
