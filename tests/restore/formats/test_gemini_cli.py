"""Gemini CLI: message-record exports in any wrapper, JSONL sessions with rewinds and updates."""

from __future__ import annotations

import json
from pathlib import Path

from ccm_tui.restore.parse import detect_format, parse_transcript


def _record(number: int, kind: str, content: object, **extra: object) -> dict[str, object]:
    return {"id": f"m{number}", "timestamp": "2025-10-01T10:00:00Z", "type": kind, "content": content, **extra}


RECORDS = [
    _record(1, "user", [{"text": "Warum schlägt der Build fehl?"}]),
    _record(
        2, "gemini", "Ich lese.", toolCalls=[{"id": "t", "name": "read_file", "args": {"absolute_path": "/p/a.json"}}]
    ),
    _record(3, "user", "Please continue."),
    _record(4, "gemini", "Fertig."),
    _record(5, "user", "ok"),
    _record(6, "gemini", "Bis später."),
]


def test_message_records_under_a_version_wrapper_are_a_gemini_cli_session(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"version": "2.0", "messages": RECORDS, "trajectories": {}}, indent=2), "utf-8")

    assert detect_format(path) == "gemini-cli"
    parsed = parse_transcript(path)

    assert [turn.user for turn in parsed.turns] == ["Warum schlägt der Build fehl?", "ok"]
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [("/p/a.json", "read")]
    assert parsed.warnings == []


def test_a_jsonl_session_applies_rewinds_and_updates(tmp_path: Path) -> None:
    lines = [
        {"sessionId": "s1", "projectHash": "abc", "startTime": "2025-10-01T10:00:00Z"},
        *RECORDS[:2],
        _record(7, "user", "eine falsche Frage"),
        _record(8, "gemini", "Antwort"),
        {"$rewindTo": "m7"},  # the user rewound: m7 and m8 are gone
        *RECORDS[2:],
        {"$set": {"lastUpdated": "2025-10-01T11:00:00Z"}},
        "not a record",
    ]
    path = tmp_path / "session-2025-10-01T10-00-s1.jsonl"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8")

    assert detect_format(path) == "gemini-cli"
    parsed = parse_transcript(path)

    assert [turn.user for turn in parsed.turns] == ["Warum schlägt der Build fehl?", "ok"]
    assert not any("falsche" in turn.user for turn in parsed.turns)


def test_gemini_cli_session_turns_tool_calls_and_errors(tmp_path: Path) -> None:
    session = {
        "sessionId": "19b8af10-5307-4b43-a9c3-97cecb7ebbfd",
        "projectHash": "project-hash",
        "startTime": "2026-02-23T00:07:11.272Z",
        "lastUpdated": "2026-02-23T00:07:39.001Z",
        "kind": "main",
        "messages": [
            {"id": "u1", "type": "user", "content": [{"text": "Fix the queue-secret search bug"}]},
            {
                "id": "g1",
                "type": "gemini",
                "content": "I will inspect the scanner.",
                "thoughts": [{"subject": "Planning", "description": "HIDDEN THOUGHT"}],
                "toolCalls": [
                    {
                        "name": "read_file",
                        "args": {"absolute_path": "/w/scanner.py"},
                        "result": [{"functionResponse": {"response": {"output": "def scan(): ..."}}}],
                    },
                    {"name": "replace", "args": {"file_path": "/w/scanner.py"}, "resultDisplay": "1 edit"},
                ],
            },
            {"id": "u2", "type": "user", "content": "now run the tests"},
            {"id": "e1", "type": "error", "content": "[API Error: quota exceeded]"},
            {"id": "bad", "type": ["gemini"], "content": "x"},
            "not a message",
        ],
    }
    path = tmp_path / "session-2026-02-23T00-04-19b8af10.json"
    path.write_text(json.dumps(session))

    parsed = parse_transcript(path)

    assert parsed.format == "gemini-cli"
    assert [t.user for t in parsed.turns] == ["Fix the queue-secret search bug", "now run the tests"]
    (response,) = parsed.turns[0].agent_responses
    assert response.startswith('I will inspect the scanner.\n\n[read_file] {"absolute_path": "/w/scanner.py"}')
    assert "[result] def scan(): ..." in response and "[result] 1 edit" in response
    assert "HIDDEN THOUGHT" not in response
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [
        ("/w/scanner.py", "read"),
        ("/w/scanner.py", "edited"),
    ]
    assert parsed.turns[1].agent_responses == ["(no answer: [API Error: quota exceeded])"]
    assert parsed.skipped == ["line 5: message 5 of an unexpected shape", "line 6: message 6 of an unexpected shape"]
