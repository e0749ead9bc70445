"""Details of the effort selected in the sidebar: state, sizes and the full summary."""

from __future__ import annotations

import textwrap
from typing import Any

from textual.content import Content
from textual.widgets import Static

from ...core.api import EffortState, EffortView
from ..action_looks import looks_for
from ..plain_text import plain

HINT = "Select an effort (Ctrl+G or click) to see its summary and actions."


SUMMARY_LINES = 6  # the sidebar's details stay within their max-height; the full text is the tooltip
SUMMARY_WIDTH = 38


def clip_summary(summary: str, lines: int = SUMMARY_LINES, width: int = SUMMARY_WIDTH) -> str:
    wrapped = textwrap.wrap(" ".join(summary.split()), width)
    if len(wrapped) <= lines:
        return summary
    return "\n".join(
        wrapped[: lines - 1] + [textwrap.shorten(" ".join(wrapped[lines - 1 :]), width - 1, placeholder="") + "…"]
    )


def state_line(effort: EffortView, decay_threshold: int) -> str:
    if effort.state is EffortState.EXPANDED:
        left = effort.turns_left(decay_threshold)
        return f"concluded · expanded, collapses in {left} turn{'s' if left != 1 else ''}"
    return STATE_LINES[effort.state]


STATE_LINES = {
    EffortState.ACTIVE: "open · active",
    EffortState.BACKGROUND: "open · backgrounded",
    EffortState.CONCLUDED: "concluded · summary in memory",
    EffortState.EVICTED: "concluded · not in memory (found by search)",
}


def describe(effort: EffortView, decay_threshold: int, *, keys: bool = True, clip: bool = False) -> Content:
    state = state_line(effort, decay_threshold)
    key_line = "  ".join(f"{a.key} {a.short.lower()}" for a in looks_for(effort))
    parts: list[Any] = [(effort.id, "bold"), "\n", (state, "$foreground-muted"), "\n"]
    if keys:  # right under the state: never pushed out of sight by a long summary
        parts += [(key_line, "$accent"), "\n"]
    reopened = f" · reopened {effort.reopen_count}×" if effort.reopen_count else ""
    parts.append((f"{effort.raw_tokens:,} tokens in the raw log{reopened}\n", "$foreground-muted"))
    if effort.summary:
        parts += ["\n", clip_summary(effort.summary) if clip else effort.summary, "\n"]
    return Content.assemble(*parts).rstrip()


class EffortDetail(Static):
    """Shows :func:`describe` of the selected effort, or a hint when none is selected."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Content.styled(HINT, "$foreground-muted"), id=id)
        self.effort_id: str | None = None

    def show(self, effort: EffortView | None, decay_threshold: int) -> None:
        self.effort_id = effort.id if effort else None
        self.set_class(effort is not None, "-selected")
        self.tooltip = plain(effort.summary) if effort and effort.summary else None
        self.update(
            describe(effort, decay_threshold, clip=True) if effort else Content.styled(HINT, "$foreground-muted")
        )
