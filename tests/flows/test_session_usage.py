"""What a session cost is kept across launches: every request's tokens (and cost, when the model's price
is known) add up in session_state.json, each turn_done says what its turn cost, and status --json shows
the session's total."""

from __future__ import annotations

import json

from tests.helpers.openai_server import call, text, tool_calls


def test_tokens_add_up_across_separate_runs_and_each_turn_says_its_own(ccm):
    ccm.server.push(text("One.", usage={"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230}))
    ccm.send("first")
    ccm.server.push(
        tool_calls(call("open_effort", {"name": "Trip"}), usage={"prompt_tokens": 1500, "completion_tokens": 20})
    )
    ccm.server.push(text("Opened.", usage={"prompt_tokens": 1700, "completion_tokens": 10}))
    out = ccm.send("second: start an effort for my trip")  # another process: the totals come from the file
    assert out["reply"] == "Opened."
    state = json.loads((ccm.dir / "session_state.json").read_text())
    usage = {key: state["usage"][key] for key in ("prompt_tokens", "completion_tokens", "requests")}
    assert usage == {"prompt_tokens": 4400, "completion_tokens": 60, "requests": 3}
    # the request after open_effort repeats the one before it up to its new messages (the effort's
    # state is in the context note, after the conversation): the server reports no cache, so it is estimated
    assert 0 < state["usage"]["cached_estimate"] < 4400
    done = ccm.events("turn_done")
    assert [d["usage"]["prompt_tokens"] for d in done] == [1200, 3200]
    assert [d["usage"]["requests"] for d in done] == [1, 2]
    assert ccm.status()["usage"]["completion_tokens"] == 60


def test_a_broken_usage_field_in_session_state_is_dropped_not_fatal(ccm):
    ccm.server.push(text("ok", usage={"prompt_tokens": 10, "completion_tokens": 2}))
    ccm.send("hello")
    path = ccm.dir / "session_state.json"
    state = json.loads(path.read_text())
    state["usage"] = {"prompt_tokens": "many", "cost": -3, "requests": True, "completion_tokens": 5}
    path.write_text(json.dumps(state))
    ccm.server.push(text("ok", usage={"prompt_tokens": 10, "completion_tokens": 2}))
    ccm.send("again")
    assert json.loads(path.read_text())["usage"] == {"completion_tokens": 7, "prompt_tokens": 10, "requests": 1}


def test_the_cost_is_kept_when_the_model_has_a_known_price(llm_server, tmp_path, capsys):
    from tests.helpers.cli_session import CCM

    priced = CCM(llm_server, tmp_path / "priced", capsys, model="openai/gpt-4o-mini")
    for _ in range(2):
        llm_server.push(text("ok", usage={"prompt_tokens": 100_000, "completion_tokens": 1_000}))
        priced.send("hello")
    cost = json.loads((priced.dir / "session_state.json").read_text())["usage"]["cost"]
    assert 0.02 < cost < 0.1  # two requests of 100,000 tokens at gpt-4o-mini's price (~$0.015 each)
    assert [round(d["cost"], 6) for d in priced.events("turn_done")] == [round(cost / 2, 6)] * 2
