"""Details of the effort selected in the sidebar: state, sizes and the full summary."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Static

from ..actions import valid_actions

HINT = "Select an effort (Ctrl+G or click) to see its summary and actions."


def describe(effort: dict[str, Any], decay_threshold: int, *, keys: bool = True) -> Content:
    if effort["status"] == "open":
        state = "open · active" if effort["active"] else "open · backgrounded"
    elif effort["expanded"]:
        left = max(0, decay_threshold - (effort["turns_since_reference"] or 0))
        state = f"concluded · expanded, collapses in {left} turn{'s' if left != 1 else ''}"
    elif effort["evicted"]:
        state = "concluded · not in memory (found by search)"
    else:
        state = "concluded · summary in memory"
    key_line = "  ".join(f"{a.key} {a.short.lower()}" for a in valid_actions(effort))
    parts: list[Any] = [(effort["id"], "bold"), "\n", (state, "$text-muted"), "\n"]
    parts.append((f"{effort['raw_tokens']:,} tokens in the raw log · reopened {effort['reopen_count']}×\n"
                  if effort.get("reopen_count") else f"{effort['raw_tokens']:,} tokens in the raw log\n", "$text-muted"))
    if effort.get("summary"):
        parts += ["\n", effort["summary"], "\n"]
    if keys:
        parts += ["\n", (key_line, "$accent")]
    return Content.assemble(*parts).rstrip()


class EffortDetail(Static):
    """Shows :func:`describe` of the selected effort, or a hint when none is selected."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Content.styled(HINT, "$text-muted"), id=id)
        self.effort_id: str | None = None

    def show(self, effort: dict[str, Any] | None, decay_threshold: int) -> None:
        self.effort_id = effort["id"] if effort else None
        self.set_class(effort is not None, "-selected")
        self.update(describe(effort, decay_threshold) if effort else Content.styled(HINT, "$text-muted"))
