"""The turn data model and the --parse-only JSON rendering."""

from __future__ import annotations

import json

from ccm_tui.restore.turns import Artifact, ParsedTranscript, TranscriptError, TurnRound, to_parse_only_json


def _turn() -> TurnRound:
    return TurnRound(
        turn=1,
        user_messages=["fix the bug", "and add a test"],
        agent_responses=["done"],
        start_line=3,
        end_line=9,
        artifacts=[Artifact("src/a.py", "edited", 5), Artifact("tests/test_a.py", "created", 7)],
    )


def test_user_joins_messages_with_blank_lines() -> None:
    assert _turn().user == "fix the bug\n\nand add a test"


def test_transcript_error_is_a_value_error() -> None:
    assert issubclass(TranscriptError, ValueError)


def test_parse_only_json_has_exactly_the_contract_keys() -> None:
    parsed = ParsedTranscript(format="aider", turns=[_turn()], skipped=["line 2: slash command /add x"], cwd="/p")

    document = to_parse_only_json(parsed)

    assert document["format"] == "aider"
    assert document["turns"] == [
        {
            "turn": 1,
            "user": "fix the bug\n\nand add a test",
            "artifacts": [
                {"path": "src/a.py", "action": "edited"},
                {"path": "tests/test_a.py", "action": "created"},
            ],
        }
    ]
    assert document["skipped"] == ["line 2: slash command /add x"]
    assert json.loads(json.dumps(document)) == document
