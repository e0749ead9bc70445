"""Forking a session at a turn: a new session whose files hold what the original held after that turn.

The original is only read (under its writer lock, so no turn writes meanwhile) and never changed.
The fork is built in ``sessions/.deleting/`` (where a kill leaves it to be swept, never listed) and
moved onto an exclusive claim of its name in one ``os.rename``, so it appears whole or not at all.

What it holds, turn ``N`` being the last kept:

* ``events.jsonl``: the original's lines before the ``turn_start`` of turn ``N + 1``, then
  ``session_forked`` (from which session, at which turn) and ``session_end``;
* the logs (``raw.jsonl``, ``efforts/<id>.jsonl``): their lines written before that ``turn_start``
  (a log line carries its time; lines are appended in time order), for the efforts that existed then;
* ``manifest.yaml``: no entry of its own but the efforts no journal entry describes (sessions older
  than the journal); the kept ``efforts_saved`` events, applied on top when it is read, give every
  effort its state as it was after turn ``N``;
* ``session_state.json``: the turn counter ``N``, the figures of turns up to ``N`` (the ambient totals
  are recounted on the first start); ``expanded.json``: the bookkeeping of the efforts kept.

Not carried over: the search index (rebuilt from the record on first use), the prompt history and the
draft, the archive mark.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...atomic_file import fsync_dir
from ...errors import CcmError
from ..manifest.effort import SLUG_RE
from ..manifest.yaml_file import read_whole, write_manifest
from ..storage import eventlog as ev
from ..storage.durable import atomic_write_json, read_bytes
from ..storage.eventlog import now_iso
from .lock import SessionLock
from .session import EFFORTS_DIR, EVENTS_FILE, EXPANDED_FILE, MANIFEST_FILE, RAW_FILE, STATE_FILE
from .sessions_folder import (
    DELETING_DIR,
    SessionCatalogError,
    SessionExists,
    _existing,
    _remove_tree,
    check_name,
    claim,
    held,
)


@dataclass(frozen=True)
class ForkReport:
    path: Path
    turn: int  # the last turn the fork holds
    efforts: int  # efforts it holds
    lines: int  # log lines it holds (every log)


def _lines(path: Path) -> list[bytes]:
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return []
    end = data.rfind(b"\n") + 1  # a torn last line (a write a kill cut) is not part of the record
    return [line + b"\n" for line in data[:end].split(b"\n")[:-1]]


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _cut_events(lines: list[bytes], turn: int) -> tuple[list[bytes], str | None, int]:
    """The events up to turn ``turn``'s end, the time the next turn started (None: nothing cut) and
    the last turn the log shows finished."""
    last = 0
    for index, line in enumerate(lines):
        record = _record(line)
        if record is None:
            continue
        if record.get("event") == ev.TURN_START:
            starts = _int(record.get("next_turn"))
            if starts is None:
                starts = (_int(record.get("turn")) or 0) + 1
            if starts > turn:
                ts = record.get("ts")
                return lines[:index], ts if isinstance(ts, str) else now_iso(), last
        elif record.get("event") in ev.TERMINAL_TURN_EVENTS or record.get("event") == ev.MESSAGE_LOGGED:
            last = max(last, _int(record.get("turn")) or 0)
    return lines, None, last


def _cut_log(lines: list[bytes], before: str | None) -> list[bytes]:
    if before is None:
        return lines
    for index, line in enumerate(lines):
        record = _record(line)
        ts = record.get("ts") if record else None
        if isinstance(ts, str) and ts >= before:
            return lines[:index]
    return lines


def _journaled(lines: list[bytes]) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for line in lines:
        record = _record(line)
        if record is None or record.get("event") != ev.EFFORTS_SAVED:
            continue
        entries = record.get("entries")
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                latest.pop(entry["id"], None)
                latest[entry["id"]] = entry
    return latest


def _manifest_entries(path: Path) -> list[dict[str, Any]]:
    """The entries ``manifest.yaml`` itself holds (the journal after it left out); unreadable: none."""
    try:
        entries = read_whole(read_bytes(path), path)
    except (OSError, CcmError):  # a broken manifest: the journal alone makes the fork's list
        return []
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]


def fork_session(root: Path, name: str, new: str, turn: int | None = None) -> ForkReport:
    """Make the session ``new`` from ``name`` as it was after turn ``turn`` (None: all of it).

    Raises:
        SessionMissing: no session ``name``.
        SessionExists: ``new`` is taken.
        SessionInUse: another process is writing to ``name`` (try again when its turn is done).
        SessionCatalogError: ``turn`` is beyond what the session holds, or a file cannot be written.
    """
    source = _existing(root, name)
    clean = check_name(new)
    target = root / clean
    if target.exists() or target.is_symlink():
        raise SessionExists(clean)
    with held(source, name, "fork"):
        events = _lines(source / EVENTS_FILE)
        kept_events, before, last = _cut_events(events, turn if turn is not None else 1 << 62)
        if turn is not None and (turn < 0 or turn > last):
            raise SessionCatalogError(f"session {name!r} holds turns 0 to {last}: there is no turn {turn} to fork at")
        at = last if turn is None else turn
        journal = _journaled(kept_events)
        legacy = [
            e
            for e in _manifest_entries(source / MANIFEST_FILE)
            if e["id"] not in journal and (before is None or str(e.get("created") or "") < before)
        ]
        ids = [e["id"] for e in legacy] + list(journal)
        trash = root / DELETING_DIR
        trash.mkdir(exist_ok=True)
        work = trash / f"{os.getpid()}-{time.monotonic_ns()}-fork"
        work.mkdir()
        try:
            hold = SessionLock(work)  # a sweep leaves a fork being built alone
            hold.try_acquire()
            try:
                (work / EFFORTS_DIR).mkdir()
                lines = 0
                for relative in [RAW_FILE, *(f"{EFFORTS_DIR}/{i}.jsonl" for i in ids if SLUG_RE.fullmatch(i))]:
                    kept = _cut_log(_lines(source / relative), before)
                    if kept or relative == RAW_FILE:
                        _write(work / relative, kept)
                        lines += len(kept)
                write_manifest(work / MANIFEST_FILE, legacy, mark=0)  # the whole journal applies on top
                _write_state(source, work, at, set(ids), {**{e["id"]: e for e in legacy}, **journal})
                ending = [
                    {"event": ev.SESSION_FORKED, "turn": at, "ts": now_iso(), "from": name, "at_turn": at},
                    {"event": ev.SESSION_END, "turn": at, "ts": now_iso(), "pid": os.getpid()},
                ]
                _write(work / EVENTS_FILE, kept_events + [_line(e) for e in ending])
                fsync_dir(work / EFFORTS_DIR)
                fsync_dir(work)
            finally:
                hold.release()
                (work / ".lock").unlink(missing_ok=True)
            claim(target, clean)
            os.rename(work, target)
        except BaseException:
            _remove_tree(work)  # (in .deleting/: a kill leaves it to the next sweep)
            raise
        fsync_dir(root)
        try:
            trash.rmdir()
        except OSError:
            pass  # another delete or fork is using it
    return ForkReport(path=target, turn=at, efforts=len(ids), lines=lines)


def _line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _write(path: Path, lines: list[bytes]) -> None:
    with open(path, "xb") as fh:
        fh.write(b"".join(lines))
        fh.flush()
        os.fsync(fh.fileno())


def _json_object(path: Path) -> dict[str, Any]:
    """A snapshot's fields (none when it is missing or not a JSON object: the first start rebuilds it)."""
    try:
        value = json.loads(read_bytes(path))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _write_state(source: Path, work: Path, turn: int, ids: set[str], entries: dict[str, dict[str, Any]]) -> None:
    state = _json_object(source / STATE_FILE)
    state["turn"] = turn
    history = state.get("history")
    if isinstance(history, list):
        state["history"] = [h for h in history if isinstance(h, dict) and (_int(h.get("turn")) or 0) <= turn]
    state["ambient_bytes"] = -1  # recounted from the cut raw.jsonl on the first start
    state["clean_shutdown"] = True
    if (_int(state.get("last_effort_tool_turn")) or 0) > turn:
        state["last_effort_tool_turn"] = turn
    atomic_write_json(work / STATE_FILE, state)
    view = _json_object(source / EXPANDED_FILE)
    concluded = {i for i, e in entries.items() if e.get("status") == "concluded"}
    out: dict[str, dict[str, int]] = {}
    for key in ("expanded", "summaries", "last_referenced"):
        value = view.get(key)
        given = value if isinstance(value, dict) else {}
        keep = concluded if key != "last_referenced" else ids
        out[key] = {k: min(v, turn) for k, v in given.items() if k in keep and _int(v) is not None}
    out["expanded"] = {}  # an expansion is a moment's view: the fork starts with none
    for effort_id in concluded - set(out["summaries"]):
        out["summaries"][effort_id] = turn  # concluded after the original's last save of the view: in memory
    atomic_write_json(work / EXPANDED_FILE, out)
