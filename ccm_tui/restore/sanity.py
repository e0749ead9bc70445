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

    7 turns found but the file has 68 user messages (role headings that are not tool output): the parse may have stopped early or merged messages
    most of the file (82%) comes after the last turn found (line 1480 of 9120): later requests may have been missed
    84 user records carry typed text but only 9 turns were found: check the format (--format) or report the file

The checks are structural and cheap (one pass of regular expressions over the
text): the number of user markers the format writes (role headings, prompt
lines, user records with typed text, minus the ones that only hold tool
output) against the turns found, and where the last turn starts against the
size of the file. They are tuned never to fire on a file that parses right
(every file of the real corpus and of the fixtures is checked in the tests), so
a warning means: look at this file.
"""

from __future__ import annotations

import re

from ccm_tui.restore.turns import ParsedTranscript

_MIN_MARKERS = 8  # below this, a file is too short for counts to say anything
_MARKER_RATIO = 2.0  # markers per turn beyond which the parse looks short
_TAIL_SHARE = 0.6
_TAIL_MIN_CHARS = 20_000
_TAIL_MIN_MARKERS = 3

# The first non-blank line after a marker, past a timestamp line under it.
_DATE = r"(?:\d{4}-\d{2}-\d{2}|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|\d{1,2}:\d{2})"
_NEXT = r"(?:[ \t]*\n)*(?:[*_> \t\[]*" + _DATE + r"[^\n]{0,40}\n(?:[ \t]*\n)*)?(?P<next>[^\n]*)"
_TOOLISH = re.compile(
    r"^\s*(?:[^\x00-\x7f\w\s]{1,4}\s*)?(?:<details|<tool_result|<function_results|\*\*Tool|Tool (?:result|output)|"
    r">\s*\*\*Tool|\[[^\n]*\] Result:|```|\[\s*(?:\{|$)|\[Request interrupted by user|"
    r"This session is being continued from a previous conversation)",
    re.IGNORECASE,
)
_STAMP = re.compile(r"^[*_>\s\[]*" + _DATE)

# Per format: a regular expression whose matches are the user's messages as the file writes them.
_USER_MARKERS: dict[str, re.Pattern[str]] = {
    "markdown": re.compile(
        r"^(?:#{1,4}\s+(?:\*\*)?(?:\d{1,5}[.)]\s+)?(?:[^\x00-\x7f\w\s]{1,4}\s*)?"
        r"(?:human|user|you|me|prompt|question)\b[^\n]*|"
        r"\*\*(?:human|user|you|me|prompt|question)(?::\*\*|\*\*:)[^\n]*)\n" + _NEXT,
        re.IGNORECASE | re.MULTILINE,
    ),
    "gemini-share": re.compile(r"^[^\n#]{0,12}## USER\b[^\n]*\n" + _NEXT, re.MULTILINE),
    "specstory": re.compile(r"^_\*\*User\b(?! \(sidechain\))[^\n]*\n" + _NEXT, re.MULTILINE),
    "opencode-export": re.compile(r"^## User[ \t]*\n" + _NEXT, re.MULTILINE),
    "claude-code-terminal": re.compile(r"^[>❯] (?P<next>[^/\n][^\n]*)$", re.MULTILINE),
    "claude-code": re.compile(
        r'"role"\s*:\s*"user"\s*,\s*"content"\s*:\s*"(?!Caveat|This session is being continued)(?P<next>[^"\\<\[])'
    ),
    "codex": re.compile(
        r'"role"\s*:\s*"user"\s*,\s*"content"\s*:\s*\[\s*\{\s*"type"\s*:\s*"input_text"\s*,\s*"text"\s*:\s*"'
        r"(?P<next>[^\"\\<#])"
    ),
}
_RECORD_FORMATS = {"claude-code", "codex"}


def check_parse(text: str, fmt: str, parsed: ParsedTranscript) -> list[str]:
    """One-line warnings when ``parsed`` (of ``text``, read as ``fmt``) disagrees with the file's structure."""
    warnings: list[str] = []
    marker = _USER_MARKERS.get(fmt)
    if marker is None:
        return warnings
    positions = [match.start() for match in marker.finditer(text) if _is_request(match.group("next"))]
    turns = len(parsed.turns)
    if len(positions) >= _MIN_MARKERS and len(positions) > _MARKER_RATIO * turns + _MIN_MARKERS:
        warnings.append(_count_warning(fmt, turns, len(positions)))
    if fmt not in _RECORD_FORMATS:
        tail = _tail_warning(text, parsed, positions)
        if tail:
            warnings.append(tail)
    return warnings


def _is_request(first_line: str) -> bool:
    """Is the first line of a user message the human's words (not tool output, not a bare timestamp)?"""
    return not _TOOLISH.match(first_line) and not (_STAMP.match(first_line) and len(first_line) < 40)


def _count_warning(fmt: str, turns: int, markers: int) -> str:
    if fmt in _RECORD_FORMATS:
        return (
            f"{markers} user records carry typed text but only {turns} turns were found: "
            "check the format (--format) or report the file"
        )
    return (
        f"{turns} turns found but the file has {markers} user messages (role headings or prompts that are not "
        "tool output): the parse may have stopped early or merged messages"
    )


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
