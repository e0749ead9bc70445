"""The real Gemini CLI share JSON, opencode export JSON and Claude Code /export fixtures, feature by feature."""

from __future__ import annotations

from ccm_tui.restore.parse import parse_transcript
from tests.helpers.transcripts import FIXTURES


def test_gemini_share_json_the_clis_own_please_continue_is_not_a_turn() -> None:
    parsed = parse_transcript(FIXTURES / "gemini-share-json-ko-tdd.json")
    assert parsed.format == "gemini-share" and len(parsed.turns) == 20
    assert parsed.turns[0].user.startswith("이 프로젝트의 전체 구조와 데이터 흐름을")
    assert [turn.user for turn in parsed.turns[6:8]] == ["y", "y"]  # the second after a cancelled shell call
    assert not any(turn.user == "Please continue." for turn in parsed.turns)
    assert any(note.startswith("line 73: 'Please continue.' sent by the CLI") for note in parsed.skipped)
    assert "[result]" in "\n".join(parsed.turns[0].agent_responses)


def test_opencode_export_json_a_caret_right_after_a_request_is_a_request_of_its_own() -> None:
    parsed = parse_transcript(FIXTURES / "opencode-json-export-agents-md.json")
    assert parsed.format == "opencode-json"
    assert parsed.title == "AGENTS.md creation for codebase guidelines and tests"
    assert parsed.turns[3].user.startswith("Remove build + test info from AGENTS.md")
    assert parsed.turns[4].user == "^"
    assert parsed.turns[5].user.startswith("@gitter Update")


def test_claude_code_export_custom_command_bash_mode_and_builtin_commands() -> None:
    parsed = parse_transcript(FIXTURES / "claude-code-export-stage-94.txt")
    assert parsed.format == "claude-code-terminal" and len(parsed.turns) == 14
    assert parsed.turns[0].user == (
        "/implement-stage docs/stages/ClaudeC99-spec-stage-94-self-host-validation-and\n-implmentation-skill-test.md"
    )
    assert parsed.turns[2].user.startswith("scott@tardis:~/code/claude/claudec99/build$ ./ccompiler-c0 --version\n")
    assert "line 8: slash command /model" in parsed.skipped
    assert any("bash mode" in note and "git status" in note for note in parsed.skipped)
    assert parsed.warnings == []


def test_claude_code_export_in_japanese_with_failed_export_commands() -> None:
    parsed = parse_transcript(FIXTURES / "claude-code-export-ja-homeserver.txt")
    assert len(parsed.turns) == 10
    assert parsed.turns[2].user.startswith("1. ローカルサーバー導入には賛成だが")
    assert sum("slash command /export" in note for note in parsed.skipped) == 4
    assert not any("※ recap" in turn.user for turn in parsed.turns)
