"""Claude Code terminal transcripts: text copied from the Claude Code TUI, or saved by its ``/export``.

A user prompt is a line starting ``> `` (older versions) or ``❯ `` (``/export``
of Claude Code 2.x, whose header is the ``▐▛███▜▌`` logo beside ``Claude Code
vX``) at column 0; in a file with ``❯`` prompts a ``> `` line is text. The
export of 2.1 pads every line of the prompt to the terminal's width (blank
lines inside a pasted prompt too) and wraps long lines at column 0: there a
prompt runs to the first empty line. Elsewhere its continuation lines are
indented two spaces, also across blank lines. Agent output lines start with
``⏺`` (``●`` on terminals without it) for text and tool calls, with results
indented under ``⎿``. Tool calls name files: ``⏺ Update(path)`` (edited),
``⏺ Write(path)`` (created), ``⏺ Read(path)`` (read); a call whose result says
it was rejected or changed nothing is ignored.

What Claude Code does with a prompt decides whether it is a turn. A slash
command is one when the model answered it (a custom command such as
``/fix-issue 431`` expands to a prompt; ``/model``, ``/usage``, ``/compact``
only print a ``⎿`` result), and so is a ``#`` memory note (older versions store
it without asking the model). ``! cmd`` (bash mode) runs a shell command
without the model: the user's action, recorded in the notes, its output left
with the agent's side; not a request. The ``This session is being
continued...`` compaction block, ``Unknown command: /x`` and a choice in a menu
(``❯ 1. Yes`` over ``2. ...``) are not turns. The welcome box gives the
working directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from ccm_tui.core.text.terminal import captured_text
from ccm_tui.restore.formats._common import TurnBuilder, split_lines
from ccm_tui.restore.turns import ArtifactAction, ParsedTranscript

NAME = "claude-code-terminal"

_PROMPT = re.compile(r"^[>❯] (?P<text>.*)$")
_CONTINUATION = "  "
_RESULT_MARK = "⎿"
_SLASH_COMMAND = re.compile(r"^/[\w:-]+(?:\s|$)")
_MODEL_MARKS = ("⏺", "●")  # the model's text and tool calls (● where the terminal has no ⏺)
_AGENT_MARKS = (*_MODEL_MARKS, "✻")  # ✻: "Worked for 2m", "Conversation compacted"
_COLLAPSED = re.compile(r"\(ctrl\+\w to expand\)")
_UNKNOWN_COMMAND = "Unknown command:"
_MENU_CHOICE = re.compile(r"^1\.\s+\S")
_MENU_HINT = re.compile(r"\besc\b", re.IGNORECASE)
_MENU_LINES = 8
_BASH_MODE = "shell command (bash mode, the model is not asked)"
_COMPACTION = "This session is being continued from a previous conversation"
_WELCOME = "Welcome to Claude Code"
_EXPORT_HEADER = re.compile(r"^\s*▐▛███▜▌\s+Claude Code\b|^╭─+ Claude Code v", re.MULTILINE)
_LOGO = "▐▛███▜▌"
_VERSION = re.compile(r"\bClaude Code v\d")
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
    text = captured_text(head)
    top = text[:2000]
    if (_WELCOME in text and "│" in text) or _EXPORT_HEADER.search(top) or (_LOGO in top and _VERSION.search(top)):
        return 0.9
    lines = split_lines(text)
    marks = ("⏺ ", "● ") if _RESULT_MARK in text else ("⏺ ",)  # ● alone is a common bullet
    actions = sum(1 for line in lines if line.startswith(marks))
    prompts = sum(1 for line in lines if _PROMPT.match(line))
    if actions and prompts:
        return 0.75
    return 0.3 if actions >= 3 else 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse a Claude Code terminal copy into turn rounds."""
    lines = split_lines(captured_text(text))
    marker = "❯" if any(line.startswith("❯ ") for line in lines) else ">"
    prompt_lines = [line for line in lines if _is_prompt(line, marker)]
    padded = sum(1 for line in prompt_lines if line != line.rstrip()) * 2 > len(prompt_lines)
    prompts: list[tuple[int, int]] = []  # (first line, index after the prompt)
    index = 0
    while index < len(lines):
        if _is_prompt(lines[index], marker):
            end = _prompt_end(lines, index, marker, padded)
            prompts.append((index, end))
            index = end
        else:
            index += 1
    builder = TurnBuilder()
    agent_start = 0
    for position, (start, end) in enumerate(prompts):
        _add_agent_output(builder, lines, agent_start, start)
        following = prompts[position + 1][0] if position + 1 < len(prompts) else len(lines)
        _add_prompt(builder, lines, start, end, _answered(lines, end, following))
        agent_start = end
    _add_agent_output(builder, lines, agent_start, len(lines))
    return builder.result(NAME, cwd=_find_cwd(lines))


def _is_prompt(line: str, marker: str) -> bool:
    """A prompt line (``❯ text`` in an export that uses ``❯``, else ``> text``)."""
    return line.startswith(marker + " ") and _PROMPT.match(line) is not None


def _prompt_end(lines: list[str], start: int, marker: str, padded: bool) -> int:
    """Index after a prompt.

    The ``/export`` of Claude Code 2.1 pads every line of the prompt box to the
    terminal's width, blank lines included, and wraps long lines at column 0 or
    two spaces in: there the prompt is every line up to the first empty one. In
    an unpadded copy, lines indented two spaces continue it, also across blank
    lines (a pasted snippet), up to the agent's first mark. (Most prompt lines
    of a padded export end in spaces; one that fills the width needs none.)
    """
    if padded:
        end = start + 1
        while end < len(lines) and lines[end] and not _is_mark(lines[end], marker):
            end += 1
        return end
    end = start + 1
    while end < len(lines):
        if _is_continuation(lines[end]):
            end += 1
            continue
        after = end
        while after < len(lines) and not lines[after].strip():
            after += 1
        if after == end or after >= len(lines) or not _is_continuation(lines[after]):
            break
        end = after
    return end


def _is_mark(line: str, marker: str) -> bool:
    """A line that starts something other than prompt text: the agent's output, a result, a prompt."""
    return line.startswith((*_AGENT_MARKS, marker + " ", "! ")) or line.lstrip().startswith(_RESULT_MARK)


def _is_continuation(line: str) -> bool:
    stripped = line.strip()
    return (
        line.startswith(_CONTINUATION)
        and bool(stripped)
        and not stripped.startswith(_RESULT_MARK)
        and not _COLLAPSED.search(stripped)
    )


def _answered(lines: list[str], start: int, end: int) -> bool:
    """Did the model write anything (a ⏺/● line) between a prompt and the next one?"""
    return any(line.startswith(_MODEL_MARKS) for line in lines[start:end])


def _add_prompt(builder: TurnBuilder, lines: list[str], start: int, end: int, answered: bool) -> None:
    """Record one prompt. What Claude Code does with it decides whether it is a turn: a slash command
    is one when the model answered it (a custom command expands to a prompt; ``/model`` or ``/usage``
    only print a result), a ``#`` memory note likewise; ``! cmd`` (bash mode) runs a shell command
    without asking the model, so it is the user's action but not a request; a compaction summary, a
    rejected unknown command and a choice in a menu (``❯ 1. Yes``) are not turns."""
    first = _PROMPT.match(lines[start])
    head = first.group("text").strip() if first else ""
    body = [head] + [_unindent(line) for line in lines[start + 1 : end]]
    while body and not body[-1]:
        body.pop()
    kind = _prompt_kind(head, lines[start + 1 : start + _MENU_LINES], answered)
    if kind is None:
        builder.user("\n".join(body), start + 1, end)
        return
    builder.note(start + 1, kind, end if kind == "compaction summary" else None)


def _prompt_kind(head: str, below: list[str], answered: bool) -> str | None:
    """What a prompt that is not a request is (for the notes), or None for a request."""
    if head.startswith(_COMPACTION):
        return "compaction summary"
    if head.startswith(_UNKNOWN_COMMAND):
        return f"unknown slash command {head[len(_UNKNOWN_COMMAND) :].strip()}"
    if head == "!" or head.startswith("! "):
        return f"{_BASH_MODE} {head[1:].strip()}"
    if _is_menu(head, below):
        return "a choice in a menu"
    if answered:
        return None
    if _SLASH_COMMAND.match(head):
        return f"slash command {head.split()[0]}"
    if head.startswith("#"):
        return "memory note (# …)"
    return None


def _is_menu(head: str, below: list[str]) -> bool:
    """``❯ 1. Yes`` over ``2. No`` and an ``Esc to cancel`` hint: a menu's cursor, in a terminal copy."""
    return (
        _MENU_CHOICE.match(head) is not None
        and bool(below)
        and below[0].strip().startswith("2.")
        and any(_MENU_HINT.search(line) for line in below)
    )


def _unindent(line: str) -> str:
    line = line.rstrip()
    return line[len(_CONTINUATION) :] if line.startswith(_CONTINUATION) else line


def _add_agent_output(builder: TurnBuilder, lines: list[str], start: int, end: int) -> None:
    builder.agent("\n".join(line.rstrip() for line in lines[start:end]), start + 1, end)
    for index in range(start, end):
        if lines[index].startswith("! "):  # the /export of 2.1 writes a bash-mode command without ❯
            builder.note(index + 1, f"{_BASH_MODE} {lines[index][2:].split('⎿')[0].strip()}")
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
