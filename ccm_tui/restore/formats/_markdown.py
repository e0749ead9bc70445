"""Markdown helpers shared by the chat-export parsers: fences, message bounds, tool output, timestamps.

* Fences follow CommonMark: an opening fence is three or more backticks or
  tildes (indented at most three spaces); it is closed by a line of the same
  character, at least as long, with nothing after it. Exporters copy Markdown
  into fenced blocks unescaped, so inside a fence a fence line with an info
  string (```` ```python ````) opens a nested block that the next bare fence
  line closes.
* :func:`message_starts` picks, among the lines that look like role headings,
  those that really start a message: a heading inside a fenced block or a
  ``<details>`` block of the message before does not, as long as that block is
  closed (a block never closed does not swallow the rest of the file: the
  heading ends the message). A fence opened inside a ``<details>`` block ends
  with it. A ``<details>`` block or a fence right under a tool-output label
  may quote a whole export, headings and all; any other fence must close
  before the next heading.
* :func:`split_tool_output` separates tool output written into a message
  from the words around it: a message that is nothing but ``<details>``
  blocks, a ``<details>`` block whose summary names tool output ("Tool
  output", "Result") or a tool ("Bash: npm test", "📄 Read x", "Grep(...)",
  "mcp__…"), a ``**Tool result**`` or ``Tool result (toolu_…):`` label and
  what follows it, ``<tool_result>``… A fenced tool output may quote Markdown
  with fences of its own, unbalanced once exported (a bare fence line that
  opens a nested block reads as the close): a bare fence line followed
  directly by text, not by a blank line, opens a nested block when the
  message has the fence lines to close it.
* :func:`json_blocks` reads a message written as a JSON array of content
  blocks (``[{"type": "tool_result", ...}]``), as some exporters copy them.
* :func:`is_timestamp` (:mod:`._timestamp`) tells a metadata line
  (``2025-06-01 10:32:07``, ``_Jun 1, 2025, 10:32 AM_``, ``*1 June 2025 10:36*``)
  from text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ccm_tui.restore.formats._timestamp import is_timestamp

__all__ = ["closes", "fence_opener", "is_timestamp", "json_blocks", "message_starts", "split_tool_output"]

_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_DETAILS_OPEN = re.compile(r"<details\b", re.IGNORECASE)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.IGNORECASE)
_SUMMARY = re.compile(r"<summary>(?P<text>.*?)</summary>", re.IGNORECASE | re.DOTALL)
# What names tool output in a <details> summary: a word such as "output" or "result", a tool's name
# first ("Bash: npm test", "📄 Read package.json", "mcp__github__get_issue"), or a call ("Grep(...)").
_TOOL_WORDS = re.compile(r"\b(?:tool|output|result|function|command|observation|stdout|stderr)s?\b", re.IGNORECASE)
_TOOL_NAME = re.compile(
    r"^(?:bash|read|write|edit|multi_?edit|glob|grep|ls|web_?fetch|web_?search|task|agent|todo_?write|"
    r"notebook_?(?:edit|read)|bash_?output|kill_?shell|exit_?plan_?mode|skill|slash_?command|shell|exec_command|"
    r"apply_patch|update_plan|read_file|write_file|replace|run_shell_command|list_directory|search_file_content|"
    r"execute_command|list_files|search_files|replace_in_file|write_to_file|str_replace\w*|view|create_file|"
    r"run_command|terminal|mcp__\S+)(?:\b|$)|^[A-Za-z_][\w.-]*\(",
    re.IGNORECASE,
)
_SUMMARY_NOISE = re.compile(r"<[^>]*>|[^\w\s(:./-]")
_SYMBOL = r"(?:[^\x00-\x7f\w\s]{1,4}\s*)?"  # an emoji before a label: "📊 **Tool Result:**"
_TOOL_LABEL = re.compile(
    r"^\s*(?:>\s*)?"
    + _SYMBOL
    + r"(?:\*\*|__)?\[?(?:tool|function|command)(?:[ _](?:result|output|response|use|call)s?)?\]?"
    r"(?:\s*\([^()\n]{1,80}\))?(?:\*\*|__)?\s*[:：]?\s*(?:\*\*|__)?(?:\s+`?[\w.:/-]+`?)?\s*$|"
    r"^\s*(?:>\s*)?"
    + _SYMBOL
    + r"(?:\*\*|__)(?:tool|function)(?:[ _](?:result|output|response|use|call)s?)?\s*[:：]\s*(?:\*\*|__).*$",
    re.IGNORECASE,
)
_TOOL_TAG = re.compile(
    r"<(?P<tag>tool_result|tool_use_result|function_results|tool_output)\b[^>]*>.*?(?:</(?P=tag)>|\Z)", re.DOTALL
)


def fence_opener(line: str) -> tuple[str, int] | None:
    """The fence character and length when ``line`` opens a fenced block."""
    match = _FENCE.match(line)
    if match is None:
        return None
    fence = match.group("fence")
    if fence[0] == "`" and "`" in match.group("info"):
        return None  # a backtick fence's info string has no backtick (CommonMark)
    return fence[0], len(fence)


def closes(line: str, fence: tuple[str, int]) -> bool:
    """Does ``line`` close a block opened with ``fence``?"""
    match = _FENCE.match(line)
    if match is None or match.group("info").strip():
        return False
    run = match.group("fence")
    return run[0] == fence[0] and len(run) >= fence[1]


class _Blocks:
    """Fence and ``<details>`` state while reading one message.

    Fences nest the way exporters write them when they copy Markdown into a
    fenced block unescaped: inside a fence, a fence line of the same character
    with an info string (```` ```python ````) opens an inner block and a bare
    fence line closes the innermost block it can (one at least as long closes
    every inner one too). A fence opened right under a tool-output label
    (``**Tool output:**``) is tool output, which may quote a whole export.
    """

    def __init__(self) -> None:
        self.fences: list[tuple[str, int]] = []
        self.details = 0
        self.labelled = False
        self._label_above = False

    @property
    def fence(self) -> tuple[str, int] | None:
        return self.fences[0] if self.fences else None

    def copy(self) -> _Blocks:
        probe = _Blocks()
        probe.fences, probe.details, probe.labelled = list(self.fences), self.details, self.labelled
        return probe

    def read(self, line: str) -> None:
        if self.fences:
            self._read_fenced(line)
            return
        opener = fence_opener(line)
        if opener is not None:
            self.fences = [opener]
            self.labelled = self._label_above
            return
        self.details += len(_DETAILS_OPEN.findall(line)) - len(_DETAILS_CLOSE.findall(line))
        self.details = max(self.details, 0)
        if line.strip():
            self._label_above = _TOOL_LABEL.match(line) is not None

    def _read_fenced(self, line: str) -> None:
        match = _FENCE.match(line)
        if match is not None and match.group("fence")[0] == self.fences[0][0]:
            run = len(match.group("fence"))
            if match.group("info").strip():
                if fence_opener(line) is not None and run <= self.fences[-1][1]:
                    self.fences.append((match.group("fence")[0], run))
                return
            popped = self.fences.pop() if self.fences[-1][1] <= run else None
            while popped and self.fences and popped[1] < run and self.fences[-1][1] <= run:
                popped = self.fences.pop()  # a longer fence line closes the outer blocks too
            if not self.fences:
                self._label_above = False
            return
        if self.details and _DETAILS_CLOSE.search(line):
            self.fences = []  # a fence opened inside <details> ends with it
            self.details = max(0, self.details - len(_DETAILS_CLOSE.findall(line)))

    @property
    def open(self) -> bool:
        return bool(self.fences) or self.details > 0


def message_starts(lines: list[str], is_heading: Callable[[int], bool]) -> list[int]:
    """Indexes of the role headings that start a message (see the module docstring)."""
    candidates = [index for index in range(len(lines)) if is_heading(index)]
    budget = [_LOOKAHEAD_BUDGET + 2 * len(lines)]  # look-ahead lines left: bounded work on any input
    starts: list[int] = []
    blocks = _Blocks()
    position = 0
    for next_position, candidate in enumerate(candidates):
        if starts:
            for index in range(position, candidate):
                blocks.read(lines[index])
            position = candidate
            inside = not _after_blank(lines, candidate) or _closed_later(
                lines, blocks, candidate, candidates[next_position + 1 : next_position + 2], budget
            )
            if blocks.open and inside:
                continue
        starts.append(candidate)
        blocks = _Blocks()
        position = candidate + 1
    return starts


def _after_blank(lines: list[str], index: int) -> bool:
    previous = lines[index - 1].strip() if index else ""
    return not previous or previous in ("---", "***", "___")


def _closed_later(lines: list[str], blocks: _Blocks, start: int, later: list[int], budget: list[int]) -> bool:
    """Is the block open at heading ``start`` closed before the next heading that could end it?

    A ``<details>`` block or a labelled tool-output fence may hold headings (a
    tool output quoting a whole export), so for them the look-ahead runs to
    their end; any other fence must close before the next heading.
    """
    quoting = blocks.details > 0 or blocks.labelled
    limit = later[0] if later and not quoting else len(lines)
    probe = blocks.copy()
    for index in range(start, min(limit, start + _LOOKAHEAD)):
        budget[0] -= 1
        if budget[0] < 0:
            return False  # out of look-ahead: an open block no longer hides headings
        probe.read(lines[index])
        if not probe.open:
            return True
    return False


_LOOKAHEAD = 20_000
_LOOKAHEAD_BUDGET = 200_000


def split_tool_output(text: str) -> tuple[str, str]:
    """``(words, tool output)`` of one message: tool output blocks taken out of the words."""
    tool: list[str] = []

    def take(match: re.Match[str]) -> str:
        tool.append(match.group(0))
        return ""

    text = _TOOL_TAG.sub(take, text)
    lines = text.split("\n")
    if _details_only(lines):
        return "", "\n\n".join([*tool, text.strip()]).strip()
    kept: list[str] = []
    index = 0
    while index < len(lines):
        end = _tool_block_end(lines, index)
        if end > index:
            tool.append("\n".join(lines[index:end]))
            index = end
        else:
            kept.append(lines[index])
            index += 1
    return "\n".join(kept).strip(), "\n\n".join(piece.strip() for piece in tool if piece.strip())


def _tool_block_end(lines: list[str], index: int) -> int:
    """End of a tool-output block starting at ``index`` (``index`` itself when none starts there)."""
    line = lines[index]
    if _DETAILS_OPEN.search(line) and _names_tool_output(_joined(lines, index, 3)):
        return _details_end(lines, index)
    if _TOOL_LABEL.match(line):
        return _labelled_end(lines, index + 1)
    return index


def _names_tool_output(head: str) -> bool:
    """Does the ``<summary>`` of a details block opening ``head`` name tool output?"""
    summary = _SUMMARY.search(head)
    if summary is None:
        return False
    text = _SUMMARY_NOISE.sub(" ", summary.group("text")).strip()
    return bool(_TOOL_WORDS.search(text) or _TOOL_NAME.search(text))


def _details_only(lines: list[str]) -> bool:
    """Is a message nothing but ``<details>`` blocks? Under the user's heading that is what an
    exporter wrote for tool output (the user's own words are never folded away)."""
    index = 0
    found = False
    while index < len(lines):
        if not lines[index].strip():
            index += 1
            continue
        if not lines[index].lstrip().lower().startswith("<details"):
            return False
        index = _details_end(lines, index)
        found = True
    return found


def _joined(lines: list[str], index: int, count: int) -> str:
    return "\n".join(lines[index : index + count])


def _details_end(lines: list[str], start: int) -> int:
    depth = 0
    fence: tuple[str, int] | None = None
    for index in range(start, len(lines)):
        line = lines[index]
        if fence is not None:
            fence = None if closes(line, fence) else fence
            if fence is not None and not _DETAILS_CLOSE.search(line):
                continue
        elif fence_opener(line) and index > start:
            fence = fence_opener(line)
            continue
        depth += len(_DETAILS_OPEN.findall(line)) - len(_DETAILS_CLOSE.findall(line))
        if depth <= 0 and index >= start:
            return index + 1
    return len(lines)


def _labelled_end(lines: list[str], index: int) -> int:
    """After a ``**Tool result**`` label: its fenced block or details block, else its paragraph."""
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index >= len(lines):
        return index
    opener = fence_opener(lines[index])
    if opener is not None:
        nested = _nested_fence_end(lines, index, opener)
        if nested is not None:
            return nested
        for end in range(index + 1, len(lines)):
            if closes(lines[end], opener):
                return end + 1
        return len(lines)
    if _DETAILS_OPEN.search(lines[index]):
        return _details_end(lines, index)
    while index < len(lines) and lines[index].strip():
        index += 1
    return index


def _nested_fence_end(lines: list[str], start: int, opener: tuple[str, int]) -> int | None:
    """End of the fenced block opened at ``start`` when fences nest in it: a bare fence line followed
    directly by text opens an inner block (a close is followed by a blank line or the end), as does a
    fence with an info string. None when that reading never closes the block before the message or the
    next tool label ends (which also keeps the work linear in the message)."""
    depth = 1
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if _TOOL_LABEL.match(line):
            return None
        if closes(line, opener):
            following = lines[index + 1] if index + 1 < len(lines) else ""
            depth += 1 if following.strip() and fence_opener(following) is None else -1
        else:
            inner = fence_opener(line)
            depth += 1 if inner is not None and inner[0] == opener[0] else 0
        if depth == 0:
            return index + 1
    return None


def json_blocks(text: str) -> list[Any] | None:
    """The content blocks of a message written as a JSON array of ``{"type": ...}`` objects, else None."""
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")) or '"type"' not in stripped:
        return None
    try:
        blocks = json.loads(stripped, strict=False)
    except (ValueError, RecursionError):
        return None
    if not isinstance(blocks, list) or not blocks:
        return None
    return blocks if all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks) else None
