"""Forget, for real: a text, an effort or lines of one taken out of every byte of a session.

``forget(directory, request)`` rewrites the session's files so that what is forgotten exists in none
of them: the effort logs that may hold it (found through the search index, then read and verified),
the ambient log, the snapshots, the prompt history and draft, files set aside by a recovery,
``manifest.yaml`` (with what was journaled after it: a flush) and the journal ``events.jsonl``; then
the derived database (the search index with its FTS5 tables, WAL and freed pages) is scrubbed in place
(:func:`scrub_index`), or deleted when it still holds the text, to be rebuilt by the next reader.
What surrounded it stays: a string loses the text (``[forgotten]`` stands in its place), not its
line; a ``summary`` loses the sentences that held it (extractively); forgotten lines of a log become
tombstones (their role and time kept, so every line number others hold stays right); a forgotten
effort loses its log, its entry and its name, not its neighbours.

**Crash-safe.** The work is journaled in ``forget_pending.json`` first, which never holds the text
(a salted hash of it); every file is replaced atomically; ``manifest.yaml`` is written without its
journal mark before ``events.jsonl`` is rewritten (a file without a mark includes everything, true of
the old journal and of the new), so a kill -9 at any point leaves a session that opens, each file in
its old or its new state. Running the same forget again completes it (another one is refused until
then). The forget is recorded as a ``forgotten`` event: its kind, where, when and how many
occurrences — never the text.

The caller holds no session open: :func:`forget` takes the writer lock itself and refuses a
session a TUI has open (that one forgets through its own controller: :func:`forget_locked`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ...atomic_file import atomic_write_bytes, atomic_write_text, fsync_dir
from ...config import Settings
from ...errors import EffortNotFound, InputError, NotFound, Refused
from ..manifest.effort_list import journal_entries
from ..manifest.yaml_file import MARK_RE
from ..search import EffortIndex
from ..search.sync import sync_index
from ..session.lock import LOCK_FILE, OPEN_FILE, SessionLock, open_elsewhere
from ..session.session import EFFORTS_DIR, EVENTS_FILE, MANIFEST_FILE, RAW_FILE
from ..storage import eventlog as ev
from ..storage.derived import DERIVED_FILE, DerivedError, delete_files, derived_path
from ..storage.durable import append_jsonl, read_bytes
from ..storage.eventlog import now_iso
from ._scrub import MARK, Count, Needle, scrub_json, scrub_jsonl, scrub_manifest, scrub_text
from .reader import ReadingSession, SessionReader

PENDING_FILE = "forget_pending.json"
CAPTURES_FILE = "forgotten_captures.txt"  # ``<agent>:<source_id>`` per line: ``watch`` captures them no more
MIN_WHOLE_CHARS = 12  # a forgotten effort's message is taken out of other files where it is a whole value
_UNSPACED = re.compile(r"[\u2e80-\U0002ffff]")  # scripts the index cuts in character pairs: every log is read
_NOT_SCANNED = {LOCK_FILE, OPEN_FILE, PENDING_FILE}


class ForgetKind(StrEnum):
    TEXT = "text"
    EFFORT = "effort"
    LINES = "lines"


@dataclass(frozen=True)
class ForgetRequest:
    """What to forget: a text everywhere, a whole effort, or lines ``first``..``last`` (1-based) of one."""

    kind: ForgetKind
    text: str = ""
    effort_id: str = ""
    first: int = 0
    last: int = 0

    @classmethod
    def of_text(cls, text: str) -> ForgetRequest:
        if not text.strip():
            raise InputError("there is nothing to forget: the text is empty")
        return cls(ForgetKind.TEXT, text=text)

    @classmethod
    def of_effort(cls, effort_id: str) -> ForgetRequest:
        return cls(ForgetKind.EFFORT, effort_id=effort_id)

    @classmethod
    def of_lines(cls, effort_id: str, first: int, last: int) -> ForgetRequest:
        if first < 1 or last < first:
            raise InputError(f"lines {first}-{last}: give a range A-B with 1 <= A <= B")
        return cls(ForgetKind.LINES, effort_id=effort_id, first=first, last=last)

    def secret(self) -> str:
        """What the pending record hashes (the text, or the effort and lines)."""
        return self.text if self.kind is ForgetKind.TEXT else f"{self.effort_id}\0{self.first}\0{self.last}"

    def describe(self) -> str:
        if self.kind is ForgetKind.TEXT:
            return "the text"
        if self.kind is ForgetKind.EFFORT:
            return f"effort {self.effort_id}"
        return f"lines {self.first}-{self.last} of effort {self.effort_id}"


@dataclass
class ForgetReport:
    """What a forget did (or, planned, would do)."""

    occurrences: int = 0
    files: list[str] = field(default_factory=list)  # session-relative paths rewritten or removed
    resumed: bool = False  # an interrupted forget of the same request was completed
    effort_removed: bool = False

    def question(self, request: ForgetRequest) -> str:
        """What a forget would do, as the question to confirm it."""
        if not self.occurrences and not self.files:
            return self.line(request)
        where = f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}"
        return f"Forget {request.describe()}: {self.occurrences} occurrence(s) in {where}? This cannot be undone."

    def line(self, request: ForgetRequest) -> str:
        if not self.occurrences and not self.files:
            return f"nothing to forget: {request.describe()} is in no file of the session"
        where = f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}"
        done = f"forgot {request.describe()}: {self.occurrences} occurrence(s) in {where}"
        return done + (" (an interrupted forget completed)" if self.resumed else "")


def forget(directory: Path, request: ForgetRequest, *, dry_run: bool = False) -> ForgetReport:
    """Forget ``request`` in the session at ``directory`` (``dry_run``: count what would go, change nothing).

    Raises:
        NotFound: no session there.
        EffortNotFound: the effort named is not in the session.
        InputError: lines the log does not have.
        Refused: the session is open in a TUI or another process holds its writer lock, or an
            earlier forget did not finish (run that one again first).
        StoreError, OSError: a file cannot be read or written (run the same forget again).
    """
    directory = Path(directory)
    if not (directory / MANIFEST_FILE).exists() and not (directory / EVENTS_FILE).exists():
        raise NotFound(f"no session at {directory}")
    if open_elsewhere(directory):
        raise Refused(f"session {directory} is open in ccm-tui: forget there (/forget), or close it and try again")
    lock = SessionLock(directory)
    if not lock.try_acquire():
        who = lock.holder_pid()
        raise Refused(
            f"session {directory} is in use by {f'pid {who}' if who else 'another process'}; try again when it is done"
        )
    try:
        return forget_locked(directory, request, dry_run=dry_run)
    finally:
        lock.release()


def pending_forget(directory: Path) -> dict[str, Any] | None:
    """The record of a forget that did not finish (None: none)."""
    try:
        record = json.loads(read_bytes(Path(directory) / PENDING_FILE))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def forget_locked(directory: Path, request: ForgetRequest, *, dry_run: bool = False) -> ForgetReport:
    """:func:`forget` for a caller that holds the session's writer lock (and reloads what it holds after).

    Raises: as :func:`forget`.
    """
    report = ForgetReport()
    pending = pending_forget(directory)
    if pending is not None:
        if not _same(pending, request):
            raise Refused(
                f"an earlier forget ({pending.get('kind')}, started {pending.get('started')}) did not finish: "
                "run that same forget again to complete it first"
            )
        report.resumed = True
    plan = _Plan.make(directory, request, pending is not None)
    if dry_run:
        plan.run(report, write=False)
        return report
    if pending is None:
        _write_pending(directory, request)
    plan.run(report, write=True)
    _record(directory, request, report)
    scrub_index(directory, plan.needle)
    (directory / PENDING_FILE).unlink(missing_ok=True)
    fsync_dir(directory)
    return report


# ---------------------------------------------------------------------- the index


def scrub_index(directory: Path, needle: Needle) -> None:
    """Bring ``derived.sqlite`` in step with the scrubbed files without rebuilding it: its sync, with
    ``secure_delete`` on, re-indexes the rewritten logs (their old rows zeroed where they lay), takes
    in the manifest and drops a forgotten effort; FTS5's segments are merged into one (the forgotten
    words leave its vocabulary), the WAL is checkpointed and truncated. When the file still holds the
    text after that (a page freed before, a foreign file), it is deleted: the next reader rebuilds it."""
    path = derived_path(directory)
    if path.exists():
        try:
            _scrub_index(directory)
        except (DerivedError, sqlite3.Error, OSError):
            pass  # (checked below: a file that still holds the text is deleted)
        if _holds(path, needle):
            delete_files(path)
    fsync_dir(directory)


def _scrub_index(directory: Path) -> None:
    with ReadingSession.open(directory, readonly=True) as session:
        derived = session.derived
        if derived is None or derived.path != derived_path(directory):
            return
        index = EffortIndex(derived)
        try:
            derived.conn.execute("PRAGMA secure_delete = ON")
            sync_index(index, session)

            def merge() -> None:
                conn = derived.conn
                conn.execute("PRAGMA secure_delete = ON")
                with derived.write_txn():
                    for table in ("msg_fts", "meta_fts"):
                        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

            derived.run(merge)
        finally:
            index.close()


def _holds(path: Path, needle: Needle) -> bool:
    """Whether the database's files hold the text (or a forgotten whole string) in any layout."""
    wanted = [v for v in needle.variants() if v]
    wanted += [w.encode("utf-8") for w in needle.whole if len(w) >= MIN_WHOLE_CHARS]
    if needle.text:
        wanted.append(needle.text.lower().encode("utf-8"))
    if not wanted:
        return False
    for suffix in ("", "-wal", "-journal"):
        try:
            data = Path(f"{path}{suffix}").read_bytes()
        except OSError:
            continue
        if any(w in data for w in wanted):
            return True
    return False


# ---------------------------------------------------------------------- the plan


@dataclass
class _Plan:
    directory: Path
    request: ForgetRequest
    needle: Needle
    logs: list[Path]  # effort logs to scrub, in order
    others: list[Path]  # every other file but the manifest and the journal
    log_edit: Callable[[int, dict[str, Any]], dict[str, Any] | None] | None = None
    drop_id: str | None = None  # the manifest entry (and journal entries) to drop
    capture: str | None = None  # a captured agent session's ``<agent>:<source_id>`` (watch skips it after)

    @classmethod
    def make(cls, directory: Path, request: ForgetRequest, resuming: bool) -> _Plan:
        others = _other_files(directory)
        if request.kind is ForgetKind.TEXT:
            needle = Needle(text=request.text)
            return cls(directory, request, needle, _candidate_logs(directory, request.text), others)
        log = directory / EFFORTS_DIR / f"{request.effort_id}.jsonl"
        if request.effort_id in ("", ".", "..") or "/" in request.effort_id:
            raise EffortNotFound(f"no effort {request.effort_id!r} in this session")
        entry = _manifest_entry(directory, request.effort_id)
        if entry is None and not log.exists() and not (resuming and request.kind is ForgetKind.EFFORT):
            raise EffortNotFound(f"no effort {request.effort_id!r} in this session")
        records = _records(log)
        if request.kind is ForgetKind.LINES:
            if request.last > len(records):
                raise InputError(
                    f"effort {request.effort_id} has {len(records)} line(s): lines {request.first}-{request.last} "
                    "are not all there"
                )
            chosen = records[request.first - 1 : request.last]
            whole = frozenset(_contents(chosen))
            edit = _tombstone(request.first, request.last)
            return cls(directory, request, Needle(whole=whole), [log], others, log_edit=edit)
        own = set(_contents(records))
        for key in ("summary", "name"):
            value = (entry or {}).get(key)
            if isinstance(value, str) and value.strip():
                own.add(value)
        own.add(request.effort_id)
        needle = Needle(whole=frozenset(own), drop_keys=frozenset({request.effort_id}))
        plan = cls(directory, request, needle, [], others, drop_id=request.effort_id)
        plan.capture = _capture_line(entry)
        return plan

    def run(self, report: ForgetReport, *, write: bool) -> None:
        needle, edit = self.needle, self.log_edit
        for path in self.logs:
            self._file(path, report, write, lambda d, c: scrub_jsonl(d, needle, c, edit))
        for path in self.others:
            self._file(path, report, write, _scrubber(path, self.needle))
        if write and self.capture:
            _add_capture(self.directory, self.capture)
        manifest = self.directory / MANIFEST_FILE
        self._file(manifest, report, write, self._manifest)
        events = self.directory / EVENTS_FILE
        journal_edit = _without_entry(self.drop_id) if self.drop_id else None
        self._file(events, report, write, lambda d, c: scrub_jsonl(d, self.needle, c, journal_edit))
        if self.request.kind is ForgetKind.EFFORT:
            self._remove_logs(report, write)

    def _manifest(self, data: bytes, count: Count) -> bytes | None:
        """The manifest scrubbed, with what was journaled after its mark taken in (written without a
        mark, it must include everything)."""
        match = MARK_RE.match(data)
        later = journal_entries(self.directory / EVENTS_FILE, int(match.group(1)))[0] if match else []
        return scrub_manifest(data, self.needle, count, self.drop_id, later)

    def _file(
        self, path: Path, report: ForgetReport, write: bool, scrub: Callable[[bytes, Count], bytes | None]
    ) -> None:
        try:
            data = read_bytes(path)
        except FileNotFoundError:
            return
        count = Count()
        new = scrub(data, count)
        if new is None:
            return
        report.occurrences += count.occurrences
        if count.occurrences:
            report.files.append(str(path.relative_to(self.directory)))
        if write:
            atomic_write_bytes(path, new)

    def _remove_logs(self, report: ForgetReport, write: bool) -> None:
        folder = self.directory / EFFORTS_DIR
        name = f"{self.request.effort_id}.jsonl"
        try:
            paths = [p for p in folder.iterdir() if p.name == name or p.name.startswith(name + ".")]
        except OSError:
            paths = []
        for path in paths:
            report.files.append(str(path.relative_to(self.directory)))
            report.effort_removed = True
            if write:
                path.unlink(missing_ok=True)
        if write and paths:
            fsync_dir(folder)


def _scrubber(path: Path, needle: Needle) -> Callable[[bytes, Count], bytes | None]:
    name = path.name
    if ".jsonl" in name:
        return lambda d, c: scrub_jsonl(d, needle, c)
    if name.endswith(".json"):
        return lambda d, c: scrub_json(d, needle, c)
    if name.startswith(MANIFEST_FILE) and name != MANIFEST_FILE:  # a set-aside or temporary manifest
        return lambda d, c: scrub_manifest(d, needle, c) if _yaml_ok(d) else scrub_text(d, needle, c)
    return lambda d, c: scrub_text(d, needle, c)


def _yaml_ok(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return data.lstrip().startswith((b"#", b"efforts"))


def _other_files(directory: Path) -> list[Path]:
    """Every regular file of the session but the logs, the manifest, the journal and the derived
    database (links never followed): the ambient log, snapshots, histories, files set aside."""
    skip = {MANIFEST_FILE, EVENTS_FILE, *_NOT_SCANNED}
    derived = {DERIVED_FILE + s for s in ("", "-wal", "-shm", "-journal")}
    found: list[Path] = []
    for root, dirs, files in os.walk(directory, followlinks=False):
        here = Path(root)
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
        logs = here == directory / EFFORTS_DIR
        for name in sorted(files):
            if (logs and name.endswith(".jsonl")) or (here == directory and (name in skip or name in derived)):
                continue  # (the logs: the candidates only; tested by name first: 100,000 logs are never stat'ed)
            path = here / name
            if not path.is_symlink() and path.is_file():
                found.append(path)
    raw = directory / RAW_FILE
    found.sort(key=lambda p: (p != raw, str(p)))
    return found


def _candidate_logs(directory: Path, text: str) -> list[Path]:
    """The effort logs that may hold ``text``: those the index finds (brought up to date first) and
    any log it does not know; every log when the text has no word the index can look up."""
    folder = directory / EFFORTS_DIR
    try:
        on_disk = {p.name[: -len(".jsonl")]: p for p in folder.iterdir() if p.name.endswith(".jsonl")}
    except OSError:
        return []
    words = re.findall(r"\w+", text)
    if not words or _UNSPACED.search(text):
        return sorted(on_disk.values())
    try:
        with SessionReader(directory, Settings()) as reader:
            found = reader.logs_holding(words, set(on_disk))
    except (DerivedError, OSError):
        return sorted(on_disk.values())
    return sorted(on_disk[i] for i in found)


def _records(path: Path) -> list[Any]:
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return []
    records: list[Any] = []
    for line in data.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append(None)
    return records


def _contents(records: list[Any]) -> list[str]:
    return [
        r["content"]
        for r in records
        if isinstance(r, dict) and isinstance(r.get("content"), str) and len(r["content"]) >= MIN_WHOLE_CHARS
    ]


def _tombstone(first: int, last: int) -> Callable[[int, dict[str, Any]], dict[str, Any] | None]:
    """A forgotten line keeps its place (every line number stays right) and loses its words."""

    def edit(number: int, record: dict[str, Any]) -> dict[str, Any] | None:
        if not first <= number <= last or record.get("forgotten") is True or "content" not in record:
            return None
        kept: dict[str, Any] = {k: record[k] for k in ("role", "ts") if k in record}
        return {**kept, "content": MARK, "forgotten": True}

    return edit


def _without_entry(effort_id: str) -> Callable[[int, dict[str, Any]], dict[str, Any] | None]:
    def edit(_number: int, record: dict[str, Any]) -> dict[str, Any] | None:
        entries = record.get("entries")
        if record.get("event") != ev.EFFORTS_SAVED or not isinstance(entries, list):
            return None
        kept = [e for e in entries if not (isinstance(e, dict) and e.get("id") == effort_id)]
        return {**record, "entries": kept} if len(kept) != len(entries) else None

    return edit


def _manifest_entry(directory: Path, effort_id: str) -> dict[str, Any] | None:
    from ..manifest.yaml_file import MARK_RE, cut, parse_block, read_whole

    try:
        data = read_bytes(directory / MANIFEST_FILE)
    except FileNotFoundError:
        return None
    match = MARK_RE.match(data)
    head, blocks = cut(data, match.end() if match else 0)
    key = effort_id.encode("utf-8")
    entries = (
        [parse_block(b, directory / MANIFEST_FILE) for b in blocks if key in b]
        if head is not None
        else read_whole(data, directory / MANIFEST_FILE)
    )
    return next((e for e in entries if isinstance(e, dict) and e.get("id") == effort_id), None)


def _capture_line(entry: dict[str, Any] | None) -> str | None:
    capture = (entry or {}).get("capture")
    if isinstance(capture, dict) and capture.get("agent") and capture.get("source_id"):
        return f"{capture['agent']}:{capture['source_id']}"
    return None


def _add_capture(directory: Path, line: str) -> None:
    path = directory / CAPTURES_FILE
    try:
        known = read_bytes(path).decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        known = []
    if line not in known:
        atomic_write_text(path, "".join(f"{k}\n" for k in [*known, line]))


# ---------------------------------------------------------------------- the pending record


def _digest(salt: str, request: ForgetRequest) -> str:
    return hmac.new(bytes.fromhex(salt), request.secret().encode("utf-8"), hashlib.sha256).hexdigest()


def _write_pending(directory: Path, request: ForgetRequest) -> None:
    salt = secrets.token_hex(16)
    record = {"kind": str(request.kind), "salt": salt, "digest": _digest(salt, request), "started": now_iso()}
    atomic_write_text(directory / PENDING_FILE, json.dumps(record) + "\n")


def _same(pending: dict[str, Any], request: ForgetRequest) -> bool:
    salt = pending.get("salt")
    if pending.get("kind") != str(request.kind) or not isinstance(salt, str):
        return False
    try:
        return hmac.compare_digest(_digest(salt, request), str(pending.get("digest")))
    except ValueError:
        return False


def _record(directory: Path, request: ForgetRequest, report: ForgetReport) -> None:
    """The ``forgotten`` event: kind, where, when, how many — never the text (nor a forgotten effort's id)."""
    try:
        turn = int(json.loads(read_bytes(directory / "session_state.json")).get("turn", 0))
    except (OSError, ValueError, TypeError, AttributeError):
        turn = 0
    where: dict[str, Any] = {"files": len(report.files)}
    if request.kind is ForgetKind.LINES:
        where |= {"effort_id": request.effort_id, "lines": [request.first, request.last]}
    event = {
        "event": ev.FORGOTTEN,
        "turn": turn,
        "ts": now_iso(),
        "kind": str(request.kind),
        "where": where,
        "occurrences": report.occurrences,
    }
    append_jsonl(directory / EVENTS_FILE, [event])
