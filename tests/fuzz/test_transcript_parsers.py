"""Property tests: no input makes a parser fail with anything but TranscriptError."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccm_tui.restore.parse import FORMATS, parse_transcript
from ccm_tui.restore.turns import TranscriptError

# Markers of every format, so random text often looks like a real transcript.
FRAGMENTS = [
    "\n",
    "\r\n",
    "\r",
    "  ",
    "---\n",
    "```\n",
    "```diff\n",
    "<<<<<<< SEARCH\n",
    "=======\n",
    "# aider chat started at 2025-01-01 10:00:00\n",
    "#### ",
    "####\n",
    "  \n",
    "> ",
    "> Applied edit to ",
    "> Added x.py to the chat\n",
    "> Create new file? (Y)es/(N)o [Yes]: y\n",
    "/ask ",
    "/help ",
    "/clear",
    "_**User**_\n",
    "_**Agent (m)**_\n",
    "_**Assistant**_\n",
    '<tool-use data-tool-type="write">',
    "</tool-use>",
    "<summary>Tool use: **Edit** `a.py`</summary>",
    "Path: `b.py`\n",
    "Read file: c.py\n",
    "## User\n",
    "## Assistant (Build · m · 1s)\n",
    "Tool: edit\n",
    '"filePath": "d.py"',
    "**Output:**\n",
    '{"type":"user","uuid":"u1","parentUuid":null,"message":{"content":"hi"}}\n',
    '{"type":"assistant","uuid":"u2","parentUuid":"u1","message":{"id":"m","content":[{"type":"tool_use",'
    '"id":"t","name":"Write","input":{"file_path":"e.py"}}]}}\n',
    '{"uuid":"x","parentUuid":"x"}\n',
    "[[[[[[[[",
    "⏺ Update(f.py)…\n",
    "  ⎿  User rejected",
    "│ cwd: /p │\n",
    "┃ hello ┃\n",
    "┃ alice (10:42 AM) ┃\n",
    "Read g.py\n",
    "\x1b[31m",
    "\x1b]0;t\x07",
    "\x00",
    "\ufffd",
]
transcript_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=12), max_size=40).map("".join)


@pytest.mark.parametrize("name", sorted(FORMATS))
@settings(max_examples=200, deadline=None)
@given(text=transcript_text | st.text())
def test_parse_never_raises_unexpected_errors(name: str, text: str) -> None:
    try:
        parsed = FORMATS[name].parse(text)
    except TranscriptError:
        return
    assert parsed.format == name
    assert [turn.turn for turn in parsed.turns] == list(range(1, len(parsed.turns) + 1))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.binary(max_size=2000) | transcript_text.map(str.encode),
    fmt=st.sampled_from(["auto", *sorted(FORMATS)]),
)
def test_parse_transcript_never_raises_unexpected_errors(tmp_path: Path, data: bytes, fmt: str) -> None:
    path = tmp_path / "transcript.txt"
    path.write_bytes(data)
    try:
        parse_transcript(path, fmt=fmt)
    except TranscriptError:
        pass
