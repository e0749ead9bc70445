"""opencode /export markdown: exact headings after separators, empty user blocks, tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccm_tui.restore.formats import opencode_export, opencode_json
from ccm_tui.restore.parse import detect_format, parse_transcript
from ccm_tui.restore.turns import ParsedTranscript
from tests.helpers.transcripts import FIXTURES, fixture_text


@pytest.fixture(scope="module")
def parsed() -> ParsedTranscript:
    return opencode_export.parse(fixture_text("opencode-session-export.md"))


def test_non_empty_user_blocks_are_turns(parsed: ParsedTranscript) -> None:
    assert [turn.user.splitlines()[0][:40] for turn in parsed.turns] == [
        "Creating missing BattleUnitManager compo",
        "great, now let's implement the damgepopu",
        "let's continue",
    ]
    assert parsed.title == "Analyzing codebase implementation"


def test_empty_user_blocks_continue_the_previous_turn(parsed: ParsedTranscript) -> None:
    assert "line 66: empty user message (auto-continue)" in parsed.skipped
    assert len(parsed.turns[0].agent_responses) == 3


def test_inner_level_two_headings_stay_in_the_response(parsed: ParsedTranscript) -> None:
    response = "\n".join(parsed.turns[1].agent_responses)
    assert "## Code Quality Review" in response and "## Decision" in response


def test_leading_assistant_output_and_compaction_are_skipped(parsed: ParsedTranscript) -> None:
    assert parsed.skipped[0] == "lines 11-32: text before the first user message"
    assert any(note.endswith("compaction summary") for note in parsed.skipped)
    assert parsed.turns[-1].agent_responses == []


def test_tool_inputs_give_artifacts(parsed: ParsedTranscript) -> None:
    base = "D:\\Projects\\GameDevelopment\\Unity\\Vanguard Arena\\"
    assert [[(a.path, a.action) for a in turn.artifacts] for turn in parsed.turns] == [
        [
            (base + "Assets\\_Project\\Scripts\\UnitAnimationDriver.cs", "read"),
            (base + "Assets\\_Project\\Scripts\\Presentation\\BattleController.cs", "edited"),
        ],
        [(base + "task_plan.md", "created")],
        [],
    ]


def test_newer_bold_tool_markers_are_understood() -> None:
    text = (
        "# Session\n\n**Session ID:** ses_01b5\n\n---\n\n## User\n\nwire the modules\n\n---\n\n"
        "## Assistant (Build · DeepSeek V4 Flash · 4.0s)\n\n**Tool: edit**\n\n**Input:**\n```json\n"
        '{\n  "filePath": "/home/benny/app/src/app.module.ts",\n  "newString": "x"\n}\n```\n\n'
        "**Output:**\n```\nEdit applied successfully.\n```\n\n---\n"
    )

    parsed = opencode_export.parse(text)

    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [("/home/benny/app/src/app.module.ts", "edited")]


def test_opencode_export_json_reads_messages_and_parts(tmp_path: Path) -> None:
    document = {
        "info": {"id": "ses_309461a8bffeQfY7CYDOUHX6VP", "title": "Fix login", "directory": "/tmp/test-repo"},
        "messages": [
            {
                "info": {"id": "msg_1", "role": "user"},
                "parts": [{"id": "prt_1", "type": "text", "text": "fix the login redirect"}],
            },
            {
                "info": {"id": "msg_2", "role": "assistant"},
                "parts": [
                    {"id": "prt_2", "type": "step-start"},
                    {
                        "id": "prt_3",
                        "type": "tool",
                        "tool": "edit",
                        "state": {
                            "status": "completed",
                            "input": {"filePath": "/tmp/test-repo/login.ts"},
                            "output": "ok",
                        },
                    },
                    {"id": "prt_4", "type": "text", "text": "Fixed."},
                ],
            },
            {"info": {"id": "msg_3", "role": "user"}, "parts": [{"id": "prt_5", "type": "compaction"}]},
            {
                "info": {"id": "msg_4", "role": "user"},
                "parts": [
                    {"id": "prt_6", "type": "text", "text": "Summary of the conversation so far", "synthetic": True},
                    {"id": "prt_7", "type": "text", "text": "now add a test"},
                ],
            },
            {"parts": []},
        ],
    }
    path = tmp_path / "session.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    assert detect_format(path) == "opencode-json"
    parsed = opencode_json.parse(path.read_text(encoding="utf-8"))
    assert [turn.user for turn in parsed.turns] == ["fix the login redirect", "now add a test"]
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [("/tmp/test-repo/login.ts", "edited")]
    assert parsed.title == "Fix login" and parsed.cwd == "/tmp/test-repo"
    assert any("unexpected shape" in note for note in parsed.skipped)


def test_opencode_export_json_a_caret_right_after_a_request_is_a_request_of_its_own() -> None:
    parsed = parse_transcript(FIXTURES / "opencode-json-export-agents-md.json")
    assert parsed.format == "opencode-json"
    assert parsed.title == "AGENTS.md creation for codebase guidelines and tests"
    assert parsed.turns[3].user.startswith("Remove build + test info from AGENTS.md")
    assert parsed.turns[4].user == "^"
    assert parsed.turns[5].user.startswith("@gitter Update")
