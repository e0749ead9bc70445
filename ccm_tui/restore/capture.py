"""Capture without a model: an agent's session file becomes a searchable concluded effort.

A file is parsed as ``restore --parse-only`` parses it (the same turns), its turns logged as
the raw log of a concluded effort in the agent's capture session (``capture-<agent>`` under
the data directory's ``sessions/``), named from its project and first request, with an
extractive summary (what was asked, the files touched) until a model summary replaces it,
and indexed as it lands. Secret-looking values are redacted (``capture_redact``).

**Once, whatever happens.** Each logged record carries its turn's capture number
(``"turn"``); what is logged is read from the effort's log, never from its manifest entry,
so a kill between the append and the entry's save cannot log a turn twice. A file that grew
adds its new turns (and the rest of an answer that was being written: a record marked
``continued``); a file whose earlier turns changed (an agent's compaction, an editor) is
re-derived: the turns whose request is not logged yet are added, none twice, none lost.
Re-capturing the same bytes is a no-op without parsing (path, inode, size and mtime kept
in the entry's ``source.capture``).

**Batches.** Files are parsed outside the session's writer lock; the lock is taken per small
batch (:data:`BATCH_FILES`, :data:`BATCH_BYTES`, :data:`BATCH_SECONDS`), so the TUI, ``send``,
``restore`` and ``mcp`` are never blocked for more than a moment: a batch's writes let the lock go
every :data:`LOCK_HOLD` seconds.

A capture key listed in ``<session>/forgotten_captures.txt`` (written by ``forget``) is skipped
unless ``recapture``.
"""

from __future__ import annotations

import enum
import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccm_tui.config import Settings
from ccm_tui.core.efforts.lifecycle import Landing
from ccm_tui.core.storage.durable import StoreError
from ccm_tui.core.storage.eventlog import now_iso
from ccm_tui.core.text.terminal import clean_name
from ccm_tui.restore.landing import NO_RESPONSE
from ccm_tui.restore.parse import MAX_TRANSCRIPT_BYTES, SNIFF_BYTES, parse_transcript
from ccm_tui.restore.redaction import redact_text, redact_texts
from ccm_tui.restore.stores import AgentSession, capture_session_name, describe
from ccm_tui.restore.turns import ParsedTranscript, TranscriptError, UnknownTranscriptFormat

from ..errors import CcmError

CAPTURE_KIND = "capture"
FORGOTTEN_FILE = "forgotten_captures.txt"
BATCH_FILES = 64
BATCH_BYTES = 16 * 2**20
BATCH_SECONDS = 0.5
LOCK_WAIT = 30.0
LOCK_HOLD = 0.5  # seconds the writer lock is held for a batch before it is let go and taken again
SUMMARY_FILES = 8


class CaptureOutcome(enum.Enum):
    """What capturing one file did."""

    NEW = "new"
    GREW = "grew"
    REWRITTEN = "rewritten"
    UNCHANGED = "unchanged"
    MOVED = "moved"
    NOT_TRANSCRIPT = "not a transcript"
    EXCLUDED = "excluded"
    FORGOTTEN = "forgotten"
    FAILED = "failed"

    @property
    def problem(self) -> bool:
        return self is CaptureOutcome.FAILED


@dataclass
class FileResult:
    """One file's capture: what happened, the turns it added, and a line to say it."""

    path: Path
    outcome: CaptureOutcome
    turns: int = 0  # turns added now
    size: int = 0
    key: str = ""
    session: str = ""
    effort_id: str = ""
    note: str = ""

    def line(self) -> str:
        where = f" → {self.session}/{self.effort_id}" if self.effort_id else ""
        said = f": {self.note}" if self.note else ""
        added = f", {self.turns} turn(s) added" if self.turns else ""
        return f"{self.path}: {self.outcome.value}{added}{where}{said}"


@dataclass(frozen=True)
class CaptureOptions:
    redact: bool = True
    exclude_agents: frozenset[str] = frozenset()
    exclude_projects: frozenset[str] = frozenset()
    recapture: bool = False  # capture again what ``forget`` removed
    max_bytes: int = MAX_TRANSCRIPT_BYTES  # a bigger file is not captured (``capture_max_mb``)

    @classmethod
    def from_settings(cls, settings: Settings, *, recapture: bool = False) -> CaptureOptions:
        return cls(
            redact=settings.capture_redact,
            exclude_agents=frozenset(split_list(settings.watch_exclude_agents)),
            exclude_projects=frozenset(split_list(settings.watch_exclude_projects)),
            recapture=recapture,
            max_bytes=settings.capture_max_mb * 2**20,
        )


def split_list(text: str | None) -> list[str]:
    """A setting listing names or paths: separated by commas (or newlines)."""
    return [part.strip() for part in (text or "").replace("\n", ",").split(",") if part.strip()]


@dataclass
class Known:
    """A captured file as its entry records it."""

    session: str
    effort_id: str
    key: str
    inode: int
    size: int
    mtime_ns: int
    source: str = ""
    head: str = ""


@dataclass
class _Pending:
    path: Path
    parsed: ParsedTranscript
    who: AgentSession
    stat: os.stat_result
    head_sha: str


@dataclass
class _Landing:
    """A file never captured: the effort it lands as, with the others of its batch."""

    item: _Pending
    landing: Landing
    turns: int
    at: str


@dataclass
class Capturer:
    """Captures files into the capture sessions under ``sessions_root`` (one per agent)."""

    sessions_root: Path
    settings: Settings
    options: CaptureOptions = field(default_factory=CaptureOptions)
    known: dict[str, Known] = field(default_factory=dict)  # by the file's absolute path
    by_key: dict[str, Known] = field(default_factory=dict)
    by_head: dict[str, list[Known]] = field(default_factory=dict)  # a file moved: found by its first bytes
    skipped: dict[str, tuple[int, int]] = field(default_factory=dict)  # not transcripts: (size, mtime_ns)
    loaded: set[str] = field(default_factory=set)  # capture sessions whose entries are read
    _marks: dict[str, tuple[int, int]] = field(default_factory=dict)  # each session's journal after our writes
    _pending: list[_Pending] = field(default_factory=list)
    _pending_bytes: int = 0
    _pending_since: float = 0.0

    # ------------------------------------------------------------------ state
    def load(self) -> None:
        """Read what the capture sessions already hold (each once)."""
        if not self.sessions_root.is_dir():
            return
        for directory in sorted(self.sessions_root.iterdir()):
            if directory.name.startswith("capture-") and directory.name not in self.loaded:
                self._load_session(directory.name)

    def _load_session(self, name: str) -> None:
        directory = self.sessions_root / name
        self.loaded.add(name)
        if not (directory / "manifest.yaml").exists() and not (directory / "events.jsonl").exists():
            return
        engine = self._open(directory)
        try:
            self._reload(engine, name)
        finally:
            engine.close(clean=True)
            self._marks[name] = _written_mark(directory)

    def _reload(self, engine: Any, name: str) -> None:
        """What the session's entries say is captured (another watcher — the TUI's, a second
        ``watch`` — may have captured a file since this one last looked)."""
        for effort in engine.efforts_of_kind(CAPTURE_KIND):
            self._remember(name, effort.id, (effort.source or {}).get("capture") or {})

    def _remember(self, session: str, effort_id: str, capture: dict[str, Any]) -> Known | None:
        key, path = capture.get("key"), capture.get("source")
        if not isinstance(key, str) or not isinstance(path, str):
            return None
        known = Known(
            session, effort_id, key, int(capture.get("inode") or 0), int(capture.get("size") or -1),
            int(capture.get("mtime_ns") or 0), path, str(capture.get("head") or ""),
        )  # fmt: skip
        self.known[path] = known
        self.by_key[key] = known
        if known.head:
            self.by_head.setdefault(known.head, []).append(known)
        return known

    def _moved(self, name: str, head: str) -> Known | None:
        """A capture of this session whose file is gone and began with the same bytes: the file moved
        (renamed, or its folder did), and its id — derived from the path — changed with it."""
        for known in self.by_head.get(head, []):
            if known.session == name and known.source and not os.path.exists(known.source):
                return known
        return None

    def _open(self, directory: Path) -> Any:
        from ccm_tui.core.engine.opening import NO_MODEL, start_engine

        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        engine = start_engine(directory, self.settings, llm=NO_MODEL, lock_wait=LOCK_WAIT, probe_model_window=False)
        engine.count_roughly()  # a capture's token figures: no tokenizer loaded, no text encoded
        return engine

    # ------------------------------------------------------------------ capture
    def capture(self, paths: Iterable[Path], on_result: Callable[[FileResult], None] | None = None) -> list[FileResult]:
        """Capture each file (parsed outside the lock, written per batch); results in order of writing."""
        results: list[FileResult] = []

        def said(result: FileResult) -> None:
            results.append(result)
            if on_result is not None:
                on_result(result)

        for path in paths:
            early = self._prepare(Path(path))
            if early is not None:
                said(early)
            if self._batch_full():
                for result in self.flush():
                    said(result)
        for result in self.flush():
            said(result)
        return results

    def _batch_full(self) -> bool:
        if not self._pending:
            return False
        return (
            len(self._pending) >= BATCH_FILES
            or self._pending_bytes >= BATCH_BYTES
            or time.monotonic() - self._pending_since >= BATCH_SECONDS
        )

    def _prepare(self, path: Path) -> FileResult | None:
        """Parse a changed file and queue it for writing; a result when there is nothing to write."""
        absolute = str(path.absolute())
        try:
            stat = path.stat()
        except OSError as exc:
            return FileResult(path, CaptureOutcome.FAILED, note=f"cannot be read ({exc.strerror or exc})")
        known = self.known.get(absolute)
        if known and (known.inode, known.size, known.mtime_ns) == (stat.st_ino, stat.st_size, stat.st_mtime_ns):
            return FileResult(path, CaptureOutcome.UNCHANGED, size=stat.st_size, key=known.key, session=known.session,
                              effort_id=known.effort_id)  # fmt: skip
        if self.skipped.get(absolute) == (stat.st_size, stat.st_mtime_ns):
            return FileResult(path, CaptureOutcome.NOT_TRANSCRIPT, size=stat.st_size)
        if stat.st_size > self.options.max_bytes:
            return FileResult(
                path, CaptureOutcome.FAILED, size=stat.st_size,
                note=f"{stat.st_size / 2**20:,.0f} MiB, over the {self.options.max_bytes // 2**20} MiB a transcript "
                "may have (capture_max_mb: it is read whole, at about ten times its size in memory); not captured",
            )  # fmt: skip
        try:
            with path.open("rb") as handle:
                head_bytes = handle.read(SNIFF_BYTES)
            parsed = parse_transcript(path, max_bytes=self.options.max_bytes)
        except UnknownTranscriptFormat:
            self.skipped[absolute] = (stat.st_size, stat.st_mtime_ns)
            return FileResult(path, CaptureOutcome.NOT_TRANSCRIPT, size=stat.st_size)
        except TranscriptError as exc:
            return FileResult(path, CaptureOutcome.FAILED, size=stat.st_size, note=str(exc))
        except OSError as exc:
            return FileResult(
                path, CaptureOutcome.FAILED, size=stat.st_size, note=f"cannot be read ({exc.strerror or exc})"
            )
        if not parsed.turns:
            self.skipped[absolute] = (stat.st_size, stat.st_mtime_ns)
            return FileResult(path, CaptureOutcome.NOT_TRANSCRIPT, size=stat.st_size, note="no human turn in it")
        head = head_bytes.decode("utf-8", "replace")
        who = describe(path, parsed, head, stat.st_mtime)
        if who.agent in self.options.exclude_agents or (who.project and who.project in self.options.exclude_projects):
            return FileResult(
                path, CaptureOutcome.EXCLUDED, size=stat.st_size, key=who.key, note="excluded in the config"
            )
        head_sha = hashlib.sha256(head_bytes[:4096]).hexdigest()
        if not self._pending:
            self._pending_since = time.monotonic()
        self._pending.append(_Pending(path, parsed, who, stat, head_sha))
        self._pending_bytes += stat.st_size
        return None

    def flush(self) -> list[FileResult]:
        """Write what is queued: one lock per agent session for the batch."""
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        by_session: dict[str, list[_Pending]] = {}
        for item in pending:
            by_session.setdefault(capture_session_name(item.who.agent), []).append(item)
        results: list[FileResult] = []
        for name, items in by_session.items():
            if name not in self.loaded:
                try:
                    self._load_session(name)
                except (CcmError, OSError) as exc:
                    results.extend(FileResult(i.path, CaptureOutcome.FAILED, note=_why(exc)) for i in items)
                    continue
            results.extend(self._write(name, items))
        return results

    def _write(self, name: str, items: list[_Pending]) -> list[FileResult]:
        """Write a batch's files of one capture session, holding its writer lock at most about
        :data:`LOCK_HOLD` seconds at a time (then it is let go, for the TUI, ``send``, ``mcp``)."""
        directory = self.sessions_root / name
        results: list[FileResult] = []
        left = list(items)
        while left:
            try:
                engine = self._open(directory)
            except (CcmError, OSError) as exc:
                results.extend(
                    FileResult(i.path, CaptureOutcome.FAILED, size=i.stat.st_size, note=_why(exc)) for i in left
                )
                break
            taken = time.monotonic()
            clean = False
            try:
                if self._marks.get(name) != _written_mark(directory):  # written by another process meanwhile
                    self._reload(engine, name)
                forgotten = forgotten_keys(directory)
                landing: list[_Landing] = []  # new captures, landed together: one durable point
                while left and (time.monotonic() - taken < LOCK_HOLD or not (results or landing)):
                    item = left.pop(0)
                    if any(item.who.key == other.item.who.key for other in landing):
                        results += self._land(engine, name, landing)  # (the same session twice: once)
                    try:
                        done = self._write_one(engine, name, item, forgotten)
                    except (CcmError, OSError) as exc:
                        done = FileResult(item.path, CaptureOutcome.FAILED, size=item.stat.st_size, note=_why(exc))
                    if isinstance(done, _Landing):
                        landing.append(done)
                    else:
                        results.append(done)
                results += self._land(engine, name, landing)
                clean = True
            finally:
                engine.close(clean=clean)
                self._marks[name] = _written_mark(directory)
        return results

    def _land(self, engine: Any, name: str, landing: list[_Landing]) -> list[FileResult]:
        """Land the new captures queued (emptying the list): their logs, then one manifest save."""
        if not landing:
            return []
        batch = list(landing)
        landing.clear()
        try:
            efforts = engine.land_imports([one.landing for one in batch], restored_at=batch[0].at)
        except (CcmError, OSError) as exc:
            return [FileResult(one.item.path, CaptureOutcome.FAILED, size=one.item.stat.st_size, note=_why(exc))
                    for one in batch]  # fmt: skip
        results = []
        for one, effort in zip(batch, efforts, strict=True):
            self._remember(name, effort.id, one.landing.source["capture"])
            item = one.item
            results.append(FileResult(item.path, CaptureOutcome.NEW, one.turns, item.stat.st_size, item.who.key, name,
                                      effort.id))  # fmt: skip
        return results

    def _write_one(self, engine: Any, name: str, item: _Pending, forgotten: set[str]) -> FileResult | _Landing:
        who, parsed = item.who, item.parsed
        size = item.stat.st_size
        turns = self._safe_turns(parsed)
        known = self.by_key.get(who.key)
        moved = None
        if known is None and (moved := self._moved(name, item.head_sha)) is not None:
            known = moved
        records = engine.captured_records(known.effort_id) if known is not None else None
        if records is None or known is None:  # never captured, or forgotten since
            if who.key in forgotten and not self.options.recapture:
                return FileResult(
                    item.path, CaptureOutcome.FORGOTTEN, size=size, key=who.key, note="forgotten; not captured"
                )
            now = now_iso()
            landing = Landing(
                self._name(who, turns), _pairs(turns, 1, now), self._summary(who, parsed, turns),
                self._source(item, len(turns)),
            )  # fmt: skip
            return _Landing(item, landing, len(turns), now)
        logged = _logged_turns(records)
        messages, rewritten = new_records(logged, turns, now_iso())
        added = sum(1 for m in messages if m["role"] == "user")
        total = len(logged) + added
        source = self._source(item, total)
        engine.append_capture(known.effort_id, messages, source, self._summary(who, parsed, turns))
        self._remember(name, known.effort_id, source["capture"])
        outcome = (
            CaptureOutcome.REWRITTEN if rewritten else (CaptureOutcome.GREW if messages else CaptureOutcome.UNCHANGED)
        )
        note = "rewritten or truncated: re-derived, no turn twice" if rewritten else ""
        if moved is not None:
            self.by_head[item.head_sha].remove(moved)
            outcome, note = (outcome if messages else CaptureOutcome.MOVED), f"moved from {moved.source}"
        return FileResult(item.path, outcome, added, size, who.key, name, known.effort_id, note)

    def _safe_turns(self, parsed: ParsedTranscript) -> list[tuple[str, str]]:
        """The file's turns (request, answer), redacted in one pass when ``capture_redact``."""
        texts = [text for t in parsed.turns for text in (t.user, _reply(t.agent_responses))]
        if self.options.redact:
            texts = redact_texts(texts)
        return list(zip(texts[0::2], texts[1::2], strict=True))

    def _safe(self, text: str) -> str:
        return redact_text(text) if self.options.redact and text else text

    def _name(self, who: AgentSession, turns: list[tuple[str, str]]) -> str:
        first = " ".join(turns[0][0].split())[:80] if turns else ""
        return clean_name(f"{who.project}: {first}" if who.project else first)[:120] or who.agent

    def _summary(self, who: AgentSession, parsed: ParsedTranscript, turns: list[tuple[str, str]]) -> str:
        """What was asked, and the files touched: made without a model."""
        asked = _sentence(turns[0][0], 200) if turns else ""
        parts = [f"{who.agent} session" + (f" in {who.project}" if who.project else "") + f" ({who.started}), "
                 f"{len(turns)} turn(s). Asked: {_ended(asked)}"]  # fmt: skip
        if len(turns) > 1:
            parts.append(f"Last asked: {_ended(_sentence(turns[-1][0], 120))}")
        files: dict[str, None] = {}
        for turn in parsed.turns:
            for artifact in turn.artifacts:
                if artifact.action != "read":
                    files.setdefault(artifact.path, None)
        if files:
            shown = list(files)[:SUMMARY_FILES]
            more = f" and {len(files) - len(shown)} more" if len(files) > len(shown) else ""
            parts.append("Files touched: " + ", ".join(shown) + more + ".")
        return self._safe(" ".join(parts))

    def _source(self, item: _Pending, turns: int) -> dict[str, Any]:
        who, parsed, stat = item.who, item.parsed, item.stat
        absolute = str(item.path.absolute())
        source: dict[str, Any] = {
            "kind": CAPTURE_KIND,
            "file": absolute,
            "format": parsed.format,
            "turns": turns,
            "captured_at": now_iso(),
            "summary_offline": True,
            "capture": {
                "key": who.key,
                "agent": who.agent,
                "project": who.project,
                "source": absolute,
                "source_id": who.source_id,
                "started": who.started,
                "resume": who.resume,
                "inode": stat.st_ino,
                "size": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
                "head": item.head_sha,
            },
        }
        if parsed.cwd:
            source["cwd"] = self._safe(parsed.cwd)
        return source


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}"
    return " ".join(str(exc).split())


def _reply(responses: list[str]) -> str:
    return "\n\n".join(r for r in responses if r.strip())


def _sentence(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def _ended(text: str) -> str:
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def _pairs(turns: list[tuple[str, str]], first: int, ts: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for number, (user, reply) in enumerate(turns, first):
        messages.append({"role": "user", "content": user, "ts": ts, "turn": number})
        messages.append({"role": "assistant", "content": reply or NO_RESPONSE, "ts": ts, "turn": number})
    return messages


def _logged_turns(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The turns an effort's log holds: (request, answer) by capture number, continuations joined,
    a revision replacing; notes other agents left are not turns."""
    users: dict[int, str] = {}
    replies: dict[int, str] = {}
    for record in records:
        number = record.get("turn")
        if not isinstance(number, int) or record.get("note"):
            continue
        content = record.get("content")
        text = content if isinstance(content, str) else ""
        if record.get("role") == "user":
            users.setdefault(number, text)
        elif record.get("role") == "assistant":
            if record.get("continued"):
                replies[number] = replies.get(number, "") + text
            else:
                replies[number] = "" if text == NO_RESPONSE else text
    return [(users[n], replies.get(n, "")) for n in sorted(users)]


def new_records(
    logged: list[tuple[str, str]], turns: list[tuple[str, str]], ts: str
) -> tuple[list[dict[str, Any]], bool]:
    """The records that bring a log holding ``logged`` up to the file's ``turns``, and whether the
    file was rewritten (its logged requests are not its first ones any more).

    Grown: the new turns, and the rest of an answer that grew (``continued``; an answer that
    changed otherwise is logged again whole, ``revised``). Rewritten: the turns whose request
    is not logged yet (each logged request counted once), in the file's order."""
    n = len(logged)
    out: list[dict[str, Any]] = []
    if [user for user, _ in logged] == [user for user, _ in turns[:n]]:
        for number, ((_, was), (_, now)) in enumerate(zip(logged, turns[:n]), 1):
            if now == was or not now:
                continue
            if now.startswith(was):
                out.append({"role": "assistant", "content": now[len(was) :], "ts": ts, "turn": number,
                            "continued": True})  # fmt: skip
            else:
                out.append({"role": "assistant", "content": now, "ts": ts, "turn": number, "revised": True})
        out.extend(_pairs(turns[n:], n + 1, ts))
        return out, False
    pool = Counter(user for user, _ in logged)
    fresh = []
    for user, reply in turns:
        if pool[user] > 0:
            pool[user] -= 1
        else:
            fresh.append((user, reply))
    return _pairs(fresh, n + 1, ts), True


def _written_mark(directory: Path) -> tuple[int, int]:
    """The session's journal (``events.jsonl``) as last written: size and mtime (every writer appends)."""
    try:
        stat = (directory / "events.jsonl").stat()
    except OSError:
        return (-1, -1)
    return (stat.st_size, stat.st_mtime_ns)


def forgotten_keys(directory: Path) -> set[str]:
    """The capture keys ``forget`` removed from this session (one a line)."""
    try:
        text = (directory / FORGOTTEN_FILE).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise StoreError(f"cannot read {directory / FORGOTTEN_FILE}: {exc.strerror or exc}") from None
    return {line.strip() for line in text.splitlines() if line.strip()}
