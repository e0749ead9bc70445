"""Claude Code terminal copies: prompts, slash commands, compaction blocks and tool calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccm_tui.restore.formats import claude_code_terminal
from ccm_tui.restore.parse import parse_transcript
from ccm_tui.restore.turns import ParsedTranscript
from tests.helpers.transcripts import fixture_text


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


HEADER = " ▐▛███▜▌   Claude Code v2.0.37\n▝▜█████▛▘  Sonnet 4.5 · Claude Pro\n  ▘▘ ▝▝    /home/dev/shop\n\n"
EXPORT = (
    HEADER + "❯ /model\n  ⎿  Set model to Default (Sonnet 4.5)\n\n"
    "❯ The checkout page double-charges. Here is the\n  handler:\n\n  def pay(order):\n      charge(order)\n\n\n"
    "  def charge(order):\n      stripe.charge(order.total)\n\n  Please make it idempotent.\n\n"
    "⏺ I'll look at the payment handler first.\n\n⏺ Update(app/payments.py)\n  ⎿  Updated app/payments.py\n\n"
    "❯ /fix-issue 431\n\n⏺ I'll fetch issue 431.\n\n⏺ Fixed the coupon rounding.\n\n"
    "❯ ! git status\n  ⎿  On branch main\n\n"
    "! git log -1\n  ⎿  1a2b3c4 fix\n\n"
    "❯ # always run prettier before committing\n  ⎿  Noted in memory\n\n"
    "❯ Unknown command: /implement\n\n"
    "❯ thanks — commit it\n  ⎿  Interrupted · What should Claude do instead?\n\n"
    '❯ commit it with message "fix: idempotent pay"\n\n⏺ Committed.\n'
)


def test_what_claude_code_does_with_a_prompt_decides_if_it_is_a_turn() -> None:
    parsed = claude_code_terminal.parse(EXPORT)

    assert [turn.user.splitlines()[0] for turn in parsed.turns] == [
        "The checkout page double-charges. Here is the",
        "/fix-issue 431",
        "thanks — commit it",
        'commit it with message "fix: idempotent pay"',
    ]
    notes = "\n".join(parsed.skipped)
    assert "slash command /model" in notes and "unknown slash command /implement" in notes
    assert "bash mode" in notes and "git status" in notes and "memory note" in notes
    assert "(bash mode, the model is not asked) git log -1" in notes  # written without ❯ by the 2.1 export


def test_a_numbered_prompt_is_not_a_menu() -> None:
    text = HEADER + "❯ 1. rename the module\n  2. update the imports\n\n⏺ Renamed.\n"
    assert [turn.user for turn in claude_code_terminal.parse(text).turns] == [
        "1. rename the module\n2. update the imports"
    ]


def test_a_prompt_with_blank_lines_inside_is_not_cut() -> None:
    first = claude_code_terminal.parse(EXPORT).turns[0]
    assert first.user.endswith("Please make it idempotent.")
    assert "def charge(order):\n    stripe.charge(order.total)" in first.user


def test_a_memory_note_or_command_the_model_answered_is_a_turn() -> None:
    text = HEADER + "❯ # TODO list for today\n  - fix login\n\n⏺ I'll start with the login fix.\n"
    assert [turn.user for turn in claude_code_terminal.parse(text).turns] == ["# TODO list for today\n- fix login"]


def _padded(line: str) -> str:
    return line.ljust(80) if line else " " * 80


def test_a_padded_export_prompt_runs_to_the_first_empty_line(tmp_path: Path) -> None:
    prompt = ["❯ /implement-stage", "docs/stages/spec-stage-13-03.md"]
    pasted = ["❯ I got a build error.", "  ## Error Type", "", "  Build Error", "    > 69 | >>>>>>> 825a3cb"]
    text = (
        "           Claude Code v2.1.143\n ▐▛███▜▌   Sonnet 4.6 · Claude Pro\n▝▜█████▛▘  ~/code/app\n\n"
        + "\n".join(map(_padded, prompt))
        + "\n\n  Read 4 files (ctrl+o to expand)\n\n● STAGE_DISPLAY: Stage 13-03\n\n"
        + "\n".join(map(_padded, pasted))
        + "\n\n● Reading the conflicted file.\n\n"
        + "\n".join(map(_padded, ["❯ 1. Yes", "2. No", "", "Esc to cancel · Tab to amend"]))
        + "\n\n● Done.\n\n"
        + "\n".join(map(_padded, ["❯ " + "x" * 78, "continued at column 0"]))  # a line that fills the width
        + "\n\n● Ok.\n"
    )

    path = tmp_path / "2026-05-15-073015-export.txt"
    path.write_text(text, encoding="utf-8")
    parsed = parse_transcript(path)

    assert parsed.format == "claude-code-terminal"
    assert [turn.user for turn in parsed.turns] == [
        "/implement-stage\ndocs/stages/spec-stage-13-03.md",
        "I got a build error.\n## Error Type\n\nBuild Error\n  > 69 | >>>>>>> 825a3cb",
        "x" * 78 + "\ncontinued at column 0",
    ]
    assert "Read 4 files" in parsed.turns[0].agent_responses[0]
    assert any("a choice in a menu" in note for note in parsed.skipped)
