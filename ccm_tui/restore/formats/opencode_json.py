"""opencode's JSON session export (``opencode export [sessionID] > session.json``).

One JSON object: ``info`` (the session: ``id`` ``ses_…``, ``title``,
``directory``, ``time``) and ``messages``, each ``{"info": {id, role, time…},
"parts": [...]}`` with the same message and part records as opencode's storage
(see :mod:`.opencode_storage`, which reads them): ``text`` parts (``synthetic``
ones were added by opencode, not typed), ``tool`` parts with ``state.input``
and ``state.output``, ``file``, ``reasoning`` (left out), ``step-start``,
``step-finish``, ``patch``, ``compaction``. A user message with no typed text
(a ``/compact`` request, an attachment-only resend) is not a turn. Messages are
taken in file order; a message of an unexpected shape is skipped and noted.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ccm_tui.restore.formats._common import TurnBuilder, json_document
from ccm_tui.restore.formats.opencode_storage import add_message
from ccm_tui.restore.turns import ParsedTranscript, TranscriptError

NAME = "opencode-json"


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is the output of ``opencode export``."""
    if not head.lstrip().startswith("{"):
        return 0.0
    has_session = re.search(r'"id"\s*:\s*"ses_', head) is not None
    has_messages = re.search(r'"messages"\s*:\s*\[', head) is not None
    if has_session and has_messages and re.search(r'"info"\s*:\s*\{', head):
        return 0.95
    return 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse an ``opencode export`` document into turn rounds."""
    data = json_document(text, "an opencode session export")
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise TranscriptError("not an opencode session export: no list of messages")
    raw_session = data.get("info")
    session: dict[str, Any] = raw_session if isinstance(raw_session, dict) else {}
    builder = TurnBuilder()
    for number, message in enumerate(data["messages"], start=1):
        try:
            info, parts = _split(message)
            add_message(builder, info, parts, number)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError):
            builder.note(number, f"message {number} of an unexpected shape")
    title = session.get("title") if isinstance(session.get("title"), str) else None
    cwd = session.get("directory") if isinstance(session.get("directory"), str) else None
    return builder.result(NAME, cwd=cwd, title=title)


def _split(message: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if not isinstance(message, dict) or not isinstance(message.get("info"), dict):
        raise TypeError("message has no info record")
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise TypeError("message has no list of parts")
    return message["info"], [part for part in parts if isinstance(part, dict)]
