"""Claude Code session JSONL: chain rebuild, streamed blocks, non-human records, artifacts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccm_tui.restore.formats import claude_code
from ccm_tui.restore.parse import detect_format, parse_transcript
from ccm_tui.restore.turns import ParsedTranscript
from tests.helpers.transcripts import FIXTURES, fixture_text


def _record(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    message.update(extra.pop("message", {}))
    return {"parentUuid": parent, "uuid": uuid, "type": kind, "cwd": "/home/dev/app", "message": message, **extra}


def _assistant(uuid: str, parent: str, message_id: str, block: dict[str, Any]) -> dict[str, Any]:
    return _record(uuid, parent, "assistant", [block], message={"id": message_id})


def _tool_use(tool_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def _tool_result(uuid: str, parent: str, tool_id: str, *, is_error: bool = False, **result: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": "ok", "is_error": is_error}
    return _record(uuid, parent, "user", [block], toolUseResult=result)


def _jsonl(*records: dict[str, Any] | str) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"


@pytest.fixture(scope="module")
def fixture_parsed() -> ParsedTranscript:
    return claude_code.parse(fixture_text("claude-code-session.jsonl"))


def test_fixture_turns_are_the_human_prompts(fixture_parsed: ParsedTranscript) -> None:
    assert [turn.user for turn in fixture_parsed.turns] == [
        "why are you saying update available, but you brew says your up to date",
        "do what ever you need to fix the brew npm confusion.  I only want one ver of you, perferably brew",
        "resume",
        "we need to troubleshoot MacOS login auth:  seckey pin was invalidated",
    ]
    assert fixture_parsed.cwd == "/Users/[USER]"


def test_fixture_notes_broken_lines_and_slash_commands(fixture_parsed: ParsedTranscript) -> None:
    assert fixture_parsed.skipped == ["line 13: invalid JSON", "line 21: slash command /security-review"]


def test_streamed_blocks_of_one_message_form_one_response(fixture_parsed: ParsedTranscript) -> None:
    (response,) = fixture_parsed.turns[1].agent_responses
    assert response.startswith("Let me investigate and clean this up for you.")
    assert response.count("[Bash]") == 2


def test_chain_order_wins_over_line_order() -> None:
    text = _jsonl(
        _record("b", "a", "assistant", [{"type": "text", "text": "answer one"}], message={"id": "m1"}),
        _record("a", None, "user", "first question"),
        _record("d", "c", "assistant", [{"type": "text", "text": "answer two"}], message={"id": "m2"}),
        _record("c", "b", "user", "second question"),
    )

    parsed = claude_code.parse(text)

    assert [(t.user, t.agent_responses) for t in parsed.turns] == [
        ("first question", ["answer one"]),
        ("second question", ["answer two"]),
    ]


def test_abandoned_branch_is_not_part_of_the_conversation() -> None:
    text = _jsonl(
        _record("a", None, "user", "original question"),
        _record("b", "a", "assistant", [{"type": "text", "text": "first try"}], message={"id": "m1"}),
        _record("c", "b", "user", "rejected follow-up"),
        _record("d", "b", "user", "edited follow-up"),
        _record("e", "d", "assistant", [{"type": "text", "text": "final"}], message={"id": "m2"}),
    )

    assert [t.user for t in claude_code.parse(text).turns] == ["original question", "edited follow-up"]


def test_broken_parent_link_falls_back_to_the_previous_record() -> None:
    text = _jsonl(
        _record("a", None, "user", "question"),
        '{"parentUuid":"a","uuid":"b","type":"assistant","message":{"content":[{"type":"text","text":"trunc',
        _record("c", "b", "assistant", [{"type": "text", "text": "rest of answer"}], message={"id": "m1"}),
        _record("d", "c", "user", "next question"),
    )

    parsed = claude_code.parse(text)

    assert [t.user for t in parsed.turns] == ["question", "next question"]
    assert parsed.turns[0].agent_responses == ["rest of answer"]
    assert parsed.skipped == ["line 2: invalid JSON"]


def test_non_human_user_records_are_skipped() -> None:
    text = _jsonl(
        _record("a", None, "user", "real question"),
        _record("b", "a", "user", "<local-command-caveat>Caveat: ...</local-command-caveat>", isMeta=True),
        _record("c", "b", "user", "<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        _record("d", "c", "user", "<local-command-stdout></local-command-stdout>"),
        _record("e", "d", "user", [{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
        _record("f", "e", "user", "<task-notification>\n<task-id>bd2176a</task-id>\n</task-notification>"),
        _record("g", "f", "user", "This session is being continued from a previous...", isCompactSummary=True),
        _record("h", "g", "user", "<bash-input>ls</bash-input>"),
        _record("i", "h", "user", "side", isSidechain=True),
    )

    parsed = claude_code.parse(text)

    assert [t.user for t in parsed.turns] == ["real question"]
    assert "line 3: slash command /clear" in parsed.skipped
    assert "line 7: compaction summary" in parsed.skipped


def test_text_blocks_and_images_make_the_prompt_and_ide_context_is_dropped() -> None:
    content = [
        {"type": "text", "text": "<ide_opened_file>The user opened src/a.py</ide_opened_file>"},
        {"type": "text", "text": "why does this fail?"},
        {"type": "image", "source": {"type": "base64", "data": "..."}},
    ]

    parsed = claude_code.parse(_jsonl(_record("a", None, "user", content)))

    assert parsed.turns[0].user == "why does this fail?\n\n[image]"


def test_artifacts_come_from_file_tool_calls() -> None:
    text = _jsonl(
        _record("u1", None, "user", "refactor the parser"),
        _assistant("a1", "u1", "m1", _tool_use("t1", "Read", file_path="/home/dev/app/src/parser.py")),
        _assistant("a2", "a1", "m1", _tool_use("t2", "Edit", file_path="/home/dev/app/src/parser.py")),
        _tool_result("r1", "a2", "t1"),
        _tool_result("r2", "r1", "t2"),
        _assistant("a3", "r2", "m2", _tool_use("t3", "Write", file_path="/home/dev/app/src/new.py")),
        _tool_result("r3", "a3", "t3", type="create"),
        _assistant("a4", "r3", "m3", _tool_use("t4", "Write", file_path="/home/dev/app/README.md")),
        _tool_result("r4", "a4", "t4", type="update"),
        _assistant("a5", "r4", "m4", _tool_use("t5", "MultiEdit", file_path="/home/dev/app/src/cli.py")),
        _assistant("a6", "a5", "m4", _tool_use("t6", "NotebookEdit", notebook_path="/home/dev/app/nb.ipynb")),
        _assistant("a7", "a6", "m4", _tool_use("t7", "Read", file_path="/home/dev/app/huge.log")),
        _tool_result("r7", "a7", "t7", is_error=True),
        _assistant("a8", "r7", "m5", _tool_use("t8", "Bash", command="pytest -q")),
    )

    parsed = claude_code.parse(text)

    assert [(a.path, a.action, a.line) for a in parsed.turns[0].artifacts] == [
        ("/home/dev/app/src/parser.py", "read", 2),
        ("/home/dev/app/src/parser.py", "edited", 3),
        ("/home/dev/app/src/new.py", "created", 6),
        ("/home/dev/app/README.md", "edited", 8),
        ("/home/dev/app/src/cli.py", "edited", 10),
        ("/home/dev/app/nb.ipynb", "edited", 11),
    ]
    assert "[Bash] pytest -q" in parsed.turns[0].agent_responses


def test_title_is_the_summary_of_the_conversation_leaf() -> None:
    text = _jsonl(
        {"type": "summary", "summary": "Parser refactor", "leafUuid": "b"},
        {"type": "summary", "summary": "Unrelated session", "leafUuid": "zzz"},
        _record("a", None, "user", "hi"),
        _record("b", "a", "assistant", [{"type": "text", "text": "hello"}], message={"id": "m1"}),
    )

    assert claude_code.parse(text).title == "Parser refactor"


def test_sniff_needs_claude_code_records(tmp_path) -> None:
    head = fixture_text("claude-code-session.jsonl")[:4000]
    assert claude_code.sniff(head, tmp_path / "x.jsonl") > 0.9
    assert claude_code.sniff('{"a": 1}\n{"b": 2}\n', tmp_path / "x.jsonl") == 0.0


def test_the_response_carries_tool_calls_and_results_but_not_thinking() -> None:
    listing = "src/parser.py\nsrc/cli.py\n" * 50
    screenshot = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 4000}}
    text = _jsonl(
        _record("u1", None, "user", "what is in src?"),
        _record(
            "a1",
            "u1",
            "assistant",
            [
                {"type": "thinking", "thinking": "SECRET REASONING", "signature": "x"},
                {"type": "text", "text": "Listing it."},
                _tool_use("t1", "Bash", command="ls src", description="list sources"),
            ],
            message={"id": "m1"},
        ),
        _record("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": listing}]),
        _assistant("a2", "r1", "m2", _tool_use("t2", "Screenshot")),
        _record("r2", "a2", "user", [{"type": "tool_result", "tool_use_id": "t2", "content": [screenshot]}]),
        _assistant("a3", "r2", "m3", {"type": "text", "text": "Two files, and the screen is blank."}),
    )

    (turn,) = claude_code.parse(text).turns

    assert turn.agent_responses == [
        'Listing it.\n\n[Bash] ls src\n{"description": "list sources"}\n\n[result] ' + listing.strip(),
        "[Screenshot]\n\n[result] [image, 3000 bytes]",
        "Two files, and the screen is blank.",
    ]
    assert "SECRET REASONING" not in "".join(turn.agent_responses)


def test_a_record_of_a_bad_shape_is_skipped_and_counted() -> None:
    bad_type = _record("x", "a", "user", "never seen")
    bad_type["type"] = ["x"]
    bad_content = _record("y", "b", "assistant", [{"type": "text", "text": ["not", "a", "string"]}])
    text = _jsonl(
        _record("a", None, "user", "first question"),
        bad_type,
        _record("b", "a", "assistant", [{"type": "text", "text": "answer"}], message={"id": "m1"}),
        bad_content,
        _record("c", "y", "user", {"unexpected": "dict"}),
        _record("d", "c", "user", "second question"),
    )

    parsed = claude_code.parse(text)

    assert [t.user for t in parsed.turns] == ["first question", "second question"]
    assert "line 2: record of an unexpected shape" in parsed.skipped


# The head of a real Claude Code 2.1 /export (❯ prompts, padded continuation lines).
CLAUDE_EXPORT = "\n".join(
    line + " " * pad  # the export pads prompt lines with spaces
    for line, pad in [
        (" ▐▛███▜▌   Claude Code v2.1.104", 0),
        ("▝▜█████▛▘  Opus 4.6 (1M context) · Claude Max", 0),
        ("  ▘▘ ▝▝    ~/projects/demo_insights_share/insights-share/demo_codes", 0),
        ("", 0),
        ("❯ 我们的 checkout API 正在超时，postgres", 40),
        ("  在午餐高峰拒绝新连接，应该如何诊断与修复？请给出可执行的 SQL 与代码片段。若有", 1),
        ("   insights-wiki 注入的 LAN 实战卡片请明确引用。", 32),
        ("", 0),
        ("⏺ Skill(insights-wiki)", 0),
        ("  ⎿  Successfully loaded skill · 3 tools allowed", 0),
        ("", 0),
        ("⏺ Read(docs/pool.md)", 0),
        ("  ⎿  Read 12 lines", 0),
        ("", 0),
        ("⏺ 命中 LAN 实战卡片。直接基于这条线索给出诊断方案。", 0),
        ("", 0),
        ("❯ /compact", 0),
        ("", 0),
        ("❯ 谢谢，再给出 PgBouncer 的配置", 0),
        ("", 2),
        ("⏺ Update(pgbouncer.ini)", 0),
        ("  ⎿  Updated pgbouncer.ini with 2 additions", 0),
        ("", 0),
    ]
)


def test_claude_code_export_text_with_chevron_prompts(tmp_path: Path) -> None:
    path = tmp_path / "2026-04-20-export.txt"
    path.write_text(CLAUDE_EXPORT, encoding="utf-8")
    assert detect_format(path) == "claude-code-terminal"
    parsed = parse_transcript(path)
    assert len(parsed.turns) == 2
    assert parsed.turns[0].user.startswith("我们的 checkout API 正在超时，postgres\n在午餐高峰")
    assert not parsed.turns[0].user.endswith(" ")
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [("docs/pool.md", "read")]
    assert [(a.path, a.action) for a in parsed.turns[1].artifacts] == [("pgbouncer.ini", "edited")]
    assert any("/compact" in note for note in parsed.skipped)


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
