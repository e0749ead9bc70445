"""A request providers can cache (issue 39): what changes every turn comes last, and the providers
that cache only what ``cache_control`` marks get the hints — seen on the wire of the scripted Anthropic
server (which keeps a prompt cache as the API does) and absent from the OpenAI one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers.anthropic_server import FakeAnthropicServer
from tests.helpers.cli_session import CCM, open_auth_bug
from tests.helpers.openai_server import call, text, tool_calls

NOTE = "[Context note from ccm-tui"


@pytest.fixture
def claude(tmp_path, capsys, monkeypatch) -> Iterator[CCM]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-fake")
    with FakeAnthropicServer() as server:
        yield CCM(server, tmp_path / "session", capsys, "anthropic/claude-3-5-sonnet-20240620")


def hinted(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, text) of every block that carries a cache hint, in the request's order."""
    out = [("tool", t["name"]) for t in body.get("tools") or [] if "cache_control" in t]
    system = body.get("system") or []
    out += [("system", b.get("text", "")) for b in system if isinstance(b, dict) and "cache_control" in b]
    for m in body["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if "cache_control" in b:
                out.append((m["role"], b.get("text") or json.dumps(b)))
    return out


def chat_along(p: CCM) -> list[dict[str, Any]]:
    open_auth_bug(p)
    for message, reply in [("they expire after 60 minutes", "Noted."), ("the refresh token is ignored", "I see.")]:
        p.server.push(text(reply))
        out = p.send(message)
    return [p.chat_requests()[-1], out]


def test_anthropic_requests_mark_the_stable_prefix_and_the_conversation_and_read_the_cache(claude):
    body, out = chat_along(claude)
    marks = hinted(body)
    assert 2 <= len(marks) <= 4  # the provider's limit
    # the system prompt (after the tool definitions) is the first breakpoint
    assert marks[0][0] == "system" and marks[0][1].startswith("You are a helpful assistant")
    assert body["system"][0].get("cache_control") == {"type": "ephemeral"}
    # the conversation so far, up to the previous reply, is the second; the context note is not marked
    assert marks[1] == ("assistant", "Noted.")
    last = body["messages"][-1]
    texts = [b.get("text", "") for b in last["content"]] if isinstance(last["content"], list) else [last["content"]]
    assert any(t.startswith(NOTE) for t in texts) and "the refresh token is ignored" in texts[-1]
    assert not any(where != "system" and t.startswith(NOTE) for where, t in marks)
    # the second request of the session on read what the first wrote: reported as cached input tokens
    assert claude.server.cache_hits[0] == 0 and claude.server.cache_hits[-1] > 0
    assert out["usage"]["cached_tokens"] > 0


def test_providers_that_cache_by_themselves_get_no_hint(ccm):
    chat_along(ccm)
    assert "cache_control" not in json.dumps(ccm.server.chat_requests())


def test_an_ordinary_turn_resends_the_previous_request_as_its_prefix(ccm):
    """In an open effort, everything before the previous turn's context note is sent again byte for
    byte — even with an expanded effort whose idle count (once in the system message) changes every turn."""
    open_auth_bug(ccm)
    ccm.server.push(tool_calls(call("close_effort", {})), text("Auth bug: fixed."), text("Concluded."))
    ccm.send("the auth bug is fixed, close it")
    ccm.server.push(tool_calls(call("expand_effort", {"id": "auth-bug"})), text("It was the token."))
    ccm.send("what did we find in auth-bug?")
    ccm.server.push(tool_calls(call("open_effort", {"name": "db pool"})), text("Opened."))
    ccm.send("let's tune the db pool now")
    ccm.server.push(text("Twenty it is."))
    ccm.send("the pool size is 20")
    before, after = ccm.chat_requests()[-2:]
    note = next(i for i, m in enumerate(before["messages"]) if str(m["content"]).startswith(NOTE))
    assert after["messages"][:note] == before["messages"][:note]
    assert "turn(s) since last reference" in after["messages"][-2]["content"]  # the idle count: in the note
    assert after["messages"][-2]["content"] != before["messages"][note]["content"]
