"""Markdown chat exports: role labels or headings, then the message.

Covers the exports people save from chat UIs and IDE agents:

* headings — ``### Human`` / ``### Assistant``, ``## User`` / ``## ChatGPT``,
  ``## Prompt:`` / ``## Response:`` (levels 1–4, optionally bold, optional colon,
  optionally numbered or after an emoji: ``### 3. user (time)``, ``## 👤 User``);
* bold labels — ``**User:**`` / ``**Assistant:**``, ``**You:**`` / ``**ChatGPT:**``,
  alone on their line or followed by the message.

Cline-family task exports (``**User:**`` / ``**Assistant:**`` blocks separated by
``---``) put tool results in user blocks (``[read_file for 'x'] Result:``) and wrap
the human's words in ``<task>``, ``<feedback>``, ``<answer>`` or ``<user_message>``;
there a user block is a human turn only when it holds one of those, the rest joins
the agent's response, and ``<environment_details>`` is left out; an ``<answer>`` that
is one of the options the agent's question offered (``<suggest>``) was clicked and
is not a request. Artifacts come
from those exports' file tool tags (``<read_file>``, ``<write_to_file>``,
``<apply_diff>``…, with a ``<path>``).

Exports of Claude Code sessions write every record as a message, so a user
message is often not the human: tool output (see :mod:`._markdown`), a message
that is a JSON array of content blocks (tool results; its text blocks are
words, its tool calls name artifacts), Claude Code's compaction summary and
``[Request interrupted by user]`` markers (noted, skipped). A timestamp line
above or under a heading is metadata.
"""

from __future__ import annotations

import re
from pathlib import Path

from ccm_tui.restore.formats._common import TurnBuilder, split_lines, tool_written
from ccm_tui.restore.formats._markdown import (
    closes,
    fence_opener,
    is_timestamp,
    json_blocks,
    message_starts,
    split_tool_output,
)
from ccm_tui.restore.formats.claude_code import describe_blocks
from ccm_tui.restore.formats.cline import NOTICE, is_clicked, offered_options
from ccm_tui.restore.turns import ArtifactAction, ParsedTranscript

NAME = "markdown"

_USER_NAMES = r"human|user|you|me|prompt|question"
_AGENT_NAMES = r"assistant|ai|chatgpt|gpt-?[\w.]*|claude|gemini|bard|copilot|bot|model|response|answer"
# "### Human", "## **User:**", "### Assistant (2025-06-01 10:32)", "## User — 10:32"
_HEADING = re.compile(
    rf"^#{{1,4}}\s+(?:\*\*)?(?:\d{{1,5}}[.)]\s+)?(?:[^\x00-\x7f\w\s]{{1,4}}\s*)?(?P<role>{_USER_NAMES}|{_AGENT_NAMES})(?:\*\*)?\s*:?\s*(?:\*\*)?"
    r"(?:\s*\([^()\n]*\d[^()\n]*\)|\s+[-–—·|]\s+[^\n]*\d[^\n]*)?\s*$",
    re.IGNORECASE,
)
_LABEL = re.compile(
    rf"^\*\*(?P<role>{_USER_NAMES}|{_AGENT_NAMES})(?::\*\*|\*\*:)\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
_USER_ROLE = re.compile(rf"^(?:{_USER_NAMES})$", re.IGNORECASE)
_HUMAN_TAGS = ("task", "feedback", "answer", "user_message")
_HUMAN_TAG = re.compile(r"<(?P<tag>task|feedback|answer|user_message)>\s*(?P<text>.*?)\s*</(?P=tag)>", re.DOTALL)
_TOOL_RESULT = re.compile(r"^\[[^\n]*\] Result:")
_ENVIRONMENT = re.compile(r"<environment_details>.*?(?:</environment_details>|\Z)", re.DOTALL)
_FILE_TOOL = re.compile(
    r"<(?P<tool>read_file|write_to_file|apply_diff|replace_in_file|insert_content|search_and_replace)>"
    r"(?P<body>.*?)</(?P=tool)>",
    re.DOTALL,
)
_PATH_TAG = re.compile(r"<path>\s*(?P<path>[^<\n]+?)\s*</path>")
_TOOL_ACTIONS: dict[str, ArtifactAction] = {
    "read_file": "read",
    "write_to_file": "created",
    "apply_diff": "edited",
    "replace_in_file": "edited",
    "insert_content": "edited",
    "search_and_replace": "edited",
}
_SEPARATOR = re.compile(r"^\s*(?:---+|\*\*\*+|___+)\s*$")


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is a Markdown chat export (kept below the dedicated formats)."""
    roles = {"user": 0, "agent": 0}
    for line in split_lines(head):
        match = _HEADING.match(line) or _LABEL.match(line)
        if match:
            roles["user" if _USER_ROLE.match(match.group("role")) else "agent"] += 1
    if not roles["user"] or not roles["agent"]:
        return 0.0
    return 0.5 if path.suffix.lower() in (".md", ".markdown", ".txt") else 0.4


def parse(text: str) -> ParsedTranscript:
    """Parse a Markdown chat export into turn rounds."""
    lines = split_lines(text)
    builder = TurnBuilder()
    labels = _labels_in_use(lines)
    matches = [_role_match(line, labels) for line in lines]
    starts = message_starts(lines, lambda index: matches[index] is not None)
    title = next(
        (line[2:].strip() for line in lines[: starts[0] if starts else len(lines)] if line.startswith("# ")), None
    )
    blocks: list[tuple[str, int, list[str]]] = []  # role, first line number, lines
    for position, start in enumerate(starts):
        match = matches[start]
        assert match is not None
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        role = "user" if _USER_ROLE.match(match.group("role")) else "agent"
        rest = match.groupdict().get("rest") or ""
        blocks.append((role, start + 1, ([rest] if rest.strip() else []) + lines[start + 1 : end]))
    cline = any(role == "user" and _HUMAN_TAG.search("\n".join(body)) for role, _, body in blocks)
    offered: set[str] = set()  # in a Cline-family export: the options the agent's last question offered
    for role, start, body in blocks:
        _trim(body)
        end = start + len(body)
        content = "\n".join(body).strip()
        blocks_in = json_blocks(content)
        if blocks_in is not None:
            _json_message(builder, role, blocks_in, start, end)
        elif role == "agent":
            builder.agent(content, start, end)
            _file_tools(builder, content, start)
            offered = offered_options(content) if cline else offered
        elif cline:
            _cline_user(builder, content, start, end, offered)
            offered = set()
        else:
            _plain_user(builder, content, start, end)
    return builder.result(NAME, title=title or None)


def _role_match(line: str, labels: set[str]) -> re.Match[str] | None:
    match = _HEADING.match(line) or _LABEL.match(line)
    return match if match and match.group("role").lower() in labels else None


def _trim(body: list[str]) -> None:
    """Drop the metadata line under a heading (a timestamp), and blank lines, separators and the
    timestamp of the next message at the end."""
    first = next((index for index, line in enumerate(body) if line.strip()), None)
    if first is not None and is_timestamp(body[first]):
        del body[: first + 1]
    while body and (not body[-1].strip() or _SEPARATOR.match(body[-1]) or is_timestamp(body[-1])):
        body.pop()


def _plain_user(builder: TurnBuilder, content: str, start: int, end: int) -> None:
    """A user message: tool output written under the user's heading joins the agent's response."""
    words, tool = split_tool_output(content)
    if tool:
        builder.agent_continue(tool, start)
    marker = tool_written(words)
    if marker:
        builder.note(start, marker, end)
    elif words:
        builder.user(words, start, end)


def _json_message(builder: TurnBuilder, role: str, blocks: list[object], start: int, end: int) -> None:
    """A message written as JSON content blocks: tool results join the response, text is the message."""
    words, tools, files = describe_blocks(blocks)
    if role == "agent":
        builder.agent("\n\n".join(part for part in (words, tools) if part), start, end)
        for path, action in files:
            builder.artifact(path, action, start)
        return
    if tools:
        builder.agent_continue(tools, start)
    _plain_user(builder, words, start, end)


def _role_lines(lines: list[str]):
    """Each line with its role heading or label match; lines inside fenced code never match."""
    fence: tuple[str, int] | None = None
    for number, line in enumerate(lines, start=1):
        if fence is not None:
            fence = None if closes(line, fence) else fence
            yield number, line, None
            continue
        fence = fence_opener(line)
        yield number, line, None if fence else (_HEADING.match(line) or _LABEL.match(line))


def _labels_in_use(lines: list[str]) -> set[str]:
    """The user and agent label words the export uses: the first of each kind, and a word that takes
    over where the ones before it stop (a file that goes from ``**User:**`` to ``### Human``, two
    exports put together). A word met between uses of the first (a ``**Question:**`` the model
    writes in its answers) is text."""
    spans: dict[str, list[int]] = {}  # word -> [first line, last line], in order of first use
    for number, _line, match in _role_lines(lines):
        if match:
            span = spans.setdefault(match.group("role").lower(), [number, number])
            span[1] = number
    words: set[str] = set()
    for kind_is_user in (True, False):
        last_line = 0
        for word, (first, last) in spans.items():
            if bool(_USER_ROLE.match(word)) == kind_is_user and first > last_line:
                words.add(word)
                last_line = last
    return words


def _cline_user(builder: TurnBuilder, content: str, start: int, end: int, offered: set[str]) -> None:
    """A user block of a Cline-family export: the person's tagged words are a request, also inside a block
    of tool results; an option of the agent's question they clicked is not."""
    content = _ENVIRONMENT.sub("", content).strip()
    tagged = [(m.group("tag"), m.group("text")) for m in _HUMAN_TAG.finditer(content)]
    human = [words for tag, words in tagged if not is_clicked(tag, words, offered)]
    if _TOOL_RESULT.match(content):
        builder.agent_continue(_HUMAN_TAG.sub("", content).strip(), start)
    if len(human) < len(tagged):
        builder.note(start, "an option offered by the agent's question, clicked (not a new request)")
    if any(words.strip() for words in human):
        builder.user("\n\n".join(human), start, end)
    elif not tagged and not _TOOL_RESULT.match(content) and not NOTICE.match(content) and content:
        builder.user(content, start, end)


def _file_tools(builder: TurnBuilder, content: str, line: int) -> None:
    for call in _FILE_TOOL.finditer(content):
        action = _TOOL_ACTIONS[call.group("tool")]
        for path in _PATH_TAG.finditer(call.group("body")):
            builder.artifact(path.group("path"), action, line + content[: call.start()].count("\n"))
