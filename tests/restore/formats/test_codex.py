"""Codex CLI rollouts: turns without the injected context, tool output carried, apply_patch artifacts, bad records counted."""

from __future__ import annotations

import json

from ccm_tui.restore.formats import codex
from ccm_tui.restore.parse import detect_format
from tests.helpers.transcripts import FIXTURES, fixture_text


def test_codex_rollout_turns_skip_injected_context_and_carry_tool_output() -> None:
    parsed = codex.parse(fixture_text("codex-rollout.jsonl"))

    assert detect_format(FIXTURES / "codex-rollout.jsonl") == "codex"
    assert parsed.cwd == "/Users/pinouchon/code/rtchess"
    assert [t.user.splitlines()[0] for t in parsed.turns] == [
        "I want to make a chess variant that isn't real time, but instead pieces have a cooldown "
        "before they are allowed to move. Any piece with a ready cooldown can be moved.",
        "this is a test prompt. Don't do anythin",
    ]
    first = parsed.turns[0].agent_responses
    assert first[0].startswith('[shell_command] ls\n{"workdir": ".", "timeout_ms": 120000}\n\n[result] Exit code: 0')
    assert "## No commits yet on main" in first[2]
    assert not any("Inspecting repository" in r for r in first)  # reasoning is left out
    assert parsed.turns[1].agent_responses == ["(acknowledged – no action taken)"]


def test_codex_apply_patch_gives_artifacts_and_bad_records_are_counted() -> None:
    patch = "*** Begin Patch\n*** Add File: web/index.html\n+<html>\n*** Update File: web/app.js\n@@\n*** End Patch"
    records = [
        {"type": "session_meta", "payload": {"cwd": "/home/u/chess"}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "build it"}]},
        },
        {
            "type": "response_item",
            "payload": {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "c1"},
        },
        {
            "type": "response_item",
            "payload": {"type": "custom_tool_call_output", "call_id": "c1", "output": '{"output":"Success."}'},
        },
        {"type": ["response_item"], "payload": {}},
        {"type": "response_item", "payload": ["not", "an", "item"]},
    ]
    text = "\n".join(json.dumps(r) for r in records) + "\n{broken\n"

    parsed = codex.parse(text)

    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [
        ("web/index.html", "created"),
        ("web/app.js", "edited"),
    ]
    assert parsed.turns[0].agent_responses[0].endswith("[result] Success.")
    assert parsed.skipped == [
        "line 5: record of an unexpected shape",
        "line 6: record of an unexpected shape",
        "line 7: invalid JSON",
    ]
