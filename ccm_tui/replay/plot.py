"""Plots of a replay: naive vs ccm tokens per turn, as a hand-written SVG (or a PNG via matplotlib).

The SVG has two panels on linear scales, because a log scale flatters a flat
line and hides how large the gap is:

* top: naive and ccm tokens per turn on one linear axis (the honest picture:
  naive grows with the conversation, ccm stays near the floor), with the budget;
* bottom: the ccm curve alone, zoomed to the budget, with each effort shaded,
  so its shape (growth while an effort is open, drop when it concludes,
  compactions) is visible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

from ..errors import InputError
from .runner import ReplayResult

NAIVE_COLOR = "#d9480f"
CCM_COLOR = "#1864ab"
BUDGET_COLOR = "#868e96"
BAND_COLORS = ("#e7f5ff", "#f3f0ff")
SEGMENTERS = {
    "file": "hand-placed boundaries",
    "model": "model-placed boundaries",
    "offline": "offline TextTiling segmenter",
}
SUMMARIZERS = {"offline": "offline extractive", "model": "model"}
FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif'"


class PlotError(InputError):
    pass


def nice_step(span: float, ticks: int = 5) -> float:
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 2.5, 5, 10):
        if raw <= mult * power:
            return mult * power
    return 10 * power


def nice_max(value: float, ticks: int = 5) -> tuple[float, float]:
    step = nice_step(value, ticks)
    return max(step, math.ceil(value / step) * step), step


def short(n: float) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:g}M"
    if n >= 1_000:
        return f"{n / 1_000:g}K"
    return f"{n:g}"


def _text(
    x: float,
    y: float,
    s: str,
    *,
    size: int = 12,
    anchor: str = "start",
    weight: str = "normal",
    fill: str = "#212529",
    rotate: float | None = None,
) -> str:
    transform = f" transform='rotate({rotate:g} {x:.1f} {y:.1f})'" if rotate is not None else ""
    return (
        f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' font-weight='{weight}' "
        f"fill='{fill}' {FONT}{transform}>{escape(s)}</text>"
    )


class _Panel:
    def __init__(self, x: float, y: float, w: float, h: float, n: int, ymax: float) -> None:
        self.x, self.y, self.w, self.h, self.n, self.ymax = x, y, w, h, n, ymax

    def px(self, turn: float) -> float:
        if self.n <= 1:
            return self.x + self.w / 2
        return self.x + (turn - 1) / (self.n - 1) * self.w

    def py(self, value: float) -> float:
        return self.y + self.h - min(value, self.ymax) / self.ymax * self.h

    def axes(self, ystep: float, title: str, ylabel: str) -> list[str]:
        out = [f"<rect x='{self.x}' y='{self.y}' width='{self.w}' height='{self.h}' fill='none' stroke='#ced4da'/>"]
        v = 0.0
        while v <= self.ymax + 1e-9:
            y = self.py(v)
            out.append(f"<line x1='{self.x}' y1='{y:.1f}' x2='{self.x + self.w}' y2='{y:.1f}' stroke='#f1f3f5'/>")
            out.append(_text(self.x - 8, y + 4, short(v), size=11, anchor="end", fill="#495057"))
            v += ystep
        xstep = max(1, int(nice_step(max(1, self.n - 1), 8)))
        ticks = sorted({1, *range(xstep, self.n + 1, xstep)})
        for t in ticks:
            x = self.px(t)
            out.append(
                f"<line x1='{x:.1f}' y1='{self.y + self.h}' x2='{x:.1f}' y2='{self.y + self.h + 5}' stroke='#495057'/>"
            )
            out.append(_text(x, self.y + self.h + 18, str(t), size=11, anchor="middle", fill="#495057"))
        out.append(_text(self.x, self.y - 8, title, size=13, weight="bold"))
        out.append(
            _text(self.x - 52, self.y + self.h / 2, ylabel, size=11, anchor="middle", fill="#495057", rotate=-90)
        )
        return out

    def line(self, values: Sequence[float], color: str, width: float = 2.2, dots: bool = True) -> list[str]:
        pts = " ".join(f"{self.px(i):.1f},{self.py(v):.1f}" for i, v in enumerate(values, 1))
        out = [
            f"<polyline points='{pts}' fill='none' stroke='{color}' stroke-width='{width}' stroke-linejoin='round'/>"
        ]
        if dots and len(values) <= 60:
            out += [
                f"<circle cx='{self.px(i):.1f}' cy='{self.py(v):.1f}' r='2.6' fill='{color}'/>"
                for i, v in enumerate(values, 1)
            ]
        return out

    def hline(self, value: float, color: str, label: str, *, below: bool = False) -> list[str]:
        y = self.py(value)
        return [
            f"<line x1='{self.x}' y1='{y:.1f}' x2='{self.x + self.w}' y2='{y:.1f}' stroke='{color}' "
            f"stroke-width='1.5' stroke-dasharray='6 4'/>",
            _text(self.x + self.w - 4, y + 14 if below else y - 5, label, size=11, anchor="end", fill=color),
        ]


def render_svg(result: ReplayResult) -> str:
    turns = result.turns
    n = max(1, len(turns))
    naive = [t.naive for t in turns]
    ccm = [t.ccm for t in turns]
    width, height = 960, 640
    left, right = 90, 30
    pw = width - left - right
    out = [
        "<?xml version='1.0' encoding='UTF-8'?>",
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' viewBox='0 0 {width} {height}'>",
        f"<rect width='{width}' height='{height}' fill='white'/>",
        _text(left, 28, f"{result.transcript}: tokens sent per turn, naive chat vs ccm-tui", size=16, weight="bold"),
        _text(
            left,
            48,
            f"end: naive {result.end_naive:,} → ccm {result.end_ccm:,} tokens ({100 * result.savings:.1f}% saved) · "
            f"max ccm {result.max_ccm:,} of a {result.budget:,}-token budget",
            size=12,
            fill="#495057",
        ),
        _text(
            left,
            66,
            f"{len(result.turns)} turns · tiktoken {result.encoding} · efforts: {SEGMENTERS.get(result.segmenter, result.segmenter)}"
            f" · summaries: {SUMMARIZERS.get(result.summarizer, result.summarizer)} · linear scales",
            size=12,
            fill="#495057",
        ),
    ]
    # legend
    lx, ly = left, 90
    for i, (color, label, dash) in enumerate(
        (
            (NAIVE_COLOR, "naive: whole conversation so far", ""),
            (CCM_COLOR, "ccm: working context actually sent", ""),
            (BUDGET_COLOR, "token budget", "6 4"),
        )
    ):
        x = lx + i * 280
        out.append(
            f"<line x1='{x}' y1='{ly}' x2='{x + 28}' y2='{ly}' stroke='{color}' stroke-width='3'"
            + (f" stroke-dasharray='{dash}'" if dash else "")
            + "/>"
        )
        out.append(_text(x + 36, ly + 4, label, size=12))
    # top panel: both series, linear scale
    top_max, top_step = nice_max(max(naive + ccm + [result.budget, 1]) * 1.04)
    top = _Panel(left, 128, pw, 262, n, top_max)
    out += top.axes(top_step, "Both on one linear scale", "tokens")
    out += top.hline(result.budget, BUDGET_COLOR, f"budget {result.budget:,}")
    out += top.line(naive, NAIVE_COLOR)
    out += top.line(ccm, CCM_COLOR)
    # bottom panel: ccm zoomed to the budget, efforts shaded
    bottom_max, bottom_step = nice_max(max(ccm + [result.budget]) * 1.08)
    bottom = _Panel(left, 440, pw, 150, n, bottom_max)
    half = (bottom.px(2) - bottom.px(1)) / 2 if n > 1 else pw / 2
    for i, span in enumerate(result.spans):
        x0 = max(bottom.x, bottom.px(span.first_turn) - half)
        x1 = min(bottom.x + bottom.w, bottom.px(span.last_turn) + half)
        out.append(
            f"<rect x='{x0:.1f}' y='{bottom.y}' width='{max(0.5, x1 - x0):.1f}' height='{bottom.h}' "
            f"fill='{BAND_COLORS[i % 2]}'><title>{escape(span.id)} (turns {span.first_turn}–{span.last_turn})</title></rect>"
        )
        room = int((x1 - x0 - 6) / 6.2)
        if room >= 6:
            label = span.id if len(span.id) <= room else span.id[: room - 1] + "…"
            out.append(_text(x0 + 3, bottom.y + 12, label, size=10, fill="#5c7cfa"))
    out += bottom.axes(bottom_step, "ccm working context, zoomed to the budget (shaded: efforts)", "tokens")
    out += bottom.hline(result.budget, BUDGET_COLOR, f"budget {result.budget:,}", below=True)
    out += bottom.line(ccm, CCM_COLOR)
    out.append(
        _text(left + pw / 2, height - 12, "turn (one human request each)", size=12, anchor="middle", fill="#495057")
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_png(result: ReplayResult, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError(
            f"cannot write {path.name}: PNG plots need matplotlib (pip install matplotlib); "
            "or use an .svg file name, which needs nothing"
        ) from None
    turns = [t.turn for t in result.turns]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6.5), height_ratios=(2, 1.2), sharex=True)
    ax1.plot(turns, [t.naive for t in result.turns], color=NAIVE_COLOR, label="naive: whole conversation so far")
    ax1.plot(turns, [t.ccm for t in result.turns], color=CCM_COLOR, label="ccm: working context actually sent")
    ax1.axhline(result.budget, color=BUDGET_COLOR, linestyle="--", label="token budget")
    ax1.set_ylabel("tokens")
    ax1.set_title(
        f"{result.transcript}: naive {result.end_naive:,} → ccm {result.end_ccm:,} ({100 * result.savings:.1f}% saved)",
        fontsize=11,
    )
    ax1.legend(loc="upper left", fontsize=9)
    ax2.plot(turns, [t.ccm for t in result.turns], color=CCM_COLOR)
    ax2.axhline(result.budget, color=BUDGET_COLOR, linestyle="--")
    ax2.set_ylim(0, max([t.ccm for t in result.turns] + [result.budget]) * 1.08)
    ax2.set_ylabel("ccm tokens")
    ax2.set_xlabel("turn")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_plot(result: ReplayResult, path: Path) -> Path:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".svg", ".png"):
        raise PlotError(f"--plot {path}: use a .svg (or .png) file name")
    if suffix == ".png":
        render_png(result, path)
        return path
    path.write_text(render_svg(result), encoding="utf-8")
    return path
