"""Export an effort (summary + raw log) to Markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .store import read_jsonl
from .views import EffortView

ROLE_TITLES = {"user": "You", "assistant": "Assistant", "system": "System"}


def effort_markdown(effort: EffortView, records: list[dict[str, Any]]) -> str:
    """The Markdown document of one effort."""
    lines = [f"# Effort: {effort.id}", ""]
    if effort.name and effort.name != effort.id:
        lines.append(f"- name: {effort.name}")
    lines.append(f"- status: {effort.status}")
    if effort.reopen_count:
        lines.append(f"- reopened: {effort.reopen_count} time(s)")
    lines.append(f"- messages: {len(records)}")
    lines.append("")
    if effort.summary:
        lines += ["## Summary", "", effort.summary, ""]
    lines += ["## Conversation", ""]
    for record in records:
        role = record.get("role", "?")
        content = str(record.get("content") or "")
        if role == "system":
            lines += [f"*{content.strip()}*", ""]
            continue
        stamp = f" · {record['ts']}" if record.get("ts") else ""
        mark = " (interrupted)" if record.get("interrupted") else ""
        lines += [f"### {ROLE_TITLES.get(role, role)}{stamp}{mark}", "", content.rstrip(), ""]
    return "\n".join(lines).rstrip() + "\n"


def export_effort(effort: EffortView, log_path: Path, target: Path) -> Path:
    """Write ``<id>.md`` (``target`` may be a directory or a file path); returns the file."""
    records = read_jsonl(log_path).records
    target = Path(target).expanduser()
    if target.is_dir() or str(target).endswith(("/", "\\")):
        target = target / f"{effort.id}.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(effort_markdown(effort, records), encoding="utf-8")
    return target
