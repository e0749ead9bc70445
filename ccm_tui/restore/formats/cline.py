"""Cline-family task histories (``tasks/<id>/api_conversation_history.json``): Cline, Roo Code, Kilo, IBM Bob.

One JSON array of Anthropic-style messages ``{"role": "user"|"assistant",
"content": str | [blocks], "ts"?}``. Blocks: ``text``, ``image``, ``thinking``,
``tool_use`` (``name``, ``input``) and ``tool_result`` (``content``).

Most ``user`` messages are not the human: the agent's tool results come back as
``[read_file for 'x'] Result:`` text blocks (or ``tool_result`` blocks), and every
message carries ``<environment_details>`` and reminders. The human's words are
wrapped: ``<task>`` (the request that starts the task), ``<feedback>`` (after a
completion or a denied tool), ``<answer>`` (to a follow-up question) and
``<user_message>`` (plan-mode replies, new instructions on resuming a task). A
user message is a human turn only when it holds one of those with words in it,
or when it is plain text that is neither a tool result nor an environment
report; it is one even when it mostly carries tool results, and each such
message is a turn of its own. A tag counts only where the human's words go: at
the start of a block, or in the first lines of a tool result (never deep inside
a file that was read). An ``<answer>`` that is one of the options the agent's
``ask_followup_question`` offered (``<suggest>``, ``<options>`` or the native
call's ``follow_up``/``options``) was clicked, not typed: it answers the
agent's question and is no new request; a typed answer is one.

Artifacts come from the file tools' calls (``read_file``, ``write_to_file``,
``replace_in_file``, ``apply_diff``…), native ``tool_use`` blocks or the XML
tags older versions wrote in the assistant's text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ccm_tui.restore.formats._common import TurnBuilder, json_document, squash
from ccm_tui.restore.turns import ArtifactAction, ParsedTranscript, TranscriptError

NAME = "cline"

_HUMAN_TAG = re.compile(r"<(?P<tag>task|feedback|answer|user_message)>\s*(?P<text>.*?)\s*</(?P=tag)>", re.DOTALL)
_TOOL_RESULT = re.compile(r"^\s*\[[^\n]*\] Result:")
_ENVIRONMENT = re.compile(r"<environment_details>.*?(?:</environment_details>|\Z)", re.DOTALL)
NOTICE = re.compile(
    r"^\s*(?:#\s*task_progress|#\s*TODO LIST|\[TASK RESUMPTION\]|\[NOTE\]|\[ERROR\]|<files>|"
    r"Files attached by the user:|<file_content|<explicit_instructions|<system-reminder>)",
)
_TAG_WINDOW = 600  # a human tag in a tool result sits right under its header
_FILE_TOOLS: dict[str, ArtifactAction] = {
    "read_file": "read",
    "write_to_file": "created",
    "replace_in_file": "edited",
    "apply_diff": "edited",
    "insert_content": "edited",
    "search_and_replace": "edited",
    "edit_file": "edited",
    "new_rule": "created",
}
_XML_TOOL = re.compile(
    r"<(?P<tool>" + "|".join(_FILE_TOOLS) + r")>(?P<body>.*?)</(?P=tool)>",
    re.DOTALL,
)
_PATH_KEYS = ("path", "absolutePath", "file_path", "target_file")
_PATH_TAG = re.compile(r"<path>\s*(?P<path>[^<\n]+?)\s*</path>")
_FOLLOWUP = re.compile(r"<ask_followup_question>(?P<body>.*?)(?:</ask_followup_question>|\Z)", re.DOTALL)
_SUGGEST = re.compile(r"<suggest\b[^>]*>(?P<text>.*?)</suggest>", re.DOTALL)
_OPTIONS = re.compile(r"<options>(?P<list>.*?)</options>", re.DOTALL)
_FOLLOWUP_TOOL = "ask_followup_question"


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is a Cline-family ``api_conversation_history.json``."""
    if not head.lstrip().startswith("["):
        return 0.0
    compact = head.replace(" ", "").replace("\n", "")
    if '"role":"user"' not in compact or '"content":' not in compact:
        return 0.0
    if "<task>" in head or "<environment_details>" in head or "] Result:" in head:
        return 0.93
    return 0.6 if path.name == "api_conversation_history.json" else 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse a Cline-family task history into turn rounds."""
    data = json_document(text, "a Cline task history")
    if not isinstance(data, list):
        raise TranscriptError("not a Cline task history: not a list of messages")
    builder = TurnBuilder()
    offered: set[str] = set()  # the options the agent's last question offered to click
    for index, message in enumerate(data, start=1):
        try:
            offered = _add(builder, message, index, offered)
        except (TypeError, AttributeError, ValueError, KeyError):
            builder.note(index, f"message {index} of an unexpected shape")
    return builder.result(NAME)


def offered_options(text: str) -> set[str]:
    """The answers the ``ask_followup_question`` calls written in ``text`` offer to click (squashed)."""
    options: set[str] = set()
    for call in _FOLLOWUP.finditer(text):
        body = call.group("body")
        options.update(squash(found.group("text")) for found in _SUGGEST.finditer(body))
        for listed in _OPTIONS.finditer(body):
            options.update(_listed_options(listed.group("list")))
    return {option for option in options if option}


def _tool_options(tool_input: dict[str, Any]) -> set[str]:
    """The options of a native ``ask_followup_question`` call: ``follow_up`` (a list of ``{text}`` or of
    strings, or ``<suggest>`` tags) or ``options`` (a list or its JSON)."""
    options: set[str] = set()
    for key in ("follow_up", "options"):
        value = tool_input.get(key)
        if isinstance(value, str) and "<suggest" in value:
            options.update(squash(found.group("text")) for found in _SUGGEST.finditer(value))
        elif value is not None:
            options.update(_listed_options(value))
    return {option for option in options if option}


def _listed_options(value: Any) -> set[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return set()
    if not isinstance(value, list):
        return set()
    texts = (item.get("text") if isinstance(item, dict) else item for item in value)
    return {squash(text) for text in texts if isinstance(text, str)}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise TypeError("content is neither text nor a list of blocks")
    return [block for block in content if isinstance(block, dict)]


def _add(builder: TurnBuilder, message: Any, index: int, offered: set[str]) -> set[str]:
    """Record one message; returns the options the agent's question offers next (empty after a user message)."""
    if not isinstance(message, dict):
        raise TypeError("message is not an object")
    blocks = _blocks(message.get("content"))
    role = message.get("role")
    if role == "assistant":
        return _add_assistant(builder, blocks, index)
    if role == "user":
        _add_user(builder, blocks, index, offered)
        return set()
    return offered


def _add_assistant(builder: TurnBuilder, blocks: list[dict[str, Any]], index: int) -> set[str]:
    pieces: list[str] = []
    offered: set[str] = set()
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            pieces.append(block["text"])
            offered |= offered_options(block["text"])
            for call in _XML_TOOL.finditer(block["text"]):
                for tag in _PATH_TAG.finditer(call.group("body")):
                    builder.artifact(tag.group("path"), _FILE_TOOLS[call.group("tool")], index)
        elif kind == "tool_use":
            name = str(block.get("name"))
            raw_input = block.get("input")
            tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
            pieces.append(f"[{name}] {json.dumps(tool_input, ensure_ascii=False)}")
            if name == _FOLLOWUP_TOOL:
                offered |= _tool_options(tool_input)
            file_path = next((tool_input[k] for k in _PATH_KEYS if isinstance(tool_input.get(k), str)), None)
            if file_path and name in _FILE_TOOLS:
                builder.artifact(file_path, _FILE_TOOLS[name], index)
    builder.agent("\n\n".join(pieces), index)
    return offered


def _add_user(builder: TurnBuilder, blocks: list[dict[str, Any]], index: int, offered: set[str]) -> None:
    human: list[tuple[str, str]] = []
    results: list[str] = []
    for block in blocks:
        if block.get("type") == "tool_result":
            result = _ENVIRONMENT.sub("", _tool_result_text(block.get("content"))).strip()
            words = _human_words(result, is_result=True)
            human.extend(words)
            results.append(_HUMAN_TAG.sub("", result).strip() if words else result)
            continue
        text = block.get("text")
        if block.get("type") != "text" or not isinstance(text, str):
            continue
        text = _ENVIRONMENT.sub("", text).strip()
        words = _human_words(text, is_result=bool(_TOOL_RESULT.match(text)))
        human.extend(words)
        if _TOOL_RESULT.match(text):
            results.append(_HUMAN_TAG.sub("", text).strip() if words else text)
        elif not words and text and not NOTICE.match(text) and not _HUMAN_TAG.search(text):
            human.append(("text", text))
    if results:
        builder.agent_continue("\n\n".join(r for r in results if r), index)
    typed = [words for tag, words in human if not is_clicked(tag, words, offered)]
    if len(typed) < len(human):
        builder.note(index, "an option offered by the agent's question, clicked (not a new request)")
    if any(words.strip() for words in typed):
        builder.user("\n\n".join(typed), index)


def is_clicked(tag: str, words: str, offered: set[str]) -> bool:
    """Is this ``<answer>`` one of the options the agent's question offered (a click, not typed)?"""
    return tag == "answer" and squash(words) in offered


def _human_words(text: str, *, is_result: bool) -> list[tuple[str, str]]:
    """The human's words in one text block, with their tag: tags at its start, or right under a tool
    result header."""
    words = []
    for match in _HUMAN_TAG.finditer(text):
        if match.group("tag") == "task" and is_result:
            continue
        if is_result and match.start() > _TAG_WINDOW:
            continue
        if not is_result and text[: match.start()].strip() and not _follows_notice(text[: match.start()]):
            continue
        if match.group("text").strip():
            words.append((match.group("tag"), match.group("text")))
    return words


def _follows_notice(before: str) -> bool:
    """Text before a tag that Cline itself wrote (a resumption notice, a note on feedback)."""
    return bool(NOTICE.match(before)) or "feedback" in before[-300:].lower() or "instructions" in before[-300:]


def _tool_result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""
