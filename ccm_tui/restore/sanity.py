"""Does a parse look right? Plain one-line warnings when a transcript's structure and its turns disagree.

API::

    from ccm_tui.restore.sanity import check_parse

    warnings = check_parse(text, parsed.format, parsed)   # list[str], empty when nothing looks wrong
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)

:func:`~ccm_tui.restore.parse.parse_transcript` already calls it and stores the
result in ``ParsedTranscript.warnings`` (and ``--parse-only --json`` prints them
under ``"warnings"`` when there are any), so a command only has to show them.
Each warning is one line a person can act on, for example::

    7 turns found but the file has 68 user messages (role headings, prompts or inputs that are not tool output): the parse may have stopped early or merged messages
    20 turns found but the file has only 11 user messages: the parse may have split requests or taken tool output or quoted text for them
    most of the file (82%) comes after the last turn found (line 1480 of 9120): later requests may have been missed
    84 user records carry typed text but only 9 turns were found: check the format (--format) or report the file

The checks are structural and cheap (one pass of regular expressions over the
text). Per format, two counts of the user's messages as the file writes them:
the requests (role headings, prompts, inputs or records that hold the human's
words, not tool output) bound the turns from below, and every user message
(commands and tool results included) from above. Far fewer turns than
requests says the parse stopped early or merged messages; more turns than
user messages says it split them or took something else for requests. For
aider the inputs are counted the way aider writes them (see
:func:`aider_inputs`); for Cline-family histories the requests are the
human's tagged words (``<task>``, ``<feedback>``…); for the JSON formats
(ChatGPT, Gemini CLI, opencode) the user records. Where the last turn starts
is also checked against the size of a line-based file. The checks are tuned
never to fire on a file that parses right (every file of the real corpus and
of the fixtures is checked in the tests), so a warning means: look at this
file.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ccm_tui.restore.formats._aider_input import CONFIRMATION_ECHO
from ccm_tui.restore.formats._timestamp import is_timestamp
from ccm_tui.restore.turns import ParsedTranscript

_MIN_MARKERS = 8  # below this, a file is too short for counts to say anything
_MARKER_RATIO = 2.0  # markers per turn beyond which the parse looks short
_OVER_RATIO = 1.25  # turns per user message beyond which the parse looks split
_OVER_SLACK = 2
_MIN_OVER_TURNS = 5
_TAIL_SHARE = 0.6
_TAIL_MIN_CHARS = 20_000
_TAIL_MIN_MARKERS = 3

# The first non-blank line after a marker (``next``) and the one after it (``then``, read when
# ``next`` is a timestamp line under a heading).
_NEXT = r"(?:[ \t]*\n)*(?P<next>[^\n]*)(?:\n(?:[ \t]*\n)*(?P<then>[^\n]*))?"
_TOOLISH = re.compile(
    r"^\s*(?:[^\x00-\x7f\w\s]{1,4}\s*)?(?:<details|<tool_result|<function_results|\*\*Tool|Tool (?:result|output)|"
    r">\s*\*\*Tool|\[[^\n]*\] Result:|```|\[\s*(?:\{|$)|\[Request interrupted by user|"
    r"This session is being continued from a previous conversation|"
    # What Gemini CLI writes as a user message: its context, auto-continue, summary, shell-mode record, @file content.
    r"(?:<session_context>\s*)?This is the Gemini CLI\.|(?:System: )?Please continue\.\s*$|<state_snapshot>|"
    r"I ran the following shell command|--- Content from referenced files ---)",
    re.IGNORECASE,
)
_JSON_TEXT = r'"text"\s*:\s*"(?P<next>(?:[^"\\]|\\.){0,80})'


@dataclass(frozen=True)
class _Markers:
    """How a format writes the user's messages: ``requests`` matches the human's words (a lower
    bound of the turns, its ``next`` group, when there is one, must not be tool output), ``every``
    matches every user input (an upper bound: commands and tool results included); None when the
    format has no such bound."""

    requests: tuple[re.Pattern[str], ...]
    every: re.Pattern[str] | None


def _markers(requests: str | tuple[str, ...], every: str | None = None, flags: int = re.MULTILINE) -> _Markers:
    patterns = (requests,) if isinstance(requests, str) else requests
    compiled = tuple(re.compile(pattern, flags) for pattern in patterns)
    return _Markers(compiled, re.compile(every, flags) if every else None)


_MARKDOWN_USER = (
    r"^(?:#{1,4}\s+(?:\*\*)?(?:\d{1,5}[.)]\s+)?(?:[^\x00-\x7f\w\s]{1,4}\s*)?"
    r"(?:human|user|you|me|prompt|question)\b[^\n]*|"
    r"\*\*(?:human|user|you|me|prompt|question)(?::\*\*|\*\*:)[^\n]*)\n"
)
_GEMINI_USER = r"^[^\n#]{0,12}## USER\b[^\n]*\n"
_GEMINI_JSON_USER = r'"role"\s*:\s*"user"\s*,\s*"parts"\s*:\s*\[\s*\{\s*' + _JSON_TEXT
_PROMPT = r"^> "
_CHEVRON = r"^❯ "  # in a file with ❯ prompts (Claude Code 2.x) a "> " line is quoted text

_USER_MARKERS: dict[str, _Markers] = {
    "markdown": _markers(_MARKDOWN_USER + _NEXT, _MARKDOWN_USER, re.IGNORECASE | re.MULTILINE),
    "gemini-share": _markers((_GEMINI_USER + _NEXT, _GEMINI_JSON_USER), f"{_GEMINI_USER}|{_GEMINI_JSON_USER}"),
    "specstory": _markers(r"^_\*\*User\b(?! \(sidechain\))[^\n]*\n" + _NEXT, r"^_\*\*User\b(?! \(sidechain\))"),
    "opencode-export": _markers(r"^## User[ \t]*\n" + _NEXT, r"^## User[ \t]*$"),
    # A prompt that is a slash command, a shell command (!) or a memory note (#) may not reach the model.
    "claude-code-terminal": _markers(_PROMPT + r"(?P<next>(?![/!#])[^\n]*)$", _PROMPT),
    "claude-code-terminal ❯": _markers(_CHEVRON + r"(?P<next>(?![/!#])[^\n]*)$", _CHEVRON),
    "claude-code": _markers(
        r'"role"\s*:\s*"user"\s*,\s*"content"\s*:\s*"(?!Caveat|This session is being continued)(?P<next>[^"\\<\[])'
    ),
    "codex": _markers(
        r'"role"\s*:\s*"user"\s*,\s*"content"\s*:\s*\[\s*\{\s*"type"\s*:\s*"input_text"\s*,\s*"text"\s*:\s*"'
        r"(?P<next>[^\"\\<#])"
    ),
    # The human's words of a Cline-family task are tagged; every other user message is a tool result.
    "cline": _markers(r"<(?:task|feedback|answer|user_message)>", r'"role"\s*:\s*"user"'),
    # Every branch of an edited conversation is in the export: an upper bound, and a loose lower one.
    "chatgpt": _markers(
        r'"role"\s*:\s*"user"(?:(?!"role")[\s\S]){0,600}?"content_type"\s*:\s*"(?:text|multimodal_text)"'
    ),
    "gemini-cli": _markers(r'"type"\s*:\s*"user"'),
    "opencode-json": _markers(r'"role"\s*:\s*"user"'),
}
# Formats of records, not lines: a user record may hold its text in content blocks, so there is no
# upper bound, and a turn's line is a record number.
_RECORD_FORMATS = {"claude-code", "codex"}
# Where the agent's messages start: requests with none of these between them were sent in a row (a
# message sent again after an error, a correction), each a turn of its own.
_AGENT_MARKERS: dict[str, re.Pattern[str]] = {
    "gemini-share": re.compile(r'^[^\n#]{0,12}## MODEL\b|"role"\s*:\s*"model"', re.MULTILINE),
    "specstory": re.compile(r"^_\*\*(?:Assistant|Agent)\b", re.MULTILINE),
    "codex": re.compile(r'"role"\s*:\s*"assistant"'),
    "opencode-export": re.compile(r"^## Assistant\b", re.MULTILINE),
}
_MIN_IN_A_ROW = 3


def check_parse(text: str, fmt: str, parsed: ParsedTranscript) -> list[str]:
    """One-line warnings when ``parsed`` (of ``text``, read as ``fmt``) disagrees with the file's structure."""
    every: int | None
    if fmt == "aider":
        positions, every = aider_inputs(text)
    elif fmt in _USER_MARKERS:
        chevron = fmt == "claude-code-terminal" and re.search(_CHEVRON, text, re.MULTILINE) is not None
        markers = _USER_MARKERS[f"{fmt} ❯" if chevron else fmt]
        found = (match for pattern in markers.requests for match in pattern.finditer(text) if _is_request(match))
        positions = sorted(match.start() for match in found)
        every = None if fmt in _RECORD_FORMATS else _count(markers.every or markers.requests[0], text)
    else:
        return []
    warnings: list[str] = []
    turns = len(parsed.turns)
    if len(positions) >= _MIN_MARKERS and len(positions) > _MARKER_RATIO * turns + _MIN_MARKERS:
        warnings.append(_count_warning(fmt, turns, len(positions)))
    merged = _merge_warning(text, fmt, turns, positions)
    if merged:
        warnings.append(merged)
    if every is not None and turns >= _MIN_OVER_TURNS and turns > _OVER_RATIO * every + _OVER_SLACK:
        warnings.append(
            f"{_turns(turns)} found but the file has only {every} user message{'s' if every != 1 else ''}: "
            "the parse may have split requests or taken tool output or quoted text for them"
        )
    if not text.lstrip().startswith(("{", "[")):  # a JSON document's turns carry record numbers, not lines
        tail = _tail_warning(text, parsed, positions)
        if tail:
            warnings.append(tail)
    return warnings


def _merge_warning(text: str, fmt: str, turns: int, positions: list[int]) -> str | None:
    """Requests sent in a row (no reply of the agent between them) are each a turn: a parse that found
    fewer turns than the requests, by half of those sent in a row or more, merged them."""
    agent = _AGENT_MARKERS.get(fmt)
    if agent is None or len(positions) < 2:
        return None
    replies = [match.start() for match in agent.finditer(text)]
    in_a_row = sum(1 for before, after in zip(positions, positions[1:]) if not _any_between(replies, before, after))
    if in_a_row < _MIN_IN_A_ROW or len(positions) - turns < max(_MIN_IN_A_ROW, in_a_row / 2):
        return None
    return (
        f"{in_a_row} user messages follow another one with no reply between them, and only {_turns(turns)} "
        f"{'was' if turns == 1 else 'were'} found for {len(positions)} requests: the parse may have merged them"
    )


def _any_between(sorted_offsets: list[int], start: int, end: int) -> bool:
    index = bisect.bisect_right(sorted_offsets, start)
    return index < len(sorted_offsets) and sorted_offsets[index] < end


def _count(pattern: re.Pattern[str], text: str) -> int:
    return sum(1 for _ in pattern.finditer(text))


def _is_request(match: re.Match[str]) -> bool:
    """Is the first line of a user message the human's words (not tool output, not a bare timestamp)?"""
    groups = match.groupdict()
    first = groups.get("next")
    if first is None:
        return True
    if is_timestamp(first):
        first = groups.get("then") or ""
    return not _TOOLISH.match(first) and not is_timestamp(first)


def _turns(count: int) -> str:
    return f"{count} turn{'s' if count != 1 else ''}"


def _count_warning(fmt: str, turns: int, markers: int) -> str:
    if fmt in _RECORD_FORMATS:
        return (
            f"{markers} user records carry typed text but only {_turns(turns)} {'was' if turns == 1 else 'were'} "
            "found: check the format (--format) or report the file"
        )
    return (
        f"{_turns(turns)} found but the file has {markers} user messages (role headings, prompts or inputs that "
        "are not tool output): the parse may have stopped early or merged messages"
    )


_AIDER_INPUT = re.compile(r"^####(?: |$)")
_AIDER_NOT_REQUEST = re.compile(r"^(?:/(?!(?:ask|code|architect|context)\s+\S)\S*.*|<blank>|[yn]|yes|no)\s*$", re.I)


def aider_inputs(text: str) -> tuple[list[int], int]:
    """(offsets, count) of the inputs of an aider history that can be requests: each new-style input
    (lines joined by aider's two trailing spaces, counted by its first line) or, in an old-style run
    of ``####`` lines (one input as far as anyone can tell), the run; slash commands (but ``/ask X``
    and the like), ``<blank>``, a bare y/n and a confirmation question aider logs with its answer
    (``Add file to the chat? ... [Yes]: all``) are not requests. As aider writes it, input never
    follows the assistant's prose directly, and in a new-style file a ``####`` line without the two
    spaces is an assistant heading."""
    lines = text.split("\n")
    inputs = [line for line in lines if _AIDER_INPUT.match(line)]
    new_style = sum(1 for line in inputs if line.endswith("  ")) * 2 > len(inputs)
    offsets: list[int] = []
    offset = 0
    above: str | None = None  # the line right above, when it is an input line
    after_prose = in_run = counted = first = False
    for line in lines:
        if (
            _AIDER_INPUT.match(line)
            and not (new_style and not line.endswith("  "))
            and not (after_prose and not in_run)
        ):
            starts = (above is None or not above.endswith("  ")) if new_style else not in_run
            if starts:
                counted, first = False, True
            content = line[5:].strip()
            request = content and not _AIDER_NOT_REQUEST.match(content) and not CONFIRMATION_ECHO.match(content)
            if not counted and (first or not new_style) and request:
                offsets.append(offset)
                counted = True
            first, in_run, above = False, True, line
        else:
            above = None
            if line.strip():
                in_run = False
                after_prose = not line.startswith((">", "# aider chat started"))
        offset += len(line) + 1
    return offsets, len(offsets)


def _tail_warning(text: str, parsed: ParsedTranscript, positions: list[int]) -> str | None:
    """Most of a long file after the start of the last turn, with user markers in it."""
    if not parsed.turns or len(text) < _TAIL_MIN_CHARS:
        return None
    last_line = parsed.turns[-1].start_line
    offset = _offset_of_line(text, last_line)
    share = (len(text) - offset) / len(text)
    later = sum(1 for position in positions if position > offset + 1)
    if share < _TAIL_SHARE or later < _TAIL_MIN_MARKERS:
        return None
    total = text.count("\n") + 1
    return (
        f"most of the file ({share:.0%}) comes after the last turn found (line {last_line} of {total}), "
        f"with {later} more user messages there: later requests may have been missed"
    )


def _offset_of_line(text: str, line: int) -> int:
    offset = 0
    for _ in range(max(0, line - 1)):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset
