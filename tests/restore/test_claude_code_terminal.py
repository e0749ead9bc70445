"""Claude Code terminal copies: prompts, slash commands, compaction blocks and tool calls."""

from __future__ import annotations

import pytest

from ccm_tui.restore.formats import claude_code_terminal
from ccm_tui.restore.turns import ParsedTranscript

from ._paths import fixture_text


@pytest.fixture(scope="module")
def parsed() -> ParsedTranscript:
    return claude_code_terminal.parse(fixture_text("claude-code-terminal.md"))


def test_prompts_with_continuation_lines_are_turns(parsed: ParsedTranscript) -> None:
    assert len(parsed.turns) == 7
    first = parsed.turns[0].user
    assert first.startswith("I would like to work with this project on two machines.")
    assert first.endswith("does not have any development tools installed.")
    assert len(first.splitlines()) == 4
    assert parsed.turns[2].user == "explain to me what is hatchling, first?"


def test_pasted_output_under_a_prompt_belongs_to_it(parsed: ParsedTranscript) -> None:
    last = parsed.turns[-1].user
    assert last.startswith("git push -u origin main\n")
    assert "Enumerating objects: 110, done." in last


def test_slash_commands_and_compaction_blocks_are_not_turns(parsed: ParsedTranscript) -> None:
    assert not any(turn.user.startswith(("/compact", "This session is being continued")) for turn in parsed.turns)
    assert "line 134: slash command /compact" in parsed.skipped
    assert sum("compaction summary" in note for note in parsed.skipped) == 2


def test_tool_calls_give_artifacts_unless_rejected(parsed: ParsedTranscript) -> None:
    assert [(a.path, a.action, a.line) for t in parsed.turns for a in t.artifacts] == [
        ("pyproject.toml", "edited", 84),
        ("docs/uv_setup.md", "created", 101),
    ]


def test_welcome_box_gives_the_working_directory(parsed: ParsedTranscript) -> None:
    assert parsed.cwd == "/Users/palimondo/Developer/BookMinder"


def test_read_and_nested_calls_are_reads() -> None:
    text = (
        "> check the config\n\n"
        "⏺ Call(Examine project configuration files)…\n"
        "  ⎿  Read(pyproject.toml)…\n"
        '  ⎿  Search(pattern: "**/.pre-commit-config.yaml")…\n\n'
        '⏺ Read(file_path: "src/app.py", limit: 40)…\n'
        "  ⎿  Read 40 lines (ctrl+r to expand)\n"
    )

    parsed = claude_code_terminal.parse(text)

    artifacts = [(a.path, a.action) for a in parsed.turns[0].artifacts]
    assert artifacts == [("pyproject.toml", "read"), ("src/app.py", "read")]
