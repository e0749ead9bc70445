"""What real (small, local) models do that scripted ones do not: tool calls written as text,
no tool support at all. Through ``ccm-tui send`` and the engine against the loopback server."""

from __future__ import annotations

import asyncio
import json

from ccm_tui.config import Settings, model_facts_file
from ccm_tui.core.efforts.states import Action
from ccm_tui.core.engine.opening import start_engine
from tests.helpers.cli_session import MODEL, is_summary_request
from tests.helpers.openai_server import text

CALL_AS_JSON = '{"name": "open_effort", "arguments": {"name": "auth bug"}}'


def test_a_tool_call_written_as_json_opens_the_effort_and_is_never_shown(ccm):
    ccm.server.push(text(CALL_AS_JSON), text("Opened. What do the 401s look like?"))
    out = ccm.send("Let's work on the auth bug: users get 401 after an hour")
    assert out["active_effort"] == "auth-bug" and out["logged_to"] == "auth-bug"
    assert "--- Opened effort: auth-bug ---" in out["banners"]
    assert out["reply"] == "Opened. What do the 401s look like?"
    assert [c["name"] for c in out["tool_calls"]] == ["open_effort"]
    assert ccm.effort("auth-bug")["status"] == "open"
    logged = [m["content"] for m in ccm.lines("efforts/auth-bug.jsonl")]
    assert not any("arguments" in content for content in logged)  # the raw JSON is not part of the exchange
    # the model got the tool result, as for a structured call
    tool_msgs = [m for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert '"status": "opened"' in tool_msgs[0]["content"]


def test_tagged_call_with_prose_streams_only_the_prose(ccm):
    ccm.server.push(
        text(f"Let me set that up.\n<tool_call>\n{CALL_AS_JSON}\n</tool_call>"),
        text("Ready when you are."),
    )
    rc, out, err = ccm.run(
        "send", "--session-dir", str(ccm.dir), "--model", MODEL, "--api-base", ccm.server.base_url, "the auth bug"
    )
    assert rc == 0, err
    assert "Let me set that up." in out and "Ready when you are." in out
    assert "tool_call" not in out and "open_effort" not in out and "{" not in out
    assert ccm.effort("auth-bug")["active"] is True


def test_json_naming_a_tool_we_did_not_offer_stays_the_reply(ccm):
    reply = '{"name": "rm_rf", "arguments": {"path": "/"}}'
    ccm.server.push(text(reply))
    out = ccm.send("show me a JSON example")
    assert out["reply"] == reply and out["tool_calls"] == [] and out["logged_to"] == "ambient"


def test_a_model_without_tools_chats_on_without_them_and_is_remembered(ccm):
    ccm.server.refuse_tools = True
    ccm.server.push(text("Hello! How can I help?"))
    out = ccm.send("hi there")
    assert out["reply"] == "Hello! How can I help?" and out["logged_to"] == "ambient"
    notices = [b for b in out["banners"] if "cannot use tools" in b]
    assert len(notices) == 1 and "Ctrl+O" in notices[0] and MODEL in notices[0]
    requests = ccm.chat_requests()
    assert len(requests) == 2 and requests[0].get("tools") and not requests[1].get("tools")
    assert "used without tools" in requests[1]["messages"][-2]["content"]  # the context note
    assert MODEL in json.loads(model_facts_file().read_text())["no_tools"]
    told = [e for e in ccm.lines("events.jsonl") if e["event"] == "model_without_tools"]
    assert len(told) == 1 and told[0]["model"] == MODEL  # the event log says why the tools went away
    # the next run knows: no tools offered, no second notice
    ccm.server.push(text("Still here."))
    out = ccm.send("and now?")
    assert out["reply"] == "Still here." and not [b for b in out["banners"] if "cannot use tools" in b]
    assert not ccm.chat_requests()[-1].get("tools") and len(ccm.chat_requests()) == 3


def test_without_tools_the_user_opens_and_concludes_by_hand_and_the_model_writes_the_summary(ccm):
    ccm.server.refuse_tools = True
    ccm.server.push(text("Sure."))
    ccm.send("hi")
    settings = Settings(model=MODEL, api_base=ccm.server.base_url)
    engine = start_engine(ccm.dir, settings, retry_base=0)
    try:
        assert engine.tools_enabled is False
        assert asyncio.run(engine.run_action(Action.OPEN, "trip plan")).ok
        ccm.server.push(text("Kyoto first, then Osaka."))
        result = asyncio.run(engine.run_turn("Plan two days: Kyoto and Osaka"))
        assert result.ok and result.logged_to == "trip-plan"
        ccm.server.push(text("Trip plan: two days, Kyoto then Osaka."))
        assert asyncio.run(engine.run_action(Action.CONCLUDE, "trip-plan")).ok
        assert engine.effort("trip-plan").summary == "Trip plan: two days, Kyoto then Osaka."
    finally:
        engine.close()
    assert len([b for b in ccm.server.chat_requests() if is_summary_request(b)]) == 1


def test_the_model_is_told_its_budget_and_what_the_context_uses(ccm):
    ccm.server.push(text("Hi."))
    ccm.send("hello", "--wait", "1")
    messages = ccm.chat_requests()[-1]["messages"]
    system = messages[-2]["content"]  # the context note, just before the user's message
    assert "of a 16,000-token budget" in system and "uses about" not in messages[0]["content"]
    used = int(system.split("uses about ")[1].split(" of a")[0].replace(",", ""))
    assert used % 500 == 0 and 0 < used < 16_000


def test_a_model_the_map_knows_has_no_tools_is_never_offered_them(tmp_path, capsys):
    from ccm_tui.cli import main
    from tests.helpers.ollama_server import FakeOllamaServer

    with FakeOllamaServer() as server:
        server.push(text("Hello."), text("Again."))
        argv = ["send", "--session-dir", str(tmp_path / "s"), "--model", "ollama_chat/codegeex4"]
        argv += ["--api-base", server.base_url, "--json"]
        assert main([*argv, "hi"]) == 0
        first = json.loads(capsys.readouterr().out)
        assert main([*argv, "again"]) == 0
        second = json.loads(capsys.readouterr().out)
        assert [r.get("tools") for r in server.chat_requests()] == [None, None]
    assert first["reply"] == "Hello." and [b for b in first["banners"] if "cannot use tools" in b]
    assert second["reply"] == "Again." and not [b for b in second["banners"] if "cannot use tools" in b]
