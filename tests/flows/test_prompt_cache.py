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
    # the system prompt (after the tool definitions) is the first breakpoint: it is the prompt alone
    assert marks[0][0] == "system" and marks[0][1].startswith("You are a helpful assistant")
    assert body["system"][0].get("cache_control") == {"type": "ephemeral"} and len(body["system"]) == 1
    # the conversation so far, up to the previous reply, is the last; the context note, then the user's new
    # message, come after it unmarked (litellm sends the two as one user message of two blocks)
    assert marks[-1] == ("assistant", "Noted.")
    last = body["messages"][-1]["content"]
    assert last[0]["text"].startswith(NOTE) and last[-1]["text"] == "the refresh token is ignored"
    assert "cache_control" not in json.dumps(last) and "Effort state:" in last[0]["text"]
    # the second request of the session on read what the first wrote: reported as cached input tokens
    assert claude.server.cache_hits[0] == 0 and claude.server.cache_hits[-1] > 0
    assert out["usage"]["cached_tokens"] > 0


def test_providers_that_cache_by_themselves_get_no_hint(ccm):
    chat_along(ccm)
    assert "cache_control" not in json.dumps(ccm.server.chat_requests())


def _unhinted(value: Any) -> Any:
    """A request body without its cache hints (what a provider's cache compares)."""
    if isinstance(value, dict):
        return {k: _unhinted(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unhinted(v) for v in value]
    return value


def _user_text(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return [b.get("text", "") for b in content] if isinstance(content, list) else [content]


@pytest.mark.parametrize("provider", ["ccm", "claude"])
def test_two_turns_without_a_change_send_the_previous_request_byte_for_byte_up_to_its_note(provider, request):
    """On the wire of either server: the tool definitions, the system prompt and every message of the
    previous request before its context note come again unchanged (the cache hints aside), then the
    previous message and reply, the new note and the new message."""
    p = request.getfixturevalue(provider)
    open_auth_bug(p)
    for message, reply in [("they expire after 60 minutes", "Noted."), ("the refresh token is ignored", "I see.")]:
        p.server.push(text(reply))
        p.send(message)
    before, after = (_unhinted(b) for b in p.chat_requests()[-2:])
    assert after.get("tools") == before.get("tools") and after.get("system") == before.get("system")
    old, new = before["messages"], after["messages"]
    if provider == "ccm":  # OpenAI: the note, then the user's message, are the last two messages
        assert old[-2]["content"].startswith(NOTE) and new[: len(old) - 2] == old[:-2]
        assert [m["content"] for m in new[len(old) - 2 :]][:2] == ["they expire after 60 minutes", "Noted."]
        assert new[-2]["content"].startswith(NOTE) and new[-1]["content"] == "the refresh token is ignored"
    else:  # Anthropic: the note and the user's message are the two blocks of the last message
        assert _user_text(old[-1])[0].startswith(NOTE) and new[: len(old) - 1] == old[:-1]
        assert new[len(old) - 1]["content"][0] == {"type": "text", "text": "they expire after 60 minutes"}
        assert _user_text(new[-1])[0].startswith(NOTE) and _user_text(new[-1])[-1] == "the refresh token is ignored"


def test_a_conclusion_breaks_the_prefix_after_the_instructions_and_tools_which_stay_cached(claude):
    open_auth_bug(claude)
    claude.server.push(text("Noted."))
    claude.send("they expire after 60 minutes")
    claude.server.push(tool_calls(call("close_effort", {})), text("Auth bug: tokens refreshed."), text("Concluded."))
    claude.send("the auth bug is fixed, close it")
    claude.server.push(text("Hello!"))
    claude.send("hi again")
    chats = [b for b in claude.server.chat_requests() if b.get("tools")]  # (the summary request has none)
    before, _concluded, after = (_unhinted(b) for b in chats[-3:])
    assert after["tools"] == before["tools"] and after["system"] == before["system"]
    # the effort's log left, its summary came: the messages differ from the first one on
    assert after["messages"][0] != before["messages"][0]
    assert _user_text(after["messages"][0])[0].startswith("[Concluded efforts in working memory")
    assert "auth-bug: Auth bug: tokens refreshed." in _user_text(after["messages"][0])[0]
    # the tool definitions and the system prompt were read from the cache across the conclusion
    assert all(hits > 0 for hits in claude.server.cache_hits[1:])


def test_an_ordinary_turn_resends_the_previous_request_as_its_prefix(ccm):
    """In an open effort, everything before the previous turn's context note is sent again byte for
    byte — even with an expanded effort whose idle count changes every turn, and an effort state that
    sits in the note."""
    open_auth_bug(ccm)
    ccm.server.push(tool_calls(call("close_effort", {})), text("Auth bug: fixed."), text("Concluded."))
    ccm.send("the auth bug is fixed, close it")
    ccm.server.push(tool_calls(call("expand_effort", {"id": "auth-bug"})), text("It was the token."))
    ccm.send("what did we find in auth-bug?")
    ccm.server.push(tool_calls(call("open_effort", {"name": "db pool"})), text("Opened."))
    ccm.send("let's tune the db pool now")
    ccm.server.push(text("Twenty it is."))
    ccm.send("the pool size is 20")
    ccm.server.push(text("Thirty seconds."))
    ccm.send("and the timeout 30 s")
    before, after = ccm.chat_requests()[-2:]
    note = len(before["messages"]) - 2
    assert before["messages"][note]["content"].startswith(NOTE)
    assert after["messages"][:note] == before["messages"][:note]
    assert "turn(s) since last reference" in after["messages"][-2]["content"]  # the idle count: in the note
    assert "- open: db-pool (ACTIVE" in after["messages"][-2]["content"]  # the effort state too
    assert after["messages"][-2]["content"] != before["messages"][note]["content"]
