"""Gemini CLI ``/chat share`` output (and ``/chat save`` checkpoints): the model's raw history.

JSON (``/chat share x.json``, a ``checkpoint-<tag>.json``): an array of
``{"role": "user"|"model", "parts": [...]}`` (a checkpoint may wrap it as
``{"history": [...]}``); a part is ``{"text"}``, ``{"functionCall": {name,
args}}``, ``{"functionResponse": {name, response}}``, or ``{"thought": true,
"text"}`` (left out).

Markdown (``/chat share x.md``): each message is ``🧑‍💻 ## USER`` or ``✨ ## MODEL``
(newer versions: ``## USER 🧑‍💻``, ``## MODEL ✨``) then its parts, with
``**Tool Command**:`` and ``**Tool Response**:`` followed by a fenced JSON block;
messages are separated by a ``---`` line. Only a role heading right after such a
separator starts a message, so headings and fences inside a message never do.

Every user message with the person's words is a request, also right after
another one (a message sent again after an error, a corrected typo). What is not
a human turn: the tool responses (they are sent with the ``user`` role), the
``Please continue.`` (older versions: ``System: Please continue.``) the CLI sends
by itself when its check finds the model should go on, the CLI's opening context
message ("This is the Gemini CLI. We are setting up the context for our chat", or
``<session_context>``), a compression summary (the ``<state_snapshot>`` that
``/compress`` leaves in place of the history, or any user message the CLI has the
model acknowledge with "Got it. Thanks for the additional context!"), the record
of a shell-mode command ("I ran the following shell command:") and a message that
is only the content of ``@file`` references. Artifacts come from the file tools'
calls (``read_file``, ``write_file``, ``replace``, ``edit``, ``read_many_files``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ccm_tui.restore.formats._common import TurnBuilder, json_document, split_lines
from ccm_tui.restore.turns import ArtifactAction, ParsedTranscript, TranscriptError

NAME = "gemini-share"

_ICONS = r"(?:🧑\u200d?💻|✨)"
_ROLE_HEADING = re.compile(rf"^\s*(?:{_ICONS}\s*)?## (?P<role>USER|MODEL)(?:\s*{_ICONS})?\s*$")
_SEPARATOR = "---"
_SETUP = re.compile(r"^\s*(?:<session_context>\s*)?This is the Gemini CLI\. We are setting up the context")
_SNAPSHOT = re.compile(r"^\s*(?:```\w*\s*)?<state_snapshot>")
_TOOL_RESPONSE = "**Tool Response**:"
# When the model stops mid-task, Gemini CLI asks it to go on with this user message of its own.
AUTO_CONTINUE = "Please continue."
_AUTO_CONTINUES = frozenset({AUTO_CONTINUE, f"System: {AUTO_CONTINUE}"})
# The model's reply the CLI writes after a compression summary it puts in the history as a user message.
SUMMARY_ACK = "Got it. Thanks for the additional context!"
_SHELL_MODE = re.compile(r"^\s*I ran the following shell command")
_REFERENCED_FILES = re.compile(r"^\s*--- Content from referenced files ---")
_TOOL_COMMAND = "**Tool Command**:"
_FILE_TOOLS: dict[str, ArtifactAction] = {
    "read_file": "read",
    "read_many_files": "read",
    "write_file": "created",
    "replace": "edited",
    "edit": "edited",
}
_PATH_KEYS = ("file_path", "absolute_path", "path")


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is a Gemini CLI ``/chat share`` export (JSON or Markdown)."""
    stripped = head.lstrip()
    if stripped.startswith(("[", "{")):
        has_roles = re.search(r'"role"\s*:\s*"(?:user|model)"', head) and '"parts"' in head
        if has_roles and re.search(r'"role"\s*:\s*"model"', head):
            return 0.9
        return 0.6 if has_roles and "This is the Gemini CLI" in head else 0.0
    lines = split_lines(head)
    roles = {match.group("role") for match in map(_ROLE_HEADING.match, lines) if match}
    if roles == {"USER", "MODEL"}:
        return 0.92
    return 0.6 if "USER" in roles and "This is the Gemini CLI" in head else 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse a ``/chat share`` export (JSON or Markdown) into turn rounds."""
    if text.lstrip().startswith(("[", "{")):
        return _parse_json(text)
    return _parse_markdown(text)


def _parse_json(text: str) -> ParsedTranscript:
    data = json_document(text, "a Gemini CLI chat export")
    if isinstance(data, dict):
        data = data.get("history")
    if not isinstance(data, list):
        raise TranscriptError("not a Gemini CLI chat export: no list of messages")
    builder = TurnBuilder()
    for index, item in enumerate(data, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("parts"), list):
            builder.note(index, f"message {index} of an unexpected shape")
            continue
        following = data[index] if index < len(data) else None
        acknowledged = _json_text(following) == SUMMARY_ACK
        _add_json_message(builder, item.get("role"), item["parts"], index, acknowledged)
    return builder.result(NAME)


def _json_text(item: Any) -> str:
    """The words of a model message of the JSON export (empty for anything else)."""
    if not isinstance(item, dict) or item.get("role") != "model" or not isinstance(item.get("parts"), list):
        return ""
    texts = (p["text"] for p in item["parts"] if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "".join(texts).strip()


def _add_json_message(builder: TurnBuilder, role: Any, parts: list[Any], index: int, acknowledged: bool) -> None:
    texts: list[str] = []
    tools: list[str] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
        elif isinstance(part.get("functionCall"), dict):
            tools.append(_tool_call(builder, part["functionCall"], index))
        elif isinstance(part.get("functionResponse"), dict):
            tools.append("[result] " + json.dumps(part["functionResponse"].get("response"), ensure_ascii=False))
    words = "".join(texts)
    if role == "user":
        if tools:
            builder.agent_continue("\n\n".join(tools), index)
        if words.strip():
            _add_user_words(builder, words, index, index, acknowledged)
        return
    builder.agent("\n\n".join(piece for piece in [words, *tools] if piece.strip()), index)


def _add_user_words(builder: TurnBuilder, words: str, start: int, end: int, acknowledged: bool = False) -> None:
    """A user message with words: a request, unless the CLI wrote it (then noted). ``acknowledged``: the
    model's next message is the CLI's acknowledgement of a compression summary."""
    kind = not_typed(words, acknowledged)
    if kind is None:
        builder.user(words, start, end)
    else:
        builder.note(start, kind)


def not_typed(words: str, acknowledged: bool = False) -> str | None:
    """What a user message the CLI wrote is (for the notes), or None for the person's words."""
    if _SETUP.match(words):
        return "the CLI's opening context message"
    if words.strip() in _AUTO_CONTINUES:
        return f"{words.strip()!r} sent by the CLI, not typed (the model had more to say)"
    if _SNAPSHOT.match(words):
        return "compression summary (state snapshot)"
    if acknowledged:
        return "compression summary (the model's acknowledgement follows it)"
    if _SHELL_MODE.match(words):
        return "a shell-mode command and its output (the model is not asked)"
    if _REFERENCED_FILES.match(words):
        return "content of @file references"
    return None


def _tool_call(builder: TurnBuilder, call: dict[str, Any], line: int) -> str:
    name = call.get("name") if isinstance(call.get("name"), str) else "tool"
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    _artifact(builder, str(name), args or {}, line)
    return f"[{name}] {json.dumps(args, ensure_ascii=False)}" if args else f"[{name}]"


def _artifact(builder: TurnBuilder, name: str, args: dict[str, Any], line: int) -> None:
    action = _FILE_TOOLS.get(name)
    if action is None:
        return
    path = next((args[key] for key in _PATH_KEYS if isinstance(args.get(key), str)), None)
    if path:
        builder.artifact(path, action, line)
    paths = args.get("paths")
    for each in paths if isinstance(paths, list) and action == "read" else []:
        if isinstance(each, str) and "*" not in each:
            builder.artifact(each, "read", line)


def _parse_markdown(text: str) -> ParsedTranscript:
    lines = split_lines(text)
    builder = TurnBuilder()
    starts = [i for i, line in enumerate(lines) if _ROLE_HEADING.match(line) and _after_separator(lines, i)]
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        body = lines[start + 1 : end]
        while body and body[-1].strip() in ("", _SEPARATOR):
            body.pop()
        content = "\n".join(body).strip()
        heading = _ROLE_HEADING.match(lines[start])
        role = heading.group("role") if heading else "MODEL"
        if role == "USER":
            acknowledged = position + 1 < len(starts) and _markdown_reply(lines, starts, position + 1) == SUMMARY_ACK
            _add_markdown_user(builder, content, start + 1, start + 1 + len(body), acknowledged)
        else:
            builder.agent(content, start + 2, start + 1 + len(body))
            _markdown_artifacts(builder, body, start + 2)
    return builder.result(NAME)


def _after_separator(lines: list[str], index: int) -> bool:
    """The first heading of the file, or one whose previous non-blank line is ``---``."""
    previous = index - 1
    while previous >= 0 and not lines[previous].strip():
        previous -= 1
    return previous < 0 or lines[previous].strip() == _SEPARATOR


def _markdown_reply(lines: list[str], starts: list[int], position: int) -> str:
    """The words of the message at ``starts[position]`` when it is the model's (else empty)."""
    heading = _ROLE_HEADING.match(lines[starts[position]])
    if heading is None or heading.group("role") != "MODEL":
        return ""
    end = starts[position + 1] if position + 1 < len(starts) else len(lines)
    return "\n".join(line for line in lines[starts[position] + 1 : end] if line.strip() != _SEPARATOR).strip()


def _add_markdown_user(builder: TurnBuilder, content: str, start: int, end: int, acknowledged: bool) -> None:
    if content.startswith(_TOOL_RESPONSE):
        builder.agent_continue(content, start)
        return
    _add_user_words(builder, content, start, end, acknowledged)


_CALL_NAME = re.compile(r'^\s*"name":\s*"(?P<name>[^"]+)"')
_CALL_PATH = re.compile(r'^\s*"(?:file_path|absolute_path|path)":\s*"(?P<path>(?:[^"\\]|\\.)*)"')


def _markdown_artifacts(builder: TurnBuilder, body: list[str], first_line: int) -> None:
    """File paths of the ``**Tool Command**:`` blocks of one model message."""
    name: str | None = None
    for offset, line in enumerate(body):
        if line.rstrip().endswith(_TOOL_COMMAND):
            name = None
            continue
        match = _CALL_NAME.match(line)
        if match and line.startswith('  "name"'):
            name = match.group("name")
            continue
        path = _CALL_PATH.match(line)
        if path and name in _FILE_TOOLS:
            try:
                decoded = json.loads(f'"{path.group("path")}"')
            except ValueError:
                decoded = path.group("path")
            builder.artifact(decoded, _FILE_TOOLS[name], first_line + offset)
            name = None
