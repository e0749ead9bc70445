"""What ``ccm-tui mcp`` answers carries no terminal control (issue 33, hole 5): a transcript stored weeks before
with OSC 52, ESC[2J, C1, DCS and bidirectional overrides comes back from search and read cleaned, and so do a
caller's own arguments echoed in an error; the logs keep what was said. Every answer the server writes is
cleaned, whatever the text (a property)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ccm_tui.core.storage.durable import append_jsonl
from tests.helpers.mcp_session import log_lines, raw_exchange, tool_call
from tests.helpers.terminal_text import FORBIDDEN, SOME, clean_of, hostile, strings

HOSTILE = (
    "axolotl \x1b]52;c;ZXZpbA==\x07clip \x1b[2Jclear \x9b31mred \x1bPdcs\x1b\\ "
    "\u202eevil\u202c \u2066iso\u2069 mark\u200f \u061c end"
)


def test_no_answer_carries_an_escape_a_c1_or_a_bidi_control(session_dir):
    effort = session_dir / "efforts" / "auth-bug.jsonl"
    append_jsonl(effort, [{"role": "assistant", "content": HOSTILE, "ts": "2026-01-01T00:00:00Z"}])
    append_jsonl(session_dir / "raw.jsonl", [{"role": "user", "content": HOSTILE, "ts": "2026-01-01T00:00:01Z"}])
    lines = [
        tool_call(2, "search", query="axolotl"),
        tool_call(3, "read", id="auth-bug", offset=1, limit=60),
        tool_call(4, "read", id="ambient", offset=1, limit=60),
        tool_call(5, "list"),
        tool_call(6, "status"),
        tool_call(7, "read", id="nope\x1b[2J\u202e"),  # the caller's own value, echoed in the refusal
        tool_call(8, "no\x9bsuch\u202etool"),
        tool_call(9, "search", query="axolotl", line="\x1b]52;c;eA==\x07"),  # an argument the tool does not take
    ]
    out, errors = raw_exchange(lines, set(range(2, 10)))
    by_id = {m.get("id"): m for m in out}
    texts = {i: "\n".join(strings(by_id[i].get("result") or by_id[i].get("error"))) for i in range(2, 10)}
    assert "axolotl clip clear red  evil iso mark  end" in texts[2] + texts[3]  # the words, not the controls
    assert "evil" in texts[4]
    for i, said in texts.items():
        assert not FORBIDDEN.intersection(said), (i, said)
    assert "Traceback" not in errors
    assert log_lines(effort)[-1]["content"] == HOSTILE  # the log keeps what was said


@SOME
@given(hostile, hostile, st.one_of(st.integers(), hostile))
def test_every_mcp_answer_leaves_no_control_but_keeps_the_request_id(text, error, request_id):
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError, JSONRPCResponse

    from ccm_tui.memory_server.wire import clean_message

    result = {"content": [{"type": "text", "text": text}], "isError": False}
    answers = [
        SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)),
        SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=-32600, message=error))),
    ]
    for answer in answers:
        sent = clean_message(answer).message.model_dump(by_alias=True, exclude_unset=True, mode="json")
        assert sent["id"] == request_id
        assert all(clean_of(s) for s in strings({k: v for k, v in sent.items() if k != "id"}))
