"""Codex CLI rollouts, Markdown chat exports and ChatGPT exports: turns, responses, bad records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccm_tui.restore.formats import chatgpt, codex, markdown_chat
from ccm_tui.restore.parse import detect_format, parse_transcript
from ccm_tui.restore.turns import TranscriptError
from tests.helpers.transcripts import FIXTURES, fixture_text


# --------------------------------------------------------------------------- Codex CLI
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


# --------------------------------------------------------------------------- Markdown exports
def test_cline_family_task_export_turns_are_task_and_feedback() -> None:
    parsed = markdown_chat.parse(fixture_text("bob-task-history.md"))

    assert detect_format(FIXTURES / "bob-task-history.md") == "markdown"
    assert [t.user.splitlines()[0] for t in parsed.turns] == [
        "You are IBM Bob working inside the CodeQuest Bob hackathon repository.",
        "ㅌPlease refine the visual direction so CodeQuest Bob balances IBM enterprise trust with a small "
        "amount of memorable, kit-like growth charm.",
    ]
    assert "environment_details" not in parsed.turns[0].user
    assert parsed.turns[0].agent_responses[0].startswith("# Conversation Summary")


def test_cline_tool_results_join_the_response_and_file_tools_are_artifacts() -> None:
    text = (
        "**User:**\n\n<task>\nfix the cli\n</task>\n<environment_details>\nx\n</environment_details>\n\n---\n\n"
        "**Assistant:**\n\nReading it.\n\n<read_file>\n<args>\n<file>\n<path>verdict/cli.py</path>\n</file>\n"
        "</args>\n</read_file>\n\n---\n\n"
        "**User:**\n\n[read_file for 'verdict/cli.py'] Result:\n<files>def main(): ...</files>\n\n---\n\n"
        "**Assistant:**\n\n<apply_diff>\n<path>verdict/cli.py</path>\n<diff>...</diff>\n</apply_diff>\n\n---\n\n"
        "**User:**\n\n[apply_diff for 'verdict/cli.py'] Result:\nok\n\n---\n\n"
    )

    parsed = markdown_chat.parse(text)

    assert [t.user for t in parsed.turns] == ["fix the cli"]
    assert "[read_file for 'verdict/cli.py'] Result:\n<files>def main(): ...</files>" in "\n".join(
        parsed.turns[0].agent_responses
    )
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [
        ("verdict/cli.py", "read"),
        ("verdict/cli.py", "edited"),
    ]


@pytest.mark.parametrize(
    ("user", "agent"),
    [("### Human", "### Assistant"), ("## User", "## ChatGPT"), ("## Prompt:", "## Response:")],
)
def test_heading_style_exports(tmp_path: Path, user: str, agent: str) -> None:
    path = tmp_path / "chat.md"
    path.write_text(
        f"# Debugging the parser\n\n{user}\n\nwhy does it crash?\n\n{agent}\n\nBecause of X.\n\n"
        f"{user}\n\nfix it\n\n{agent}\n\nDone.\n",
        encoding="utf-8",
    )

    parsed = parse_transcript(path)

    assert parsed.format == "markdown" and parsed.title == "Debugging the parser"
    assert [(t.user, t.agent_responses) for t in parsed.turns] == [
        ("why does it crash?", ["Because of X."]),
        ("fix it", ["Done."]),
    ]


def test_bold_label_exports_with_text_on_the_label_line(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    path.write_text("**User:** hello there\n\n**Assistant:** hi!\nhow can I help?\n\n**User:** bye\n")

    parsed = parse_transcript(path)

    assert [(t.user, t.agent_responses) for t in parsed.turns] == [
        ("hello there", ["hi!\nhow can I help?"]),
        ("bye", []),
    ]


def test_plain_markdown_is_still_undetected(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\n## User stories\n\nsome text\n")
    with pytest.raises(TranscriptError, match="cannot detect the transcript format"):
        parse_transcript(path)


# --------------------------------------------------------------------------- ChatGPT export
def _node(node_id: str, parent: str | None, role: str | None, content: dict | None, **message: object) -> dict:
    body = None if role is None else {"id": node_id, "author": {"role": role}, "content": content, **message}
    return {"id": node_id, "parent": parent, "children": [], "message": body}


def test_chatgpt_export_follows_the_current_branch_and_skips_hidden_messages(tmp_path: Path) -> None:
    text_part = lambda *parts: {"content_type": "text", "parts": list(parts)}  # noqa: E731
    conversation = {
        "title": "Router logs",
        "current_node": "a2",
        "mapping": {
            "root": _node("root", None, None, None),
            "s": _node("s", "root", "system", text_part(""), metadata={"is_visually_hidden_from_conversation": True}),
            "u1": _node(
                "u1",
                "s",
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [
                        {"asset_pointer": "file-service://x", "size_bytes": 2048, "width": 10},
                        "what is this log?",
                    ],
                },
            ),
            "t1": _node("t1", "u1", "assistant", {"content_type": "thoughts", "thoughts": []}),
            "c1": _node(
                "c1",
                "t1",
                "assistant",
                {"content_type": "code", "language": "python", "text": "print(1)"},
                recipient="python",
            ),
            "r1": _node("r1", "c1", "tool", {"content_type": "execution_output", "text": "1"}),
            "a1": _node("a1", "r1", "assistant", text_part("A router log.")),
            "u2-old": _node("u2-old", "a1", "user", text_part("rejected edit")),
            "u2": _node("u2", "a1", "user", text_part("and the errors?")),
            "a2": _node("a2", "u2", "assistant", text_part("Two timeouts.")),
        },
    }
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conversation, {"title": "broken", "mapping": ["x"]}]))

    parsed = parse_transcript(path)

    assert parsed.format == "chatgpt"
    assert [t.user for t in parsed.turns] == ["[image, 2048 bytes]\n\nwhat is this log?", "and the errors?"]
    assert parsed.turns[0].agent_responses == ["[python] print(1)\n\n[result] 1", "A router log."]
    assert parsed.skipped == ["line 2: conversation 2: not a conversation object"]


def test_chatgpt_conversations_never_share_a_turn() -> None:
    def conversation(question: str) -> dict:
        return {
            "title": question,
            "mapping": {"u": _node("u", None, "user", {"content_type": "text", "parts": [question]})},
        }

    parsed = chatgpt.parse(json.dumps([conversation("first?"), conversation("second?")]))

    assert [t.user for t in parsed.turns] == ["first?", "second?"]
    assert parsed.title == "ChatGPT export (2 conversations)"


# --------------------------------------------------------------------------- Gemini CLI
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


# --------------------------------------------------------------------------- opencode storage
def write_opencode_storage(root: Path) -> Path:
    """A storage tree in opencode's JSON layout: session, messages, parts."""
    storage = root / "storage"

    def write(relative: str, data: object) -> None:
        path = storage / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")

    write(
        "session/proj1/ses_abc.json",
        {"id": "ses_abc", "title": "Fix tests", "directory": "/w/app", "time": {"created": 1}},
    )
    write("message/ses_abc/msg_1.json", {"id": "msg_1", "sessionID": "ses_abc", "role": "user", "time": {"created": 1}})
    write(
        "part/msg_1/prt_1.json", {"id": "prt_1", "messageID": "msg_1", "type": "text", "text": "fix the failing test"}
    )
    write(
        "part/msg_1/prt_2.json",
        {"id": "prt_2", "messageID": "msg_1", "type": "text", "text": "<ctx>", "synthetic": True},
    )
    write(
        "message/ses_abc/msg_2.json",
        {"id": "msg_2", "sessionID": "ses_abc", "role": "assistant", "time": {"created": 2}},
    )
    write("part/msg_2/prt_3.json", {"id": "prt_3", "type": "reasoning", "text": "HIDDEN"})
    write(
        "part/msg_2/prt_4.json",
        {
            "id": "prt_4",
            "type": "tool",
            "tool": "bash",
            "state": {"status": "completed", "input": {"command": "npm test"}, "output": "1 failing"},
        },
    )
    write(
        "part/msg_2/prt_5.json",
        {
            "id": "prt_5",
            "type": "tool",
            "tool": "edit",
            "state": {"status": "completed", "input": {"filePath": "/w/app/a.ts"}, "output": ""},
        },
    )
    write("part/msg_2/prt_6.json", {"id": "prt_6", "type": "text", "text": "Fixed."})
    write("part/msg_2/prt_7.json", "{broken")
    write("message/ses_abc/msg_3.json", {"id": "msg_3", "sessionID": "ses_abc", "role": "user", "time": {"created": 3}})
    write("part/msg_3/prt_8.json", {"id": "prt_8", "type": "text", "text": "thanks, commit it"})
    return storage / "session" / "proj1" / "ses_abc.json"


def test_opencode_storage_session_reads_its_messages_and_parts(tmp_path: Path) -> None:
    session_file = write_opencode_storage(tmp_path)

    parsed = parse_transcript(session_file)

    assert parsed.format == "opencode-storage"
    assert parsed.title == "Fix tests" and parsed.cwd == "/w/app"
    assert [t.user for t in parsed.turns] == ["fix the failing test", "thanks, commit it"]
    assert parsed.turns[0].agent_responses == [
        '[bash] {"command": "npm test"}\n\n[result] 1 failing\n\n[edit] {"filePath": "/w/app/a.ts"}\n\nFixed.'
    ]
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [("/w/app/a.ts", "edited")]
    assert parsed.skipped == ["line 0: unreadable part file prt_7.json"]


def test_bulk_parse_of_an_opencode_storage_finds_only_sessions(tmp_path: Path, capsys) -> None:
    from ccm_tui.cli import main

    write_opencode_storage(tmp_path)
    capsys.readouterr()
    rc = main(["restore", str(tmp_path / "storage"), "--parse-only", "--json"])
    documents = json.loads(capsys.readouterr().out)["files"]

    assert rc == 0
    assert [Path(d["file"]).name for d in documents] == ["ses_abc.json"]
    assert len(documents[0]["turns"]) == 2


def test_opencode_storage_ids_are_names_never_paths(tmp_path: Path) -> None:
    """A session or message id like "/tmp/x" or "../../etc" must not make the parser read elsewhere."""
    outside = tmp_path / "outside"
    (outside / "m").mkdir(parents=True)
    (outside / "m" / "secret.json").write_text(json.dumps({"id": "m", "role": "user", "text": "SECRET"}))
    session_file = write_opencode_storage(tmp_path / "a")
    data = json.loads(session_file.read_text())
    data["id"] = str(outside)
    session_file.write_text(json.dumps(data))

    with pytest.raises(TranscriptError, match="not a plain name"):
        parse_transcript(session_file, "opencode-storage")


def test_markdown_labels_inside_an_answer_or_a_code_block_are_not_turns() -> None:
    text = (
        "**User:** What does len([]) return?\n\n"
        "**Assistant:** A quiz, then:\n\n"
        "**Question:** What does len([]) return?\n"
        "**Answer:** 0\n\n"
        "```markdown\n### Human\nnot a turn either\n```\n\n"
        "**User:** thanks\n\n"
        "**Assistant:** You're welcome.\n"
    )
    parsed = markdown_chat.parse(text)
    assert [t.user for t in parsed.turns] == ["What does len([]) return?", "thanks"]
    assert "**Question:**" in parsed.turns[0].agent_responses[0]
    assert "### Human" in parsed.turns[0].agent_responses[0]
