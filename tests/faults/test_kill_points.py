"""Kill points of a turn, reproduced deterministically by the files a kill -9 leaves behind.

Each test runs real turns through the CLI against the fake provider, then cuts the session's
files back to what they held at the kill point (events after it removed, appends undone, the
state snapshot of that moment), and starts the app again.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli_session import CCM
from tests.helpers.openai_server import call, text, tool_calls


def cut_events_after(ccm: CCM, keep) -> None:
    """Keep events up to and including the last one ``keep`` accepts: the kill came right after it."""
    path = ccm.dir / "events.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if keep(json.loads(line)))
    path.write_text("".join(lines[: last + 1]))


def set_state(ccm: CCM, **values) -> None:
    path = ccm.dir / "session_state.json"
    state = json.loads(path.read_text())
    state.update(values, clean_shutdown=False)
    path.write_text(json.dumps(state))


def truncate_lines(path: Path, keep: int) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:keep]))


def send_text(ccm: CCM, *args: str) -> tuple[int, str, str]:
    return ccm.run(
        "send", "--session-dir", str(ccm.dir), "--model", "openai/fake-model", "--api-base", ccm.server.base_url, *args
    )


def user_lines(ccm: CCM, relative: str) -> list[str]:
    return [m["content"] for m in ccm.lines(relative) if m.get("role") == "user"]


# --------------------------------------------------------------------------- item 1
def test_an_exchange_logged_but_not_evented_is_not_an_orphan(ccm):
    ccm.server.push(text("one"), text("two"))
    ccm.send("first")
    ccm.send("second")
    # kill point: raw.jsonl has the second exchange (fsynced), message_logged not yet written
    cut_events_after(ccm, lambda e: e["event"] == "turn_start" and e["user"] == "second")
    set_state(ccm, turn=1)
    rc, out, err = send_text(ccm, "--retry-orphan")
    assert rc == 1 and "no unanswered message" in err
    assert user_lines(ccm, "raw.jsonl") == ["first", "second"]  # not appended twice
    assert "Turn 2 was already logged in the ambient log" in err
    assert ccm.server.chat_requests()[-1]["messages"][-1]["content"] == "second"  # no third request
    assert len(ccm.server.chat_requests()) == 2
    done = ccm.events("turn_done")[-1]
    assert done["recovered"] is True and done["logged_to"] == "ambient"
    ccm.server.push(text("three"))
    assert ccm.send("third")["turn"] == 3


def test_the_tui_retry_is_not_offered_for_a_logged_exchange(ccm):
    from ccm_tui.config import Settings
    from ccm_tui.core.engine.opening import start_engine

    ccm.server.push(tool_calls(call("open_effort", {"name": "alpha"})), text("ok"))
    ccm.send("work on alpha")
    cut_events_after(ccm, lambda e: e["event"] == "tool_called")
    set_state(ccm, turn=0)
    settings = Settings(model="openai/fake-model", api_base=ccm.server.base_url, token_budget=6000)
    engine = start_engine(ccm.dir, settings)
    try:
        report = engine.recovery
        assert report is not None and report.orphan is None and report.interrupted is None
        assert engine.unanswered_turn() is None
        assert engine.turn == 1
    finally:
        engine.close()
    assert user_lines(ccm, "efforts/alpha.jsonl") == ["work on alpha"]


# --------------------------------------------------------------------------- item 2
def test_a_kill_after_open_effort_does_not_open_it_twice_on_retry(ccm):
    ccm.server.push(text("hi"))
    ccm.send("hello")
    ccm.server.push(tool_calls(call("open_effort", {"name": "x"})), text("Opened, let's go."))
    ccm.send("work on x")
    # kill point: open_effort ran (manifest saved, events logged), the exchange was never logged
    cut_events_after(ccm, lambda e: e["event"] == "tool_called" and e["tool"] == "open_effort")
    truncate_lines(ccm.dir / "efforts" / "x.jsonl", 0)
    set_state(ccm, turn=1)
    rc, out, err = send_text(ccm, "--retry-orphan")
    assert rc == 1 and "turn 2 is not retried: its tools already ran (opened x)" in err
    assert "Interrupted turn 2" in err and "opened x" in err and "effort x" in err
    status = ccm.status()
    assert [e["id"] for e in status["efforts"]] == ["x"]  # no x-2
    assert status["efforts"][0]["active"] is True
    log = ccm.lines("efforts/x.jsonl")
    assert [m["role"] for m in log] == ["user", "assistant"] and log[0]["content"] == "work on x"
    assert log[1]["interrupted"] is True
    failed = ccm.events("turn_failed")[-1]
    assert failed["kind"] == "interrupted" and failed["logged_to"] == "x"
    # the next message continues in x
    ccm.server.push(text("continuing"))
    assert ccm.send("next step")["logged_to"] == "x"


def test_a_kill_between_the_manifest_save_and_its_event_still_counts_as_an_effect(ccm):
    ccm.server.push(tool_calls(call("open_effort", {"name": "x"})), text("Opened."))
    ccm.send("work on x")
    # kill point: lifecycle saved x (open, active: its entry journaled), effort_opened not yet logged
    path = ccm.dir / "events.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    saved = next(i for i, line in enumerate(lines) if json.loads(line)["event"] == "efforts_saved")
    assert json.loads(lines[saved + 1])["event"] == "effort_opened"
    path.write_text("".join(lines[: saved + 1]))
    truncate_lines(ccm.dir / "efforts" / "x.jsonl", 0)
    set_state(ccm, turn=0)
    rc, out, err = send_text(ccm, "--retry-orphan")
    assert rc == 1 and "its tools already ran (opened x)" in err
    assert [e["id"] for e in ccm.status()["efforts"]] == ["x"]
    assert user_lines(ccm, "efforts/x.jsonl") == ["work on x"]


def test_a_kill_after_close_effort_lands_the_exchange_in_the_concluded_effort(ccm):
    ccm.server.push(tool_calls(call("open_effort", {"name": "x"})), text("ok"))
    ccm.send("work on x")
    before = len(ccm.lines("efforts/x.jsonl"))
    ccm.server.push(tool_calls(call("close_effort", {})), text("Summary of x."), text("Closed."))
    ccm.send("x is done")
    cut_events_after(ccm, lambda e: e["event"] == "tool_called" and e["tool"] == "close_effort")
    truncate_lines(ccm.dir / "efforts" / "x.jsonl", before)
    set_state(ccm, turn=1)
    rc, out, err = send_text(ccm, "--retry-orphan")
    assert rc == 1 and "Interrupted turn 2" in err and "concluded x" in err
    assert user_lines(ccm, "efforts/x.jsonl") == ["work on x", "x is done"]
    assert user_lines(ccm, "raw.jsonl") == []  # not "no effort is active" → ambient
    row = ccm.status()["efforts"][0]
    assert row["status"] == "concluded" and row["summary"] == "Summary of x."


def test_a_kill_before_any_tool_effect_is_still_a_retryable_orphan(ccm):
    ccm.server.push(text("one"), tool_calls(call("route_to_ambient", {})), text("aside"))
    ccm.send("first")
    ccm.send("quick aside")
    cut_events_after(ccm, lambda e: e["event"] == "tool_called")
    truncate_lines(ccm.dir / "raw.jsonl", 2)
    set_state(ccm, turn=1, ambient_bytes=0)
    ccm.server.push(text("aside again"))
    out = ccm.send("", "--retry-orphan")
    assert out["reply"] == "aside again"
    assert user_lines(ccm, "raw.jsonl") == ["first", "quick aside"]


# --------------------------------------------------------------------------- item 6 (hostile lines)
BAD_LINES = [
    {"role": "user", "content": 12345},
    {"role": 5, "content": "x"},
    {"role": "assistant", "content": None},
    {"role": "user", "content": ["a", {"b": 1}]},
]


def test_valid_json_lines_of_the_wrong_type_are_skipped_with_a_warning(ccm):
    ccm.server.push(tool_calls(call("open_effort", {"name": "alpha"})), text("ok"), text("plain"))
    ccm.send("work on alpha")
    for relative in ("raw.jsonl", "efforts/alpha.jsonl"):
        with open(ccm.dir / relative, "a") as fh:
            fh.writelines(json.dumps(line) + "\n" for line in BAD_LINES)
            fh.write("[1, 2]\n")
    ccm.status()  # status works
    rc, out, err = send_text(ccm, "more on alpha")
    assert rc == 0, err
    assert "raw.jsonl: skipped" in err and "efforts/alpha.jsonl: skipped" in err
    assert "plain" in out
    assert ccm.search("alpha")["results"] is not None
