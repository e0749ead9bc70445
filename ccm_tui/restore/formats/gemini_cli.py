"""Gemini CLI chat sessions (``~/.gemini/tmp/<project hash>/chats/session-*.json`` or ``.jsonl``).

One JSON object: ``sessionId``, ``projectHash``, ``startTime``, ``lastUpdated``,
optional ``kind`` (``main``; ``subagent`` sessions are someone else's turns, kept
but noted) and ``messages``: ``{id, timestamp, type, content}`` where ``type`` is
``user``, ``gemini`` (or ``model``), ``info`` or ``error``, and ``content`` a string
or a list of ``{"text": ...}`` parts. A ``gemini`` message may carry
``toolCalls`` (``name``, ``args``, ``result`` as ``functionResponse`` parts,
``resultDisplay``) and ``thoughts`` (left out: providers do not resend them).
The response of a turn is the model's text with each tool call and its result.
``error`` messages answering a request are recorded as its response. A message
of an unexpected shape is skipped and noted.

The same message records come in other wrappers, read the same way: an export
``{"version": ..., "messages": [...]}``, and the JSONL session file newer
versions write (the session's fields on the first line, then one message per
line, ``{"$rewindTo": id}`` dropping that message and those after it, and
``{"$set": {...}}`` updating the fields; a ``messages`` list there replaces the
messages so far). Every user message with the person's words is a request, also
right after another one; the messages the CLI writes itself are not (``Please
continue.`` when the model stopped mid-task, a compression summary, a shell-mode
command's record: see :func:`.gemini_share.not_typed`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ccm_tui.restore.formats._common import TurnBuilder, json_document
from ccm_tui.restore.formats.gemini_share import SUMMARY_ACK, not_typed
from ccm_tui.restore.turns import ParsedTranscript, TranscriptError

NAME = "gemini-cli"

_AGENT_TYPES = {"gemini", "model", "assistant"}
_EDIT_TOOLS = {"replace": "edited", "edit": "edited", "write_file": "created", "read_file": "read"}
_GEMINI_RECORD = re.compile(r'"type"\s*:\s*"gemini"')
_USER_RECORD = re.compile(r'\{\s*"id"\s*:\s*"[^"]*"\s*,\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"user"')


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is a Gemini CLI session file (or a wrapper of its message records)."""
    if not head.lstrip().startswith("{"):
        return 0.0
    if '"projectHash"' in head and '"sessionId"' in head:
        return 0.99  # above Claude Code's per-line "sessionId" records
    if '"messages"' in head and (_GEMINI_RECORD.search(head) or _USER_RECORD.search(head)):
        return 0.9
    if path.name.startswith("session-") and path.suffix in (".json", ".jsonl") and '"messages"' in head:
        return 0.5
    return 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse a Gemini CLI session into turn rounds."""
    data = _jsonl_session(text) if _is_jsonl(text) else json_document(text, "a Gemini CLI session")
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise TranscriptError("not a Gemini CLI session: no list of messages")
    builder = TurnBuilder()
    if data.get("kind") == "subagent":
        builder.note(1, "a subagent session (the requests come from the main agent)")
    messages = data["messages"]
    for index, message in enumerate(messages, start=1):
        following = messages[index] if index < len(messages) else None
        acknowledged = isinstance(following, dict) and _text(following.get("content")).strip() == SUMMARY_ACK
        try:
            _add(builder, message, index, acknowledged)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError):
            builder.note(index, f"message {index} of an unexpected shape")
    return builder.result(NAME)


def _is_jsonl(text: str) -> bool:
    first, _, rest = text.lstrip().partition("\n")
    return bool(rest.strip()) and first.rstrip().endswith("}") and rest.lstrip().startswith("{")


def _jsonl_session(text: str) -> dict[str, Any]:
    """The session a JSONL file describes: its fields and its messages after rewinds and updates."""
    session: dict[str, Any] = {}
    messages: list[Any] = []
    for line in text.splitlines():
        try:
            record = json.loads(line, strict=False) if line.strip() else None
        except (ValueError, RecursionError):
            record = None
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("$rewindTo"), str):
            ids = [m.get("id") if isinstance(m, dict) else None for m in messages]
            messages = messages[: ids.index(record["$rewindTo"])] if record["$rewindTo"] in ids else []
        elif isinstance(record.get("$set"), dict):
            session.update(record["$set"])
            if isinstance(record["$set"].get("messages"), list):
                messages = list(record["$set"]["messages"])
        elif "type" in record and "id" in record:
            messages.append(record)
        else:
            session.update(record)
            if isinstance(record.get("messages"), list):
                messages = list(record["messages"])
    session["messages"] = messages
    return session


def _add(builder: TurnBuilder, message: Any, index: int, acknowledged: bool) -> None:
    if not isinstance(message, dict):
        raise TypeError("message is not an object")
    kind = message.get("type", message.get("role"))
    if not isinstance(kind, str):
        raise TypeError("message type is not a string")
    text = _text(message.get("content"))
    if kind == "user":
        written = not_typed(text, acknowledged) if text.strip() else None
        if written:
            builder.note(index, written)
        else:
            builder.user(text, index)
    elif kind in _AGENT_TYPES:
        pieces = [text] if text.strip() else []
        calls = message.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                pieces.append(_tool_call(builder, call, index))
        builder.agent("\n\n".join(pieces), index)
    elif kind == "error" and builder.turns and not builder.turns[-1].agent_responses:
        builder.agent(f"(no answer: {text.strip()})", index)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _tool_call(builder: TurnBuilder, call: dict[str, Any], index: int) -> str:
    raw_name, raw_args = call.get("name"), call.get("args")
    name = raw_name if isinstance(raw_name, str) else "tool"
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    path = next((args[k] for k in ("file_path", "absolute_path", "path") if isinstance(args.get(k), str)), None)
    if path and name in _EDIT_TOOLS:
        builder.artifact(path, _EDIT_TOOLS[name], index)  # type: ignore[arg-type]
    rendered = f"[{name}] {json.dumps(args, ensure_ascii=False)}" if args else f"[{name}]"
    result = _result(call)
    return f"{rendered}\n\n[result] {result}".rstrip() if result else rendered


def _result(call: dict[str, Any]) -> str:
    results = call.get("result")
    for item in results if isinstance(results, list) else []:
        response = item.get("functionResponse", {}).get("response") if isinstance(item, dict) else None
        if isinstance(response, dict):
            for key in ("output", "error", "result"):
                if isinstance(response.get(key), str) and response[key]:
                    return response[key]
    display = call.get("resultDisplay")
    return display if isinstance(display, str) else ""
