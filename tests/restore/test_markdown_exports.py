"""Markdown chat exports: tool output under the user's heading, timestamps, broken fences; and sanity warnings."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.restore.formats import markdown_chat
from ccm_tui.restore.formats._markdown import fence_opener, is_timestamp, split_tool_output
from ccm_tui.restore.parse import parse_transcript
from ccm_tui.restore.sanity import check_parse
from ccm_tui.restore.turns import ParsedTranscript, to_parse_only_json

# What a user's own exporter of Claude Code sessions writes: a timestamp line under each heading,
# tool output under "### Human" in <details>, and one tool output that is an exported Markdown file
# itself (headings and an unclosed fence inside the fenced block).
QUOTED_EXPORT = """### Human
2025-06-01 10:00:00

read notes.md

### Assistant
2025-06-01 10:00:05

Reading it.

### Human
2025-06-01 10:00:06

<details><summary>Tool output</summary>

```
# Old session

### Human
2025-05-30 09:00:00

first question

### Assistant
2025-05-30 09:00:03

```python
print("never closed")
```

</details>

### Assistant
2025-06-01 10:00:09

It is an older export.
"""


def _session(turns: int) -> str:
    parts = []
    for number in range(1, turns + 1):
        parts.append(f"### Human\n2025-06-01 10:{number:02d}:00\n\nrequest {number}\n")
        parts.append(f"### Assistant\n2025-06-01 10:{number:02d}:30\n\nanswer {number}\n")
        if number == 3:
            parts.append(
                QUOTED_EXPORT.split("\n### Assistant\n2025-06-01 10:00:09")[0].split(
                    "### Human\n2025-06-01 10:00:06\n"
                )[1]
            )
    return "\n".join(parts)


def test_tool_output_under_the_human_heading_is_not_a_turn(tmp_path: Path) -> None:
    path = tmp_path / "session.md"
    path.write_text(QUOTED_EXPORT, encoding="utf-8")
    parsed = parse_transcript(path)
    assert parsed.format == "markdown"
    assert [turn.user for turn in parsed.turns] == ["read notes.md"]
    responses = "\n".join(parsed.turns[0].agent_responses)
    assert "first question" in responses and "It is an older export." in responses
    assert "2025-06-01" not in parsed.turns[0].user


def test_a_broken_fence_inside_a_message_does_not_swallow_the_file(tmp_path: Path) -> None:
    path = tmp_path / "long.md"
    path.write_text(_session(12), encoding="utf-8")
    parsed = parse_transcript(path)
    assert [turn.user for turn in parsed.turns] == [f"request {n}" for n in range(1, 13)]
    assert parsed.warnings == []


def test_unclosed_fence_at_the_end_of_a_message_falls_back_to_the_next_heading() -> None:
    text = "## User\n\nshow me\n\n## Assistant\n\n```python\nx = 1\n\n## User\n\nthanks\n\n## Assistant\n\nok\n"
    parsed = markdown_chat.parse(text)
    assert [turn.user for turn in parsed.turns] == ["show me", "thanks"]


def test_a_heading_inside_a_closed_fence_is_code() -> None:
    text = (
        "## User\n\nwrite a README\n\n## Assistant\n\n````markdown\n## User\n\nnot a turn\n````\n\n## User\n\nthanks\n"
    )
    parsed = markdown_chat.parse(text)
    assert [turn.user for turn in parsed.turns] == ["write a README", "thanks"]


def test_tool_labels_and_timestamps() -> None:
    words, tool = split_tool_output("**Tool result:**\n```\nok\n```\n\nnow fix the test")
    assert (words, tool) == ("now fix the test", "**Tool result:**\n```\nok\n```")
    assert is_timestamp("2025-06-01 10:32:07") and is_timestamp("*10:32 AM*") and not is_timestamp("fix 10 tests")
    assert fence_opener("````md") == ("`", 4) and fence_opener("```a`b") is None


def test_sanity_warns_when_turns_and_structure_disagree() -> None:
    text = _session(30)
    short = ParsedTranscript(format="markdown", turns=markdown_chat.parse(text).turns[:5])
    warnings = check_parse(text, "markdown", short)
    assert warnings and warnings[0].startswith("5 turns found but the file has 3")
    assert all("\n" not in warning for warning in warnings)
    assert check_parse(text, "markdown", markdown_chat.parse(text)) == []


def test_sanity_warns_when_most_of_the_file_follows_the_last_turn() -> None:
    text = _session(40) + ("\nfiller line of the answer" * 2000)
    parsed = markdown_chat.parse(text)
    parsed.turns = parsed.turns[:4]
    assert any("comes after the last turn found" in warning for warning in check_parse(text, "markdown", parsed))


def test_parse_only_json_has_warnings_only_when_there_are_some() -> None:
    parsed = ParsedTranscript(format="markdown", turns=[])
    assert "warnings" not in to_parse_only_json(parsed)
    parsed.warnings = ["7 turns found but the file has 68 user messages"]
    assert to_parse_only_json(parsed)["warnings"] == ["7 turns found but the file has 68 user messages"]
