"""A session directory opened for use: files, in-memory state, the writer lock.

Layout (a contract: outside tools read these files; see the README, Configuration)::

    raw.jsonl            ambient log, append-only
    manifest.yaml        effort index
    efforts/<id>.jsonl   one raw log per effort, append-only
    expanded.json        expansion view state + reference bookkeeping
    session_state.json   turn counter and other small state
    events.jsonl         append-only event log

Start-up reads only what the working context needs: the manifest, the small
state files, the tail of the ambient log and the raw logs of open efforts.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...atomic_file import fsync_dir
from ..manifest.effort import CONCLUDED, OPEN, Effort
from ..manifest.effort_list import EffortList, file_stamp
from ..storage import eventlog as ev
from ..storage.derived import IN_MEMORY, DerivedDB, DerivedError
from ..storage.durable import (
    StoreError,
    append_jsonl,
    atomic_write_json,
    count_lines,
    file_size,
    is_message,
    json_text,
    read_bytes,
    read_jsonl,
    read_jsonl_tail_numbered,
    set_aside,
)
from ..storage.eventlog import EventLog, now_iso
from ..text.tokens import TokenCounter
from ._no_symlinks import refuse_links
from .lock import LOCK_FILE, SessionLock, SessionLocked
from .snapshots import SessionState, ViewState, migrated
from .withdrawn import live

if TYPE_CHECKING:
    from .withdrawn import IndexedWithdrawals

RAW_FILE = "raw.jsonl"
MANIFEST_FILE = "manifest.yaml"
EFFORTS_DIR = "efforts"
EXPANDED_FILE = "expanded.json"
STATE_FILE = "session_state.json"
EVENTS_FILE = "events.jsonl"
READER_WAIT = 1.0  # seconds a reader waits for another process's write to the derived rows (then: as they are)
OPEN_LOCK_WAIT = 2.0  # seconds an open waits for another process's writer lock (then: SessionLocked)


class Session:
    """The files of one session plus the in-memory state a turn needs."""

    open_logs = True  # read the open efforts' logs on load (a reader that builds no context does not)
    efforts: EffortList  # set by load()

    def __init__(
        self,
        directory: Path,
        *,
        ambient_window: int = 10,
        readonly: bool = False,
        counter: TokenCounter | None = None,
    ) -> None:
        self.dir = Path(directory)
        self.counter = counter or TokenCounter()
        self.readonly = readonly
        self.configured_ambient_window = ambient_window
        self.lock = SessionLock(self.dir)
        self.events = EventLog(self.dir / EVENTS_FILE)
        self.derived: DerivedDB | None = None  # derived.sqlite: the effort rows and the search index (load opens it)
        self.state = SessionState()
        self.view = ViewState()
        self.load_notes: list[str] = []
        self._logs: dict[str, list[dict[str, Any]]] = {}
        self._log_lines: dict[str, int] = {}  # each read log's file lines, withdrawn ones and their markers too
        self._ambient: deque[tuple[int, dict[str, Any]]] = deque()  # (raw.jsonl line, message)
        self.indexed: IndexedWithdrawals | None = None  # the search index, when the engine has one (withdrawn.py)
        self._seen_events_size = 0
        self._snapshots_written: dict[str, str] = {}  # what save_state/save_view last wrote (to skip no-ops)
        self.unclean_reason: str | None = None  # set by a failed write or recovery: never end "clean"
        self.generation = 0  # bumped by every (re)load, so caches built on the efforts know to rebuild
        self.migrated_from: int | None = None  # the schema of an older session brought up to date on load

    # ------------------------------------------------------------------ paths
    @property
    def raw_path(self) -> Path:
        return self.dir / RAW_FILE

    def effort_path(self, effort_id: str) -> Path:
        return self.dir / EFFORTS_DIR / f"{effort_id}.jsonl"

    # -------------------------------------------------------------- lifecycle
    @classmethod
    def open(
        cls,
        directory: Path,
        *,
        ambient_window: int = 10,
        readonly: bool = False,
        lock_wait: float = OPEN_LOCK_WAIT,
        hold_lock: bool = True,
        counter: TokenCounter | None = None,
        on_lock_wait: Callable[[int | None, float], None] | None = None,
    ) -> Session:
        """Open a session. Writers hold the lock for the session's lifetime (``send``) or,
        with ``hold_lock=False`` (the TUI), take it around each operation via :meth:`writing`."""
        session = cls(directory, ambient_window=ambient_window, readonly=readonly, counter=counter)
        session.lock.on_wait = on_lock_wait
        if not readonly:
            session.dir.mkdir(parents=True, exist_ok=True)
            session.refuse_symlinks(logs=False)
            (session.dir / EFFORTS_DIR).mkdir(exist_ok=True)
            session.lock.acquire(wait=lock_wait)
        elif not session.dir.is_dir():
            raise StoreError(f"no session at {session.dir}")
        else:  # a reader: its reads of effort logs refuse links themselves (O_NOFOLLOW)
            session.refuse_symlinks(logs=False)
        try:
            session.load()
            if not readonly:  # a writer appends to the logs: none may lead out of the session
                session.refuse_symlinks()
        except BaseException:  # (no descriptor left, a bad file …: a failed open keeps nothing open)
            session.lock.release()
            if session.derived is not None:
                session.derived.close()
            raise
        session._seen_events_size = file_size(session.events.path)
        if not readonly and not hold_lock:
            session.lock.release()
        return session

    def refuse_symlinks(self, *, logs: bool = True) -> None:
        """Refuse a session whose files or effort logs are symbolic links (see :mod:`.session_links`);
        ``logs``: look at every effort log too (skipped when ``efforts/`` did not change since the
        last look recorded in the derived database)."""
        derived = self.derived
        checked = refuse_links(
            self.dir, logs=logs, checked=derived.run(derived.meta, "links_checked") if derived else None
        )
        if derived is not None and checked is not None and self.lock.held and not self.readonly:
            with contextlib.suppress(DerivedError):  # (a full disk: the next start looks again)
                derived.remember(links_checked=checked)

    def index_marker(self) -> list[Any]:
        """What the search index must have seen to hold all of the session: every write appends to
        ``events.jsonl``; a hand edit changes ``raw.jsonl``, the ``efforts/`` directory, or the
        manifest (taken into the effort rows under a new id)."""
        assert self.derived is not None
        return index_marker_of(self.dir, self.derived)

    def changed_on_disk(self) -> bool:
        """True when another process wrote to the session since we last looked.

        Every write operation appends to ``events.jsonl``, so its size is the change marker.
        """
        return file_size(self.events.path) != self._seen_events_size

    def refresh_if_changed(self) -> bool:
        if not self.changed_on_disk():
            return False
        self.load()
        self._seen_events_size = file_size(self.events.path)
        return True

    @contextlib.asynccontextmanager
    async def writing(self, wait: float = 10.0):
        """Hold the writer lock around one operation, reloading first if someone else wrote."""
        if self.lock.held:
            yield self
            self._seen_events_size = file_size(self.events.path)
            return
        await self.lock.acquire_async(wait=wait)
        try:
            self.refresh_if_changed()
            yield self
        finally:
            self._seen_events_size = file_size(self.events.path)
            self.lock.release()

    def load(self) -> None:
        """(Re)read the snapshots and the parts of the logs the working context needs."""
        self.generation += 1
        self._snapshots_written.clear()  # what is on disk may be another process's: the next save writes
        self.state = self._read_state()  # first: a session of a newer schema is refused before any write
        if self.readonly and self.state.encoding and self.state.encoding != self.counter.encoding_name:
            # a reader (status, search, the MCP server) counts as the writer did: the same figures everywhere
            self.counter = TokenCounter(encoding=self.state.encoding)
        self.view = self._read_view()
        self._load_efforts()
        self._logs.clear()
        self.load_ambient_tail()
        for effort in self.efforts.open_efforts() if self.open_logs else ():
            log = self.effort_log(effort.id)
            effort.raw_tokens = sum(self.counter.count_message(m, estimate=True) for m in log)
            effort.messages = self._log_lines.get(effort.id, len(log))  # file lines, withdrawn ones too
        for effort_id in list(self.view.expanded):
            known = self.efforts.get(effort_id)
            if known is None or not known.is_concluded:
                del self.view.expanded[effort_id]
        for effort_id in list(self.view.summaries):
            known = self.efforts.get(effort_id)
            if known is None or not known.is_concluded:
                del self.view.summaries[effort_id]

    def _load_efforts(self) -> None:
        """The effort list, caught up with the record in ``derived.sqlite`` — or in memory when that
        file cannot be written now (a full disk): the record is the truth either way."""
        if self.derived is None:
            self.derived = DerivedDB.for_session(self.dir)
        else:
            self.derived.reopen_if_replaced()
        self.efforts = EffortList(self.derived, self.dir)
        try:
            self.efforts.load(wait=READER_WAIT if self.readonly else None)
        except DerivedError as exc:
            if self.derived.path == IN_MEMORY:
                raise
            self.load_notes.append(f"derived.sqlite not used now ({exc}); the efforts are read into memory")
            self.derived.close()
            self.derived = DerivedDB(IN_MEMORY)
            self.efforts = EffortList(self.derived, self.dir)
            self.efforts.load()
        self.load_notes += [n for n in self.efforts.notes if n not in self.load_notes]
        self.efforts.notes.clear()

    def _read_json_file(self, name: str) -> dict[str, Any]:
        path = self.dir / name
        try:
            data = json.loads(read_bytes(path).decode("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep to read
            return self._set_aside(path, f"unreadable ({exc.__class__.__name__})")
        if not isinstance(data, dict):
            return self._set_aside(path, "not a JSON object")
        return data

    def _set_aside(self, path: Path, problem: str) -> dict[str, Any]:
        """A broken snapshot is kept as ``<name>.corrupt-<ts>`` and rebuilt from the logs."""
        note = f"{path.name}: {problem}; rebuilt from the logs"
        if not self.readonly:
            with contextlib.suppress(OSError):
                note += f" (the broken file is kept as {set_aside(path).name})"
        self.load_notes.append(note)
        return {}

    def _read_state(self) -> SessionState:
        found = self._read_json_file(STATE_FILE)
        data, steps = migrated(found, where=str(self.dir / STATE_FILE))
        if steps and found:  # (a new session, or a state rebuilt from the logs, was not migrated)
            self.migrated_from = steps[0]
        return SessionState.from_dict(data)

    def _read_view(self) -> ViewState:
        return ViewState.from_dict(self._read_json_file(EXPANDED_FILE))

    def load_ambient_tail(self) -> None:
        """The ambient window's messages with their file lines, from the end of ``raw.jsonl`` (withdrawn
        exchanges left out)."""
        window = max(self.ambient_window, self.configured_ambient_window)
        tail = read_jsonl_tail_numbered(self.raw_path, 2 * window + 8)
        total = self._ambient_lines_on_disk()
        numbered = live((total - after, record) for after, record in tail)
        chat = ((n, m) for n, m in self._messages(numbered, RAW_FILE) if m.get("role") in ("user", "assistant"))
        self._ambient = deque(chat, maxlen=2 * max(window, 1) + 8)

    def _ambient_lines_on_disk(self) -> int:
        """``raw.jsonl``'s line count: the state's, when it describes the file as it is (else counted)."""
        if self.state.ambient_bytes == file_size(self.raw_path):
            return self.state.ambient_lines
        return count_lines(self.raw_path)

    def _messages(self, numbered: list[tuple[int, dict[str, Any]]], name: str) -> list[tuple[int, dict[str, Any]]]:
        """The chat messages of a log's numbered records; the others (wrong type or shape) skipped and noted."""
        messages = [(n, m) for n, m in numbered if is_message(m)]
        note = f"{name}: skipped {len(numbered) - len(messages)} line(s) that are not chat messages (wrong shape)"
        if len(messages) < len(numbered) and note not in self.load_notes:
            self.load_notes.append(note)
        return messages

    def mark_unclean(self, reason: str) -> None:
        """Something failed that the next start must reconcile: this run will not end clean."""
        if self.unclean_reason is None:
            self.unclean_reason = reason

    def close(self, *, clean: bool = True, while_locked: Callable[[], Any] = contextlib.nullcontext) -> None:
        """Mark a clean end (if we can take the lock, and nothing failed) and release it, then close
        the catalog (a server that opens session after session must not keep their files open).
        ``while_locked``: a context the last writes happen in (the engine's index watch)."""
        try:  # (without the lock another process is mid-operation: it will mark its own end)
            if not self.readonly and self._lock_for_end():
                self._mark_end(clean and self.unclean_reason is None, while_locked)
        finally:
            if self.derived is not None:
                self.derived.close()

    def _lock_for_end(self) -> bool:
        """Whether the lock is held, or taken now, to mark the end. A lock file that cannot be opened
        (no descriptor left: EMFILE) is a lock not taken: the end goes unmarked, the work is stored,
        and the next start recovers as after a kill — the close still closes what is open."""
        try:
            return self.lock.held or self.lock.try_acquire()
        except OSError:
            return False

    def _mark_end(self, clean: bool, while_locked: Callable[[], Any]) -> None:
        try:  # a full disk (OSError, StoreError): the work is stored; the next start recovers
            with contextlib.suppress(OSError, StoreError, DerivedError), while_locked():
                try:
                    self.flush_manifest()
                except (OSError, StoreError, DerivedError) as exc:  # the journal holds what it would have written
                    self.load_notes.append(f"manifest.yaml not rewritten ({exc}); the next start does it")
                if clean:
                    self.refresh_if_changed()
                    self.state.clean_shutdown = True
                    self.save_state()
                    self.log_event(ev.SESSION_END, pid=os.getpid())
        finally:
            self.lock.release()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(clean=exc[0] is None)

    # ------------------------------------------------------------- snapshots
    @property
    def effort_raw_total(self) -> int:
        """Tokens of every effort's raw log (the naive figure)."""
        return self.efforts.raw_tokens

    def save_manifest(self, *then: tuple[str, dict[str, Any]]) -> None:
        """Save the changed efforts: one ``efforts_saved`` event in ``events.jsonl`` (fsynced: the
        commit point), then the effort rows catch up (:meth:`EffortList.save`). The events ``then``
        (the change's own, e.g. ``effort_concluded``) go in the same append: one commit, one fsync."""
        self._require_writer()
        journaled = False

        def journal(entries: list[dict[str, Any]]) -> None:
            nonlocal journaled
            self.log_events((ev.EFFORTS_SAVED, {"entries": entries}), *then)
            journaled = True

        self.efforts.save(journal)
        if then and not journaled:  # nothing to save: the events alone
            self.log_events(*then)

    def flush_manifest(self) -> bool:
        """Rewrite ``manifest.yaml`` with what was saved since it was last written (under the
        writer lock). A hand edit made meanwhile is taken in first, so it is kept. Raises
        DerivedError when the rows cannot catch up now (the file is then left as it is)."""
        if self.readonly or not self.lock.held:
            return False
        self.save_manifest()
        return self.efforts.flush()

    def save_state(self) -> None:
        """Write ``session_state.json`` if it changed. A snapshot, not the record: it is replaced
        atomically but not fsynced (the event log and the logs are; recovery rebuilds a snapshot
        that a power cut left stale or broken), so a turn pays no fsync for it."""
        self._require_writer()
        self.state.encoding = self.counter.encoding_name
        data = asdict(self.state)
        data.pop("saved_at", None)
        if self._save_snapshot(STATE_FILE, data):
            self.state.saved_at = now_iso()
            atomic_write_json(self.dir / STATE_FILE, asdict(self.state), durable=False)

    def save_view(self) -> None:
        """Write ``expanded.json`` if it changed (a snapshot, as :meth:`save_state` says)."""
        self._require_writer()
        data = asdict(self.view)
        if self._save_snapshot(EXPANDED_FILE, data):
            atomic_write_json(self.dir / EXPANDED_FILE, data, durable=False)

    def _save_snapshot(self, name: str, data: dict[str, Any]) -> bool:
        """Whether ``data`` (without ``saved_at``) differs from the snapshot ``name`` as this process
        last wrote it, or as the file holds it (then it is noted as written)."""
        text = json_text(data)
        known = self._snapshots_written.get(name)
        if known is None or not (self.dir / name).exists():
            try:
                found = json.loads(read_bytes(self.dir / name).decode("utf-8"))
                found.pop("saved_at", None)
                known = json_text(found)
            except (OSError, ValueError, AttributeError, RecursionError):
                known = None
        if known == text:
            self._snapshots_written[name] = text
            return False
        self._snapshots_written[name] = text
        return True

    def log_event(self, event: str, **fields: Any) -> dict[str, Any]:
        return self.log_events((event, fields))[0]

    def log_events(self, *events: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """Several events in one fsynced append (see :meth:`EventLog.log_many`)."""
        self._require_writer()
        records = self.events.log_many(self.state.turn, *events)
        if self.lock.held:  # our own write: not a change by another process
            self._seen_events_size += self.events.last_written
        return records

    def _require_writer(self) -> None:
        if self.readonly:
            raise StoreError(f"session {self.dir} is open read-only")

    # ------------------------------------------------------------------ logs
    def effort_log(self, effort_id: str) -> list[dict[str, Any]]:
        """The raw log of an effort, read once and then kept in step with appends."""
        log = self._logs.get(effort_id)
        if log is None:
            result = read_jsonl(self.effort_path(effort_id))
            if result.bad_lines:
                self.load_notes.append(
                    f"{self.effort_path(effort_id)}: skipped unreadable line(s) {result.bad_lines[:5]}"
                )
            self._log_lines[effort_id] = result.lines
            numbered = self._messages(live(result.numbered()), f"{EFFORTS_DIR}/{effort_id}.jsonl")
            log = self._logs[effort_id] = [m for _n, m in numbered]
        return log

    def forget_log(self, effort_id: str) -> None:
        """Drop a raw log from memory (it left the working context)."""
        self._logs.pop(effort_id, None)

    def append_effort(self, effort: Effort, messages: list[dict[str, Any]]) -> None:
        self._require_writer()
        append_jsonl(self.effort_path(effort.id), messages)
        if effort.id in self._logs:
            self._logs[effort.id].extend(messages)
        self._count_logged(effort, messages)

    def publish_effort_log(
        self, effort: Effort, messages: list[dict[str, Any]], temporary_name: str, *, durable_dir: bool = True
    ) -> None:
        """A new effort's whole log, written under ``temporary_name`` (fsynced) and renamed into
        place: a kill leaves at most the temporary file, never a half-written log. ``durable_dir``
        False: the caller fsyncs ``efforts/`` once for several logs, before anything names them."""
        self._require_writer()
        final = self.effort_path(effort.id)
        temporary = final.with_name(temporary_name)
        temporary.unlink(missing_ok=True)  # left by a failed attempt: never append to it
        append_jsonl(temporary, messages)
        os.replace(temporary, final)
        if durable_dir:
            fsync_dir(final.parent)
        self.forget_log(effort.id)
        self._count_logged(effort, messages)

    def _count_logged(self, effort: Effort, messages: list[dict[str, Any]]) -> None:
        delta = sum(self.counter.count_message(m, estimate=True) for m in messages)  # a figure: naive tokens
        effort.raw_tokens += delta  # (the effort table adds it to effort_raw_total)
        effort.messages += len(messages)

    def append_ambient(self, messages: list[dict[str, Any]]) -> int:
        self._require_writer()
        written = append_jsonl(self.raw_path, messages)
        first = self.state.ambient_lines + 1
        self._ambient.extend((first + i, m) for i, m in enumerate(messages) if m.get("role") in ("user", "assistant"))
        self.state.ambient_lines += len(messages)
        self.state.ambient_tokens += sum(self.counter.count_message(m) for m in messages)
        self.state.ambient_bytes += written
        return written

    @property
    def ambient_window(self) -> int:
        if self.state.ambient_window is not None:
            return min(self.state.ambient_window, self.configured_ambient_window)
        return self.configured_ambient_window

    def ambient_messages(self) -> list[dict[str, Any]]:
        """The last ``ambient_window`` exchanges of the ambient log."""
        return [message for _line, message in self.ambient_numbered()]

    def ambient_numbered(self) -> list[tuple[int, dict[str, Any]]]:
        """The last ``ambient_window`` exchanges of the ambient log, each message with its file line;
        none folded into an effort (a topic's effort opened on a proposal holds them)."""
        window = self.ambient_window
        if window <= 0:
            return []
        folded = self.efforts.folded_upto() if self._ambient else 0
        messages = [m for m in self._ambient if m[0] > folded]
        users = 0
        start = len(messages)
        for i in range(len(messages) - 1, -1, -1):
            if messages[i][1].get("role") == "user":
                users += 1
                if users > window:
                    break
                start = i  # an exchange starts with its user message: a reply before it belongs to the last one out
        return messages[start:]

    # --------------------------------------------------------------- queries
    def expanded_efforts(self) -> list[Effort]:
        return [e for eid in self.view.expanded if (e := self.efforts.get(eid)) is not None]

    def summaries_in_memory(self) -> list[Effort]:
        return [e for eid in self.view.summaries if (e := self.efforts.get(eid)) is not None and e.summary]

    @property
    def evicted_count(self) -> int:
        """Concluded efforts whose summary is not in working memory (``summaries`` holds only concluded ids)."""
        return self.efforts.concluded_count - len(self.view.summaries)

    def is_evicted(self, effort: Effort) -> bool:
        return effort.is_concluded and effort.id not in self.view.summaries


__all__ = [
    "CONCLUDED",
    "LOCK_FILE",
    "OPEN",
    "Session",
    "SessionLock",
    "SessionLocked",
    "SessionState",
    "ViewState",
    "file_size",
]


def index_marker_of(directory: Path, derived: DerivedDB) -> list[Any]:
    """:meth:`Session.index_marker` of the session in ``directory`` without opening it (a search of
    every session asks each index whether it holds all of its session before reading it alone)."""
    return [
        file_size(directory / EVENTS_FILE),
        file_stamp(directory / RAW_FILE),
        file_stamp(directory / EFFORTS_DIR),
        derived.run(derived.meta, "taken_in"),
    ]
