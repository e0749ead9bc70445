"""ChatGPT exports: the current branch only, hidden messages skipped, conversations that never share a turn."""

from __future__ import annotations

import json
from pathlib import Path

from ccm_tui.restore.formats import chatgpt
from ccm_tui.restore.parse import parse_transcript


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
