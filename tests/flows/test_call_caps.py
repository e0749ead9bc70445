"""A reply with thousands of tool calls, or a turn opening hundreds of efforts, is capped with a
clear error to the model (issue 25, item 8)."""

from __future__ import annotations

import json

from ccm_tui.core.efforts.operations import MAX_OPENED_PER_TURN
from ccm_tui.core.turn.orchestrator import MAX_CALLS_PER_REPLY
from tests.helpers.openai_server import call, text, tool_calls


def test_tool_calls_per_reply_and_efforts_opened_per_turn_are_capped(ccm):
    many = [call("open_effort", {"name": f"topic {i}"}, id=f"c{i}") for i in range(1_000)]
    ccm.server.push(tool_calls(*many), text("Done."))
    out = ccm.send("open everything")
    assert out["reply"] == "Done."
    assert len(ccm.status()["efforts"]) == MAX_OPENED_PER_TURN
    messages = ccm.chat_requests()[-1]["messages"]
    results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    assert len(results) == MAX_CALLS_PER_REPLY + 1
    assert sum("error" not in r for r in results) == MAX_OPENED_PER_TURN
    assert "already opened 8 efforts" in results[MAX_OPENED_PER_TURN]["error"]
    assert "the other 968 were not run" in results[-1]["error"]
    assert len(ccm.events("tool_called")) == MAX_CALLS_PER_REPLY + 1
    assert len(messages[-MAX_CALLS_PER_REPLY - 2]["tool_calls"]) == MAX_CALLS_PER_REPLY + 1
    ccm.server.push(text("Fine."))
    assert ccm.send("and now?")["reply"] == "Fine."  # never "over the budget"
