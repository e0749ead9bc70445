"""A local model's window smaller than the budget (issue 38: 16,000 against 8,192): the provider's
context-length error lowers the budget to the window it states, the request is asked again fitted to
it, and the user is told in one line."""

from __future__ import annotations

from tests.helpers.openai_server import fault, text

TOO_LONG = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in "
        "9500 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


def test_a_context_length_error_lowers_the_budget_and_says_so(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "16000")
    ccm.server.push(fault(400, TOO_LONG), text("Here is the answer, within the window."))
    out = ccm.send("Tell me about sourdough starters.")
    assert out["reply"] == "Here is the answer, within the window."
    said = [b for b in out["banners"] if b.startswith("Budget lowered")]
    assert said == [
        "Budget lowered from 16,000 to 6,144 tokens: openai/fake-model's window is 8,192 tokens (the provider said so)"
    ]
    assert out["request"]["budget"] == 6144
    ccm.server.push(text("Still fine."))
    assert ccm.send("And how often do I feed it?")["request"]["budget"] == 6144  # it stays lowered
