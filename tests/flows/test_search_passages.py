"""Search results carry the best passage of a log with its line numbers; the model reads around
it with a partial expand_effort that returns the lines and changes no effort state."""

from __future__ import annotations

import json

from tests.helpers.cli_session import conclude_auth_bug, open_auth_bug
from tests.helpers.openai_server import call, text, tool_calls


def tool_results(ccm, count: int = 1) -> list[dict]:
    """The last ``count`` tool results the model received (in the newest request that carried any)."""
    for request in reversed(ccm.chat_requests()):
        results = [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]
        if results:
            return results[-count:]
    return []


def concluded_effort_with_a_detail(ccm) -> None:
    open_auth_bug(ccm)
    ccm.server.push(text("The axolotl middleware drops the refresh header."))
    ccm.send("Which middleware strips the header?")
    ccm.server.push(text("Then patch it."))
    ccm.send("Right, I will patch it tomorrow")
    conclude_auth_bug(ccm)


def test_search_result_carries_the_passage_and_a_partial_expand_returns_those_lines(ccm):
    concluded_effort_with_a_detail(ccm)
    detail_line = next(
        n for n, m in enumerate(ccm.lines("efforts/auth-bug.jsonl"), 1) if "axolotl" in str(m.get("content"))
    )
    ccm.server.push(tool_calls(call("search_efforts", {"query": "axolotl middleware"})), text("Found it."))
    ccm.send("what was that middleware called?")
    [found] = tool_results(ccm)
    best = found["results"][0]
    assert best["id"] == "auth-bug"
    assert "**axolotl**" in best["passage"]
    first, last = best["lines"]
    assert first <= detail_line <= last

    events_before = len(ccm.events())
    ccm.server.push(
        tool_calls(call("expand_effort", {"id": "auth-bug", "around_line": str(detail_line)})), text("It is axolotl.")
    )
    ccm.send("show me the lines around it")
    [partial] = tool_results(ccm)
    assert partial["status"] == "lines"
    assert partial["lines"][0] <= detail_line <= partial["lines"][1]
    assert any(m["line"] == detail_line and "axolotl" in m["content"] for m in partial["messages"])
    assert ccm.effort("auth-bug")["status"] == "concluded"
    new_events = [e["event"] for e in ccm.events()[events_before:]]
    assert "effort_expanded" not in new_events


def test_partial_expand_with_bad_lines_is_a_one_line_error(ccm):
    concluded_effort_with_a_detail(ccm)
    ccm.server.push(
        tool_calls(
            call("expand_effort", {"id": "auth-bug", "lines": "40-10"}),
            call("expand_effort", {"id": "auth-bug", "lines": "abc"}),
            call("expand_effort", {"id": "auth-bug", "lines": "900-905"}),
        ),
        text("Sorry."),
    )
    ccm.send("read some lines")
    errors = [r.get("error", "") for r in tool_results(ccm, 3)]
    assert "must go up" in errors[0]
    assert "must be a line number" in errors[1]
    assert "does not exist" in errors[2]
    assert ccm.effort("auth-bug")["status"] == "concluded"


def test_search_json_gains_passage_and_lines_and_keeps_its_keys(ccm):
    concluded_effort_with_a_detail(ccm)
    out = ccm.search("axolotl")
    best = out["results"][0]
    assert {"id", "status", "summary", "score", "snippet"} <= best.keys()
    assert best["id"] == "auth-bug" and "**axolotl**" in best["passage"]
    assert best["lines"][0] <= best["lines"][1]
