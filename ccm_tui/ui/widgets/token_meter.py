"""The token meter: working context vs budget, per layer, savings vs naive, per-turn chart, cost."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from ...core.api import ContextFigures
from .budget_bar import LAYER_STYLES, BudgetBar
from .sparkline import DualSparkline

LAYER_LABELS = {
    "system": "system",
    "tools": "tools",
    "summaries": "summaries",
    "recall": "recalled",
    "ambient": "ambient",
    "expanded": "expanded",
    "open": "open efforts",
    "turn": "this turn",
}


SHORT_LABELS = {
    **LAYER_LABELS,
    "summaries": "summ.",
    "recall": "rec.",
    "ambient": "amb.",
    "expanded": "exp.",
    "open": "open",
    "turn": "turn",
}


def layers_content(layers: dict[str, int], width: int) -> Content:
    """The per-layer breakdown, zero layers dimmed, in two columns when they fit in ``width``
    (with short labels if need be), else one: a narrow sidebar never wraps an entry in the middle."""
    names = [n for n in LAYER_LABELS if n not in ("turn", "recall") or layers.get(n)]
    for names_of, per_line in ((LAYER_LABELS, 2), (SHORT_LABELS, 2), (LAYER_LABELS, 1)):
        labels = {name: f"{names_of[name]} {layers.get(name, 0):,}" for name in names}
        widest = 2 + max(len(label) for label in labels.values()) + 1
        if per_line * widest <= width or per_line == 1:
            break
    column = max(widest, width // per_line)
    lines = []
    for i in range(0, len(names), per_line):
        cells = [
            Content.assemble(
                ("■ ", LAYER_STYLES[name]),
                (labels[name].ljust(column - 2), "" if layers.get(name, 0) else "$foreground-muted"),
            )
            for name in names[i : i + per_line]
        ]
        lines.append(Content("").join(cells).rstrip())
    return Content("\n").join(lines)


def total_content(total: int, budget: int, width: int) -> Content:
    """``1,781 / 6,000 tokens  30% of budget``, shortened to ``1,781 / 6,000 · 30%`` when narrow."""
    share = total / budget if budget else 0.0
    style = "$error" if share > 0.9 else "$warning" if share > 0.7 else "$success"
    long = Content.assemble(
        (f"{total:,}", "bold"),
        (f" / {budget:,} tokens", "$foreground-muted"),
        ("  ", ""),
        (f"{share:.0%} of budget", style),
    )
    if long.cell_length <= width:
        return long
    return Content.assemble((f"{total:,}", "bold"), (f" / {budget:,} · ", "$foreground-muted"), (f"{share:.0%}", style))


class TokenMeter(Vertical):
    """Fed with :class:`~ccm_tui.core.turn.events.ContextFigures` and the per-turn history."""

    def compose(self) -> ComposeResult:
        yield Static("", classes="meter-total")
        yield BudgetBar(id="budget-bar")
        yield Static("", classes="meter-layers")
        yield Static("", classes="meter-savings")
        yield DualSparkline(id="sparkline")
        yield Static(
            Content.assemble(
                ("━ ", "$accent"),
                ("sent to the model   ", "$foreground-muted"),
                ("━ ", "$secondary"),
                ("naive (everything)", "$foreground-muted"),
            ),
            classes="meter-legend",
        )
        yield Static("", classes="meter-cost")

    _shown: ContextFigures | None = None
    _session_usage: dict[str, Any] = {}

    def on_resize(self) -> None:
        """The sidebar narrowed or widened: lay the figures out again for the new width."""
        if self._shown is not None:
            self.show(self._shown)

    def show(
        self,
        figures: ContextFigures,
        history: list[dict[str, int]] | None = None,
        session_usage: dict[str, Any] | None = None,
    ) -> None:
        self._shown = figures
        if session_usage is not None:
            self._session_usage = session_usage
        naive = figures.naive
        width = self.query_one(".meter-layers", Static).size.width or 40
        self.query_one(".meter-total", Static).update(total_content(figures.total, figures.budget, width))
        self.query_one(BudgetBar).set_figures(figures.layers, figures.budget)
        self.query_one(".meter-layers", Static).update(layers_content(figures.layers, width))
        self.query_one(".meter-savings", Static).update(
            Content.assemble(
                ("naive ", "$foreground-muted"),
                (f"{naive:,}", ""),
                (" tokens · saved ", "$foreground-muted"),
                (f"{figures.savings:.0%}", "bold $success"),
            )
        )
        if history is not None:
            self.query_one(DualSparkline).set_points([(h.get("ccm", 0), h.get("naive", 0)) for h in history])
        cost_line = self.query_one(".meter-cost", Static)
        spent = usage_content(self._session_usage, figures.cost)
        cost_line.update(spent or "")
        cost_line.display = spent is not None


def short(n: float) -> str:
    """12,345 → 12.3K; small numbers as they are."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1_000:.1f}K"
    return f"{n:,.0f}"


def usage_content(usage: dict[str, Any], run_cost: float | None) -> Content | None:
    """The session's tokens (across launches) and cost, when the provider reported any."""
    sent, received = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    if not sent and not received:
        return None
    parts: list[tuple[str, str]] = [
        ("session ", "$foreground-muted"),
        (f"{short(sent)} sent · {short(received)} received", ""),
    ]
    if usage.get("cached_tokens"):  # the provider's prompt cache (the cost below has its discount)
        parts.insert(2, (f" ({short(usage['cached_tokens'])} cached)", "$foreground-muted"))
    cost = usage.get("cost")
    if cost:
        parts += [(" · ", "$foreground-muted"), (f"${cost:,.4f}", "")]
        if run_cost and abs(run_cost - cost) > 1e-9:
            parts += [(" (this run ", "$foreground-muted"), (f"${run_cost:,.4f}", ""), (")", "$foreground-muted")]
    return Content.assemble(*parts)
