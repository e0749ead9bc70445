"""ChatGPT data export (``conversations.json``, or one conversation of it).

A JSON array of conversations (or a single conversation object). Each has a
``title`` and a ``mapping`` of nodes ``{id, parent, children, message}``; the
conversation shown to the user is the chain from ``current_node`` back to the
root (edits and regenerations are other branches, left out). A message has
``author.role`` (``user``, ``assistant``, ``tool``, ``system``) and ``content``
with a ``content_type``: ``text`` / ``multimodal_text`` (``parts``: strings, or
objects for uploaded images and files), ``code`` (a tool call, ``text``),
``execution_output`` and others. System messages, messages hidden from the
conversation (``metadata.is_visually_hidden_from_conversation``) and the model's
thoughts (``thoughts``, ``reasoning_recap``) are left out. Tool messages join the
agent's response. Each conversation ends its last turn; with several
conversations the title is the export's, per conversation titles start their
first turn. A node of an unexpected shape is skipped and noted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ccm_tui.restore.formats._common import TurnBuilder, json_document
from ccm_tui.restore.turns import ParsedTranscript

NAME = "chatgpt"

_THINKING = {"thoughts", "reasoning_recap"}


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is a ChatGPT export."""
    start = head.lstrip()[:1]
    if start not in ("[", "{"):
        return 0.0
    if '"mapping"' in head and ('"current_node"' in head or '"author"' in head):
        return 0.95
    if path.name == "conversations.json":
        return 0.6
    return 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse a ChatGPT export into turn rounds."""
    data = json_document(text, "a ChatGPT export")
    conversations = data if isinstance(data, list) else [data]
    builder = TurnBuilder()
    titles: list[str] = []
    for index, conversation in enumerate(conversations, start=1):
        if not isinstance(conversation, dict) or not isinstance(conversation.get("mapping"), dict):
            builder.note(index, f"conversation {index}: not a conversation object")
            continue
        title = conversation.get("title") if isinstance(conversation.get("title"), str) else None
        titles.append(title or f"conversation {index}")
        for node in _chain(conversation):
            try:
                _add(builder, node, index)
            except (TypeError, AttributeError, ValueError, KeyError, IndexError):
                builder.note(index, f"conversation {index}: message of an unexpected shape")
    title = titles[0] if len(titles) == 1 else (f"ChatGPT export ({len(titles)} conversations)" if titles else None)
    return builder.result(NAME, title=title)


def _chain(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes from the root to ``current_node`` (else to the last leaf), in order."""
    mapping: dict[str, Any] = conversation["mapping"]
    current = conversation.get("current_node")
    if not isinstance(current, str) or current not in mapping:
        leaves = [key for key, node in mapping.items() if isinstance(node, dict) and not node.get("children")]
        current = leaves[-1] if leaves else next(iter(mapping), None)
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(current, str) and current in mapping and current not in seen:
        seen.add(current)
        node = mapping[current]
        if not isinstance(node, dict):
            break
        chain.append(node)
        current = node.get("parent")
    chain.reverse()
    return chain


def _add(builder: TurnBuilder, node: dict[str, Any], line: int) -> None:
    message = node.get("message")
    if not isinstance(message, dict):
        return
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else message.get("role")
    metadata = message.get("metadata")
    hidden = isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation")
    if role == "system" or hidden:
        return
    content = message.get("content")
    if not isinstance(content, dict) or content.get("content_type") in _THINKING:
        return
    body = _content_text(content)
    if not body.strip():
        return
    if role == "user":
        builder.user(body, line)
    elif role == "assistant":
        if content.get("content_type") == "code":
            recipient = message.get("recipient")
            body = f"[{recipient if isinstance(recipient, str) else 'code'}] {body}"
        builder.agent(body, line)
    elif role == "tool":
        name = author.get("name") if isinstance(author, dict) else None
        builder.agent_continue(f"[result{' ' + name if isinstance(name, str) else ''}] {body}", line)


def _content_text(content: dict[str, Any]) -> str:
    parts = content.get("parts")
    if isinstance(parts, list):
        pieces = []
        for part in parts:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict):
                pieces.append(_attachment(part))
        return "\n\n".join(p for p in pieces if p.strip())
    for key in ("text", "result"):
        if isinstance(content.get(key), str):
            return content[key]
    return ""


def _attachment(part: dict[str, Any]) -> str:
    if isinstance(part.get("text"), str):
        return part["text"]
    size = part.get("size_bytes")
    kind = "image" if "image" in str(part.get("content_type", "")) or part.get("width") else "file"
    return f"[{kind}, {size} bytes]" if isinstance(size, int) else f"[{kind}]"
