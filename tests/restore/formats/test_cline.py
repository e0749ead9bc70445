"""Cline-family transcripts: task exports (task and feedback turns, tool results joined to the response, file
tools as artifacts) and the JSON task histories."""

from __future__ import annotations

import json
from pathlib import Path

from ccm_tui.restore.formats import cline, markdown_chat
from ccm_tui.restore.parse import detect_format, parse_transcript
from tests.helpers.transcripts import FIXTURES, fixture_text


def test_cline_family_task_export_turns_are_task_and_feedback() -> None:
    parsed = markdown_chat.parse(fixture_text("bob-task-history.md"))

    assert detect_format(FIXTURES / "bob-task-history.md") == "markdown"
    assert [t.user.splitlines()[0] for t in parsed.turns] == [
        "You are IBM Bob working inside the CodeQuest Bob hackathon repository.",
        "ㅌPlease refine the visual direction so CodeQuest Bob balances IBM enterprise trust with a small "
        "amount of memorable, kit-like growth charm.",
    ]
    assert "environment_details" not in parsed.turns[0].user
    assert parsed.turns[0].agent_responses[0].startswith("# Conversation Summary")


def test_cline_tool_results_join_the_response_and_file_tools_are_artifacts() -> None:
    text = (
        "**User:**\n\n<task>\nfix the cli\n</task>\n<environment_details>\nx\n</environment_details>\n\n---\n\n"
        "**Assistant:**\n\nReading it.\n\n<read_file>\n<args>\n<file>\n<path>verdict/cli.py</path>\n</file>\n"
        "</args>\n</read_file>\n\n---\n\n"
        "**User:**\n\n[read_file for 'verdict/cli.py'] Result:\n<files>def main(): ...</files>\n\n---\n\n"
        "**Assistant:**\n\n<apply_diff>\n<path>verdict/cli.py</path>\n<diff>...</diff>\n</apply_diff>\n\n---\n\n"
        "**User:**\n\n[apply_diff for 'verdict/cli.py'] Result:\nok\n\n---\n\n"
    )

    parsed = markdown_chat.parse(text)

    assert [t.user for t in parsed.turns] == ["fix the cli"]
    assert "[read_file for 'verdict/cli.py'] Result:\n<files>def main(): ...</files>" in "\n".join(
        parsed.turns[0].agent_responses
    )
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [
        ("verdict/cli.py", "read"),
        ("verdict/cli.py", "edited"),
    ]


def _cline_history() -> list[object]:
    environment = "<environment_details>\n# Visual Studio Code Visible Files\nDockerfile\n</environment_details>"
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<task>\nadd a BeginTurn game action\n</task>"},
                {"type": "text", "text": "\n# task_progress RECOMMENDED\n\nWhen starting a new task..."},
                {"type": "text", "text": environment},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me read the action system."},
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "ActionSystem.cs"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[read_file for 'ActionSystem.cs'] Result:\nusing System;\n"
                    + "// line\n" * 100
                    + "// <task>not a request</task>",
                },
                {"type": "text", "text": environment},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "write_to_file",
                    "input": {"absolutePath": "/w/BeginTurnGA.cs", "content": "x"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[execute_command for 'tr '[:upper:]' '[:lower:]''] Result:\nCommand executed.",
                },
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t3", "name": "attempt_completion", "input": {"result": "done"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[attempt_completion] Result:\n\nThe user has provided feedback on the results.\n<feedback>\nalso add a .meta file\n</feedback>",
                },
                {"type": "text", "text": environment},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "<ask_followup_question><question>Which GUID?</question></ask_followup_question>",
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[ask_followup_question for 'Which GUID?'] Result:\n<answer>\na random one\n</answer>",
                }
            ],
        },
        {
            "role": "assistant",
            "content": "<write_to_file>\n<path>BeginTurnGA.cs.meta</path>\n<content>guid</content>\n</write_to_file>",
        },
        {"role": "user", "content": 42},
    ]


def test_cline_history_turns_are_task_feedback_and_answer(tmp_path: Path) -> None:
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(_cline_history(), separators=(",", ":")), encoding="utf-8")
    assert detect_format(path) == "cline"
    parsed = parse_transcript(path)
    assert [turn.user for turn in parsed.turns] == [
        "add a BeginTurn game action",
        "also add a .meta file",
        "a random one",
    ]
    first = parsed.turns[0]
    assert [(a.path, a.action) for a in first.artifacts] == [
        ("ActionSystem.cs", "read"),
        ("/w/BeginTurnGA.cs", "created"),
    ]
    assert "Command executed." in "\n".join(first.agent_responses)
    assert "environment_details" not in "\n".join(first.agent_responses)
    assert [(a.path, a.action) for a in parsed.turns[2].artifacts] == [("BeginTurnGA.cs.meta", "created")]
    assert any("unexpected shape" in note for note in parsed.skipped)


def test_cline_markdown_task_export_is_not_taken_for_the_json_history() -> None:
    assert cline.sniff(fixture_text("bob-task-history.md")[:4096], Path("x.md")) == 0.0
