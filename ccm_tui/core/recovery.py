"""Start-up recovery: reconcile snapshots with the event log after an unclean end.

A clean run ends with ``session_end`` and ``clean_shutdown: true`` in
``session_state.json``. Otherwise (kill -9, power loss, a crash) recovery:

* recounts the ambient totals from ``raw.jsonl`` when the snapshot lags it;
* advances the turn counter to the last turn the event log says finished;
* sets torn last lines of JSONL files aside (the unacknowledged fragment is
  kept in ``<file>.torn-<ts>``; the log is cut back to its last whole record);
* finds an *orphaned turn* — a ``turn_start`` with no terminal event — whose
  text can be re-sent (TUI prompt, ``ccm-tui send --retry-orphan``);
* logs ``recovered`` with what it did and returns a report for the user.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from . import eventlog as ev
from .session import EFFORTS_DIR, Session
from .store import _parse_lines, file_size, read_jsonl_tail

EVENT_TAIL = 5000


@dataclass
class UnansweredTurn:
    text: str
    turn: int
    reason: str  # "orphaned" (no end recorded) or "failed"
    error: str | None = None


@dataclass
class RecoveryReport:
    unclean: bool = False
    events_reconciled: int = 0
    repaired: list[str] = field(default_factory=list)
    torn_files: list[str] = field(default_factory=list)
    orphan: UnansweredTurn | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.unclean or bool(self.repaired or self.torn_files or self.orphan or self.notes)

    def lines(self) -> list[str]:
        out = ["RECOVERY — the last run did not end cleanly" if self.unclean else "RECOVERY"]
        out.append(f"Events reconciled: {self.events_reconciled}")
        for item in self.repaired:
            out.append(f"Repaired: {item}")
        for item in self.torn_files:
            out.append(f"Torn last line set aside: {item}")
        for note in self.notes:
            out.append(f"Note: {note}")
        if self.orphan:
            preview = " ".join(self.orphan.text.split())[:80]
            out.append(f'Orphaned turn {self.orphan.turn}: "{preview}" got no reply — it can be retried')
        else:
            out.append("Orphaned turns: 0")
        return out

    def one_line(self) -> str:
        return " · ".join(self.lines())


def unanswered_turn(session: Session, events: list[dict] | None = None) -> UnansweredTurn | None:
    """The last user message that started a turn which never finished (or failed)."""
    events = events if events is not None else read_jsonl_tail(session.events.path, EVENT_TAIL)
    for i in range(len(events) - 1, -1, -1):
        event = events[i]
        if event.get("event") != ev.TURN_START:
            continue
        later = [e.get("event") for e in events[i + 1 :]]
        text = event.get("user")
        if not isinstance(text, str) or not text:
            return None
        turn = int(event.get("next_turn") or event.get("turn", 0) + 1)
        if ev.TERMINAL_TURN_EVENTS.intersection(later) - {ev.TURN_FAILED} or ev.MESSAGE_LOGGED in later:
            return None  # answered (or its exchange was logged before the process ended)
        if ev.TURN_FAILED in later:
            failed = next(e for e in events[i + 1 :] if e.get("event") == ev.TURN_FAILED)
            return UnansweredTurn(text, turn, "failed", failed.get("error"))
        return UnansweredTurn(text, turn, "orphaned")
    return None


def _set_torn_tail_aside(path) -> str | None:
    """A crash mid-append leaves a last line without its newline: a record that was never
    acknowledged. Keep its bytes in ``<file>.torn-<ts>`` and cut the file back to its last
    complete line, so the log holds only whole records. Returns the name of the kept file."""
    try:
        with open(path, "r+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return None
            fh.seek(max(0, size - 65536))
            tail = fh.read()
            if tail.endswith(b"\n"):
                return None
            cut = tail.rfind(b"\n")
            if cut < 0 and size > len(tail):
                return None  # a single enormous torn line: leave it, readers tolerate it
            keep_to = size - len(tail) + cut + 1
            fragment = tail[cut + 1 :]
            aside = path.with_name(f"{path.name}.torn-{time.strftime('%Y%m%dT%H%M%S')}")
            with open(aside, "ab") as out:
                out.write(fragment)
                out.flush()
                os.fsync(out.fileno())
            fh.truncate(keep_to)
            fh.flush()
            os.fsync(fh.fileno())
            return aside.name
    except OSError:
        return None


def _pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def ended_cleanly(events: list[dict]) -> bool:
    """The last run ended with ``session_end`` — or is still running: a TUI holds the session
    open between turns (it takes the writer lock only per turn), so while its process is alive
    its ``session_start`` without an end is not a crash. (We hold the lock, so it is not
    mid-write.)"""
    if not events or events[-1].get("event") == ev.SESSION_END:
        return True
    running: set[object] = set()
    for event in events:
        if event.get("event") == ev.SESSION_START:
            running.add(event.get("pid"))
        elif event.get("event") == ev.SESSION_END:
            running.discard(event.get("pid"))
    return any(_pid_alive(pid) for pid in running)


def recover(session: Session) -> RecoveryReport:
    """Reconcile a session opened for writing; cheap when the last run ended cleanly."""
    events = read_jsonl_tail(session.events.path, EVENT_TAIL)
    report = RecoveryReport(unclean=not ended_cleanly(events))
    report.notes.extend(session.load_notes)
    session.load_notes.clear()
    state = session.state
    if report.unclean:
        # Torn tails first: the ambient totals are then counted on whole records only.
        for path in [session.raw_path, session.events.path, *sorted((session.dir / EFFORTS_DIR).glob("*.jsonl"))]:
            kept = _set_torn_tail_aside(path)
            if kept:
                report.torn_files.append(f"{path.relative_to(session.dir)} → {kept}")
    raw_size = file_size(session.raw_path)
    if raw_size != state.ambient_bytes:
        _recount_ambient(session, raw_size)
        report.repaired.append("ambient totals recounted from raw.jsonl")
    if report.changed:
        since = [e for e in events if str(e.get("ts", "")) > (state.saved_at or "")]
        report.events_reconciled = len(since)
        finished = [int(e.get("next_turn") or 0) for e in since if e.get("event") == ev.MESSAGE_LOGGED]
        if finished and max(finished) > state.turn:
            report.repaired.append(f"turn counter {state.turn} → {max(finished)}")
            state.turn = max(finished)
        orphan = unanswered_turn(session, events)
        report.orphan = orphan if orphan is not None and orphan.reason == "orphaned" else None
        session.save_state()
        session.log_event(
            ev.RECOVERED,
            events_reconciled=report.events_reconciled,
            repaired=report.repaired,
            torn_files=report.torn_files,
            orphan_turn=report.orphan.turn if report.orphan else None,
        )
    state.clean_shutdown = False
    session.log_event(ev.SESSION_START, pid=os.getpid())
    return report


def _recount_ambient(session: Session, raw_size: int) -> None:
    state = session.state
    if raw_size > state.ambient_bytes and state.ambient_bytes > 0:
        with open(session.raw_path, "rb") as fh:
            fh.seek(state.ambient_bytes)
            tail = fh.read()
        records = _parse_lines(tail).records
        state.ambient_messages += len(records)
        state.ambient_tokens += sum(session.counter.count_message(m) for m in records if isinstance(m, dict))
    else:
        with open(session.raw_path, "rb") as fh:
            records = _parse_lines(fh.read()).records
        state.ambient_messages = len(records)
        state.ambient_tokens = sum(session.counter.count_message(m) for m in records)
    state.ambient_bytes = raw_size
    session._load_ambient_tail()
