"""Values nested 100,000 deep (``RecursionError`` in ``json.loads``): a JSON error to the model, a bad
line skipped and counted in every session file (issue 25, item 3)."""

from __future__ import annotations

import json

import pytest

from ccm_tui.core.models.litellm_client import parse_arguments
from tests.helpers.openai_server import call, text, tool_calls

DEPTH = 100_000
DEEP = "[" * DEPTH + "]" * DEPTH
DEEP_RECORD = '{"role": "user", "content": "x", "deep": ' + DEEP + "}"


def send(ccm, message: str, *extra: str) -> tuple[int, str, str]:
    return ccm.run(*ccm.send_argv(message, *extra))


def test_parse_arguments_nested_100000_deep_is_an_error_for_the_model():
    assert parse_arguments('{"name": ' + DEEP + "}") == (None, "arguments are not valid JSON (nested too deeply)")


def test_tool_call_arguments_nested_too_deep_go_back_to_the_model_as_a_json_error(ccm):
    deep = "[" * 5_000 + "]" * 5_000  # past the decoder's limit; 100,000 streams for a minute (item 9's cost)
    ccm.server.push(tool_calls(call("open_effort", '{"name": ' + deep + "}")), text("Answering directly."))
    out = ccm.send("hello")
    assert out["reply"] == "Answering directly."
    results = [json.loads(m["content"]) for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and "nested too deeply" in results[0]["error"]
    echoed = ccm.chat_requests()[-1]["messages"][-2]["tool_calls"][0]["function"]["arguments"]
    assert len(echoed) < 100  # the model is not sent its 10,000 brackets back


def _session_with_an_effort(ccm) -> None:
    ccm.server.push(tool_calls(call("open_effort", {"name": "trip"})), text("Opened."), text("Noted."))
    ccm.send("plan a trip")
    ccm.send("more about the trip")


@pytest.mark.parametrize(
    "relative", ["efforts/trip.jsonl", "raw.jsonl", "events.jsonl", "session_state.json", "expanded.json"]
)
def test_a_line_nested_too_deep_in_any_session_file_is_skipped_and_every_command_still_works(ccm, relative):
    _session_with_an_effort(ccm)
    path = ccm.dir / relative
    if relative.endswith(".jsonl"):
        with open(path, "a") as fh:
            fh.write(DEEP_RECORD + "\n")
            fh.write(json.dumps({"role": "user", "content": "after"}) + "\n" if "effort" in relative else "")
    else:
        path.write_text(DEEP)
    rc, out, err = ccm.run("status", "--session-dir", str(ccm.dir))
    assert rc == 0, err
    assert "Traceback" not in err and "RecursionError" not in err
    rc, out, err = ccm.run("search", "--session-dir", str(ccm.dir), "trip")
    assert rc == 0, err
    ccm.server.push(text("Still here."))
    assert ccm.send("still working?")["reply"] == "Still here."
    rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir), "--force")
    assert rc == 0, err
    assert "Traceback" not in err
