"""Start-up recovery: reconcile snapshots with the event log after an unclean end.

A clean run ends with ``session_end`` and ``clean_shutdown: true`` in
``session_state.json``. Otherwise (kill -9, power loss, a crash) recovery:

* recounts the ambient totals from ``raw.jsonl`` when the snapshot lags it;
* advances the turn counter to the last turn the event log says finished;
* sets torn last lines of JSONL files aside (the unacknowledged fragment is
  kept in ``<file>.torn-<ts>``; the log is cut back to its last whole record);
* settles a turn that has a ``turn_start`` and no terminal event against the logs
  themselves: an exchange already in a log is not an orphan (its missing
  ``message_logged``/``turn_done`` are written); a turn whose tools already changed
  efforts is logged where the tools routed it, marked ``interrupted``, and is *not*
  offered for retry (re-sending would repeat the tools' effects); only a turn with
  neither is an *orphaned turn* whose text can be re-sent (TUI prompt,
  ``ccm-tui send --retry-orphan``);
* logs ``recovered`` with what it did and returns a report for the user.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..efforts.lifecycle import remove_unpublished_imports
from ..manifest.effort import SLUG_RE
from ..session.session import EFFORTS_DIR, Session
from ..session.withdrawn import is_marker, live
from ..storage import eventlog as ev
from ..storage.durable import (
    _parse_lines,
    file_size,
    is_message,
    open_nofollow,
    read_bytes,
    read_jsonl_tail,
    set_torn_tail_aside,
)
from ..storage.eventlog import now_iso

EVENT_TAIL = 5000


# Events that mean a turn's tools changed efforts (the live path's ``ctx.changes``): once one
# happened, re-sending the message would run those effects again.
EFFECT_EVENTS = {
    ev.EFFORT_OPENED: "opened",
    ev.EFFORT_CONCLUDED: "concluded",
    ev.EFFORT_REOPENED: "reopened",
    ev.EFFORT_SWITCHED: "switched",
    ev.EFFORT_EXPANDED: "expanded",
    ev.EFFORT_COLLAPSED: "collapsed",
}
MAX_TURN = 10**12  # larger turn numbers in the event log are damage, not history
ISO_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def event_int(value: object) -> int | None:
    """A non-negative whole number from an event field, or None (strings, floats, bools, huge)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TURN:
        return None
    return value


@dataclass
class UnansweredTurn:
    text: str
    turn: int
    reason: str  # "orphaned" (no end recorded), "failed", or "interrupted" (tools ran, then the process died)
    error: str | None = None
    effects: list[str] = field(default_factory=list)  # "opened x", "concluded y": what already happened
    logged_to: str | None = None  # where the message is logged ("ambient" or an effort id), if it is

    @property
    def retry_safe(self) -> bool:
        """Re-sending repeats nothing: no tool changed an effort and the message is in no log."""
        return not self.effects and self.logged_to is None


@dataclass
class RecoveryReport:
    unclean: bool = False
    events_reconciled: int = 0
    repaired: list[str] = field(default_factory=list)
    torn_files: list[str] = field(default_factory=list)
    orphan: UnansweredTurn | None = None  # safe to re-send (the TUI offers Retry)
    interrupted: UnansweredTurn | None = None  # tools ran; logged without a reply; never re-sent
    settled: list[str] = field(default_factory=list)  # turns found complete in the logs
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """There is something to tell the user (a note alone included)."""
        return self.acted or bool(self.notes)

    @property
    def acted(self) -> bool:
        """Recovery found or set right something (what the ``recovered`` event records): a note alone,
        such as a line of the wrong shape skipped at every open, is said but not logged again and again."""
        return self.unclean or bool(self.repaired or self.torn_files or self.orphan or self.interrupted or self.settled)

    def lines(self) -> list[str]:
        """The report in words a user knows (the first line starts with ``RECOVERY``)."""
        if self.unclean:
            out = [
                "RECOVERY — ccm-tui was not closed properly last time (the process was killed or crashed); "
                "nothing was lost"
            ]
        else:
            out = ["RECOVERY"]
        if self.events_reconciled:
            n = self.events_reconciled
            out.append(f"{n:,} change{'s' if n != 1 else ''} the last run made {'were' if n != 1 else 'was'} "
                       "brought up to date from the event log")  # fmt: skip
        for item in self.repaired:
            out.append(f"Repaired: {item}")
        for item in self.torn_files:
            out.append(f"Torn last line set aside: {item} (a write the crash cut short; the line is kept beside it)")
        for note in self.notes:
            out.append(f"Note: {note}")
        out.extend(self.settled)
        if self.interrupted:
            it = self.interrupted
            preview = " ".join(it.text.split())[:80]
            where = "the ambient log" if it.logged_to == "ambient" else f"effort {it.logged_to}"
            out.append(
                f'Interrupted turn {it.turn}: "{preview}" — its tools already ran ({", ".join(it.effects)}); '
                f"the message is logged in {where} without a reply and is not re-sent (that would repeat "
                "those actions): ask again to continue"
            )
        if self.orphan:
            preview = " ".join(self.orphan.text.split())[:80]
            out.append(
                f'Orphaned turn {self.orphan.turn}: your message "{preview}" got no reply — it can be sent again'
            )
        return out

    def one_line(self) -> str:
        return " · ".join(self.lines())


def no_orphan_reason(report: RecoveryReport | None) -> str:
    """Why there is nothing to retry (``send --retry-orphan``, the TUI's Retry)."""
    interrupted = report.interrupted if report is not None else None
    if interrupted is not None:
        return (
            f"turn {interrupted.turn} is not retried: its tools already ran "
            f"({', '.join(interrupted.effects)}) and its message is logged in {interrupted.logged_to}; "
            "send a new message to continue"
        )
    return "there is no unanswered message to retry"


def _last_turn_start(events: list[dict]) -> int | None:
    for i in range(len(events) - 1, -1, -1):
        if events[i].get("event") == ev.TURN_START:
            return i
    return None


def _start_turn_number(event: dict) -> int:
    turn = event_int(event.get("next_turn"))
    if turn is None:
        before = event_int(event.get("turn"))
        turn = (before or 0) + 1
    return turn


def unanswered_turn(session: Session, events: list[dict] | None = None) -> UnansweredTurn | None:
    """The last user message that started a turn which never finished (or failed)."""
    events = events if events is not None else read_jsonl_tail(session.events.path, EVENT_TAIL)
    i = _last_turn_start(events)
    if i is None:
        return None
    event = events[i]
    later = [e.get("event") for e in events[i + 1 :]]
    text = event.get("user")
    if not isinstance(text, str) or not text:
        return None
    turn = _start_turn_number(event)
    if ev.TERMINAL_TURN_EVENTS.intersection(later) - {ev.TURN_FAILED} or ev.MESSAGE_LOGGED in later:
        return None  # answered (or its exchange was logged before the process ended)
    if ev.TURN_FAILED in later:
        failed = next(e for e in events[i + 1 :] if e.get("event") == ev.TURN_FAILED)
        error = failed.get("error")
        return UnansweredTurn(text, turn, "failed", error if isinstance(error, str) else None)
    return UnansweredTurn(text, turn, "orphaned")


def _entries(event: dict) -> list[dict]:
    entries = event.get("entries")
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _turn_effects(session: Session, after: list[dict], since: str, before: list[dict]) -> tuple[list[str], str]:
    """What a turn's tools changed (from its events) and where its exchange belongs, the way the
    orchestrator routes it: ``route_to_ambient``, an opened/switched/reopened effort, the active
    effort it concluded; else the active effort (or ambient).

    An effort is saved (its entry journaled in an ``efforts_saved`` event) before its own event is
    logged, so a kill between the two leaves one opened or concluded during the turn (by its
    timestamps) that no event names: it counts."""
    effects: list[str] = []
    route: str | None = None
    mentioned = {e.get("effort_id") for e in after}  # (and those opened before the turn, in the same ms)
    mentioned |= {e.get("effort_id") for e in before if e.get("event") in (ev.EFFORT_OPENED, ev.EFFORT_RESTORED)}
    saved = [entry.get("id") for e in after if e.get("event") == ev.EFFORTS_SAVED for entry in _entries(e)]
    if ISO_TS.match(since):  # a damaged timestamp must not make every effort look new
        for saved_id in dict.fromkeys(i for i in saved if isinstance(i, str) and i not in mentioned):
            effort = session.efforts.get(saved_id)
            if effort is None:
                continue
            if str(effort.created or "") >= since:
                effects.append(f"opened {effort.id}")
                route = effort.id
            elif effort.is_concluded and str(effort.concluded_at or "") >= since:
                effects.append(f"concluded {effort.id}")
    for event in after:
        kind = event.get("event")
        effort_id = event.get("effort_id")
        if kind == ev.TOOL_CALLED and event.get("tool") == "route_to_ambient" and event.get("ok") is True:
            route = "ambient"
        if kind not in EFFECT_EVENTS or not isinstance(effort_id, str):
            continue
        if kind == ev.EFFORT_COLLAPSED and event.get("reason", "tool") != "tool":
            continue  # end-of-turn decay, not a tool
        effects.append(f"{EFFECT_EVENTS[kind]} {effort_id}")
        takes_route = kind == ev.EFFORT_OPENED or (
            kind in (ev.EFFORT_SWITCHED, ev.EFFORT_REOPENED) and route != "ambient"
        )
        # the active effort was concluded (none is active now): its closing exchange belongs to it
        closes_active = kind == ev.EFFORT_CONCLUDED and route is None and session.efforts.active is None
        if takes_route or closes_active:
            route = effort_id
    if route not in (None, "ambient") and session.efforts.get(str(route)) is None:
        route = None  # the manifest does not know it (yet): the default destination
    if route is None:
        active = session.efforts.active
        route = active.id if active is not None else "ambient"
    return effects, route


def _find_logged_exchange(session: Session, text: str, since: str, candidates: list[str]) -> str | None:
    """The log ("ambient" or an effort id) whose last records hold this turn's user message."""
    for where in candidates:
        path = session.raw_path if where == "ambient" else session.effort_path(where)
        for record in read_jsonl_tail(path, 8):
            if record.get("role") == "user" and record.get("content") == text and str(record.get("ts", "")) >= since:
                return where
    return None


def _settle_unfinished_turn(session: Session, events: list[dict], report: RecoveryReport) -> None:
    """Reconcile the last turn without a terminal event against the logs (see the module doc)."""
    i = _last_turn_start(events)
    if i is None:
        return
    start, after = events[i], events[i + 1 :]
    text = start.get("user")
    kinds = {e.get("event") for e in after}
    if any(e.get("event") == ev.TURN_FAILED and e.get("kind") == "io" for e in after):
        kinds.discard(ev.TURN_FAILED)  # a failed write: what reached the logs is settled like a crash
    if not isinstance(text, str) or not text or kinds & (ev.TERMINAL_TURN_EVENTS | {ev.MESSAGE_LOGGED}):
        report.orphan = None
        found = unanswered_turn(session, events)
        report.orphan = found if found is not None and found.reason == "orphaned" else None
        return
    turn = _start_turn_number(start)
    since = str(start.get("ts", ""))
    effects, destination = _turn_effects(session, after, since, events[:i])
    candidates = [destination, "ambient"]
    candidates += [str(e.get("effort_id")) for e in after if isinstance(e.get("effort_id"), str)]
    candidates += [e.id for e in session.efforts.open_efforts()]
    candidates = [c for c in dict.fromkeys(candidates) if c == "ambient" or session.efforts.get(c) is not None]
    logged = _find_logged_exchange(session, text, since, candidates)
    if logged is not None:
        # The exchange reached its log; only the end-of-turn records are missing.
        session.state.turn = max(session.state.turn, turn)
        session.log_event(ev.MESSAGE_LOGGED, to=logged, count=2, next_turn=turn, recovered=True)
        session.log_event(ev.TURN_DONE, logged_to=logged, recovered=True)
        where = "the ambient log" if logged == "ambient" else f"effort {logged}"
        report.settled.append(f"Turn {turn} was already logged in {where}; its end was recorded (nothing to retry)")
        return
    if effects:
        # Tools changed efforts, then the process died before the exchange was logged. Log the
        # message where the tools routed it, marked interrupted, as the live path does on failure.
        user_msg = {"role": "user", "content": text, "ts": since or now_iso()}
        reply = {"role": "assistant", "content": "", "ts": now_iso(), "interrupted": True}
        effort = session.efforts.get(destination) if destination != "ambient" else None
        if effort is None:
            session.append_ambient([user_msg, reply])
            destination = "ambient"
        else:
            session.append_effort(effort, [user_msg, reply])
            if effort.is_concluded:
                session.save_manifest()
        session.state.turn = max(session.state.turn, turn)
        session.log_event(ev.MESSAGE_LOGGED, to=destination, count=2, next_turn=turn, recovered=True)
        session.log_event(
            ev.TURN_FAILED,
            error="the process ended after the turn's tools ran",
            kind="interrupted",
            partial="",
            partial_chars=0,
            logged_to=destination,
        )
        report.interrupted = UnansweredTurn(text, turn, "interrupted", effects=effects, logged_to=destination)
        return
    report.orphan = UnansweredTurn(text, turn, "orphaned")


def _logs_written_lately(session: Session, events: list[dict]) -> list:
    """The logs a kill may have torn: the append it cut went to an open effort or one the last
    events name, never to the thousands of logs finished long ago."""
    ids = {e.id for e in session.efforts.open_efforts()}
    ids.update(e["effort_id"] for e in events if isinstance(e.get("effort_id"), str))
    return [session.effort_path(i) for i in sorted(ids) if SLUG_RE.fullmatch(i)]


MAX_PID = 2**31 - 1


def _pid_alive(pid: object) -> bool:
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid <= MAX_PID or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except (OSError, OverflowError):
        return False
    return True


def effects_so_far(events: list[dict]) -> list[str]:
    """What the last turn's tools already did to efforts ("opened", "concluded" …), in order."""
    i = _last_turn_start(events)
    later = [str(e.get("event")) for e in events[i + 1 :]] if i is not None else []
    return list(dict.fromkeys(EFFECT_EVENTS[k] for k in later if k in EFFECT_EVENTS))


def turn_left_open(events: list[dict]) -> bool:
    """The last ``turn_start`` has neither a terminal event nor a logged exchange after it: the
    run that wrote it failed mid-turn, whatever it logged afterwards (a ``session_end`` written
    after a failed write does not make the turn finished)."""
    i = _last_turn_start(events)
    if i is None:
        return False
    later = {e.get("event") for e in events[i + 1 :]}
    return not later & (ev.TERMINAL_TURN_EVENTS | {ev.MESSAGE_LOGGED})


def ended_cleanly(events: list[dict]) -> bool:
    """The last run ended with ``session_end`` — or is still running: a TUI holds the session
    open between turns (it takes the writer lock only per turn), so while its process is alive
    its ``session_start`` without an end is not a crash. (We hold the lock, so it is not
    mid-write.) Either way, a turn left without an end is not clean."""
    if not events:
        return True
    if turn_left_open(events):
        return False
    if events[-1].get("event") == ev.SESSION_END:
        return True
    running: set[int] = set()
    for event in events:
        pid = event.get("pid")
        if not isinstance(pid, int):
            continue
        if event.get("event") == ev.SESSION_START:
            running.add(pid)
        elif event.get("event") == ev.SESSION_END:
            running.discard(pid)
    return any(_pid_alive(pid) for pid in running)


def recover(session: Session) -> RecoveryReport:
    """Reconcile a session opened for writing; cheap when the last run ended cleanly.

    Recovery never blocks the session: if it cannot finish (an event it cannot make sense of,
    a failed write), the report says so and the session is marked *unclean* for this run, so
    its end is not recorded as clean and the next start tries again."""
    report = RecoveryReport()
    try:
        _recover(session, report)
    except (OSError, ValueError, TypeError, KeyError, OverflowError) as exc:
        session.mark_unclean(f"recovery could not finish ({exc.__class__.__name__}: {exc})")
        report.unclean = True
        report.notes.append(
            f"recovery could not finish ({exc.__class__.__name__}: {exc}); the session stays marked unclean "
            "and the next start tries again"
        )
        try:
            session.log_event(ev.SESSION_START, pid=os.getpid(), recovery_failed=str(exc)[:500])
        except OSError:
            pass
    return report


def _recover(session: Session, report: RecoveryReport) -> None:
    events = read_jsonl_tail(session.events.path, EVENT_TAIL)
    report.unclean = not ended_cleanly(events)
    report.notes.extend(session.load_notes)
    session.load_notes.clear()
    state = session.state
    if report.unclean:
        # Torn tails first: the ambient totals are then counted on whole records only.
        remove_unpublished_imports(session.dir / EFFORTS_DIR)
        for path in [session.raw_path, session.events.path, *_logs_written_lately(session, events)]:
            kept = set_torn_tail_aside(path)
            if kept:
                report.torn_files.append(f"{path.relative_to(session.dir)} → {kept}")
    raw_size = file_size(session.raw_path)
    if raw_size != state.ambient_bytes:
        _recount_ambient(session, raw_size)
        report.repaired.append("ambient totals recounted from raw.jsonl")
    if report.acted:
        since = [e for e in events if str(e.get("ts", "")) > (state.saved_at or "")]
        report.events_reconciled = len(since)
        finished = [
            n for e in since if e.get("event") == ev.MESSAGE_LOGGED and (n := event_int(e.get("next_turn"))) is not None
        ]
        if finished and max(finished) > state.turn:
            report.repaired.append(f"turn counter {state.turn} → {max(finished)}")
            state.turn = max(finished)
        if report.unclean:
            _settle_unfinished_turn(session, events, report)
        else:
            orphan = unanswered_turn(session, events)
            report.orphan = orphan if orphan is not None and orphan.reason == "orphaned" else None
        session.save_state()
        session.log_event(
            ev.RECOVERED,
            events_reconciled=report.events_reconciled,
            repaired=report.repaired,
            torn_files=report.torn_files,
            orphan_turn=report.orphan.turn if report.orphan else None,
            interrupted_turn=report.interrupted.turn if report.interrupted else None,
            settled=len(report.settled),
        )
    state.clean_shutdown = False
    session.log_event(ev.SESSION_START, pid=os.getpid())


def _recount_ambient(session: Session, raw_size: int) -> None:
    """``raw.jsonl``'s totals counted again: its file lines, and the tokens of its live chat (without
    withdrawn exchanges and their markers, as a withdrawal counts). What was appended since the
    totals were right is counted alone, unless it withdraws something."""
    state = session.state
    grown = raw_size > state.ambient_bytes > 0
    read = None
    if grown:
        with os.fdopen(open_nofollow(session.raw_path, os.O_RDONLY), "rb") as fh:
            fh.seek(state.ambient_bytes)
            read = _parse_lines(fh.read())
    if read is not None and not any(is_marker(m) for m in read.records):
        state.ambient_lines += read.lines
        state.ambient_tokens += sum(session.counter.count_message(m) for m in read.records if is_message(m))
    else:
        try:
            read = _parse_lines(read_bytes(session.raw_path))
        except FileNotFoundError:
            read = _parse_lines(b"")
        state.ambient_lines = read.lines
        state.ambient_tokens = sum(session.counter.count_message(m) for _n, m in live(read.numbered()) if is_message(m))
    state.ambient_bytes = raw_size
    session.load_ambient_tail()
