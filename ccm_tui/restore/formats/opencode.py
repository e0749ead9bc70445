"""opencode terminal logs: a captured TUI session (``script``/tmux) of opencode.

User messages are boxes drawn with ``┃`` borders whose last line is the author
and time, e.g. ``┃ alice (10:42 AM) ┃``. Everything else is agent output; tool
calls show as ``Read <path>`` / ``Edit <path>`` / ``Write <path>`` lines. ANSI
escapes and carriage-return spinner overwrites are removed first.

The user's name is taken from the first signed box, so boxes signed by anyone
else (the model) count as agent output.
"""

from __future__ import annotations

import re
from pathlib import Path

from ccm_tui.core.text.terminal import captured_text
from ccm_tui.restore.formats._common import TurnBuilder, split_lines
from ccm_tui.restore.turns import ArtifactAction, ParsedTranscript

NAME = "opencode"

_BORDER = "┃"
_SIGNATURE = re.compile(r"^(?P<name>[\w.@-]+)\s+\(\d{1,2}:\d{2}(?::\d{2})?\s*[AaPp][Mm]\)$")
_WORKING = re.compile(r"^\W*[Gg]enerating\b")
_CWD = re.compile(r"^\W*cwd:(?P<cwd>.*)$")
_PATH = r"(?P<path>[~\w.\\/:-]*[\w-]\.[A-Za-z0-9]{1,10}|[~\w.-]*[/\\][\w.\\/-]+)"
_TOOL = re.compile(r"^\s*(?:[┃│]\s*)?(?P<tool>Read|Edit|Patch|Write|Create)\s+" + _PATH + r"\s*[┃│]?\s*$")
_TOOL_ACTIONS: dict[str, ArtifactAction] = {
    "Read": "read",
    "Edit": "edited",
    "Patch": "edited",
    "Write": "created",
    "Create": "created",
}
_CWD_SEARCH_LINES = 60


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is an opencode terminal log."""
    text = captured_text(head)
    lines = split_lines(text)
    boxes = sum(1 for line in lines if line.strip().startswith(_BORDER) and line.rstrip().endswith(_BORDER))
    signatures = sum(1 for line in lines if _signature_of(_box_inner(line) or line.strip()))
    if boxes and signatures:
        return 0.85
    if boxes >= 3 and "\x1b[" in head:
        return 0.4
    return 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse an opencode terminal log into turn rounds."""
    lines = split_lines(captured_text(text))
    builder = TurnBuilder()
    user_name: str | None = None
    agent_lines: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        if _box_inner(lines[index]) is None:
            agent_lines.append((index + 1, lines[index]))
            index += 1
            continue
        end, signer = _read_box(lines, index)
        if user_name is None and signer is not None:
            user_name = signer
        if signer is not None and signer == user_name:
            _flush_agent(builder, agent_lines)
            _add_user_box(builder, lines, index, end)
        else:
            agent_lines.extend((number + 1, lines[number]) for number in range(index, end))
        index = end
    _flush_agent(builder, agent_lines)
    return builder.result(NAME, cwd=_find_cwd(lines))


def _box_inner(line: str) -> str | None:
    """The text inside ``┃ ... ┃`` (right border optional), or None for other lines."""
    stripped = line.strip()
    if not stripped.startswith(_BORDER):
        return None
    return stripped[1:].removesuffix(_BORDER).strip()


def _signature_of(text: str) -> str | None:
    match = _SIGNATURE.match(text)
    return match.group("name") if match else None


def _read_box(lines: list[str], start: int) -> tuple[int, str | None]:
    """Return the index after the box starting at ``start`` and its signer, if signed.

    A signature line inside the box closes it (boxes can touch); an unsigned
    box may be signed by the line right below it.
    """
    end = start
    signer: str | None = None
    while end < len(lines) and signer is None:
        inner = _box_inner(lines[end])
        if inner is None:
            break
        signer = _signature_of(inner)
        end += 1
    if signer is None and end < len(lines):
        signer = _signature_of(lines[end].strip())
        if signer is not None:
            end += 1
    return end, signer


def _add_user_box(builder: TurnBuilder, lines: list[str], start: int, end: int) -> None:
    content = [_box_inner(line) or "" for line in lines[start:end]]
    while content and (not content[-1] or _signature_of(content[-1])):
        content.pop()
    builder.user("\n".join(content), start + 1, end)


def _flush_agent(builder: TurnBuilder, agent_lines: list[tuple[int, str]]) -> None:
    if not agent_lines:
        return
    kept = [(number, line) for number, line in agent_lines if not _is_noise(line)]
    for number, line in kept:
        tool = _TOOL.match(line)
        if tool:
            builder.artifact(tool.group("path"), _TOOL_ACTIONS[tool.group("tool")], number)
    if kept:
        text = "\n".join(line.rstrip() for _, line in kept)
        builder.agent(text, kept[0][0], kept[-1][0])
    agent_lines.clear()


def _is_noise(line: str) -> bool:
    """Spinner lines and message signatures carry no content."""
    text = _box_inner(line)
    if text is None:
        text = line.strip()
    return bool(_WORKING.match(text) or _signature_of(text))


def _find_cwd(lines: list[str]) -> str | None:
    for line in lines[:_CWD_SEARCH_LINES]:
        match = _CWD.match(line)
        if match and match.group("cwd").strip(" │┃"):
            return match.group("cwd").strip(" │┃")
    return None
