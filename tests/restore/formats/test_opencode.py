"""opencode terminal logs (the seed format): ┃ boxes signed by the user, ANSI stripped."""

from __future__ import annotations

import pytest

from ccm_tui.restore.formats import opencode
from ccm_tui.restore.turns import ParsedTranscript
from tests.helpers.transcripts import fixture_text


@pytest.fixture(scope="module")
def parsed() -> ParsedTranscript:
    return opencode.parse(fixture_text("opencode-terminal.log"))


def test_signed_boxes_are_user_messages(parsed: ParsedTranscript) -> None:
    assert [turn.user_messages for turn in parsed.turns] == [
        [
            "Add a --verbose flag to the CLI so that every HTTP request is logged\n"
            "to stderr with its method, path and status code."
        ],
        ["Now add a test for the verbose logging."],
        ["And document the flag in the README."],  # sent right after the other: a request of its own
    ]


def test_escape_sequences_spinners_and_signatures_are_removed(parsed: ParsedTranscript) -> None:
    response = parsed.turns[0].agent_responses[0]
    assert response.startswith("I'll look at the CLI entry point first.")
    assert "\x1b" not in response and "\r" not in response
    assert "Generating" not in response and "(10:43 AM)" not in response


def test_bare_slash_command_box_is_not_a_turn(parsed: ParsedTranscript) -> None:
    assert "line 28: slash command /compact" in parsed.skipped


def test_tool_lines_give_artifacts(parsed: ParsedTranscript) -> None:
    assert [[(a.path, a.action) for a in turn.artifacts] for turn in parsed.turns] == [
        [
            ("src/todo_api/cli.py", "read"),
            ("src/todo_api/http.py", "read"),
            ("src/todo_api/cli.py", "edited"),
            ("src/todo_api/http.py", "edited"),
        ],
        [],
        [("tests/test_verbose.py", "created"), ("README.md", "edited")],
    ]


def test_welcome_box_gives_the_working_directory(parsed: ParsedTranscript) -> None:
    assert parsed.cwd == "~/src/todo-api"


def test_boxes_signed_by_someone_else_are_agent_output() -> None:
    text = "┃ fix the tests ┃\n┃ bob (9:01 AM) ┃\n\n┃ Running the suite now. ┃\n┃ gpt-4o (9:02 AM) ┃\n"

    parsed = opencode.parse(text)

    assert [turn.user for turn in parsed.turns] == ["fix the tests"]
    assert parsed.turns[0].agent_responses == ["┃ Running the suite now. ┃"]


def test_sniff_requires_boxes_and_signatures(tmp_path) -> None:
    head = fixture_text("opencode-terminal.log")
    assert opencode.sniff(head, tmp_path / "session.log") > 0.8
    assert opencode.sniff("┃ a table cell ┃\n", tmp_path / "x.md") == 0.0
