"""Markdown chat exports: tool output under the user's heading, timestamps, broken fences; and sanity warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccm_tui.restore.formats import markdown_chat
from ccm_tui.restore.formats._markdown import fence_opener, is_timestamp, split_tool_output
from ccm_tui.restore.parse import parse_transcript
from ccm_tui.restore.sanity import check_parse
from ccm_tui.restore.turns import ParsedTranscript, TranscriptError, to_parse_only_json

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


FENCE = "```"
# A Markdown file an export tool read, quoted whole: headings, a timestamp line and a fence of its own.
INNER_EXPORT = (
    f"### Human\n*2025-05-30 09:00:00*\n\nhi\n\n### Assistant\n\n{FENCE}python\nprint(1)\n{FENCE}\n\n### Human\n\nmore"
)
STAMPS = ["_Jun 1, 2025, 10:32 AM_", "Sunday, June 1, 2025 at 10:33", "*1 June 2025 10:36*", "🕐 2025-06-01 10:37:00"]


def _export(messages: list[tuple[str, str]]) -> str:
    return "# Export\n\n" + "".join(
        f"### {role}\n{STAMPS[n % len(STAMPS)]}\n\n{body}\n\n" for n, (role, body) in enumerate(messages)
    )


def test_tool_output_under_the_human_heading_in_any_wording() -> None:
    text = _export(
        [
            ("Human", "Fix the failing build please."),
            ("Assistant", "Reading the log."),
            (
                "Human",
                f"<details><summary>Bash: npm run build</summary>\n\n{FENCE}\nERR! missing script\n{FENCE}\n</details>",
            ),
            ("Assistant", "Reading the file."),
            (
                "Human",
                f'<details>\n<summary>📄 Read package.json</summary>\n\n{FENCE}json\n{{"name": "x"}}\n{FENCE}\n</details>',
            ),
            ("Assistant", "And the notes."),
            ("Human", "<details><summary>notes.md</summary>\n\nplain notes\n</details>"),  # the whole message
            ("Assistant", "Checking the old export."),
            ("Human", f"**Tool output:**\n\n{FENCE}\n{INNER_EXPORT}\n{FENCE}"),
            ("Assistant", "Fixed the script entry."),
            ("Human", "Great, now run the tests."),
            ("Assistant", "Running."),
            ("Human", f"Tool result (toolu_01ABC):\n{FENCE}\n5 passed\n{FENCE}"),
            ("Assistant", "All good."),
            ("Human", "Ship it."),
        ]
    )

    parsed = markdown_chat.parse(text)

    assert [turn.user for turn in parsed.turns] == [
        "Fix the failing build please.",
        "Great, now run the tests.",
        "Ship it.",
    ]
    first = "\n".join(parsed.turns[0].agent_responses)
    assert "ERR! missing script" in first and "plain notes" in first and "print(1)" in first
    assert "Fixed the script entry." in first
    assert check_parse(text, "markdown", parsed) == []


def test_timestamps_with_month_names_are_metadata() -> None:
    others = ["> 2025-06-01 10:35", "`2025-06-01 10:34:07`", "Mon, 02 Jun 2025 10:00:00 +0200", "2025年6月1日 10:32"]
    for stamp in STAMPS + others:
        assert is_timestamp(stamp), stamp
    for text in ["June was hot", "fix 10 tests", "May I ask", "Step 1: 10:30 meeting", "PR 1234", "日本語"]:
        assert not is_timestamp(text), text


def test_an_export_that_switches_label_style_keeps_every_request() -> None:
    text = "**User:** hello there\n\n**Assistant:** hi\n\n" + "".join(
        f"### Human\n\nrequest {n}\n\n### Assistant\n\nDone {n}.\n\n" for n in range(6)
    )

    parsed = markdown_chat.parse(text)

    assert [turn.user for turn in parsed.turns] == ["hello there"] + [f"request {n}" for n in range(6)]


def test_a_labels_like_word_the_model_writes_now_and_then_is_not_a_role() -> None:
    answer = "Here are the options.\n\n**Question:** which one?\n\n**Answer:** the first."
    text = "".join(f"## User\n\nrequest {n}\n\n## Assistant\n\n{answer}\n\n" for n in range(12))

    parsed = markdown_chat.parse(text)

    assert [turn.user for turn in parsed.turns] == [f"request {n}" for n in range(12)]


@pytest.mark.parametrize(
    ("user", "agent"),
    [("### Human", "### Assistant"), ("## User", "## ChatGPT"), ("## Prompt:", "## Response:")],
)
def test_heading_style_exports(tmp_path: Path, user: str, agent: str) -> None:
    path = tmp_path / "chat.md"
    path.write_text(
        f"# Debugging the parser\n\n{user}\n\nwhy does it crash?\n\n{agent}\n\nBecause of X.\n\n"
        f"{user}\n\nfix it\n\n{agent}\n\nDone.\n",
        encoding="utf-8",
    )

    parsed = parse_transcript(path)

    assert parsed.format == "markdown" and parsed.title == "Debugging the parser"
    assert [(t.user, t.agent_responses) for t in parsed.turns] == [
        ("why does it crash?", ["Because of X."]),
        ("fix it", ["Done."]),
    ]


def test_bold_label_exports_with_text_on_the_label_line(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    path.write_text("**User:** hello there\n\n**Assistant:** hi!\nhow can I help?\n\n**User:** bye\n")

    parsed = parse_transcript(path)

    assert [(t.user, t.agent_responses) for t in parsed.turns] == [
        ("hello there", ["hi!\nhow can I help?"]),
        ("bye", []),
    ]


def test_plain_markdown_is_still_undetected(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\n## User stories\n\nsome text\n")
    with pytest.raises(TranscriptError, match="cannot detect the transcript format"):
        parse_transcript(path)


def test_markdown_labels_inside_an_answer_or_a_code_block_are_not_turns() -> None:
    text = (
        "**User:** What does len([]) return?\n\n"
        "**Assistant:** A quiz, then:\n\n"
        "**Question:** What does len([]) return?\n"
        "**Answer:** 0\n\n"
        "```markdown\n### Human\nnot a turn either\n```\n\n"
        "**User:** thanks\n\n"
        "**Assistant:** You're welcome.\n"
    )
    parsed = markdown_chat.parse(text)
    assert [t.user for t in parsed.turns] == ["What does len([]) return?", "thanks"]
    assert "**Question:**" in parsed.turns[0].agent_responses[0]
    assert "### Human" in parsed.turns[0].agent_responses[0]


EXTRACTOR = """# Claude Conversation Log

Session ID: 2ca8e21f
Date: 2025-11-19 22:26:51

---

## 👤 User

audit the README

---

## 🤖 Claude

🔧 Using tool: Read
Input: {
  "file_path": "README.md"
}

---

## 👤 User

[Request interrupted by user for tool use]

---

## 👤 User

go on, then commit

---

## 🤖 Claude

Committed.
"""


# cctrace: timestamp line above each heading, tool results under the user's heading after an emoji label,
# and a tool output quoting Markdown whose inner fences no longer balance.
CCTRACE = """# Claude Code Session Export

---

**[2025-07-02 20:06:59]**

### 👤 User

where are sessions stored?

---

**[2025-07-02 21:56:17]**

### 🤖 Assistant (claude-opus-4-20250514)

🔧 **Tool Use: WebSearch** (ID: toolu_1)
```json
{"query": "claude code sessions"}
```

---

**[2025-07-02 21:56:17]**

### 👤 User

📊 **Tool Result:**
```
Sessions live here:
```
~/.claude/projects/
└── session.jsonl
```

**Notes:**
- one file per session
```

---

**[2025-07-02 21:56:20]**

### 🤖 Assistant (claude-opus-4-20250514)

They are under ~/.claude/projects/.
"""


def _json_export(requests: int, tool_results: int) -> str:
    """An export that writes message content as JSON blocks, as '### User' / '### Assistant' + '> date'."""
    parts = ["# Claude Session Export\n\n## Conversation\n"]
    for number in range(requests):
        parts.append(f"### User\n> 12/1/2025, 2:{number:02d}:24 PM\n\nrequest {number}\n\n---\n")
        for call in range(tool_results):
            use = [{"type": "tool_use", "id": f"t{number}{call}", "name": "Read", "input": {"file_path": "a.py"}}]
            result = [
                {"tool_use_id": f"t{number}{call}", "type": "tool_result", "content": [{"type": "text", "text": "x"}]}
            ]
            parts.append(f"### Assistant\n> 12/1/2025, 2:{number:02d}:29 PM\n\n{json.dumps(use, indent=2)}\n\n---\n")
            parts.append(f"### User\n> 12/1/2025, 2:{number:02d}:30 PM\n\n{json.dumps(result, indent=2)}\n\n---\n")
        answer = [{"type": "text", "text": f"answer {number}"}]
        parts.append(f"### Assistant\n> 12/1/2025, 2:{number:02d}:39 PM\n\n{json.dumps(answer, indent=2)}\n\n---\n")
    return "\n".join(parts)


MD_PATH = Path("session.md")

NUMBERED = """----
## Chat Export

- Message count: 3
----

## Conversation

### 1. user (2026-02-16T04:58:26.141Z)

Design a client for the server API

Called the Read tool with the following input: {"filePath":"core/"}

### 2. assistant (2026-02-16T04:58:26.202Z)

_No text content captured for this message._

### 3. assistant (2026-02-16T04:58:36.685Z)

Done.
"""


def test_emoji_headings_and_interrupt_markers() -> None:
    parsed = markdown_chat.parse(EXTRACTOR)
    assert markdown_chat.sniff(EXTRACTOR, MD_PATH) > 0
    assert [turn.user for turn in parsed.turns] == ["audit the README", "go on, then commit"]
    assert any("interrupt marker" in note for note in parsed.skipped)


def test_tool_result_under_the_user_heading_with_unbalanced_inner_fences() -> None:
    parsed = markdown_chat.parse(CCTRACE)
    assert markdown_chat.sniff(CCTRACE, MD_PATH) > 0
    assert [turn.user for turn in parsed.turns] == ["where are sessions stored?"]
    response = "\n".join(parsed.turns[0].agent_responses)
    assert "one file per session" in response and "under ~/.claude/projects/" in response
    assert "**[2025" not in response + parsed.turns[0].user


def test_json_content_blocks_tool_results_are_not_turns_and_calls_name_files() -> None:
    text = _json_export(requests=12, tool_results=4)
    parsed = markdown_chat.parse(text)
    assert [turn.user for turn in parsed.turns] == [f"request {n}" for n in range(12)]
    turn = parsed.turns[0]
    assert "[Read] a.py" in turn.agent_responses[0] and "[result] x" in turn.agent_responses[0]
    assert turn.agent_responses[-1] == "answer 0"
    assert [(a.path, a.action) for a in turn.artifacts] == [("a.py", "read")]
    assert check_parse(text, "markdown", parsed) == []


def test_numbered_role_headings() -> None:
    parsed = markdown_chat.parse(NUMBERED)
    assert markdown_chat.sniff(NUMBERED, MD_PATH) > 0
    assert len(parsed.turns) == 1 and parsed.turns[0].user.startswith("Design a client")
    assert parsed.turns[0].agent_responses[-1] == "Done."
