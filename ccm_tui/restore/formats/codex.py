"""OpenAI Codex CLI session rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

One JSON record per line, ``{"timestamp", "type", "payload"}``: ``session_meta``
(``cwd``), ``turn_context``, ``event_msg`` (UI events: ``user_message``,
``agent_message``, token counts — duplicates of what follows) and
``response_item``, the conversation as the model saw it: ``message`` (role
``user`` with ``input_text`` parts, role ``assistant`` with ``output_text``),
``function_call`` / ``function_call_output`` and ``custom_tool_call`` /
``custom_tool_call_output`` (``apply_patch``), ``local_shell_call``,
``reasoning`` (left out: providers do not resend it). Older rollouts hold the
items unwrapped (``{"type": "message", ...}`` after a first line with ``id``).

A human turn is a user ``message`` that is not injected context
(``<environment_context>``, ``<user_instructions>``, AGENTS.md instructions), each
one also when it follows another without an answer (a request interrupted and sent
again). The message plan mode submits when the person picks "Yes, implement this
plan" (``Implement the plan.``, or the plan handed to a fresh context) answers the
agent's proposal: a choice, noted, not a new request.
The response carries the assistant's text, each tool call and its output.
Artifacts come from ``apply_patch`` file headers (``*** Add File:`` created,
``*** Update File:`` edited). A record of an unexpected shape is skipped and noted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ccm_tui.restore.formats._common import TurnBuilder, split_lines, tool_written
from ccm_tui.restore.turns import ParsedTranscript

NAME = "codex"

_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<turn_aborted>",
    "<user_shell_command>",
)
_PATCH_FILE = re.compile(r"^\*\*\* (?P<verb>Add|Update|Delete) File: (?P<path>.+?)\s*$", re.MULTILINE)
_CALL_TYPES = {"function_call", "custom_tool_call", "local_shell_call"}
_OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output"}


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is a Codex CLI rollout."""
    first = next((line for line in split_lines(head) if line.strip()), "")
    if '"type":"session_meta"' in first.replace(" ", "") and '"payload"' in first:
        return 0.97
    if path.name.startswith("rollout-") and path.suffix == ".jsonl":
        return 0.9 if '"response_item"' in head or '"type":"message"' in head.replace(" ", "") else 0.5
    if '"type":"response_item"' in head.replace(" ", "") and '"payload"' in head:
        return 0.8
    return 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse a Codex rollout into turn rounds."""
    builder = TurnBuilder()
    cwd: str | None = None
    bad: list[int] = []
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, strict=False)
        except (ValueError, RecursionError):
            bad.append(number)
            continue
        try:
            cwd = _handle(builder, record, number) or cwd
        except (TypeError, AttributeError, ValueError, KeyError, IndexError):
            builder.note(number, "record of an unexpected shape")
    for number in bad:
        builder.note(number, "invalid JSON")
    return builder.result(NAME, cwd=cwd)


def _handle(builder: TurnBuilder, record: Any, line: int) -> str | None:
    """Feed one record to the builder; returns the working directory if the record names one."""
    if not isinstance(record, dict):
        raise TypeError("record is not an object")
    kind = record.get("type")
    if not isinstance(kind, str):
        raise TypeError("record type is not a string")
    payload = record.get("payload")
    if kind in ("session_meta", "turn_context"):
        return _text(payload.get("cwd")) if isinstance(payload, dict) else None
    if kind == "response_item":
        item = payload
    elif kind in ("event_msg", "compacted") or "payload" in record:
        return None
    else:
        item = record  # older rollouts: the item itself
    if not isinstance(item, dict):
        raise TypeError("item is not an object")
    item_type = item.get("type")
    if item_type == "message":
        _message(builder, item, line)
    elif item_type in _CALL_TYPES:
        _call(builder, item, line)
    elif item_type in _OUTPUT_TYPES:
        builder.agent_continue(f"[result] {_output_text(item.get('output'))}".rstrip(), line)
    return None


def _message(builder: TurnBuilder, item: dict[str, Any], line: int) -> None:
    role = item.get("role")
    content = item.get("content")
    parts = content if isinstance(content, list) else [{"type": "input_text", "text": content}]
    texts = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") in ("input_text", "output_text", "text"):
            texts.append(_text(part.get("text")) or "")
        elif part.get("type") in ("input_image", "image"):
            texts.append("[image]")
    message = "\n\n".join(t for t in texts if t.strip()).strip()
    if not message:
        return
    if role == "user":
        if message.startswith(_INJECTED_PREFIXES):
            return
        choice = tool_written(message)
        if choice:
            builder.note(line, choice)
            return
        builder.user(message, line)
    elif role == "assistant":
        builder.agent(message, line)


def _call(builder: TurnBuilder, item: dict[str, Any], line: int) -> None:
    name = _text(item.get("name")) or item.get("type", "tool")
    raw = item.get("arguments") if "arguments" in item else item.get("input", item.get("action"))
    if isinstance(raw, str):
        try:
            arguments: Any = json.loads(raw)
        except ValueError:
            arguments = raw
    else:
        arguments = raw
    headline = ""
    rest: Any = arguments
    if isinstance(arguments, dict):
        command = arguments.get("command")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        if isinstance(command, str) and command.strip():
            headline = command.strip().splitlines()[0] if "\n" not in command.strip() else ""
            rest = {k: v for k, v in arguments.items() if k != "command"} if headline else arguments
    body = rest if isinstance(rest, str) else json.dumps(rest, ensure_ascii=False) if rest else ""
    builder.agent(f"[{name}] {headline}".rstrip() + (f"\n{body}" if body else ""), line)
    patch = arguments if isinstance(arguments, str) else json.dumps(arguments)
    for match in _PATCH_FILE.finditer(patch.replace("\\n", "\n")):
        verb = match.group("verb")
        if verb != "Delete":
            builder.artifact(match.group("path"), "created" if verb == "Add" else "edited", line)


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        try:
            decoded = json.loads(output)
        except ValueError:
            return output
        if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
            return decoded["output"]
        return output
    if isinstance(output, dict):
        return _output_text(output.get("output", output.get("content", json.dumps(output))))
    if isinstance(output, list):
        return "\n".join(_text(p.get("text")) or "[image]" for p in output if isinstance(p, dict))
    return ""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
