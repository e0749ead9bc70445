"""Single writer, recovery reports, repair of a broken manifest."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from ccm_tui.core.session.session import SessionLock
from tests.helpers.openai_server import call, text, tool_calls


def test_a_second_writer_waits_then_gets_a_clear_message(ccm, tmp_path):
    ccm.dir.mkdir(parents=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            from pathlib import Path
            from ccm_tui.core.session.session import SessionLock
            lock = SessionLock(Path({str(ccm.dir)!r})); lock.acquire()
            print("held", flush=True); time.sleep(60)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        rc, out, err = ccm.run(
            "send",
            "--session-dir",
            str(ccm.dir),
            "--model",
            "openai/fake-model",
            "--api-base",
            ccm.server.base_url,
            "--wait",
            "0.5",
            "hello",
        )
        assert rc == 1
        assert f"is in use by pid {holder.pid}" in err
        assert f"ccm-tui: the session is in use by pid {holder.pid}; waiting up to 0.5 s" in err
        assert ccm.server.chat_requests() == []
    finally:
        holder.kill()
        holder.wait()
    # the kernel dropped the dead holder's lock: no stale lock
    ccm.server.push(text("hi"))
    assert ccm.send("hello")["reply"] == "hi"
    assert SessionLock(ccm.dir).try_acquire()


def test_recovery_after_a_crash_reports_the_orphan_and_repairs_a_torn_line(ccm):
    ccm.server.push(text("first"))
    ccm.send("first message")
    # simulate a crash mid-turn: turn_start logged, a torn append, no end
    with open(ccm.dir / "events.jsonl", "a") as fh:
        fh.write(
            json.dumps(
                {
                    "event": "turn_start",
                    "turn": 1,
                    "next_turn": 2,
                    "user": "lost in the crash",
                    "ts": "2099-01-01T00:00:00Z",
                }
            )
            + "\n"
        )
    with open(ccm.dir / "raw.jsonl", "a") as fh:
        fh.write('{"role": "user", "content": "lost in the cr')
    ccm.server.push(text("second"))
    rc, out, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "second message",
    )
    assert rc == 0
    assert "RECOVERY — ccm-tui was not closed properly last time" in err
    assert "Orphaned turn 2" in err and "lost in the crash" in err
    assert "Torn last line set aside: raw.jsonl" in err
    raw = (ccm.dir / "raw.jsonl").read_text().splitlines()
    assert all(json.loads(line) for line in raw)  # only whole records remain
    assert [json.loads(line)["content"] for line in raw] == ["first message", "first", "second message", "second"]
    torn = list(ccm.dir.glob("raw.jsonl.torn-*"))
    assert torn and torn[0].read_text() == '{"role": "user", "content": "lost in the cr'
    recovered = ccm.events("recovered")[-1]
    assert recovered["orphan_turn"] == 2


def test_orphan_can_be_retried_after_a_crash(ccm):
    ccm.dir.mkdir(parents=True)
    (ccm.dir / "events.jsonl").write_text(
        json.dumps({"event": "turn_start", "turn": 0, "next_turn": 1, "user": "the question", "ts": "x"}) + "\n"
    )
    ccm.server.push(text("the answer"))
    out = ccm.send("", "--retry-orphan")
    assert out["reply"] == "the answer"
    assert [m["content"] for m in ccm.lines("raw.jsonl")] == ["the question", "the answer"]


def test_broken_manifest_names_file_and_line_and_repair_loses_nothing(ccm):
    ccm.server.push(tool_calls(call("open_effort", {"name": "alpha"})), text("ok"))
    ccm.send("work on alpha")
    ccm.server.push(tool_calls(call("close_effort", {})), text("Alpha summary."), text("done"))
    ccm.send("alpha is done")
    ccm.server.push(tool_calls(call("open_effort", {"name": "beta"})), text("ok"))
    ccm.send("work on beta")
    (ccm.dir / "manifest.yaml").write_text("efforts:\n  - id: alpha\n   status: [broken\n")
    rc, out, err = ccm.run("status", "--session-dir", str(ccm.dir))
    assert rc == 1 and "manifest.yaml line" in err and "ccm-tui repair" in err and err.count("\n") == 1
    rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir))
    assert rc == 0 and "kept as manifest.yaml.corrupt-" in out
    status = ccm.status()
    rows = {e["id"]: e for e in status["efforts"]}
    assert rows["alpha"]["status"] == "concluded" and rows["alpha"]["summary"] == "Alpha summary."
    assert rows["beta"]["status"] == "open" and rows["beta"]["active"] is True
    assert list(ccm.dir.glob("manifest.yaml.corrupt-*"))


def test_broken_state_snapshot_is_set_aside_and_rebuilt(ccm):
    ccm.server.push(text("one"), text("two"))
    ccm.send("message one")
    (ccm.dir / "session_state.json").write_text("{not json")
    rc, out, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "--json",
        "message two",
    )
    assert rc == 0
    assert json.loads(out)["turn"] == 2  # turn counter recovered from the event log
    assert list(ccm.dir.glob("session_state.json.corrupt-*"))


def test_a_send_while_another_live_process_holds_the_session_open_is_not_a_recovery(ccm):
    """A TUI keeps the session open between turns; `send` from another terminal must not
    report a crash that did not happen."""
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ccm.server.push(text("one"))
        ccm.send("first")
        with open(ccm.dir / "events.jsonl", "a") as fh:  # what a live TUI leaves between turns
            fh.write(json.dumps({"event": "session_start", "turn": 1, "pid": holder.pid, "ts": "x"}) + "\n")
            fh.write(json.dumps({"event": "turn_done", "turn": 1, "ts": "x"}) + "\n")
        ccm.server.push(text("two"))
        rc, out, err = ccm.run(
            "send",
            "--session-dir",
            str(ccm.dir),
            "--model",
            "openai/fake-model",
            "--api-base",
            ccm.server.base_url,
            "second",
        )
        assert rc == 0 and "RECOVERY" not in err
    finally:
        holder.kill()
        holder.wait()


def test_options_before_the_subcommand_are_kept(ccm):
    ccm.server.push(text("hi"))
    rc, out, err = ccm.run(
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "send",
        "hello",
    )
    assert rc == 0 and (ccm.dir / "raw.jsonl").exists()


def test_a_second_send_waits_for_the_first_and_then_runs(ccm, monkeypatch):
    """The writer lock is waited for (bounded, reported), not refused at once."""
    ccm.dir.mkdir(parents=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys
            from pathlib import Path
            from ccm_tui.core.session.session import SessionLock
            lock = SessionLock(Path({str(ccm.dir)!r})); lock.acquire()
            print("held", flush=True); sys.stdin.readline(); lock.release()
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    real_waiting = SessionLock._waiting

    def release_when_waited(self, wait):
        real_waiting(self, wait)
        holder.stdin.write("go\n")
        holder.stdin.flush()

    monkeypatch.setattr(SessionLock, "_waiting", release_when_waited)
    try:
        assert holder.stdout.readline().strip() == "held"
        ccm.server.push(text("hi"))
        rc, out, err = ccm.run(
            "send",
            "--session-dir",
            str(ccm.dir),
            "--model",
            "openai/fake-model",
            "--api-base",
            ccm.server.base_url,
            "hello",
        )
        assert rc == 0, err
        assert f"in use by pid {holder.pid}; waiting up to 15 s" in err and "hi" in out
    finally:
        holder.kill()
        holder.wait()
