"""opencode ``/export`` markdown (``session-ses_XXXX.md``).

Layout: ``# <title>``, ``**Session ID:** ses_...``, then messages separated by
``---``: ``## User`` and ``## Assistant (Build · <model> · 15.8s)``. Only those
exact headings right after a ``---`` separator start a message; assistant prose
has its own ``## `` headings and tool blocks nest fences invalidly, so the
parser is line based. Empty ``## User`` blocks (auto-continue) are not turns and
``## Assistant (Compaction · ...)`` summaries are skipped.

Tools appear as ``Tool: edit`` inside a bare fence (older exports) or as
``**Tool: edit**`` (newer), followed by a JSON input holding ``filePath``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ccm_tui.restore.formats._common import TurnBuilder, split_lines
from ccm_tui.restore.turns import ArtifactAction, ParsedTranscript

NAME = "opencode-export"

_USER_HEADING = "## User"
_ASSISTANT_HEADING = re.compile(r"^## Assistant(?: \((?P<info>.*)\))?\s*$")
_SEPARATOR = "---"
_SESSION_ID = re.compile(r"^\*\*Session ID:\*\*\s*ses_", re.MULTILINE)
_TITLE = re.compile(r"^# (?P<title>\S.*)$")
_TOOL = re.compile(r"^(?:\*\*)?Tool: (?P<tool>\w+)(?:\*\*)?\s*$")
_FILE_PATH = re.compile(r'"filePath"\s*:\s*"(?P<path>(?:[^"\\]|\\.)*)"')
_OUTPUT_MARK = "**Output:**"
_TOOL_ACTIONS: dict[str, ArtifactAction] = {
    "read": "read",
    "edit": "edited",
    "multiedit": "edited",
    "patch": "edited",
    "write": "created",
}


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is an opencode export."""
    score = 0.0
    if _SESSION_ID.search(head):
        score = 0.9
    elif re.search(r"^## User\s*$", head, re.MULTILINE) and re.search(r"^## Assistant \(", head, re.MULTILINE):
        score = 0.6
    if score and path.name.startswith("session-ses_"):
        score = min(1.0, score + 0.08)
    return score


def parse(text: str) -> ParsedTranscript:
    """Parse an opencode export into turn rounds."""
    lines = split_lines(text)
    builder = TurnBuilder()
    headings = _find_headings(lines)
    for position, (start, kind) in enumerate(headings):
        end = headings[position + 1][0] if position + 1 < len(headings) else len(lines)
        body_start, body = _block_body(lines, start + 1, end)
        if kind == "user":
            _add_user(builder, body, start + 1, end)
        else:
            _add_assistant(builder, lines[start], body, body_start)
    return builder.result(NAME, title=_find_title(lines))


def _find_headings(lines: list[str]) -> list[tuple[int, str]]:
    """Indexes of message headings that directly follow a ``---`` separator."""
    headings: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        if line.rstrip() == _USER_HEADING:
            kind = "user"
        elif _ASSISTANT_HEADING.match(line):
            kind = "assistant"
        else:
            continue
        if _follows_separator(lines, index):
            headings.append((index, kind))
    return headings


def _follows_separator(lines: list[str], index: int) -> bool:
    previous = index - 1
    while previous >= 0 and not lines[previous].strip():
        previous -= 1
    return previous >= 0 and lines[previous].strip() == _SEPARATOR


def _block_body(lines: list[str], start: int, end: int) -> tuple[int, list[str]]:
    """The lines of a message without surrounding blanks and the closing separator."""
    while end > start and not lines[end - 1].strip():
        end -= 1
    if end > start and lines[end - 1].strip() == _SEPARATOR:
        end -= 1
    while start < end and not lines[start].strip():
        start += 1
    return start, lines[start:end]


def _add_user(builder: TurnBuilder, body: list[str], heading_line: int, end: int) -> None:
    message = "\n".join(body).strip()
    if not message:
        builder.note(heading_line, "empty user message (auto-continue)")
        return
    builder.user(message, heading_line, end)


def _add_assistant(builder: TurnBuilder, heading: str, body: list[str], body_start: int) -> None:
    match = _ASSISTANT_HEADING.match(heading)
    info = (match.group("info") if match else None) or ""
    if info.startswith("Compaction"):
        builder.note(body_start, "compaction summary")
        return
    builder.agent("\n".join(body), body_start + 1, body_start + len(body))
    _add_tool_artifacts(builder, body, body_start)


def _add_tool_artifacts(builder: TurnBuilder, body: list[str], body_start: int) -> None:
    tool: str | None = None
    tool_line = 0
    for offset, line in enumerate(body):
        match = _TOOL.match(line.strip())
        if match:
            tool, tool_line = match.group("tool").lower(), body_start + offset + 1
            continue
        if tool is None:
            continue
        if line.strip() == _OUTPUT_MARK:
            tool = None
            continue
        path = _FILE_PATH.search(line)
        if path and tool in _TOOL_ACTIONS:
            builder.artifact(_decode_json_string(path.group("path")), _TOOL_ACTIONS[tool], tool_line)
            tool = None


def _decode_json_string(raw: str) -> str:
    try:
        return json.loads(f'"{raw}"')
    except ValueError:
        return raw


def _find_title(lines: list[str]) -> str | None:
    for line in lines[:5]:
        match = _TITLE.match(line)
        if match:
            return match.group("title").strip()
    return None
