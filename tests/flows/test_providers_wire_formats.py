"""The core flows through litellm's Anthropic and Ollama paths, not only the OpenAI one.

``ccm-tui send --model anthropic/… | ollama_chat/… --api-base <fake>`` against scripted servers
that speak each provider's own wire format (tests/helpers/anthropic_server.py, ollama_server.py):
opening, an aside, concluding with a summary call, expanding, streaming, 429 and 500, with the
system prompt and consecutive same-role messages as each provider takes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers.anthropic_server import FakeAnthropicServer
from tests.helpers.cli_session import CCM, SUMMARY_MARK
from tests.helpers.ollama_server import FakeOllamaServer
from tests.helpers.openai_server import call, fault, text, tool_calls

RATE_LIMIT_BODY = {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}


class Provider(CCM):
    """A session driven through one provider's wire format (the system prompt and the summary call
    are recognised as that provider sends them)."""

    def __init__(self, name: str, model: str, server, capsys, session_dir) -> None:
        super().__init__(server, session_dir, capsys, model)
        self.name = name

    def system_text(self, body: dict[str, Any]) -> str:
        """The system prompt as the provider received it."""
        if self.name == "anthropic":
            system = body.get("system") or []
            return "\n".join(b["text"] for b in system) if isinstance(system, list) else str(system)
        return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")

    def is_summary(self, body: dict[str, Any]) -> bool:
        return not body.get("tools") and SUMMARY_MARK in self.system_text(body)

    def seen_text(self, body: dict[str, Any]) -> str:
        return self.system_text(body) + "\n" + json.dumps(body["messages"], ensure_ascii=False)


@pytest.fixture(params=["anthropic", "ollama"])
def provider(request, tmp_path, capsys, monkeypatch) -> Iterator[Provider]:
    monkeypatch.setenv("CCM_RETRY_BASE_SECONDS", "0")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-fake")
    if request.param == "anthropic":
        server, model = FakeAnthropicServer(), "anthropic/claude-3-5-sonnet-20240620"
    else:
        server, model = FakeOllamaServer(), "ollama_chat/llama3.1"
    with server:
        yield Provider(request.param, model, server, capsys, tmp_path / "session")


def open_auth_bug(p: Provider) -> dict[str, Any]:
    p.server.push(
        tool_calls(call("open_effort", {"name": "auth bug"}), content="Let's dig in."),
        text("Opened. What do the 401s look like?"),
    )
    return p.send("Let's work on the auth bug: users get 401 after an hour")


def test_open_aside_conclude_expand(provider):
    p = provider
    out = open_auth_bug(p)
    assert out["active_effort"] == "auth-bug" and "--- Opened effort: auth-bug ---" in out["banners"]
    first, second = p.chat_requests()[-2:]
    assert first.get("tools") and "Effort state" in json.dumps(first["messages"])  # (in the context note)
    # the tool result went back in the provider's own shape
    if p.name == "anthropic":
        results = [b for m in second["messages"] if isinstance(m["content"], list) for b in m["content"]]
        assert any(b.get("type") == "tool_result" and "opened" in json.dumps(b) for b in results)
    else:
        assert any(m["role"] == "tool" and "opened" in m["content"] for m in second["messages"])

    # an aside goes to the ambient log; the effort stays clean
    p.server.push(tool_calls(call("route_to_ambient", {})), text("Lima."))
    out = p.send("by the way, what's the capital of Peru?")
    assert out["logged_to"] == "ambient" and out["reply"] == "Lima."
    assert [m["content"] for m in p.lines("raw.jsonl")][-1] == "Lima."

    # conclude: the summary is a separate request without tools
    p.server.push(
        tool_calls(call("close_effort", {})),
        text("Auth bug: 401s after an hour, fixed by refreshing tokens."),
        text("Concluded."),
    )
    out = p.send("The auth bug is done, thanks")
    assert "concluded" in " ".join(out["banners"]).lower()
    summaries = p.summary_requests()
    assert len(summaries) == 1 and not summaries[0].get("tools")
    status = json.loads(p.run("status", "--session-dir", str(p.dir), "--json")[1])
    entry = next(e for e in status["efforts"] if e["id"] == "auth-bug")
    assert entry["summary"] == "Auth bug: 401s after an hour, fixed by refreshing tokens."

    # expand: the raw log is back in the next request
    p.server.push(tool_calls(call("expand_effort", {"id": "auth-bug"})), text("It was the interceptor."))
    out = p.send("what exactly did we find in auth-bug?")
    assert out["reply"] == "It was the interceptor."
    assert "users get 401 after an hour" in p.seen_text(p.chat_requests()[-1])


def test_streaming_prints_the_reply_as_it_arrives(provider):
    p = provider
    p.server.chunk_chars = 2
    p.server.push(text("Streaming works across providers."))
    rc, out, err = p.run(*p.send_argv("hello"))
    assert rc == 0, err
    assert out.strip() == "Streaming works across providers."
    assert p.server.chat_requests()[-1]["stream"] is True


def test_system_prompt_and_consecutive_same_role_messages(provider):
    p = provider
    open_auth_bug(p)  # the effort's head line, a user-role line, then its log's first user message
    p.server.push(text("Noted."))
    p.send("more details")
    body = p.chat_requests()[-1]
    system = p.system_text(body)
    assert "efforts" in system and "Active effort 'auth-bug'" in system + json.dumps(body["messages"])
    roles = [m["role"] for m in body["messages"]]
    if p.name == "anthropic":
        # system messages become the top-level system; the rest alternates user/assistant
        assert "system" not in roles and roles[0] == "user"
        assert all(a != b for a, b in zip(roles, roles[1:], strict=False))
    else:
        assert roles[0] == "system"
    assert "more details" in json.dumps(body["messages"][-1])


def test_rate_limit_pauses_and_server_error_is_retried(provider):
    p = provider
    p.server.push(fault(429, RATE_LIMIT_BODY, {"Retry-After": "0"}), fault(500), text("Recovered."))
    rc, out, err = p.run(*p.send_argv("hello"))
    assert rc == 0, err
    assert "Recovered." in out and "SESSION PAUSED — rate limited by the provider" in err
    assert "provider hiccup (provider error 500" in out
    assert "Exception" not in out + err and "b'" not in out + err
    assert len(p.server.chat_requests()) == 3


def test_persistent_server_error_fails_in_one_plain_line(provider):
    p = provider
    p.server.push(*[fault(500)] * 4)
    rc, out, err = p.run(*p.send_argv("hello"))
    assert rc == 1 and err.startswith("ccm-tui: provider error 500") and err.count("\n") == 1
    assert "Exception" not in err and "litellm" not in err


def test_a_model_refusing_tools_chats_on_without_them(provider):
    p = provider
    p.server.refuse_tools = True
    p.server.push(text("Hi, I can chat."))
    out = p.send("hello")
    assert out["reply"] == "Hi, I can chat."
    assert any("cannot use tools" in b for b in out["banners"])
    assert not p.server.chat_requests()[-1].get("tools")
