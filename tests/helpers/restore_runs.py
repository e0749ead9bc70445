"""``ccm-tui restore`` driven in-process: a Claude Code session to import, a scripted model that answers each
kind of request (turn summaries, evidence rounds, the final summary), and the command run with its output."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ccm_tui.cli import main
from tests.helpers.openai_server import call, text, tool_calls

MODEL = "openai/fake-model"
FINAL_SUMMARY = "Calculator project: divide() now raises ValueError on b == 0, covered by a pytest test."
LONG_ANSWER = "Done. " + "The guard checks b before dividing. " * 60


def claude_record(uuid: str, parent: str | None, kind: str, content: Any, cwd: str, **extra: Any) -> dict[str, Any]:
    """One record of a Claude Code session file."""
    message: dict[str, Any] = {"role": kind, "content": content, **extra.pop("message", {})}
    return {
        "parentUuid": parent,
        "uuid": uuid,
        "type": kind,
        "sessionId": "s1",
        "cwd": cwd,
        "isSidechain": False,
        "message": message,
        **extra,
    }


def write_claude_session(path: Path, cwd: Path) -> Path:
    """A 3-turn Claude Code session: read, edit, create; tool results are not human turns."""
    c = str(cwd)
    records = [
        claude_record("u1", None, "user", "The divide function crashes when b is zero, fix it", c),
        claude_record(
            "a1",
            "u1",
            "assistant",
            [
                {"type": "text", "text": "Let me look at calc.py."},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": f"{c}/src/calc.py"}},
            ],
            c,
            message={"id": "m1"},
        ),
        claude_record(
            "r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "def divide..."}], c
        ),
        claude_record(
            "a2",
            "r1",
            "assistant",
            [{"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": f"{c}/src/calc.py"}}],
            c,
            message={"id": "m2"},
        ),
        claude_record("r2", "a2", "user", [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}], c),
        claude_record("a3", "r2", "assistant", [{"type": "text", "text": LONG_ANSWER}], c, message={"id": "m3"}),
        claude_record("u2", "a3", "user", "Add a pytest test for it", c),
        claude_record(
            "a4",
            "u2",
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t3",
                    "name": "Write",
                    "input": {"file_path": f"{c}/tests/test_calc.py", "content": "..."},
                }
            ],
            c,
            message={"id": "m4"},
        ),
        claude_record("r3", "a4", "user", [{"type": "tool_result", "tool_use_id": "t3", "content": "created"}], c),
        claude_record(
            "a5",
            "r3",
            "assistant",
            [{"type": "text", "text": "Added tests/test_calc.py; 3 tests pass."}],
            c,
            message={"id": "m5"},
        ),
        claude_record("u3", "a5", "user", "Thanks, update the README too", c),
        claude_record(
            "a6",
            "u3",
            "assistant",
            [{"type": "text", "text": "README now documents the ValueError."}],
            c,
            message={"id": "m6"},
        ),
        {"type": "summary", "summary": "Fix calculator division by zero", "leafUuid": "a6"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def write_mixed_labels(path: Path) -> Path:
    """A chat export broken the way no parser can mend: a fence opened in the first answer is never
    closed and every later heading sits right under a line of text, so all of them read as code.
    The parse finds 1 turn of 13 and the sanity check says so."""
    first = "## User\nquestion 0\n## Assistant\n```python\nanswer = 0\n"
    path.write_text(first + "".join(f"## User\nquestion {n}\n## Assistant\nanswer {n}\n" for n in range(1, 13)))
    return path


def turn_reply(n: int) -> str:
    return (
        f"TURN SUMMARY\n\nTurn number: {n}\nUser request summary: request {n}\n"
        f"Agent response summary: handled request {n}\nKey outcomes: outcome {n}\nState changes: none\n"
        "Artifacts modified: none\nConstraints/assumptions added: none\nOpen questions after this turn: none"
    )


def responder(body: dict[str, Any]):
    """Answers by kind of request: turn summaries, evidence rounds, the final summary."""
    messages = body["messages"]
    system = messages[0]["content"]
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    if tools:
        if tools == ["complete"]:
            return tool_calls(call("complete", {"findings": "- forced"}))
        if not any(m["role"] == "tool" for m in messages):
            return tool_calls(
                call("search_log", {"pattern": "ValueError"}),
                call("read_file", {"path": "src/calc.py"}),
                call("read_file", {"path": "/etc/passwd"}),
            )
        return tool_calls(call("complete", {"findings": "- calc.py guards b == 0 (verified)"}))
    if "SESSION SUMMARY" in system:
        return text(
            f"SESSION SUMMARY\n\nSummary: {FINAL_SUMMARY}\nGoal: stop the crash\nOutcome: fixed\n"
            "Key decisions: raise ValueError\nArtifacts: src/calc.py, tests/test_calc.py\nConstraints: none\n"
            "Open questions / next steps: none"
        )
    turn = int(re.search(r"this is turn (\d+) of", messages[-1]["content"]).group(1))
    return text(turn_reply(turn))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def restore(capsys, llm_server, transcript: Path, session: Path, *extra: str) -> tuple[int, str, str]:
    return run(
        capsys,
        "restore",
        str(transcript),
        "--session-dir",
        str(session),
        "--model",
        MODEL,
        "--api-base",
        llm_server.base_url,
        *extra,
    )
