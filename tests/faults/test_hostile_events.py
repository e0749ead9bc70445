"""Hostile or damaged values in the event log, and writes that fail mid-turn."""

from __future__ import annotations

import json

import pytest

from ccm_tui.config import Settings
from ccm_tui.core.engine import recovery
from ccm_tui.core.engine.opening import start_engine
from tests.helpers.openai_server import text


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


# --------------------------------------------------------------------------- item 14
def test_a_failed_write_mid_turn_is_logged_and_recovered(ccm, monkeypatch):
    import errno

    from ccm_tui.core.session.session import Session

    ccm.server.push(text("one"), text("two"))
    ccm.send("first")
    real = Session.append_ambient

    def disk_full(self, messages):
        with open(self.raw_path, "ab") as fh:  # what a full disk leaves: part of a line
            fh.write(b'{"role":"user","content":"sec')
        raise OSError(errno.ENOSPC, "No space left on device", str(self.raw_path))

    monkeypatch.setattr(Session, "append_ambient", disk_full)
    rc, out, err = send(ccm, "second")
    assert rc == 1 and "the disk is full: free some space" in err and err.count("\n") == 1
    assert "your message is kept" in err
    kinds = [e["event"] for e in ccm.events()]
    assert kinds[-1] != "session_end"  # never marked clean after a failed write
    assert kinds[kinds.index("turn_start", len(kinds) - 6) :].count("turn_failed") == 1
    assert ccm.events("turn_failed")[-1]["kind"] == "io"
    monkeypatch.setattr(Session, "append_ambient", real)
    ccm.server.push(text("two"))
    rc, out, err = send(ccm, "--retry-orphan")
    assert rc == 0, err
    assert "RECOVERY" in err and "Torn last line set aside: raw.jsonl" in err
    assert [m["content"] for m in ccm.lines("raw.jsonl")] == ["first", "one", "second", "two"]


def test_append_takes_back_a_partial_record_when_the_write_fails(tmp_path, monkeypatch):
    import errno
    import os

    from ccm_tui.core.storage import durable as store

    path = tmp_path / "raw.jsonl"
    store.append_jsonl(path, [{"role": "user", "content": "kept"}])
    before = path.read_bytes()

    def short_then_full(fd, data):
        real_write(fd, bytes(data[:5]))
        raise OSError(errno.ENOSPC, "No space left on device")

    real_write = os.write
    monkeypatch.setattr(store.os, "write", short_then_full)
    with pytest.raises(OSError):
        store.append_jsonl(path, [{"role": "user", "content": "lost"}])
    monkeypatch.undo()
    assert path.read_bytes() == before


# --------------------------------------------------------------------------- item 13
def test_invalid_utf8_input_gets_a_clear_message(ccm, monkeypatch):
    import io
    import sys

    raw = b"caf\xe9 au lait\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="surrogateescape"))
    rc, out, err = send(ccm, "-")
    assert rc == 2 and "the message is not valid UTF-8 (byte 0xe9 at character 4)" in err
    assert "surrogates" not in err
    assert ccm.server.chat_requests() == []


def test_undecodable_text_in_a_record_is_stored_escaped(tmp_path):
    from ccm_tui.core.storage.durable import append_jsonl, read_jsonl

    path = tmp_path / "raw.jsonl"
    append_jsonl(path, [{"role": "user", "content": "caf\udce9"}])
    path.read_bytes().decode("utf-8")  # the file stays valid UTF-8
    assert read_jsonl(path).records[0]["content"] == "caf\udce9"
