"""The nine user stories of the product through ``ccm-tui send --json`` against the loopback server.

Each test checks which file was written and what the next request's context held.
"""

from __future__ import annotations

from tests.helpers.cli_session import conclude_auth_bug, open_auth_bug
from tests.helpers.openai_server import call, text, tool_calls

OPEN_BANNER = "--- Opened effort: auth-bug ---"


def test_story1_ambient_chatter_is_logged_and_kept_in_context(ccm):
    ccm.server.push(text("Hello! How can I help?"), text("It is a greeting."))
    out = ccm.send("hi there")
    assert out["logged_to"] == "ambient"
    assert out["reply"] == "Hello! How can I help?"
    raw = ccm.lines("raw.jsonl")
    assert [(m["role"], m["content"]) for m in raw] == [("user", "hi there"), ("assistant", "Hello! How can I help?")]
    assert all("ts" in m for m in raw)
    ccm.send("what was that?")
    seen = ccm.last_context_text()
    assert "hi there" in seen and "Hello! How can I help?" in seen


def test_story2_opening_an_effort_creates_its_log_with_the_opening_exchange(ccm):
    out = open_auth_bug(ccm)
    assert OPEN_BANNER in out["banners"]
    assert out["logged_to"] == "auth-bug"
    assert out["active_effort"] == "auth-bug"
    log = ccm.lines("efforts/auth-bug.jsonl")
    assert log[0]["role"] == "user" and "auth bug" in log[0]["content"]
    assert log[1]["role"] == "assistant" and "Opened" in log[1]["content"]
    entry = ccm.effort("auth-bug")
    assert entry["status"] == "open" and entry["active"] is True and entry["raw_file"] == "efforts/auth-bug.jsonl"
    assert ccm.lines("raw.jsonl") == []
    # the second request of the turn (after the tool call) carried the tool result
    tool_msgs = [m for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert '"status": "opened"' in tool_msgs[0]["content"]


def test_story3_messages_in_an_open_effort_go_to_its_log_and_stay_in_context(ccm):
    open_auth_bug(ccm)
    ccm.server.push(text("Check the refresh token interceptor."), text("Yes."))
    out = ccm.send("It happens exactly after 60 minutes")
    assert out["logged_to"] == "auth-bug"
    log = ccm.lines("efforts/auth-bug.jsonl")
    assert [m["content"] for m in log[-2:]] == [
        "It happens exactly after 60 minutes",
        "Check the refresh token interceptor.",
    ]
    assert ccm.lines("raw.jsonl") == []
    ccm.send("ok")
    seen = ccm.last_context_text()
    for m in log:
        assert m["content"] in seen


def test_story4_an_aside_goes_to_ambient_and_leaves_the_effort_untouched(ccm):
    open_auth_bug(ccm)
    before = (ccm.dir / "efforts/auth-bug.jsonl").read_bytes()
    ccm.server.push(tool_calls(call("route_to_ambient", {})), text("Lima."))
    out = ccm.send("Quick question: what's the capital of Peru?")
    assert out["logged_to"] == "ambient"
    assert out["active_effort"] == "auth-bug"
    assert (ccm.dir / "efforts/auth-bug.jsonl").read_bytes() == before
    assert [m["content"] for m in ccm.lines("raw.jsonl")] == ["Quick question: what's the capital of Peru?", "Lima."]
    assert ccm.effort("auth-bug")["status"] == "open"
    ccm.server.push(text("Back to it."))
    out = ccm.send("Back to the 401s")
    assert out["logged_to"] == "auth-bug"
    assert "Let's work on the auth bug" in ccm.last_context_text()


def test_story5_concluding_summarizes_the_whole_log(ccm):
    open_auth_bug(ccm)
    ccm.server.push(text("Add an axios interceptor that refreshes the token."))
    ccm.send("Tokens expire after 3600 s")
    out = conclude_auth_bug(ccm)
    assert "--- Concluded effort: auth-bug ---" in out["banners"]
    assert out["logged_to"] == "auth-bug"
    entry = ccm.effort("auth-bug")
    assert entry["status"] == "concluded" and entry["active"] is False
    assert entry["summary"].startswith("Auth bug: 401s after one hour")
    # the summary request carried every message of the effort, including the concluding one
    summary_body = "\n".join(m["content"] for m in ccm.summary_requests()[-1]["messages"])
    for needle in (
        "Let's work on the auth bug",
        "Tokens expire after 3600 s",
        "Add an axios interceptor",
        "The auth bug is done",
    ):
        assert needle in summary_body
    log = ccm.lines("efforts/auth-bug.jsonl")
    assert [m["content"] for m in log[-2:]] == ["The auth bug is done, thanks", "Great, concluded the auth bug."]


def test_story6_concluded_log_leaves_context_but_stays_on_disk(ccm):
    open_auth_bug(ccm)
    conclude_auth_bug(ccm)
    ccm.server.push(text("Sure."))
    ccm.send("Thanks! Unrelated: tell me a joke")
    seen = ccm.last_context_text()
    assert "users get 401 after an hour" not in seen
    assert "Auth bug: 401s after one hour fixed" in seen  # the summary
    assert len(ccm.lines("efforts/auth-bug.jsonl")) == 4


def test_story7_and_8_new_effort_after_a_conclusion_sees_ambient_summaries_and_its_log(ccm):
    ccm.server.push(text("Hi!"))
    ccm.send("good morning")
    open_auth_bug(ccm)
    conclude_auth_bug(ccm)
    ccm.server.push(tool_calls(call("open_effort", {"name": "japan trip"})), text("Where in Japan?"))
    out = ccm.send("Let's plan my trip to Japan")
    assert out["logged_to"] == "japan-trip"
    assert (ccm.dir / "efforts/japan-trip.jsonl").exists()
    assert ccm.effort("japan-trip")["status"] == "open"
    ccm.server.push(text("Kyoto is lovely."))
    ccm.send("Kyoto and Osaka")
    messages = ccm.chat_requests()[-1]["messages"]
    seen = "\n".join(str(m.get("content")) for m in messages)
    assert "good morning" in seen  # ambient
    assert "Auth bug: 401s after one hour" in seen  # summary
    assert "Let's plan my trip to Japan" in seen  # new effort's log
    assert "users get 401 after an hour" not in seen  # concluded raw log
    # order: system, ambient, ..., active effort, new message
    contents = [str(m.get("content")) for m in messages]
    assert (
        contents.index("good morning")
        < contents.index("Let's plan my trip to Japan")
        < contents.index("Kyoto and Osaka")
    )
    assert messages[0]["role"] == "system" and messages[-1]["content"] == "Kyoto and Osaka"


def test_story9_concluding_a_2000_token_effort_cuts_the_context_by_80_percent_of_it(ccm):
    open_auth_bug(ccm)
    paragraph = (
        "The refresh flow calls /oauth/token with the refresh token, the gateway validates the JWT "
        "signature and expiry, and the SPA retries the original request once the new access token arrives. "
    )
    for i in range(10):
        ccm.server.push(text(f"Step {i}: " + paragraph * 3))
        ccm.send(f"Detail {i}: " + paragraph * 2)
    before = ccm.status()["context"]
    log_tokens = next(e for e in ccm.status()["efforts"] if e["id"] == "auth-bug")["raw_tokens"]
    assert 1800 <= log_tokens <= 4000
    out = conclude_auth_bug(ccm)
    after = out["context"]
    reduction = before["total"] - after["total"]
    assert reduction >= 0.8 * log_tokens, (before, after, log_tokens)
    assert after["layers"]["open"] == 0 and after["layers"]["summaries"] > 0
    assert after["naive"] > after["total"]
    # the summary is far smaller than the log it replaces
    summary_tokens = next(e for e in ccm.status()["efforts"] if e["id"] == "auth-bug")
    assert ccm.effort("auth-bug")["summary_tokens"] < 0.1 * log_tokens
    assert summary_tokens["status"] == "concluded"


def test_pause_or_later_never_closes_because_only_tools_decide(ccm):
    open_auth_bug(ccm)
    ccm.server.push(text("Sure, we can pick it up later."))
    out = ccm.send("Let's pause this and do it later")
    assert out["banners"] == [] and out["logged_to"] == "auth-bug"
    assert ccm.effort("auth-bug")["status"] == "open"
