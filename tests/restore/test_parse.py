"""Format registry, detection, tolerant reading and the parse_transcript entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccm_tui.restore.parse import FORMATS, detect_format, parse_transcript, read_transcript_text
from ccm_tui.restore.turns import TranscriptError
from tests.helpers.transcripts import FIXTURES

FIXTURE_FORMATS = {
    "aider.chat.history.md": "aider",
    "claude-code-session.jsonl": "claude-code",
    "claude-code-terminal.md": "claude-code-terminal",
    "opencode-terminal.log": "opencode",
    "opencode-session-export.md": "opencode-export",
    "specstory-cursor-legacy.md": "specstory",
    "specstory-gemini-v2.md": "specstory",
    "codex-rollout.jsonl": "codex",
    "bob-task-history.md": "markdown",
}


def test_registry_lists_every_format_module() -> None:
    assert set(FORMATS) == {
        "aider",
        "ccm-export",
        "chatgpt",
        "claude-code",
        "claude-code-terminal",
        "cline",
        "gemini-share",
        "opencode-json",
        "codex",
        "gemini-cli",
        "markdown",
        "opencode",
        "opencode-export",
        "opencode-storage",
        "specstory",
    }
    for name, module in FORMATS.items():
        assert name == module.NAME
        assert callable(module.sniff) and callable(module.parse)


@pytest.mark.parametrize(("fixture", "expected"), sorted(FIXTURE_FORMATS.items()))
def test_detects_the_format_of_each_fixture(fixture: str, expected: str) -> None:
    assert detect_format(FIXTURES / fixture) == expected


@pytest.mark.parametrize("fixture", sorted(FIXTURE_FORMATS))
def test_every_fixture_parses_into_turns(fixture: str) -> None:
    parsed = parse_transcript(FIXTURES / fixture)

    assert parsed.format == FIXTURE_FORMATS[fixture]
    assert parsed.turns
    assert [turn.turn for turn in parsed.turns] == list(range(1, len(parsed.turns) + 1))
    for turn in parsed.turns:
        assert turn.user.strip()
        assert 1 <= turn.start_line <= turn.end_line


def test_undetectable_file_raises_one_line_transcript_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\nnothing to see\n", encoding="utf-8")

    with pytest.raises(TranscriptError) as raised:
        detect_format(path)

    message = str(raised.value)
    assert "notes.txt" in message and "--format" in message and "\n" not in message


def test_missing_file_raises_transcript_error(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="cannot read transcript"):
        parse_transcript(tmp_path / "absent.md")


def test_unknown_format_name_raises_transcript_error() -> None:
    with pytest.raises(TranscriptError, match="unknown transcript format 'gpt-engineer'"):
        parse_transcript(FIXTURES / "aider.chat.history.md", fmt="gpt-engineer")


def test_explicit_format_skips_detection(tmp_path: Path) -> None:
    path = tmp_path / "session.txt"
    path.write_text("## User\n\nhello\n", encoding="utf-8")

    parsed = parse_transcript(path, fmt="specstory")

    assert parsed.format == "specstory" and parsed.turns == []


def test_max_turns_keeps_the_first_turns() -> None:
    parsed = parse_transcript(FIXTURES / "claude-code-terminal.md", max_turns=2)

    assert [turn.turn for turn in parsed.turns] == [1, 2]


def test_negative_max_turns_is_rejected() -> None:
    with pytest.raises(TranscriptError):
        parse_transcript(FIXTURES / "claude-code-terminal.md", max_turns=-1)


def test_invalid_utf8_and_nul_bytes_are_replaced_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "broken.md"
    path.write_bytes(b"\xef\xbb\xbfok \xff\xfe caf\xc3\xa9 \xe4\xb8\x00\x00 \xef\xbf\xbd end")

    text, notes = read_transcript_text(path)

    assert text.startswith("ok ") and "café" in text and text.endswith(" end")
    assert "\x00" not in text
    assert notes == ["removed 2 NUL byte(s)", "replaced 3 invalid UTF-8 sequence(s) with U+FFFD"]


def test_clean_file_has_no_read_notes() -> None:
    _, notes = read_transcript_text(FIXTURES / "specstory-gemini-v2.md")

    assert notes == []


def test_read_notes_lead_the_skipped_list(tmp_path: Path) -> None:
    path = tmp_path / "history.md"
    path.write_bytes(b"# aider chat started at 2025-01-01 10:00:00\n\n#### fix it\xff\n\nOK.\n")

    parsed = parse_transcript(path)

    assert parsed.format == "aider"
    assert parsed.skipped[0].startswith("replaced 1 invalid UTF-8")
    assert parsed.turns[0].user == "fix it\ufffd"


def test_the_import_hash_is_of_the_bytes_parsed_not_a_later_read(tmp_path):
    """A live transcript may grow after it was parsed: the idempotency hash must cover only what was
    read, or turns appended later would be reported as 'already imported' and never imported."""
    import hashlib

    from ccm_tui.restore.parse import parse_transcript

    source = Path(__file__).parents[1] / "fixtures" / "transcripts" / "aider.chat.history.md"
    transcript = tmp_path / "live.aider.chat.history.md"
    transcript.write_bytes(source.read_bytes())
    parsed = parse_transcript(transcript)
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write("\n#### one more request\n")

    assert parsed.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
