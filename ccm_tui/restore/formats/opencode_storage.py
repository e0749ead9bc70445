"""opencode's own JSON storage (``~/.local/share/opencode/storage``), one session at a time.

The transcript to give is the session file ``storage/session/<project>/<ses_…>.json``
(``id``, ``title``, ``directory``, ``time``); its messages are
``storage/message/<session id>/*.json`` (``id``, ``role``, ``time.created``) and
each message's parts ``storage/part/<message id>/*.json``: ``text`` (the words;
``synthetic`` ones were added by opencode, not typed), ``tool`` (``tool``,
``state.input``, ``state.output`` or ``state.error``), ``file`` (an attachment),
``reasoning`` (left out: providers do not resend it) and bookkeeping parts
(``step-start``, ``step-finish``, ``snapshot``, ``patch``). Messages are read in
``time.created`` order, parts in ``time.start``/id order. Artifacts come from the
``read``/``edit``/``write`` tools' ``filePath``. A file of an unexpected shape is
skipped and noted. (Newer opencode versions keep sessions in SQLite: export them
with ``/export`` and restore the Markdown.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ccm_tui.restore.formats._common import TurnBuilder, json_document
from ccm_tui.restore.turns import ArtifactAction, ParsedTranscript, TranscriptError

NAME = "opencode-storage"

_TOOL_ACTIONS: dict[str, ArtifactAction] = {"read": "read", "edit": "edited", "write": "created", "patch": "edited"}
MAX_FILES = 200_000


def sniff(head: str, path: Path) -> float:
    """Confidence that ``path`` is a session file of opencode's storage."""
    parts = path.parts
    in_storage = len(parts) >= 3 and parts[-3] == "session" and "storage" in parts[:-3]
    if head.lstrip().startswith("{") and '"id"' in head and '"ses_' in head and in_storage:
        return 0.97
    if path.name.startswith("ses_") and path.suffix == ".json" and '"directory"' in head:
        return 0.7
    return 0.0


_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,200}")  # fullmatch: "$" matches before a final newline


def parse(text: str) -> ParsedTranscript:
    raise TranscriptError("an opencode storage session needs its storage directory: give the session file's path")


def parse_path(path: Path, text: str) -> ParsedTranscript:
    """Parse the session at ``path`` with its messages and parts from the storage beside it."""
    session = json_document(text, "an opencode session file")
    if not isinstance(session, dict) or not isinstance(session.get("id"), str):
        raise TranscriptError("not an opencode session file: no session id")
    if not _SAFE_ID.fullmatch(session["id"]):  # an id is a directory name beside the session: never a path
        raise TranscriptError("not an opencode session file: its id is not a plain name")
    storage = path.resolve().parent.parent.parent
    builder = TurnBuilder()
    messages = _load_dir(storage / "message" / session["id"], builder, "message")
    messages.sort(key=lambda m: (_created(m), str(m.get("id"))))
    for number, message in enumerate(messages, start=1):
        if not _SAFE_ID.fullmatch(str(message.get("id"))):
            builder.note(number, "a message whose id is not a plain name (skipped)")
            continue
        try:
            add_message(builder, message, _load_dir(storage / "part" / str(message["id"]), builder, "part"), number)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError):
            builder.note(number, f"message {message.get('id')} of an unexpected shape")
    title = session.get("title") if isinstance(session.get("title"), str) else None
    cwd = session.get("directory") if isinstance(session.get("directory"), str) else None
    return builder.result(NAME, cwd=cwd, title=title)


def _load_dir(directory: Path, builder: TurnBuilder, kind: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    if not directory.is_dir():
        return records
    for file in sorted(directory.glob("*.json"))[:MAX_FILES]:
        try:
            data = json.loads(file.read_text(encoding="utf-8", errors="replace"), strict=False)
        except (OSError, ValueError, RecursionError):
            builder.note(0, f"unreadable {kind} file {file.name}")
            continue
        if isinstance(data, dict) and "id" in data:
            records.append(data)
        else:
            builder.note(0, f"{kind} file {file.name} of an unexpected shape")
    return records


def _created(record: dict[str, Any]) -> float:
    time = record.get("time")
    value = time.get("created", time.get("start")) if isinstance(time, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


def add_message(builder: TurnBuilder, message: dict[str, Any], parts: list[dict[str, Any]], number: int) -> None:
    """Add one opencode message (its ``info`` record and its parts) to ``builder``."""
    parts.sort(key=lambda p: (_created(p), str(p.get("id"))))
    role = message.get("role")
    if role == "user":
        texts = [
            p["text"]
            for p in parts
            if p.get("type") == "text" and not p.get("synthetic") and isinstance(p.get("text"), str)
        ]
        files = [
            f"[file {p.get('filename') or p.get('url') or ''}]".replace(" ]", "]")
            for p in parts
            if p.get("type") == "file"
        ]
        builder.user("\n\n".join(texts + files), number)
        return
    if role != "assistant":
        return
    pieces: list[str] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            pieces.append(part["text"])
        elif kind == "tool":
            pieces.append(_tool(builder, part, number))
    error = message.get("error")
    if isinstance(error, dict) and not pieces:
        data = error.get("data")
        detail = data.get("message") if isinstance(data, dict) else None
        pieces.append(f"(no answer: {error.get('name', 'error')}{': ' + detail if isinstance(detail, str) else ''})")
    builder.agent("\n\n".join(p for p in pieces if p.strip()), number)


def _tool(builder: TurnBuilder, part: dict[str, Any], number: int) -> str:
    raw_name, raw_state = part.get("tool"), part.get("state")
    name = raw_name if isinstance(raw_name, str) else "tool"
    state: dict[str, Any] = raw_state if isinstance(raw_state, dict) else {}
    raw_input = state.get("input")
    tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
    path = tool_input.get("filePath")
    if isinstance(path, str) and name in _TOOL_ACTIONS and state.get("status") != "error":
        builder.artifact(path, _TOOL_ACTIONS[name], number)
    call = f"[{name}] {json.dumps(tool_input, ensure_ascii=False)}" if tool_input else f"[{name}]"
    if isinstance(state.get("error"), str):
        return f"{call}\n\n[error] {state['error']}"
    output = state.get("output")
    return f"{call}\n\n[result] {output}" if isinstance(output, str) and output else call
