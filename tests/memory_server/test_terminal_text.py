"""What ``ccm-tui mcp`` answers carries no terminal control (issue 33, hole 5): a transcript stored weeks before
with OSC 52, ESC[2J, C1, DCS and bidirectional overrides comes back from search and read cleaned, and so do a
caller's own arguments echoed in an error; the logs keep what was said."""

from __future__ import annotations

from typing import Any

from ccm_tui.core.storage.durable import append_jsonl
from tests.core.text.test_terminal import FORBIDDEN, strings
from tests.helpers.mcp_session import log_lines, raw_exchange

HOSTILE = (
    "axolotl \x1b]52;c;ZXZpbA==\x07clip \x1b[2Jclear \x9b31mred \x1bPdcs\x1b\\ "
    "\u202eevil\u202c \u2066iso\u2069 mark\u200f \u061c end"
)


def call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_no_answer_carries_an_escape_a_c1_or_a_bidi_control(session_dir):
    effort = session_dir / "efforts" / "auth-bug.jsonl"
    append_jsonl(effort, [{"role": "assistant", "content": HOSTILE, "ts": "2026-01-01T00:00:00Z"}])
    append_jsonl(session_dir / "raw.jsonl", [{"role": "user", "content": HOSTILE, "ts": "2026-01-01T00:00:01Z"}])
    lines = [
        call(2, "search", query="axolotl"),
        call(3, "read", id="auth-bug", offset=1, limit=60),
        call(4, "read", id="ambient", offset=1, limit=60),
        call(5, "list"),
        call(6, "status"),
        call(7, "read", id="nope\x1b[2J\u202e"),  # the caller's own value, echoed in the refusal
        call(8, "no\x9bsuch\u202etool"),
        call(9, "search", query="axolotl", line="\x1b]52;c;eA==\x07"),  # an argument the tool does not take
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
