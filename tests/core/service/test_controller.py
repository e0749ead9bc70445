"""core/controller.py: the SessionController — run state through open (locked, retried, refused),
intents queued and run one at a time to one Outcome each, cancel, the orphan retry, valid actions,
snapshots, close, the session thread, and writes by another process. The model is the fake server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable
from typing import Any

import pytest

from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.efforts.states import VALID, Action, EffortState
from ccm_tui.core.engine.engine import Engine
from ccm_tui.core.engine.opening import OpenOptions
from ccm_tui.core.service.controller import SessionClosed, SessionController
from ccm_tui.core.service.run_state import (
    Cancel,
    EffortAction,
    Phase,
    RetryOrphan,
    SendMessage,
    SessionOpened,
    SnapshotChanged,
    StateChanged,
    WrittenElsewhere,
)
from ccm_tui.core.session.lock import SessionLock
from ccm_tui.core.session.session import Session, SessionLocked
from ccm_tui.core.storage import eventlog as ev
from ccm_tui.core.turn.events import EffortChanged, Outcome, TextDelta, TurnEvent
from ccm_tui.errors import EffortNotFound
from tests.helpers.openai_server import call, text, tool_calls
from tests.helpers.sessionkit import concluded_effort, events, exchange, jsonl, open_effort, settings_for

TIMEOUT = 15.0
DEAD_PID = 2**31 - 2


class Recorder:
    """A listener: every event with the thread it arrived on; tests wait on conditions over them."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.threads: set[threading.Thread] = set()
        self._cond = threading.Condition()

    def __call__(self, event: Any) -> None:
        with self._cond:
            self.events.append(event)
            self.threads.add(threading.current_thread())
            self._cond.notify_all()

    def _wait(self, predicate: Callable[[list[Any]], bool], timeout: float) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: predicate(self.events), timeout), f"timed out; saw {self.events!r}"

    async def until(self, predicate: Callable[[list[Any]], bool], timeout: float = TIMEOUT) -> None:
        await asyncio.to_thread(self._wait, predicate, timeout)

    def of(self, kind: type) -> list[Any]:
        with self._cond:
            return [e for e in self.events if isinstance(e, kind)]

    def states(self) -> list[Any]:
        return [e.state for e in self.of(StateChanged)]

    def phases(self) -> list[Phase]:
        """The phases passed through, repeats folded."""
        out: list[Phase] = []
        for state in self.states():
            if not out or out[-1] is not state.phase:
                out.append(state.phase)
        return out


def saw(kind: type, test: Callable[[Any], bool] = lambda e: True) -> Callable[[list[Any]], bool]:
    return lambda seen: any(isinstance(e, kind) and test(e) for e in seen)


def in_phase(phase: Phase, test: Callable[[Any], bool] = lambda s: True) -> Callable[[list[Any]], bool]:
    return saw(StateChanged, lambda e: e.state.phase is phase and test(e.state))


@pytest.fixture(autouse=True)
def _instant_retries(monkeypatch):
    monkeypatch.setenv("CCM_RETRY_BASE_SECONDS", "0")


@pytest.fixture
def session_dir(tmp_path):
    return tmp_path / "s"


@pytest.fixture
async def make(session_dir, llm_server):
    """``make(**options)`` → (controller, recorder) on the session, the fake server as its model."""
    made: list[SessionController] = []

    def build(directory=None, **options: Any) -> tuple[SessionController, Recorder]:
        options.setdefault("retry_base", 0)
        controller = SessionController(
            directory or session_dir, settings_for(llm_server, token_budget=6_000), options=OpenOptions(**options)
        )
        recorder = Recorder()
        controller.subscribe(recorder)
        made.append(controller)
        return controller, recorder

    yield build
    for controller in made:
        await controller.close()


def held_lock(session_dir) -> SessionLock:
    session_dir.mkdir(parents=True, exist_ok=True)
    lock = SessionLock(session_dir)
    assert lock.try_acquire()
    return lock


async def outcome_of(future) -> Outcome:
    return await asyncio.wait_for(asyncio.wrap_future(future), TIMEOUT)


# ------------------------------------------------------------------ opening
async def test_open_goes_from_opening_to_idle_with_a_snapshot(make):
    controller, recorder = make()
    assert controller.state.phase is Phase.CLOSED and controller.snapshot is None

    report = await controller.open()

    assert recorder.phases() == [Phase.OPENING, Phase.IDLE]
    assert controller.state.phase is Phase.IDLE and controller.state.is_open and not controller.state.busy
    [opened] = recorder.of(SessionOpened)
    assert opened.first and opened.report is report and not report.unclean
    assert controller.snapshot is not None and controller.snapshot.turn == 0 and controller.snapshot.budget == 6_000
    kinds = [type(e) for e in recorder.events]
    assert kinds.index(SnapshotChanged) < kinds.index(SessionOpened) < len(kinds) - 1  # IDLE comes last
    await controller.close()
    assert controller.state.phase is Phase.CLOSED


async def test_a_held_lock_means_locked_with_retries_then_idle_once_released(make, session_dir):
    lock = held_lock(session_dir)
    controller, recorder = make(lock_wait=0.0, retry_delays=(0.01, 30.0))
    opening = asyncio.ensure_future(controller.open())

    await recorder.until(in_phase(Phase.LOCKED, lambda s: s.attempt >= 2 and s.retry_in == 30.0))
    locked = controller.state
    assert locked.phase is Phase.LOCKED and locked.holder == os.getpid() and not locked.is_open
    attempts = [s.attempt for s in recorder.states() if s.phase is Phase.LOCKED and s.retry_in is not None]
    assert attempts[:2] == [1, 2]

    lock.release()
    controller.retry_now()  # cut the 30 s delay short
    await asyncio.wait_for(opening, TIMEOUT)

    assert controller.state.phase is Phase.IDLE and controller.state.holder is None and controller.state.attempt == 0
    assert recorder.phases() == [Phase.OPENING, Phase.LOCKED, Phase.IDLE]


async def test_without_retries_a_held_lock_fails_the_open_and_closes_with_the_reason(make, session_dir):
    lock = held_lock(session_dir)
    controller, recorder = make(lock_wait=0.0, retry_delays=())
    waiting = controller.submit(SendMessage("hello"))
    try:
        with pytest.raises(SessionLocked):
            await asyncio.wait_for(controller.open(), TIMEOUT)
    finally:
        lock.release()
    assert controller.state.phase is Phase.CLOSED
    assert f"in use by pid {os.getpid()}" in controller.state.error
    outcome = await outcome_of(waiting)  # what was queued is not left hanging
    assert outcome.failed and outcome.given_back and outcome.text == "hello"
    assert outcome.reason.startswith("the session could not be opened: ")


# ------------------------------------------------------------------ work
async def test_a_message_ends_with_one_outcome_then_idle(make, llm_server):
    controller, recorder = make()
    await controller.open()
    llm_server.push(text("hello there"))
    start = len(recorder.events)

    outcome = await asyncio.wait_for(controller.run(SendMessage("hi")), TIMEOUT)

    assert outcome.ok and outcome.reply == "hello there" and outcome.logged_to == "ambient"
    seen = recorder.events[start:]
    outcomes = [e for e in seen if isinstance(e, Outcome)]
    assert outcomes == [outcome]
    after = seen[seen.index(outcome) + 1 :]
    assert not [e for e in after if isinstance(e, TurnEvent)]  # the outcome is the work's last event
    assert isinstance(after[-1], StateChanged) and after[-1].state.phase is Phase.IDLE
    assert any(isinstance(e, SnapshotChanged) and e.snapshot.turn == 1 for e in after)
    phases = [e.state.phase for e in seen if isinstance(e, StateChanged)]
    assert Phase.TURN in phases and phases[-1] is Phase.IDLE
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "hello there"


async def test_a_failure_after_the_outcome_still_hands_it_over_and_the_queue_moves_on(make, llm_server):
    """Found on a full disk: the catalog's COMMIT failed while the manifest caught up after a
    stored turn, the work ended without setting its future and ``send`` waited forever."""
    from ccm_tui.core.turn.events import Banner

    controller, recorder = make()
    await controller.open()
    failed: list[Any] = []

    def breaks_once_after_the_outcome(event: Any) -> None:
        if isinstance(event, SnapshotChanged) and recorder.of(Outcome) and not failed:
            failed.append(event)
            raise RuntimeError("database or disk is full")

    controller.subscribe(breaks_once_after_the_outcome)
    llm_server.push(text("stored"), text("second"))

    first = await asyncio.wait_for(controller.run(SendMessage("one")), TIMEOUT)
    second = await asyncio.wait_for(controller.run(SendMessage("two")), TIMEOUT)

    assert failed and first.ok and second.ok and second.reply == "second"
    assert any("after the turn: database or disk is full" in b.text for b in recorder.of(Banner))
    assert controller.state.phase is Phase.IDLE


async def test_an_effort_action_runs_as_an_action(make):
    controller, recorder = make()
    await controller.open()
    outcome = await asyncio.wait_for(controller.run(EffortAction(Action.OPEN, "trip")), TIMEOUT)
    assert outcome.ok and outcome.work == "action" and outcome.text == "open trip"
    assert any(s.phase is Phase.ACTION and s.detail == "open trip" for s in recorder.states())
    assert controller.snapshot.effort("trip") is not None
    refused = await asyncio.wait_for(controller.run(EffortAction(Action.REOPEN, "trip")), TIMEOUT)
    assert refused.failed and refused.cause == "refused" and "is not concluded" in refused.reason


async def test_intents_sent_while_opening_are_queued_and_run_in_order(make, session_dir, llm_server):
    lock = held_lock(session_dir)
    controller, recorder = make(lock_wait=0.0, retry_delays=(30.0,))
    opening = asyncio.ensure_future(controller.open())
    await recorder.until(in_phase(Phase.LOCKED))
    first = controller.submit(SendMessage("one"))
    second = controller.submit(SendMessage("two"))
    await recorder.until(saw(StateChanged, lambda e: e.state.queued == ("one", "two")))
    assert llm_server.chat_requests() == []

    llm_server.push(text("reply one"), text("reply two"))
    lock.release()
    controller.retry_now()
    await asyncio.wait_for(opening, TIMEOUT)

    assert (await outcome_of(first)).reply == "reply one"
    assert (await outcome_of(second)).reply == "reply two"
    users = [r["messages"][-1]["content"] for r in llm_server.chat_requests()]
    assert users == ["one", "two"]
    outcomes = recorder.of(Outcome)
    assert [o.text for o in outcomes] == ["one", "two"]
    assert controller.state.queued == ()


async def test_a_message_sent_during_a_turn_waits_for_it(make, llm_server):
    controller, recorder = make()
    await controller.open()
    asked, release = threading.Event(), threading.Event()

    def model(body):  # answers "one" only once the test lets it: the first turn is surely running
        user = body["messages"][-1]["content"]
        if user == "one":
            asked.set()
            release.wait(TIMEOUT)
        return text(f"reply to {user}")

    llm_server.responder = model
    first = controller.submit(SendMessage("one"))
    assert await asyncio.to_thread(asked.wait, TIMEOUT)
    second = controller.submit(SendMessage("two"))
    await recorder.until(saw(StateChanged, lambda e: e.state.queued == ("two",)))
    assert controller.state.busy and controller.state.phase is Phase.TURN
    assert len(llm_server.chat_requests()) == 1
    release.set()

    assert (await outcome_of(first)).reply == "reply to one"
    assert (await outcome_of(second)).reply == "reply to two"
    assert [o.text for o in recorder.of(Outcome)] == ["one", "two"]
    assert [r["messages"][-1]["content"] for r in llm_server.chat_requests()] == ["one", "two"]


async def test_cancel_with_nothing_running_withdraws_the_queued_messages(make, session_dir, llm_server):
    lock = held_lock(session_dir)
    controller, recorder = make(lock_wait=0.0, retry_delays=(30.0,))
    opening = asyncio.ensure_future(controller.open())
    await recorder.until(in_phase(Phase.LOCKED))
    queued = [controller.submit(SendMessage(t)) for t in ("one", "two")]
    await recorder.until(saw(StateChanged, lambda e: e.state.queued == ("one", "two")))

    cancelled = controller.submit(Cancel())

    assert (await outcome_of(cancelled)).work == "cancel"
    for future, sent in zip(queued, ("one", "two"), strict=True):
        outcome = await outcome_of(future)
        assert outcome.cancelled and outcome.given_back and outcome.text == sent and outcome.reason == "cancelled"
    await recorder.until(lambda seen: controller.state.queued == ())
    lock.release()
    controller.retry_now()
    await asyncio.wait_for(opening, TIMEOUT)
    assert controller.state.phase is Phase.IDLE and llm_server.chat_requests() == []


async def test_cancelling_a_running_turn_ends_it_cancelled_and_keeps_the_partial(make, llm_server, session_dir):
    controller, recorder = make()
    await controller.open()
    llm_server.stream_delay = 0.02
    llm_server.push(text("word " * 400))
    future = controller.submit(SendMessage("tell me a story"))
    await recorder.until(lambda seen: sum(len(e.text) for e in seen if isinstance(e, TextDelta)) > 10)

    controller.cancel()
    outcome = await outcome_of(future)

    assert outcome.cancelled and outcome.partial and not outcome.given_back
    assert Phase.CANCELLING in recorder.phases()
    await recorder.until(lambda seen: controller.state.phase is Phase.IDLE)
    raw = jsonl(session_dir / "raw.jsonl")
    assert raw[-1]["interrupted"] is True and raw[-1]["content"] == outcome.partial


async def test_a_caller_cancelled_while_awaiting_run_cancels_the_work_and_waits_for_it(make, llm_server, session_dir):
    controller, recorder = make()
    await controller.open()
    llm_server.stream_delay = 0.02
    llm_server.push(text("word " * 400))
    caller = asyncio.ensure_future(controller.run(SendMessage("a long one")))
    await recorder.until(saw(TextDelta))
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(caller, TIMEOUT)
    [outcome] = recorder.of(Outcome)  # told before the caller's cancel went on
    assert outcome.cancelled
    assert jsonl(session_dir / "raw.jsonl")[-1]["interrupted"] is True


# ------------------------------------------------------------------ the orphan
async def test_retry_orphan_without_an_orphan_fails_saying_why(make, llm_server):
    controller, _ = make()
    await controller.open()
    outcome = await asyncio.wait_for(controller.run(RetryOrphan()), TIMEOUT)
    assert outcome.failed and outcome.cause == "refused"
    assert outcome.reason == "there is no unanswered message to retry"
    assert llm_server.chat_requests() == []


def crashed_with(session_dir, write: Callable[[Session], None]) -> None:
    """A previous run on the session that died (no session_end) after ``write``."""
    session = Session.open(session_dir)
    session.log_event(ev.SESSION_START, pid=DEAD_PID)
    write(session)
    session.lock.release()


async def test_retry_orphan_sends_the_orphaned_message_again(make, llm_server, session_dir):
    crashed_with(session_dir, lambda s: s.log_event(ev.TURN_START, user="lost in the crash", next_turn=1))
    controller, recorder = make()
    report = await controller.open()
    assert report.orphan is not None and report.orphan.text == "lost in the crash"
    llm_server.push(text("here it is"))

    outcome = await asyncio.wait_for(controller.run(RetryOrphan()), TIMEOUT)

    assert outcome.ok and outcome.text == "lost in the crash" and outcome.reply == "here it is"
    assert llm_server.chat_requests()[0]["messages"][-1]["content"] == "lost in the crash"
    again = await asyncio.wait_for(controller.run(RetryOrphan()), TIMEOUT)
    assert again.failed and again.cause == "refused"  # answered now


async def test_retry_orphan_refuses_a_turn_whose_tools_ran(make, llm_server, session_dir):
    def interrupted(session: Session) -> None:
        session.log_event(ev.TURN_START, user="plan a trip", next_turn=1)
        lifecycle.open_effort(session, "trip", turn=1)

    crashed_with(session_dir, interrupted)
    controller, _ = make()
    report = await controller.open()
    assert report.interrupted is not None and report.orphan is None
    outcome = await asyncio.wait_for(controller.run(RetryOrphan()), TIMEOUT)
    assert outcome.failed and outcome.reason.startswith("turn 1 is not retried: its tools already ran (opened trip)")
    assert llm_server.chat_requests() == []


# ------------------------------------------------------------------ what the controller answers
async def test_valid_actions_follow_the_state_table(make, session_dir):
    session = Session.open(session_dir)
    open_effort(session, "side", exchange("q", "a"))
    concluded_effort(session, "done", exchange("q", "a"))
    wide = concluded_effort(session, "wide", exchange("q", "a"))
    lifecycle.expand(session, wide, turn=0)
    concluded_effort(session, "gone", exchange("q", "a"))
    lifecycle.evict_summary(session, "gone")
    session.save_view()
    open_effort(session, "live", exchange("q", "a"))
    session.close()
    controller, _ = make()
    await controller.open()

    expected = {
        "live": EffortState.ACTIVE,
        "side": EffortState.BACKGROUND,
        "done": EffortState.CONCLUDED,
        "wide": EffortState.EXPANDED,
        "gone": EffortState.EVICTED,
    }
    for effort_id, state in expected.items():
        assert controller.snapshot.effort(effort_id).state is state
        assert controller.valid_actions(effort_id) == VALID[state]
    assert controller.valid_actions("nope") == ()

    await asyncio.wait_for(controller.run(EffortAction(Action.SWITCH, "side")), TIMEOUT)
    assert controller.valid_actions("side") == VALID[EffortState.ACTIVE]
    assert controller.valid_actions("live") == VALID[EffortState.BACKGROUND]


READS = ("search", "effort_log", "read_lines", "older_lines", "inspect", "export_effort", "export_conversation")


async def test_the_reads_are_the_engines_answered_on_the_session_thread(make, session_dir):
    session = Session.open(session_dir)
    concluded_effort(session, "axolotl care", exchange("how warm for an axolotl?", "cool water, 16 to 18 degrees"))
    session.close()
    controller, _ = make()
    with pytest.raises(SessionClosed, match="not open"):
        await controller.search("axolotl")
    await controller.open()

    [hit] = [h for h in await controller.search("axolotl") if h.source == "effort"]
    lines = await controller.read_lines(hit.id, 1, 2)
    assert [m["content"] for m in lines.messages] == ["how warm for an axolotl?", "cool water, 16 to 18 degrees"]
    assert len((await controller.effort_log(hit.id)).records) == 2
    with pytest.raises(EffortNotFound, match="nope"):
        await controller.read_lines("nope", 1, 2)
    for name in READS:  # declared once, on the engine: the controller's query is the same read
        assert getattr(SessionController, name).__wrapped__ is getattr(Engine, name), name
        assert getattr(SessionController, name).__doc__ == getattr(Engine, name).__doc__


async def test_a_snapshot_follows_each_effort_change_and_the_end_of_the_work(make, llm_server):
    controller, recorder = make()
    await controller.open()
    llm_server.push(tool_calls(call("open_effort", {"name": "trip"})), text("Opened."))
    start = len(recorder.events)

    await asyncio.wait_for(controller.run(SendMessage("plan a trip")), TIMEOUT)

    seen = recorder.events[start:]
    changed = next(i for i, e in enumerate(seen) if isinstance(e, EffortChanged))
    snapshot = seen[changed + 1]
    assert isinstance(snapshot, SnapshotChanged) and snapshot.snapshot.effort("trip") is not None
    assert snapshot.snapshot.turn == 0  # taken mid-turn
    done = next(i for i, e in enumerate(seen) if isinstance(e, Outcome))
    assert isinstance(seen[done + 1], SnapshotChanged) and seen[done + 1].snapshot.turn == 1
    assert controller.snapshot.effort("trip").active and controller.snapshot.history[-1]["turn"] == 1


async def test_listeners_are_called_on_the_session_thread_never_the_callers(make, llm_server):
    controller, recorder = make()
    await controller.open()
    llm_server.push(text("hi"))
    await asyncio.wait_for(controller.run(SendMessage("hello")), TIMEOUT)
    [thread] = recorder.threads
    assert thread is not threading.current_thread() and thread.name == "ccm-session"
    await controller.close()
    assert not thread.is_alive()


async def test_unsubscribe_stops_the_events(make, llm_server):
    controller, recorder = make()
    other = Recorder()
    stop = controller.subscribe(other)
    await controller.open()
    stop()
    llm_server.push(text("hi"))
    await asyncio.wait_for(controller.run(SendMessage("hello")), TIMEOUT)
    assert recorder.of(Outcome) and not other.of(Outcome) and other.of(SessionOpened)


# ------------------------------------------------------------------ closing
async def test_close_cancels_the_running_work_and_waits_for_it(make, llm_server, session_dir):
    controller, recorder = make()
    await controller.open()
    llm_server.stream_delay = 0.02
    llm_server.push(text("word " * 400))
    future = controller.submit(SendMessage("a long story"))
    await recorder.until(saw(TextDelta))

    await asyncio.wait_for(controller.close(), TIMEOUT)

    assert future.done() and future.result().cancelled
    assert controller.state.phase is Phase.CLOSED
    raw = jsonl(session_dir / "raw.jsonl")
    assert raw[-2]["content"] == "a long story" and raw[-1]["interrupted"] is True
    assert events(session_dir)[-1]["event"] == "session_end"


async def test_close_while_waiting_for_the_lock_stops_waiting(make, session_dir):
    lock = held_lock(session_dir)
    controller, recorder = make(lock_wait=0.0, retry_delays=(30.0,))
    opening = asyncio.ensure_future(controller.open())
    await recorder.until(in_phase(Phase.LOCKED, lambda s: s.retry_in == 30.0))
    queued = controller.submit(SendMessage("never sent"))  # wakes the wait: one more attempt at once
    await recorder.until(in_phase(Phase.LOCKED, lambda s: s.queued == ("never sent",) and s.attempt >= 2))
    try:
        await asyncio.wait_for(controller.close(), TIMEOUT)
    finally:
        lock.release()
    assert controller.state.phase is Phase.CLOSED
    outcome = await outcome_of(queued)
    assert outcome.cancelled and outcome.given_back and outcome.text == "never sent"
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(opening, TIMEOUT)


async def test_close_right_after_a_message_woke_the_lock_wait_still_stops_waiting(make, session_dir):
    lock = held_lock(session_dir)
    controller, recorder = make(lock_wait=0.0, retry_delays=(30.0,))
    opening = asyncio.ensure_future(controller.open())
    await recorder.until(in_phase(Phase.LOCKED, lambda s: s.retry_in == 30.0))
    reached, go = threading.Event(), threading.Event()

    def hold(event: Any) -> None:  # holds the session thread inside _enqueue, before it wakes the wait
        if isinstance(event, StateChanged) and event.state.queued == ("never sent",) and not reached.is_set():
            reached.set()
            go.wait(TIMEOUT)

    controller.subscribe(hold)
    queued = controller.submit(SendMessage("never sent"))
    assert await asyncio.to_thread(reached.wait, TIMEOUT)
    closing = asyncio.ensure_future(controller.close())
    await asyncio.sleep(0)  # close() hands its shutdown to the held session thread: it runs right after
    go.set()
    try:
        await asyncio.wait_for(closing, 3.0)  # milliseconds when the open's wait is cancelled
        assert controller.state.phase is Phase.CLOSED and (await outcome_of(queued)).cancelled
    finally:
        lock.release()
        controller.retry_now()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(opening, TIMEOUT)


# ------------------------------------------------------------------ another process wrote
async def test_a_write_by_another_process_is_seen_on_changed_on_disk(make, llm_server, tmp_path, session_dir):
    mine, recorder = make()
    theirs, _ = make()
    await mine.open()
    await theirs.open()
    llm_server.push(text("their reply"))
    await asyncio.wait_for(theirs.run(SendMessage("their message")), TIMEOUT)
    start = len(recorder.events)

    mine.changed_on_disk()
    await recorder.until(saw(WrittenElsewhere))

    [written] = [e for e in recorder.events[start:] if isinstance(e, WrittenElsewhere)]
    assert [(line.role, line.content) for line in written.lines][-2:] == [
        ("user", "their message"),
        ("assistant", "their reply"),
    ]
    await recorder.until(saw(SnapshotChanged, lambda e: e.snapshot.turn == 1))
    assert mine.snapshot.turn == 1


async def test_changed_on_disk_with_nothing_new_tells_nothing(make):
    controller, recorder = make()
    await controller.open()
    start = len(recorder.events)
    controller.changed_on_disk()
    await controller.inspect()  # runs on the session thread after the check
    assert recorder.events[start:] == []
