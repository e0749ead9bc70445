"""Claude Code terminal transcripts: text copied from the Claude Code TUI, or saved by its ``/export``.

A user prompt is a line starting ``> `` (older versions) or ``❯ `` (``/export``
of Claude Code 2.x, whose header is the ``▐▛███▜▌`` logo beside ``Claude Code
vX``) at column 0; its continuation lines are indented two spaces (the export
pads them with trailing spaces, dropped here). Agent output lines start with ``⏺`` (text and tool calls)
with results indented under ``⎿``. Tool calls name files: ``⏺ Update(path)``
(edited), ``⏺ Write(path)`` (created), ``⏺ Read(path)`` (read); a call whose
result says it was rejected or changed nothing is ignored.

Slash commands (``> /compact``) and the ``> This session is being continued...``
compaction block are not turns. The welcome box gives the working directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from ccm_tui.restore.ansi import strip_ansi
from ccm_tui.restore.formats._common import TurnBuilder, split_lines
from ccm_tui.restore.turns import ArtifactAction, ParsedTranscript

NAME = "claude-code-terminal"

_PROMPT = re.compile(r"^[>❯] (?P<text>.*)$")
_CONTINUATION = "  "
_RESULT_MARK = "⎿"
_SLASH_COMMAND = re.compile(r"^/[\w:-]+(?:\s|$)")
_COMPACTION = "This session is being continued from a previous conversation"
_WELCOME = "Welcome to Claude Code"
_EXPORT_HEADER = re.compile(r"^\s*▐▛███▜▌\s+Claude Code\b|^╭─+ Claude Code v", re.MULTILINE)
_CWD = re.compile(r"^\s*│\s*cwd:(?P<cwd>.*)$")
_TOOL_CALL = re.compile(
    r"^(?:⏺|\s+⎿)\s+(?P<tool>Update|Edit|MultiEdit|NotebookEdit|Write|Create|Read)\((?P<args>.+)\)…?\s*$"
)
_TOOL_ACTIONS: dict[str, ArtifactAction] = {
    "Read": "read",
    "Update": "edited",
    "Edit": "edited",
    "MultiEdit": "edited",
    "NotebookEdit": "edited",
    "Write": "created",
    "Create": "created",
}
_REJECTED = ("User rejected", "No (tell Claude", "(No changes)", "Error:")
_ARG_NAME = re.compile(r"^[A-Za-z_]\w+:\s+")


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is a Claude Code terminal copy."""
    text = strip_ansi(head)
    if (_WELCOME in text and "│" in text) or _EXPORT_HEADER.search(text[:2000]):
        return 0.9
    lines = split_lines(text)
    actions = sum(1 for line in lines if line.startswith("⏺ "))
    prompts = sum(1 for line in lines if _PROMPT.match(line))
    if actions and prompts:
        return 0.75
    return 0.3 if actions >= 3 else 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse a Claude Code terminal copy into turn rounds."""
    lines = split_lines(strip_ansi(text))
    builder = TurnBuilder()
    agent_start = 0
    index = 0
    while index < len(lines):
        if not _PROMPT.match(lines[index]):
            index += 1
            continue
        _add_agent_output(builder, lines, agent_start, index)
        end = _prompt_end(lines, index)
        _add_prompt(builder, lines, index, end)
        agent_start = index = end
    _add_agent_output(builder, lines, agent_start, len(lines))
    return builder.result(NAME, cwd=_find_cwd(lines))


def _prompt_end(lines: list[str], start: int) -> int:
    """Index after a prompt: indented lines continue it, also across single blank lines."""
    end = start + 1
    while end < len(lines):
        if _is_continuation(lines[end]):
            end += 1
        elif not lines[end].strip() and end + 1 < len(lines) and _is_continuation(lines[end + 1]):
            end += 2
        else:
            break
    return end


def _is_continuation(line: str) -> bool:
    return line.startswith(_CONTINUATION) and bool(line.strip()) and not line.lstrip().startswith(_RESULT_MARK)


def _add_prompt(builder: TurnBuilder, lines: list[str], start: int, end: int) -> None:
    first = _PROMPT.match(lines[start])
    head = first.group("text").strip() if first else ""
    if head.startswith(_COMPACTION):
        builder.note(start + 1, "compaction summary", end)
        return
    if _SLASH_COMMAND.match(head):
        builder.note(start + 1, f"slash command {head.split()[0]}")
        return
    body = [head] + [line[len(_CONTINUATION) :].rstrip() for line in lines[start + 1 : end]]
    builder.user("\n".join(body), start + 1, end)


def _add_agent_output(builder: TurnBuilder, lines: list[str], start: int, end: int) -> None:
    builder.agent("\n".join(line.rstrip() for line in lines[start:end]), start + 1, end)
    for index in range(start, end):
        match = _TOOL_CALL.match(lines[index])
        if match and not _was_rejected(lines, index + 1, end):
            builder.artifact(_first_argument(match.group("args")), _TOOL_ACTIONS[match.group("tool")], index + 1)


def _was_rejected(lines: list[str], start: int, end: int) -> bool:
    """Whether the ``⎿`` result right under a tool call reports it did nothing."""
    for index in range(start, end):
        result = lines[index].strip()
        if result:
            return result.startswith(_RESULT_MARK) and result.lstrip(_RESULT_MARK).strip().startswith(_REJECTED)
    return False


def _first_argument(args: str) -> str:
    """``file_path: docs/x.md`` or ``"a.py", limit: 5`` -> the path argument."""
    return _ARG_NAME.sub("", args.split(", ")[0], count=1)


def _find_cwd(lines: list[str]) -> str | None:
    for line in lines:
        match = _CWD.match(line)
        if match and match.group("cwd").strip(" │"):
            return match.group("cwd").strip(" │")
    return None
