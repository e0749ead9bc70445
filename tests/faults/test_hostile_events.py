"""Hostile or damaged values in the event log, and writes that fail mid-turn."""

from __future__ import annotations

import json

import pytest

from ccm_tui.config import Settings
from ccm_tui.core import recovery
from ccm_tui.core.engine import start_engine
from tests.fakes.openai_server import text


def append_events(ccm, *events) -> None:
    ccm.dir.mkdir(parents=True, exist_ok=True)
    with open(ccm.dir / "events.jsonl", "a") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in events)


def send(ccm, *args):
    return ccm.run(
        "send", "--session-dir", str(ccm.dir), "--model", "openai/fake-model", "--api-base", ccm.server.base_url, *args
    )


# --------------------------------------------------------------------------- item 7
@pytest.mark.parametrize(
    "bad",
    [
        {"event": "turn_start", "turn": "zz", "next_turn": "abc", "user": "hello", "ts": "x"},
        {"event": "message_logged", "turn": 0, "next_turn": "abc", "ts": "x"},
        {"event": "session_start", "turn": 0, "pid": 10**30, "ts": "x"},
        {"event": "session_start", "turn": 0, "pid": [1, 2], "ts": "x"},
        {"event": "turn_start", "turn": [1], "next_turn": 1e400, "user": {"a": 1}, "ts": 5},
        {"event": "message_logged", "turn": 0, "next_turn": 10**40, "ts": "x"},
    ],
)
def test_bad_event_values_do_not_break_recovery(ccm, bad):
    ccm.server.push(text("one"), text("two"), text("three"))
    ccm.send("first")
    append_events(ccm, bad)
    rc, out, err = send(ccm, "second")
    assert rc == 0, err
    assert "RECOVERY" in err and "Traceback" not in err
    assert ccm.send("third")["turn"] < 10**12


def test_a_failed_recovery_never_marks_the_session_clean(ccm, monkeypatch):
    ccm.server.push(text("one"))
    ccm.send("first")
    append_events(ccm, {"event": "turn_start", "turn": 1, "next_turn": 2, "user": "lost", "ts": "9"})

    def broken(*args, **kwargs):
        raise ValueError("an event recovery cannot read")

    monkeypatch.setattr(recovery, "_settle_unfinished_turn", broken)
    settings = Settings(model="openai/fake-model", api_base=ccm.server.base_url, token_budget=6000)
    engine = start_engine(ccm.dir, settings)
    assert engine.recovery is not None
    assert any("recovery could not finish" in note for note in engine.recovery.notes)
    engine.close()
    assert ccm.events()[-1]["event"] != "session_end"
    monkeypatch.undo()
    # the next start recovers for real
    engine = start_engine(ccm.dir, settings)
    try:
        assert engine.recovery is not None and engine.recovery.unclean
        assert engine.recovery.orphan is not None and engine.recovery.orphan.text == "lost"
    finally:
        engine.close()
    assert ccm.events()[-1]["event"] == "session_end"
