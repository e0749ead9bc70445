"""Formats added for issue 24: Gemini CLI /chat share, Cline task histories, opencode export JSON, Claude Code /export."""

from __future__ import annotations

import json
from pathlib import Path

from ccm_tui.restore.formats import cline, gemini_share, opencode_json
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


def _cline_history() -> list[object]:
    environment = "<environment_details>\n# Visual Studio Code Visible Files\nDockerfile\n</environment_details>"
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<task>\nadd a BeginTurn game action\n</task>"},
                {"type": "text", "text": "\n# task_progress RECOMMENDED\n\nWhen starting a new task..."},
                {"type": "text", "text": environment},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me read the action system."},
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "ActionSystem.cs"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[read_file for 'ActionSystem.cs'] Result:\nusing System;\n"
                    + "// line\n" * 100
                    + "// <task>not a request</task>",
                },
                {"type": "text", "text": environment},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "write_to_file",
                    "input": {"absolutePath": "/w/BeginTurnGA.cs", "content": "x"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[execute_command for 'tr '[:upper:]' '[:lower:]''] Result:\nCommand executed.",
                },
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t3", "name": "attempt_completion", "input": {"result": "done"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[attempt_completion] Result:\n\nThe user has provided feedback on the results.\n<feedback>\nalso add a .meta file\n</feedback>",
                },
                {"type": "text", "text": environment},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "<ask_followup_question><question>Which GUID?</question></ask_followup_question>",
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[ask_followup_question for 'Which GUID?'] Result:\n<answer>\na random one\n</answer>",
                }
            ],
        },
        {
            "role": "assistant",
            "content": "<write_to_file>\n<path>BeginTurnGA.cs.meta</path>\n<content>guid</content>\n</write_to_file>",
        },
        {"role": "user", "content": 42},
    ]


def test_cline_history_turns_are_task_feedback_and_answer(tmp_path: Path) -> None:
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(_cline_history(), separators=(",", ":")), encoding="utf-8")
    assert detect_format(path) == "cline"
    parsed = parse_transcript(path)
    assert [turn.user for turn in parsed.turns] == [
        "add a BeginTurn game action",
        "also add a .meta file",
        "a random one",
    ]
    first = parsed.turns[0]
    assert [(a.path, a.action) for a in first.artifacts] == [
        ("ActionSystem.cs", "read"),
        ("/w/BeginTurnGA.cs", "created"),
    ]
    assert "Command executed." in "\n".join(first.agent_responses)
    assert "environment_details" not in "\n".join(first.agent_responses)
    assert [(a.path, a.action) for a in parsed.turns[2].artifacts] == [("BeginTurnGA.cs.meta", "created")]
    assert any("unexpected shape" in note for note in parsed.skipped)


def test_cline_markdown_task_export_is_not_taken_for_the_json_history() -> None:
    assert cline.sniff(fixture_text("bob-task-history.md")[:4096], Path("x.md")) == 0.0


def test_opencode_export_json_reads_messages_and_parts(tmp_path: Path) -> None:
    document = {
        "info": {"id": "ses_309461a8bffeQfY7CYDOUHX6VP", "title": "Fix login", "directory": "/tmp/test-repo"},
        "messages": [
            {
                "info": {"id": "msg_1", "role": "user"},
                "parts": [{"id": "prt_1", "type": "text", "text": "fix the login redirect"}],
            },
            {
                "info": {"id": "msg_2", "role": "assistant"},
                "parts": [
                    {"id": "prt_2", "type": "step-start"},
                    {
                        "id": "prt_3",
                        "type": "tool",
                        "tool": "edit",
                        "state": {
                            "status": "completed",
                            "input": {"filePath": "/tmp/test-repo/login.ts"},
                            "output": "ok",
                        },
                    },
                    {"id": "prt_4", "type": "text", "text": "Fixed."},
                ],
            },
            {"info": {"id": "msg_3", "role": "user"}, "parts": [{"id": "prt_5", "type": "compaction"}]},
            {
                "info": {"id": "msg_4", "role": "user"},
                "parts": [
                    {"id": "prt_6", "type": "text", "text": "Summary of the conversation so far", "synthetic": True},
                    {"id": "prt_7", "type": "text", "text": "now add a test"},
                ],
            },
            {"parts": []},
        ],
    }
    path = tmp_path / "session.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    assert detect_format(path) == "opencode-json"
    parsed = opencode_json.parse(path.read_text(encoding="utf-8"))
    assert [turn.user for turn in parsed.turns] == ["fix the login redirect", "now add a test"]
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [("/tmp/test-repo/login.ts", "edited")]
    assert parsed.title == "Fix login" and parsed.cwd == "/tmp/test-repo"
    assert any("unexpected shape" in note for note in parsed.skipped)


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
