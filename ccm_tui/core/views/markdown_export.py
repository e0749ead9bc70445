"""Export to Markdown: one effort (summary + raw log), or the whole conversation (ambient chat and
every effort's log, in the order it was said)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..session.chat_line import NOTE, note_author, with_interrupted_end
from ..session.withdrawn import live
from ..storage.durable import read_jsonl
from .status import EffortView

ROLE_TITLES = {"user": "You", "assistant": "Assistant", "system": "System", NOTE: "Note"}


def role_title(record: dict[str, Any]) -> str:
    """Who said a logged line, as a heading: "You", "Assistant", or "Note from <agent>" for a note."""
    author = note_author(record)
    if author is not None:
        return f"Note from {author}"
    role = str(record.get("role", "?"))
    return ROLE_TITLES.get(role, role)


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
        content = with_interrupted_end(content) if mark else content
        lines += [f"### {role_title(record)}{stamp}{mark}", "", content.rstrip(), ""]
    return "\n".join(lines).rstrip() + "\n"


def _live_records(path: Path) -> list[dict[str, Any]]:
    """A log's records without withdrawn exchanges and their markers (by file line)."""
    return [record for _line, record in live(read_jsonl(path).numbered())]


def export_path(target: str | Path, file_name: str) -> Path:
    """The file an export to ``target`` writes: ``target`` itself, or ``file_name`` inside it when it is
    a directory — one that exists, or one written with a trailing separator (``notes/``: created, never
    a file named ``notes``). Pass the path as typed: ``Path("notes/")`` has already lost its ``/``."""
    typed = os.fspath(target)
    path = Path(typed).expanduser()
    if path.is_dir() or typed.endswith(("/", os.sep)) or (os.altsep and typed.endswith(os.altsep)):
        path = path / file_name
    return path


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def export_effort(effort: EffortView, log_path: Path, target: str | Path) -> Path:
    """Write ``<id>.md`` (``target`` may be a directory — see :func:`export_path` — or a file path);
    returns the file."""
    records = _live_records(log_path)
    return _write(export_path(target, f"{effort.id}.md"), effort_markdown(effort, records))


def conversation_markdown(name: str, places: dict[str, list[dict[str, Any]]]) -> str:
    """Every logged message of a session in time order; a heading wherever the place changes
    (``places``: "ambient" or an effort id → its log records)."""
    said = sorted(
        ((str(r.get("ts") or ""), i, where, r) for where, records in places.items() for i, r in enumerate(records)),
        key=lambda item: (item[0], item[2] == "ambient", item[1]),
    )
    lines = [f"# Conversation: {name}", "", f"- messages: {len(said)}", f"- efforts: {len(places) - 1}", ""]
    here = None
    for ts, _, where, record in said:
        if where != here:
            here = where
            lines += ["## Ambient chat" if where == "ambient" else f"## Effort: {where}", ""]
        role = record.get("role", "?")
        content = str(record.get("content") or "")
        if role == "system":
            lines += [f"*{content.strip()}*", ""]
            continue
        stamp = f" · {ts}" if ts else ""
        mark = " (interrupted)" if record.get("interrupted") else ""
        content = with_interrupted_end(content) if mark else content
        lines += [f"### {role_title(record)}{stamp}{mark}", "", content.rstrip(), ""]
    return "\n".join(lines).rstrip() + "\n"


def export_conversation(name: str, raw_path: Path, effort_logs: list[Path], target: str | Path) -> Path:
    """Write the whole conversation (``target``: a file, or a directory for ``<name>.md``, see
    :func:`export_path`)."""
    places = {"ambient": _live_records(raw_path) if raw_path.is_file() else []}
    for log in effort_logs:
        places[log.stem] = _live_records(log)
    return _write(export_path(target, f"{name}.md"), conversation_markdown(name, places))
