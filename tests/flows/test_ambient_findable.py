"""Every exchange is findable: ambient chat that left the window is found by search, by the model's
search_efforts tool, and read around the hit — with a model that never calls a tool."""

from __future__ import annotations

import json

from tests.helpers.openai_server import call, text, tool_calls


def chat_a_while(ccm, first: str, n: int) -> None:
    ccm.server.push(text("Noted."))
    ccm.send(first)
    for i in range(n):
        ccm.server.push(text(f"Reply {i} about the weather."))
        ccm.send(f"small talk number {i} about the weather")


def test_ambient_chat_that_left_the_window_is_found_with_its_lines(ccm):
    chat_a_while(ccm, "My locker code at the gym is 4729, remember it.", 14)  # the window is 10 exchanges
    assert "4729" not in ccm.last_context_text()  # it left the context
    results = ccm.search("locker code gym")["results"]
    best = results[0]
    assert best["source"] == "ambient" and best["id"] == "ambient" and best["lines"][0] == 1
    assert "4729" in best["passage"]
    rc, out, err = ccm.run("search", "--session-dir", str(ccm.dir), "locker code")
    assert rc == 0 and "ambient chat  lines 1-" in out and "4729" in out


def test_the_model_finds_ambient_chat_and_reads_around_the_hit(ccm):
    chat_a_while(ccm, "My locker code at the gym is 4729, remember it.", 12)
    ccm.server.push(tool_calls(call("search_efforts", {"query": "locker code"})), text("Let me read it."))
    ccm.send("what was my locker code?")
    found = json.loads([m for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool"][-1]["content"])
    assert found["results"][0]["source"] == "ambient"
    line = found["results"][0]["lines"][0]
    ccm.server.push(tool_calls(call("expand_effort", {"id": "ambient", "around_line": str(line)})), text("It is 4729."))
    out = ccm.send("read around it")
    read = json.loads([m for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool"][-1]["content"])
    assert read["status"] == "lines" and any("4729" in m["content"] for m in read["messages"])
    assert out["reply"] == "It is 4729."
    ccm.server.push(tool_calls(call("expand_effort", {"id": "ambient"})), text("ok"))
    ccm.send("expand the ambient chat")
    refused = json.loads([m for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool"][-1]["content"])
    assert "not an effort" in refused["error"]
