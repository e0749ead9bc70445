"""core/recovery.py: reconciling a session after an unclean end — clean vs unclean, torn last lines,
ambient totals, the turn counter, an orphaned turn, a turn already logged, a turn whose tools ran.
No model: every session is built on disk by a "previous run" that ends without session_end."""

from __future__ import annotations

import json
import os

import pytest

from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.engine.recovery import (
    RecoveryReport,
    UnansweredTurn,
    ended_cleanly,
    no_orphan_reason,
    recover,
    turn_left_open,
    unanswered_turn,
)
from ccm_tui.core.manifest.effort import Effort
from ccm_tui.core.session.session import Session
from ccm_tui.core.storage import eventlog as ev
from ccm_tui.core.storage.eventlog import now_iso
from tests.helpers.sessionkit import events, exchange, jsonl, open_effort, write_jsonl

DEAD_PID = 2**31 - 2  # above every kernel's pid_max: never a live process
LIVE_PID = os.getppid()  # the process that started the tests (not ours: our own pid is "not alive")


def crashed_run(tmp_path, *, pid: int = DEAD_PID) -> Session:
    """A run on a new session that started (pid ``pid``) and has not ended: the test writes what it
    did, then calls :func:`stop` (no session_end, as after kill -9)."""
    session = Session.open(tmp_path / "s")
    session.log_event(ev.SESSION_START, pid=pid)
    return session


def stop(session: Session) -> Session:
    """The run ends without a trace (its lock is released, nothing else is written), and the session
    is opened again the way a new run opens it."""
    session.lock.release()
    return Session.open(session.dir)


def start_turn(session: Session, text: str) -> None:
    session.log_event(ev.TURN_START, user=text, next_turn=session.state.turn + 1)


def finish_turn(session: Session, text: str, reply: str, to: str = "ambient") -> None:
    """A turn as the orchestrator ends it: the exchange logged, then message_logged and turn_done."""
    turn = session.state.turn + 1
    start_turn(session, text)
    records = exchange(text, reply)
    for record in records:
        record["ts"] = now_iso()
    if to == "ambient":
        session.append_ambient(records)
    else:
        session.append_effort(session.efforts.get(to), records)
    session.log_event(ev.MESSAGE_LOGGED, to=to, count=2, next_turn=turn)
    session.state.turn = turn
    session.save_state()
    session.log_event(ev.TURN_DONE, logged_to=to)


@pytest.fixture
def opened():
    sessions: list[Session] = []

    def keep(session: Session) -> Session:
        sessions.append(session)
        return session

    yield keep
    for session in sessions:
        session.close(clean=False)


# ------------------------------------------------------------------ clean and unclean ends
def test_a_clean_end_needs_no_recovery(tmp_path, opened):
    session = Session.open(tmp_path / "s")
    recover(session)
    finish_turn(session, "hi", "hello")
    session.save_state()
    session.close()

    session = opened(Session.open(tmp_path / "s"))
    report = recover(session)

    assert not report.unclean and not report.changed and report.orphan is None
    assert events(session.dir, "recovered") == []
    assert events(session.dir)[-1]["event"] == "session_start" and events(session.dir)[-1]["pid"] == os.getpid()
    assert session.state.clean_shutdown is False  # this run has not ended yet


def test_a_line_of_the_wrong_shape_is_said_at_each_open_but_recovered_is_logged_once(tmp_path):
    session = Session.open(tmp_path / "s")
    recover(session)
    finish_turn(session, "hi", "hello")
    session.close()
    with open(tmp_path / "s" / "raw.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"not": "a message"}) + "\n")

    reports = []
    for _ in range(3):
        session = Session.open(tmp_path / "s")
        reports.append(recover(session))
        session.close()

    assert all(any("wrong shape" in note for note in r.notes) for r in reports)  # said every time
    assert len(events(tmp_path / "s", "recovered")) == 1  # the recount the appended line needed, once
    assert not reports[1].acted and not reports[2].acted


def test_a_run_that_ended_without_session_end_is_unclean(tmp_path, opened):
    run = crashed_run(tmp_path)
    finish_turn(run, "hi", "hello")
    session = opened(stop(run))
    report = recover(session)
    assert report.unclean and report.changed
    assert report.lines()[0].startswith("RECOVERY — ccm-tui was not closed properly last time")
    assert "nothing was lost" in report.lines()[0]
    assert not any("Orphaned" in line for line in report.lines())  # (nothing to say: said nothing)
    [recovered] = events(session.dir, "recovered")
    assert recovered["orphan_turn"] is None and recovered["interrupted_turn"] is None


def test_a_run_still_alive_is_not_a_crash(tmp_path, opened):
    run = crashed_run(tmp_path, pid=LIVE_PID)  # e.g. a TUI between turns: it holds the lock per turn only
    finish_turn(run, "hi", "hello")
    session = opened(stop(run))
    report = recover(session)
    assert not report.unclean and events(session.dir, "recovered") == []


def test_ended_cleanly_reads_the_event_log():
    start = {"event": "session_start", "pid": DEAD_PID}
    end = {"event": "session_end", "pid": DEAD_PID}
    live = {"event": "session_start", "pid": LIVE_PID}
    assert ended_cleanly([])
    assert ended_cleanly([start, end])
    assert not ended_cleanly([start])
    assert ended_cleanly([start, live])  # the live run is still going
    assert not ended_cleanly([live, {"event": "session_end", "pid": LIVE_PID}, start])
    assert not ended_cleanly([start, {"event": "turn_start", "user": "x"}, end])  # a turn left open
    assert not ended_cleanly([{"event": "session_start", "pid": os.getpid()}])  # our own pid: a previous run's
    assert not ended_cleanly([{"event": "session_start", "pid": "123"}, {"event": "turn_done"}])


def test_turn_left_open_reads_the_last_turn_only():
    start = {"event": "turn_start", "user": "x"}
    assert not turn_left_open([])
    assert not turn_left_open([{"event": "session_start"}])
    assert turn_left_open([start])
    assert turn_left_open([start, {"event": "tool_called"}, {"event": "session_end"}])
    for end in ("turn_done", "turn_failed", "turn_cancelled", "message_logged"):
        assert not turn_left_open([start, {"event": end}])
    assert turn_left_open([start, {"event": "turn_done"}, start])


# ------------------------------------------------------------------ torn last lines
def test_torn_last_lines_are_set_aside_and_the_logs_cut_back(tmp_path, opened):
    run = crashed_run(tmp_path)
    finish_turn(run, "hi", "hello")
    open_effort(run, "trip", exchange("plan", "ok"))
    session_dir = run.dir
    run = stop(run)
    run.close(clean=False)
    torn = {
        "raw.jsonl": b'{"role": "user", "content": "lost in the cr',
        "efforts/trip.jsonl": b'{"role": "assis',
        "events.jsonl": b'{"event": "turn_st',
    }
    whole = {}
    for name, fragment in torn.items():
        path = session_dir / name
        whole[name] = path.read_bytes()
        with open(path, "ab") as fh:
            fh.write(fragment)

    session = opened(Session.open(session_dir))
    report = recover(session)

    assert report.unclean and len(report.torn_files) == 3
    for name, fragment in torn.items():
        path = session_dir / name
        [aside] = list(path.parent.glob(f"{path.name}.torn-*"))
        assert aside.read_bytes() == fragment
        assert f"{name} → {aside.name}" in report.torn_files
        if name != "events.jsonl":
            assert path.read_bytes() == whole[name]  # cut back to the last whole record
    assert (session_dir / "events.jsonl").read_bytes().startswith(whole["events.jsonl"])
    assert all(isinstance(e, dict) for e in jsonl(session_dir / "events.jsonl"))
    assert [m["content"] for m in jsonl(session.raw_path)] == ["hi", "hello"]
    assert events(session_dir, "recovered")[-1]["torn_files"] == report.torn_files


def test_a_clean_end_leaves_the_logs_alone(tmp_path, opened):
    session = Session.open(tmp_path / "s")
    recover(session)
    session.close()
    with open(tmp_path / "s" / "efforts" / "x.jsonl", "wb") as fh:
        fh.write(b'{"role": "user", "content": "no newline yet"}')
    session = opened(Session.open(tmp_path / "s"))
    assert recover(session).torn_files == []
    assert list((tmp_path / "s" / "efforts").glob("*.torn-*")) == []


def test_a_single_enormous_torn_line_is_left_for_the_readers(tmp_path, opened):
    run = crashed_run(tmp_path)
    effort = open_effort(run, "big")
    path = run.effort_path(effort.id)
    run = stop(run)
    run.close(clean=False)
    path.write_bytes(b'{"role": "user", "content": "' + b"x" * 70_000)
    session = opened(Session.open(tmp_path / "s"))
    report = recover(session)
    assert report.torn_files == [] and path.stat().st_size > 70_000


# ------------------------------------------------------------------ counters reconciled
def test_ambient_totals_are_recounted_when_the_log_grew_past_the_snapshot(tmp_path, opened):
    run = crashed_run(tmp_path)
    run.append_ambient(exchange("one", "first"))
    run.save_state()
    write_jsonl(run.raw_path, exchange("two", "second"))  # appended after the last snapshot
    session = opened(stop(run))
    report = recover(session)

    assert "ambient totals recounted from raw.jsonl" in report.repaired
    state = session.state
    assert state.ambient_lines == 4 and state.ambient_bytes == session.raw_path.stat().st_size
    assert state.ambient_tokens == sum(session.counter.count_message(m) for m in jsonl(session.raw_path))
    assert [m["content"] for m in session.ambient_messages()] == ["one", "first", "two", "second"]


def test_ambient_totals_are_recounted_from_scratch_when_the_log_shrank(tmp_path, opened):
    session = Session.open(tmp_path / "s")
    recover(session)
    session.append_ambient(exchange("one", "first") + exchange("two", "second"))
    session.close()
    lines = session.raw_path.read_bytes().splitlines(keepends=True)
    session.raw_path.write_bytes(b"".join(lines[:2]))  # cut by hand: the snapshot counts four
    session = opened(Session.open(tmp_path / "s"))
    report = recover(session)
    assert "ambient totals recounted from raw.jsonl" in report.repaired
    assert session.state.ambient_lines == 2 and session.state.ambient_bytes == session.raw_path.stat().st_size
    assert events(session.dir, "recovered")[-1]["repaired"] == report.repaired


def test_the_turn_counter_advances_to_the_last_logged_exchange(tmp_path, opened):
    run = crashed_run(tmp_path)
    run.save_state()  # the snapshot says turn 0
    later = "2099-01-01T00:00:0{}.000Z"  # after the snapshot, whatever the clock's resolution
    for turn in (1, 2, 3):
        run.append_ambient(exchange(f"m{turn}", "r"))
        write_jsonl(
            run.events.path,
            [
                {
                    "event": "turn_start",
                    "turn": turn - 1,
                    "user": f"m{turn}",
                    "next_turn": turn,
                    "ts": later.format(turn),
                },
                {
                    "event": "message_logged",
                    "turn": turn - 1,
                    "to": "ambient",
                    "next_turn": turn,
                    "ts": later.format(turn),
                },
                {"event": "turn_done", "turn": turn, "logged_to": "ambient", "ts": later.format(turn)},
            ],
        )
    damaged = [
        {"event": "message_logged", "turn": 3, "next_turn": n, "ts": later.format(4)} for n in ("7", 10**13, True)
    ]
    write_jsonl(run.events.path, damaged)  # ignored: not a turn number, or damage rather than history
    session = opened(stop(run))
    assert session.state.turn == 0

    report = recover(session)

    assert session.state.turn == 3 and "turn counter 0 → 3" in report.repaired
    assert json.loads((session.dir / "session_state.json").read_text())["turn"] == 3


# ------------------------------------------------------------------ the last turn, settled
def test_a_turn_with_no_reply_and_no_effects_is_an_orphan_that_can_be_retried(tmp_path, opened):
    run = crashed_run(tmp_path)
    finish_turn(run, "first", "one")
    start_turn(run, "lost in the crash")
    session = opened(stop(run))

    report = recover(session)

    assert report.orphan == UnansweredTurn("lost in the crash", 2, "orphaned")
    assert report.orphan.retry_safe and report.interrupted is None
    assert 'Orphaned turn 2: your message "lost in the crash" got no reply — it can be sent again' in report.lines()
    assert events(session.dir, "recovered")[-1]["orphan_turn"] == 2
    assert unanswered_turn(session) == UnansweredTurn("lost in the crash", 2, "orphaned")
    assert [m["content"] for m in jsonl(session.raw_path)] == ["first", "one"]  # nothing invented


def test_an_exchange_already_in_its_log_is_settled_not_orphaned(tmp_path, opened):
    run = crashed_run(tmp_path)
    open_effort(run, "trip")
    start_turn(run, "book the hotel")
    records = [{"role": "user", "content": "book the hotel", "ts": now_iso()}, {"role": "assistant", "content": "ok"}]
    run.append_effort(run.efforts.get("trip"), records)  # then killed before message_logged
    session = opened(stop(run))

    report = recover(session)

    assert report.orphan is None and report.interrupted is None
    assert report.settled == ["Turn 1 was already logged in effort trip; its end was recorded (nothing to retry)"]
    logged = events(session.dir, "message_logged")[-1]
    assert logged["to"] == "trip" and logged["recovered"] is True and logged["next_turn"] == 1
    assert events(session.dir, "turn_done")[-1]["logged_to"] == "trip"
    assert session.state.turn == 1 and len(jsonl(session.effort_path("trip"))) == 2
    assert unanswered_turn(session) is None
    assert events(session.dir, "recovered")[-1]["settled"] == 1


def test_a_turn_whose_tools_ran_is_logged_interrupted_and_never_offered(tmp_path, opened):
    run = crashed_run(tmp_path)
    start_turn(run, "plan a trip")
    lifecycle.open_effort(run, "trip", turn=1)  # the tool ran; then the process died
    session = opened(stop(run))

    report = recover(session)

    assert report.orphan is None
    interrupted = report.interrupted
    assert interrupted.reason == "interrupted" and interrupted.turn == 1 and interrupted.text == "plan a trip"
    assert interrupted.effects == ["opened trip"] and interrupted.logged_to == "trip"
    assert not interrupted.retry_safe
    log = jsonl(session.effort_path("trip"))
    assert log[0]["content"] == "plan a trip" and log[1] == {**log[1], "content": "", "interrupted": True}
    failed = events(session.dir, "turn_failed")[-1]
    assert failed["kind"] == "interrupted" and failed["logged_to"] == "trip"
    assert events(session.dir, "recovered")[-1]["interrupted_turn"] == 1
    assert unanswered_turn(session) is None  # never re-sent
    reason = no_orphan_reason(report)
    assert reason.startswith("turn 1 is not retried: its tools already ran (opened trip)")
    assert "logged in trip" in reason


def test_an_effort_saved_to_the_manifest_but_not_yet_logged_counts_as_an_effect(tmp_path, opened):
    run = crashed_run(tmp_path)
    start_turn(run, "plan a trip")
    run.efforts.add(Effort(id="trip", name="trip", created=now_iso()))
    run.efforts.set_active(run.efforts.get("trip"))
    run.save_manifest()  # killed before effort_opened reached the event log
    session = opened(stop(run))
    report = recover(session)
    assert report.orphan is None and report.interrupted.effects == ["opened trip"]


def test_an_aside_whose_tools_ran_is_logged_to_the_ambient_log(tmp_path, opened):
    run = crashed_run(tmp_path)
    open_effort(run, "alpha")
    open_effort(run, "beta")
    start_turn(run, "quick question, then back to alpha")
    run.log_event(ev.TOOL_CALLED, tool="route_to_ambient", arguments={}, ok=True, source="model")
    lifecycle.switch_to(run, run.efforts.get("alpha"))
    session = opened(stop(run))
    report = recover(session)
    assert report.interrupted.effects == ["switched alpha"] and report.interrupted.logged_to == "ambient"
    assert jsonl(session.raw_path)[0]["content"] == "quick question, then back to alpha"
    assert jsonl(session.effort_path("alpha")) == []


def test_a_failed_turn_is_unanswered_but_not_an_orphan(tmp_path, opened):
    run = crashed_run(tmp_path)
    start_turn(run, "hello?")
    run.log_event(ev.TURN_FAILED, error="the provider said no", kind="auth", partial="", partial_chars=0)
    session = opened(stop(run))
    report = recover(session)
    assert report.orphan is None and report.interrupted is None
    assert unanswered_turn(session) == UnansweredTurn("hello?", 1, "failed", "the provider said no")


# ------------------------------------------------------------------ damage
@pytest.mark.parametrize(
    "bad",
    [
        {"event": "turn_start", "turn": "zz", "next_turn": "abc", "user": "hello", "ts": "x"},
        {"event": "turn_start", "turn": [1], "next_turn": 1e300, "user": {"a": 1}, "ts": 5},
        {"event": "turn_start", "turn": 0, "next_turn": True, "user": "", "ts": None},
        {"event": "message_logged", "turn": 0, "next_turn": -4},
        {"event": "session_start", "turn": 0, "pid": 10**30},
        {"event": "session_start", "turn": 0, "pid": [1, 2]},
        {"event": "effort_opened", "effort_id": 7},
        {"event": "tool_called", "tool": ["route_to_ambient"], "ok": "yes"},
    ],
)
def test_a_damaged_event_value_does_not_break_recovery(tmp_path, opened, bad):
    run = crashed_run(tmp_path)
    finish_turn(run, "first", "one")
    path = run.events.path
    run = stop(run)
    run.close(clean=False)
    write_jsonl(path, [bad])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('[1, 2, 3]\n"a string"\nnot json at all\n')
    session = opened(Session.open(tmp_path / "s"))

    report = recover(session)

    assert report.unclean and not report.notes  # it finished
    assert session.state.turn == 1
    if report.orphan is not None:  # only a turn_start with a usable text is offered
        assert report.orphan.text == "hello" and report.orphan.turn == 1
    assert events(session.dir)[-1]["event"] == "session_start"


def test_a_damaged_turn_number_falls_back_to_the_turn_before_it(tmp_path, opened):
    run = crashed_run(tmp_path)
    finish_turn(run, "first", "one")
    run.log_event(ev.TURN_START, user="second", next_turn="two")
    session = opened(stop(run))
    assert recover(session).orphan == UnansweredTurn("second", 2, "orphaned")


# ------------------------------------------------------------------ the report and its event
def test_the_recovered_event_says_what_was_done(tmp_path, opened):
    run = crashed_run(tmp_path)
    finish_turn(run, "first", "one")
    path = run.raw_path
    run = stop(run)
    run.close(clean=False)
    # after the last snapshot (a later timestamp than its saved_at, whatever the clock's resolution)
    write_jsonl(
        run.events.path,
        [{"event": "turn_start", "turn": 1, "next_turn": 2, "user": "lost", "ts": "2099-01-01T00:00:00.000Z"}],
    )
    with open(path, "ab") as fh:
        fh.write(b'{"role": "user", "content": "lo')
    session = opened(Session.open(tmp_path / "s"))

    report = recover(session)

    [recovered] = events(session.dir, "recovered")
    assert set(recovered) >= {
        "events_reconciled",
        "repaired",
        "torn_files",
        "orphan_turn",
        "interrupted_turn",
        "settled",
        "ts",
        "turn",
    }
    assert recovered["events_reconciled"] == report.events_reconciled >= 1  # the turn_start at least
    assert recovered["torn_files"] == report.torn_files and len(report.torn_files) == 1
    assert recovered["orphan_turn"] == 2 and recovered["interrupted_turn"] is None and recovered["settled"] == 0
    kinds = [e["event"] for e in events(session.dir)]
    assert kinds[-2:] == ["recovered", "session_start"]


def test_no_orphan_reason():
    assert no_orphan_reason(None) == "there is no unanswered message to retry"
    assert no_orphan_reason(RecoveryReport()) == "there is no unanswered message to retry"
    report = RecoveryReport(
        interrupted=UnansweredTurn("x", 4, "interrupted", effects=["opened a", "concluded b"], logged_to="a")
    )
    assert no_orphan_reason(report) == (
        "turn 4 is not retried: its tools already ran (opened a, concluded b) and its message is logged in a; "
        "send a new message to continue"
    )
