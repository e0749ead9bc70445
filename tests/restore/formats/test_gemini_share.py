"""Gemini CLI /chat share, Markdown and JSON: turns and tool responses, the setup context and function
responses left out, the CLI's own 'Please continue.' not a turn."""

from __future__ import annotations

import json
from pathlib import Path

from ccm_tui.restore.formats import gemini_share
from ccm_tui.restore.parse import detect_format, parse_transcript
from tests.helpers.transcripts import FIXTURES, fixture_text

GEMINI_SETUP = "This is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Sunday."


def test_gemini_share_markdown_fixture_turns_tool_responses_and_snapshot() -> None:
    parsed = gemini_share.parse(fixture_text("gemini-share-unidoku.md"))
    assert detect_format(FIXTURES / "gemini-share-unidoku.md") == "gemini-share"
    assert len(parsed.turns) == 1
    assert parsed.turns[0].user.startswith("Pushed.  However, still nothing.")
    assert "Successfully modified file" in "\n".join(parsed.turns[0].agent_responses)  # the Tool Response
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [
        ("/home/unsafe/unidoku/.github/workflows/deploy.yml", "edited")
    ]
    assert any("opening context" in note for note in parsed.skipped)
    assert any("state snapshot" in note for note in parsed.skipped)


def test_gemini_share_json_skips_setup_and_function_responses(tmp_path: Path) -> None:
    history = [
        {"role": "user", "parts": [{"text": GEMINI_SETUP}]},
        {"role": "model", "parts": [{"text": "Got it. Thanks for the context!"}]},
        {"role": "user", "parts": [{"text": "fix the import path in index.js"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Reading it."},
                {"functionCall": {"name": "read_file", "args": {"absolute_path": "/p/index.js"}}},
            ],
        },
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "import x"}}}]},
        {"role": "model", "parts": [{"functionCall": {"name": "replace", "args": {"file_path": "/p/index.js"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "replace", "response": {"output": "ok"}}}]},
        {"role": "model", "parts": [{"text": "thinking", "thought": True}, {"text": "Done."}]},
        {"role": "user", "parts": [{"text": "thanks, now run the tests"}]},
        "not a message",
    ]
    path = tmp_path / "gemini-conversation-1.json"
    path.write_text(json.dumps(history, indent=2), encoding="utf-8")
    parsed = parse_transcript(path)
    assert parsed.format == "gemini-share"
    assert [turn.user for turn in parsed.turns] == ["fix the import path in index.js", "thanks, now run the tests"]
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [
        ("/p/index.js", "read"),
        ("/p/index.js", "edited"),
    ]
    assert "[result]" in "\n".join(parsed.turns[0].agent_responses)
    assert "thinking" not in "\n".join(parsed.turns[0].agent_responses)
    assert any("unexpected shape" in note for note in parsed.skipped)


def test_gemini_share_json_the_clis_own_please_continue_is_not_a_turn() -> None:
    parsed = parse_transcript(FIXTURES / "gemini-share-json-ko-tdd.json")
    assert parsed.format == "gemini-share" and len(parsed.turns) == 20
    assert parsed.turns[0].user.startswith("이 프로젝트의 전체 구조와 데이터 흐름을")
    assert [turn.user for turn in parsed.turns[6:8]] == ["y", "y"]  # the second after a cancelled shell call
    assert not any(turn.user == "Please continue." for turn in parsed.turns)
    assert any(note.startswith("line 73: 'Please continue.' sent by the CLI") for note in parsed.skipped)
    assert "[result]" in "\n".join(parsed.turns[0].agent_responses)


SETUP = "This is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Monday."


HISTORY = [
    {"role": "user", "parts": [{"text": SETUP}]},
    {"role": "user", "parts": [{"text": "Warum schlägt der Build fehl?"}]},
    {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {"command": "npm run build"}}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": "ERR"}}}]},
    {"role": "model", "parts": [{"text": "Das Skript `build` fehlt."}]},
    {"role": "user", "parts": [{"text": "Please continue."}]},
    {"role": "model", "parts": [{"text": "Ich füge es hinzu."}]},
    {"role": "user", "parts": [{"text": "ok"}]},
    {"role": "model", "parts": [{"text": "Bis später."}]},
]


def test_please_continue_sent_by_the_cli_is_not_a_turn_in_a_share(tmp_path: Path) -> None:
    path = tmp_path / "gemini-conversation-1.json"
    path.write_text(json.dumps(HISTORY, indent=2, ensure_ascii=False), encoding="utf-8")
    markdown = tmp_path / "share.md"
    markdown.write_text(gemini_share_markdown(HISTORY), encoding="utf-8")
    for each in (path, markdown):
        parsed = parse_transcript(each)
        assert parsed.format == "gemini-share"
        assert [turn.user for turn in parsed.turns] == ["Warum schlägt der Build fehl?", "ok"]
        assert any("'Please continue.' sent by the CLI" in note for note in parsed.skipped)
        assert "Ich füge es hinzu." in "\n".join(parsed.turns[0].agent_responses)


def gemini_share_markdown(history: list[dict[str, list[dict[str, object]]]]) -> str:
    """What ``/chat share x.md`` writes (the newer heading style)."""
    messages = []
    for item in history:
        text = "".join(_markdown_part(part) for part in item["parts"])
        icon = "🧑‍💻" if item["role"] == "user" else "✨"
        messages.append(f"## {str(item['role']).upper()} {icon}\n\n{text}")
    return "\n\n---\n\n".join(messages)


def _markdown_part(part: dict[str, object]) -> str:
    if "text" in part:
        return str(part["text"])
    label = "**Tool Command**" if "functionCall" in part else "**Tool Response**"
    return f"{label}:\n```json\n{json.dumps(next(iter(part.values())), indent=2)}\n```"
