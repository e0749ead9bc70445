"""Bad tool calls from the model come back to it as JSON errors; the turn goes on."""

from __future__ import annotations

import json

import pytest

from tests.helpers.openai_server import call, text, tool_calls


def tool_results(ccm) -> list[dict]:
    """Tool messages the model received in the last chat request of the turn."""
    return [json.loads(m["content"]) for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize(
    ("tool_call", "expected"),
    [
        (call("launch_rockets", {}), "unknown tool 'launch_rockets'"),
        (call("open_effort", '{"name": "x"'), "arguments are not valid JSON"),
        (call("open_effort", "[1, 2]"), "arguments must be a JSON object"),
        (call("open_effort", {"name": 42}), "argument 'name' must be a string"),
        (call("open_effort", {}), "missing required argument 'name'"),
        (call("open_effort", {"name": "x", "colour": "red"}), "unknown argument 'colour'"),
        (call("close_effort", {}), "no effort id given and no effort is active"),
        (call("expand_effort", {"id": "nope"}), "no effort with id 'nope'"),
        (call("reopen_effort", {"id": "nope"}), "no effort with id 'nope'"),
        (call("switch_effort", {"id": "nope"}), "no effort with id 'nope'"),
        (call("collapse_effort", {"id": "nope"}), "no effort with id 'nope'"),
    ],
)
def test_bad_calls_return_json_errors_and_the_turn_finishes(ccm, tool_call, expected):
    ccm.server.push(tool_calls(tool_call), text("Sorry, let me answer directly."))
    out = ccm.send("hello")
    assert out["reply"] == "Sorry, let me answer directly."
    assert out["logged_to"] == "ambient"
    results = tool_results(ccm)
    assert len(results) == 1 and expected in results[0]["error"]
    assert out["tool_calls"][0]["ok"] is False
    failed = ccm.events("tool_called")[-1]
    assert failed["ok"] is False and expected in failed["error"]


def test_wrong_state_errors(ccm):
    ccm.server.push(tool_calls(call("open_effort", {"name": "db pool"})), text("ok"))
    ccm.send("let's work on the db pool")
    ccm.server.push(
        tool_calls(call("expand_effort", {"id": "db-pool"}), call("reopen_effort", {"id": "db-pool"})),
        text("done"),
    )
    ccm.send("expand it")
    errors = [r["error"] for r in tool_results(ccm)]
    assert "is open, its log is already in context" in errors[0]
    assert "is not concluded" in errors[1]


def test_effort_names_can_never_escape_the_efforts_directory(ccm):
    ccm.server.push(tool_calls(call("open_effort", {"name": "../../etc/passwd"})), text("ok"))
    out = ccm.send("open something odd")
    assert out["active_effort"] == "etc-passwd"
    assert (ccm.dir / "efforts" / "etc-passwd.jsonl").exists()
    ccm.server.push(tool_calls(call("open_effort", {"name": "../../etc/passwd"})), text("ok"))
    out = ccm.send("again")
    assert out["active_effort"] == "etc-passwd"  # the same name: the same effort, never a copy
    assert sorted(p.name for p in (ccm.dir / "efforts").iterdir()) == ["etc-passwd.jsonl"]


def test_tool_rounds_are_bounded(ccm):
    ccm.server.responder = lambda body: tool_calls(call("effort_status", {})) if body.get("tools") else text("final")
    out = ccm.send("loop forever")
    assert out["reply"] == "final"
    assert len(out["tool_calls"]) == 8
    assert "tools" not in ccm.chat_requests()[-1]


def test_the_model_never_makes_a_copy_of_an_effort_it_names_again(ccm):
    """Issue 30: vegetable-garden open, the model opened "vegetable garden" and got vegetable-garden-2."""
    ccm.server.push(tool_calls(call("open_effort", {"name": "vegetable-garden"})), text("Let's plan it."))
    ccm.send("help me plan a vegetable garden")
    ccm.server.push(tool_calls(call("open_effort", {"name": "Vegetable Gardens"})), text("Tomatoes go south."))
    out = ccm.send("where do the tomatoes go in the vegetable garden?")
    assert tool_results(ccm) == [
        {
            "status": "already_active",
            "effort_id": "vegetable-garden",
            "note": "'vegetable-garden' is already the active effort: nothing new was opened",
        }
    ]
    assert out["logged_to"] == "vegetable-garden" and [e["id"] for e in ccm.manifest()["efforts"]] == [
        "vegetable-garden"
    ]
    ccm.server.push(text("Summary: raised beds, tomatoes south."))
    ccm.send("/done")
    ccm.server.push(tool_calls(call("open_effort", {"name": "vegetable garden"})), text("Shall I reopen it?"))
    out = ccm.send("let's do the vegetable garden again")
    (result,) = tool_results(ccm)
    assert result["status"] == "exists_concluded" and result["summary"] == "Summary: raised beds, tomatoes south."
    assert out["logged_to"] == "ambient" and not [b for b in out["banners"] if "effort" in b]
    assert [(e["id"], e["status"]) for e in ccm.manifest()["efforts"]] == [("vegetable-garden", "concluded")]
