"""opencode /export markdown: exact headings after separators, empty user blocks, tools."""

from __future__ import annotations

import pytest

from ccm_tui.restore.formats import opencode_export
from ccm_tui.restore.turns import ParsedTranscript
from tests.helpers.transcripts import fixture_text


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
