"""Export as data: a session's efforts, ambient chat and notes as one JSON document, JSON lines or Markdown.

The JSON schema (``format`` ``ccm-tui-export``, ``version`` 1; documented in the README, *Export*)::

    {"format": "ccm-tui-export", "version": 1, "exported_at": ISO,
     "sessions": [{"name": str, "path": str,
                   "efforts": [{"id", "name", "status": "open"|"concluded", "summary": str|null,
                                "created", "concluded_at": str|null, "reopen_count": int,
                                "source": {...}|null, "messages": [RECORD, ...]}],
                   "ambient": [RECORD, ...],
                   "notes": [{"effort_id", "agent", "content", "ts"}]}]}

A RECORD is a log line as stored (``role``, ``content``, ``ts``, and what else the line carries: ``note``,
``agent``, ``tools``, ``interrupted``); withdrawn exchanges are left out. JSON lines: one object per
line, ``{"type": "export", ...}`` first, then per session ``{"type": "session", "name", "path"}``, each
effort as ``{"type": "effort", "session", ...}`` (its messages inside), each ambient line as
``{"type": "ambient", "session", ...RECORD}`` and each note as ``{"type": "note", "session", ...}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import EffortNotFound
from ..manifest.effort import Effort
from ..session.chat_line import note_author
from ..session.session import Session
from ..session.withdrawn import live
from ..storage.durable import read_jsonl
from ..storage.eventlog import now_iso
from .markdown_export import conversation_markdown, effort_markdown
from .status import effort_view

EXPORT_FORMAT = "ccm-tui-export"
EXPORT_VERSION = 1
FORMATS = ("md", "json", "jsonl")
_EFFORT_KEYS = ("id", "name", "status", "summary", "created", "concluded_at", "reopen_count", "source")


def _effort(session: Session, effort_id: str, directory: Path) -> Effort:
    """The effort ``effort_id`` of the open session, else :class:`EffortNotFound` naming the session."""
    effort = session.efforts.get(effort_id)
    if effort is None:
        raise EffortNotFound(f"there is no effort {effort_id!r} in {directory}")
    return effort


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [r for _line, r in live(read_jsonl(path).numbered()) if isinstance(r, dict) and "content" in r]


def session_data(directory: Path, effort_id: str | None = None) -> dict[str, Any]:
    """One session as the export's ``sessions`` item (``effort_id``: that effort only, no ambient chat).

    Raises:
        EffortNotFound: ``effort_id`` is not an effort of the session.
        StoreError: the session cannot be read.
    """
    directory = Path(directory)
    with Session.open(directory, readonly=True) as session:
        if effort_id is not None:
            effort = _effort(session, effort_id, directory)
            chosen = [effort]
        else:
            chosen = list(session.efforts)
        efforts = []
        notes = []
        for effort in chosen:
            entry = effort.to_dict()
            item: dict[str, Any] = {key: entry.get(key) for key in _EFFORT_KEYS}
            item["name"] = item["name"] or effort.id
            item["messages"] = messages = _records(session.effort_path(effort.id))
            efforts.append(item)
            for record in messages:
                agent = note_author(record)
                if agent is not None:
                    notes.append(
                        {"effort_id": effort.id, "agent": agent, "content": record["content"], "ts": record.get("ts")}
                    )
        ambient = [] if effort_id is not None else _records(session.raw_path)
    return {"name": directory.name, "path": str(directory), "efforts": efforts, "ambient": ambient, "notes": notes}


def export_document(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported_at": now_iso(), "sessions": sessions}


def jsonl_lines(document: dict[str, Any]) -> Iterator[str]:
    head = {k: v for k, v in document.items() if k != "sessions"}
    yield json.dumps({"type": "export", **head}, ensure_ascii=False)
    for session in document["sessions"]:
        name = session["name"]
        yield json.dumps({"type": "session", "name": name, "path": session["path"]}, ensure_ascii=False)
        for effort in session["efforts"]:
            yield json.dumps({"type": "effort", "session": name, **effort}, ensure_ascii=False)
        for record in session["ambient"]:
            yield json.dumps({"type": "ambient", "session": name, **record}, ensure_ascii=False)
        for note in session["notes"]:
            yield json.dumps({"type": "note", "session": name, **note}, ensure_ascii=False)


def session_markdown(directory: Path, effort_id: str | None = None) -> str:
    """A session as Markdown (the TUI's conversation export), or one effort (the TUI's effort export).

    Raises:
        EffortNotFound: ``effort_id`` is not an effort of the session.
    """
    directory = Path(directory)
    with Session.open(directory, readonly=True) as session:
        if effort_id is not None:
            effort = _effort(session, effort_id, directory)
            view = effort_view(session, effort, in_context=False)
            return effort_markdown(view, _records(session.effort_path(effort_id)))
        places = {"ambient": _records(session.raw_path)}
        for effort in session.efforts:
            places[effort.id] = _records(session.effort_path(effort.id))
        return conversation_markdown(directory.name, places)


def export_text(directories: list[Path], fmt: str, effort_id: str | None = None) -> str:
    """The export of ``directories`` in ``fmt`` (``md``, ``json`` or ``jsonl``) as one text.

    Raises:
        EffortNotFound: ``effort_id`` is not an effort of the session.
        StoreError: a session cannot be read.
    """
    if fmt == "md":
        return "\n\n".join(session_markdown(d, effort_id) for d in directories)
    document = export_document([session_data(d, effort_id) for d in directories])
    if fmt == "json":
        return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    return "".join(line + "\n" for line in jsonl_lines(document))


def export_session(directories: list[Path], fmt: str, target: str | Path, effort_id: str | None = None) -> list[Path]:
    """Write the export: to ``target`` (a file; a directory — existing, or written with a trailing
    slash — gets one ``<session>.<fmt>`` per session, ``<effort>.<fmt>`` for one effort). Returns the
    files written.

    Raises:
        EffortNotFound: ``effort_id`` is not an effort of the session.
        StoreError: a session cannot be read.
        OSError: the target cannot be written.
    """
    from ...atomic_file import atomic_write_text

    as_dir = str(target).endswith(("/", "\\")) or Path(target).is_dir()
    target = Path(target).expanduser()
    if not as_dir:
        atomic_write_text(target, export_text(directories, fmt, effort_id), durable=False)
        return [target]
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for directory in directories:
        name = effort_id if effort_id is not None else directory.name
        path = target / f"{name}.{fmt}"
        atomic_write_text(path, export_text([directory], fmt, effort_id), durable=False)
        written.append(path)
    return written
