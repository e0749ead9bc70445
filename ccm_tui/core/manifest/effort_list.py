"""The effort list: ``manifest.yaml`` plus the journal after it, kept as rows of ``derived.sqlite``.

The record is the file and the ``efforts_saved`` events logged in ``events.jsonl`` after the offset
on its first line (``# ccm-tui journal: events.jsonl@N``; a file without it includes everything).
Saving a change appends the changed entries as one fsynced event: that is the commit point, and
nothing else changes an effort. :meth:`EffortList.catch_up` brings the ``entries`` rows forward from
the record, in one transaction, for every process alike (the writer after its save, ``status``,
``search``, the MCP server, the next start after a kill): a file whose stamp (size, mtime, inode)
changed is taken in first (a hand edit, ``repair``: only blocks whose bytes changed are parsed),
then the journal after the rows' offset. :meth:`EffortList.flush` rewrites the file later, when the
session is idle, dumping the dirty rows' blocks and copying the others' bytes.

Open efforts, and any effort asked for, are held as :class:`Effort` objects (the same id gives the
same object); counts, pages and lookups come from the rows, so nothing grows with 100,000 efforts.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..storage.derived import DERIVED_FILE, DerivedBusy, DerivedDB, DerivedError, RowRejected
from ..storage.durable import file_size, open_nofollow, read_bytes
from ..storage.eventlog import EFFORTS_SAVED
from .effort import CONCLUDED, OPEN, STATUSES, Effort, ManifestError, effort_from_dict
from .yaml_file import (
    FAST_YAML,
    MARK_RE,
    cut,
    dump_block,
    head_bytes,
    parse_block,
    read_whole,
    write_manifest,
    write_pieces,
)

MANIFEST_NAME = "manifest.yaml"
EVENTS_NAME = "events.jsonl"
_EVENT_MARK = f'"event":"{EFFORTS_SAVED}"'.encode()
_TOTALS = "SELECT count(*), total(status = 'concluded'), total(raw_tokens) FROM entries"
SLOW_YAML_BYTES = 8 << 20  # a manifest this big is worth a note when PyYAML lacks its C loader
_UPSERT = (
    "INSERT INTO entries (id, ord, status, raw_tokens, concluded_at, digest, source_kind, entry, block_len,"
    " block_hash, dirty, folded_last) VALUES (?1, coalesce(?2, (SELECT max(ord) + 1 FROM entries), 0), ?3, ?4,"
    " ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT (id) DO UPDATE SET ord = coalesce(?2, ord), status = ?3,"
    " raw_tokens = ?4, concluded_at = ?5, digest = ?6, source_kind = ?7, entry = ?8, folded_last = ?12,"
    " block_len = coalesce(?9, block_len),"
    " block_hash = coalesce(?10, block_hash), dirty = ?11, fts_stale = (fts_stale OR json_extract(entry, '$.summary') IS NOT json_extract(?8, '$.summary')"
    " OR json_extract(entry, '$.name') IS NOT json_extract(?8, '$.name'))"  # search: write its meta document again
)


def file_stamp(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _hash(block: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(block, digest_size=8).digest(), "big", signed=True)


def _weight(entry: dict[str, Any] | None) -> tuple[int, int, int]:
    """What an entry adds to the totals: (efforts, concluded, raw tokens)."""
    if entry is None:
        return 0, 0, 0
    raw = entry.get("raw_tokens")
    return 1, 1 if entry.get("status") == CONCLUDED else 0, raw if isinstance(raw, int) else 0


def _values(effort: Effort, ord_: int | None, block: bytes | None, dirty: int) -> tuple[Any, ...]:
    source = effort.source if isinstance(effort.source, dict) else {}
    digest, kind = source.get("sha256"), source.get("kind")
    return (
        effort.id,
        ord_,
        effort.status,
        effort.raw_tokens,
        effort.concluded_at,
        digest if isinstance(digest, str) else None,
        kind if isinstance(kind, str) else None,
        json.dumps(effort.to_dict(), ensure_ascii=False, separators=(",", ":")),
        None if block is None else len(block),
        None if block is None else _hash(block),
        dirty,
        folded_last(effort) or None,
    )


def journal_entries(events: Path, start: int) -> tuple[list[dict[str, Any]], int]:
    """The entries journaled in ``events`` from byte ``start`` on (the last one per id wins) and
    the offset read up to (the end of its last complete line)."""
    try:
        fd = open_nofollow(events, os.O_RDONLY)
    except FileNotFoundError:
        return [], 0
    with os.fdopen(fd, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        if start >= size:
            return [], size
        fh.seek(start)
        data = fh.read()
    end = data.rfind(b"\n") + 1
    latest: dict[str, dict[str, Any]] = {}
    for line in data[:end].split(b"\n"):
        if _EVENT_MARK not in line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        entries = record.get("entries") if isinstance(record, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                latest.pop(entry["id"], None)  # keep the order of the last save
                latest[entry["id"]] = entry
    return list(latest.values()), start + end


def row_effort(effort_id: Any, entry: Any) -> Effort:
    """An effort read back from an ``entries`` row, held to the record's rules (a slug id that is not
    reserved, its ``raw_file`` derived from the id, the id column's own). Raises RowRejected: the
    derived file was not written by us and is rebuilt."""
    try:
        raw = json.loads(entry)
        effort = effort_from_dict(raw, DERIVED_FILE, 0)
    except (ValueError, TypeError, ManifestError) as exc:
        raise RowRejected(f"{DERIVED_FILE}: a row of entries is not one ccm-tui wrote ({exc})") from exc
    if effort.id != effort_id:
        raise RowRejected(f"{DERIVED_FILE}: the row of {effort_id!r} is not one ccm-tui wrote")
    return effort


def folded_last(effort: Effort) -> int:
    """The last ambient line ``effort`` holds when it was folded from the ambient chat (else 0)."""
    source = effort.source if isinstance(effort.source, dict) else {}
    lines = source.get("lines")
    if source.get("folded_from") != "ambient" or not isinstance(lines, list) or len(lines) != 2:
        return 0
    last = lines[1]
    return last if type(last) is int and last > 0 else 0


class EffortList:
    """The efforts of one session (see the module doc). Only the lifecycle changes them."""

    def __init__(self, db: DerivedDB, directory: Path) -> None:
        self.db = db
        self.manifest = Path(directory) / MANIFEST_NAME
        self.events = Path(directory) / EVENTS_NAME
        self.notes: list[str] = []  # journal entries skipped (unreadable), for the load report
        self._held: dict[str, Effort] = {}
        self._saved: dict[str, dict[str, Any]] = {}  # a held effort's entry as the rows have it (absent: new)
        self._open: dict[str, Effort] = {}
        self._totals = [0, 0, 0]  # the rows' (efforts, concluded, raw tokens)
        self._generation = db.generation

    # ------------------------------------------------------------------ catching up with the record
    def load(self, *, wait: float | None = None) -> None:
        """Catch up (``wait``: at most that long for another process's write; then the rows as they
        are) and hold the open efforts."""
        busy = False
        try:
            if wait is None:
                self.catch_up()
            else:
                with self.db.waiting_at_most(wait):
                    self.catch_up()
        except DerivedBusy:
            busy = True
        self._held.clear()
        self._saved.clear()
        self._open.clear()
        self._totals = [int(n) for n in self._query(_TOTALS)[0]]
        for effort in self._efforts("SELECT entry FROM entries WHERE status = 'open' ORDER BY ord"):
            self._hold(effort)
        if busy:  # another process is writing the rows: what the journal has after them is held on top
            self._hold_journal_after_rows()

    def _hold_journal_after_rows(self) -> None:
        """Hold the entries journaled after the rows' offset as unsaved changes, so a reader that could
        not wait for the rows still answers with every save on disk (the counts included)."""
        entries, _ = journal_entries(self.events, self.db.run(self.db.meta, "journal") or 0)
        for i, raw in enumerate(entries):
            try:
                effort = effort_from_dict(raw, f"{self.events.name} (efforts saved)", i)
            except ManifestError:
                continue
            self.get(effort.id)  # (held first from its row, if it has one: the counts add the difference)
            self._put(effort)

    def current(self) -> bool:
        """The rows reflect the record as it is now (two stats and a read of ``meta``)."""
        known = self.db.run(self.db.meta, "manifest")
        return (
            self.db.generation == self._generation
            and isinstance(known, dict)
            and known.get("stamp") == file_stamp(self.manifest)
            and self.db.run(self.db.meta, "journal") == file_size(self.events)
        )

    def catch_up(self) -> None:
        """Bring the rows forward from the record (raises ManifestError for a broken file; DerivedError
        when the database cannot be written: the record is intact, the next catch-up retries)."""
        if not self.current():
            self.db.run(self._catch_up)
            self._generation = self.db.generation

    def _catch_up(self) -> None:
        with self.db.write_txn():
            stamp = file_stamp(self.manifest)
            known = self.db.meta("manifest")
            journal_past_end = (self.db.meta("journal") or 0) > file_size(self.events)  # (a forget rewrote it)
            if (
                self.db.generation != self._generation
                or not isinstance(known, dict)
                or known["stamp"] != stamp
                or journal_past_end
            ):
                self._generation = self.db.generation  # (the take-in queries the rows: no catch-up from there)
                self._take_in_file(stamp)
            start = self.db.meta("journal") or 0
            entries, end = journal_entries(self.events, start)
            for i, raw in enumerate(entries):
                try:
                    self._upsert(effort_from_dict(raw, f"{self.events.name} (efforts saved)", i), None, None, 1)
                except ManifestError as exc:
                    self.notes.append(f"{exc}; skipped")
            self.db.set_meta(journal=end)

    def _upsert(self, effort: Effort, ord_: int | None, block: bytes | None, dirty: int) -> None:
        conn = self.db.conn
        old = conn.execute("SELECT entry FROM entries WHERE id = ?", (effort.id,)).fetchone()
        before, entry = _weight(json.loads(old[0]) if old else None), effort.to_dict()
        conn.execute(_UPSERT, _values(effort, ord_, block, dirty))
        self._totals = [t + a - b for t, a, b in zip(self._totals, _weight(entry), before)]
        if effort.id in self._held:
            self._saved[effort.id] = entry

    def _take_in_file(self, stamp: list[int] | None) -> None:
        """Make the rows say what ``manifest.yaml`` says: the blocks whose bytes the rows already
        hold keep their rows, the others are read (all of them the first time)."""
        data = b"" if stamp is None else _read(self.manifest)
        match = MARK_RE.match(data)
        head, blocks = cut(data, match.end() if match else 0) if stamp is not None else (0, [])
        if head is None or not self._take_blocks(blocks):  # not in block shape: read whole, as its dump
            head = None  # (the next flush writes the whole file in the standard shape)
            self._take_blocks([dump_block(entry) for entry in read_whole(data, self.manifest)])
        mark = int(match.group(1)) if match else None
        journal = 0 if stamp is None else mark if mark is not None else file_size(self.events)
        manifest = {"stamp": stamp, "head": head, "mark": journal}
        self.db.set_meta(manifest=manifest, journal=journal, taken_in=uuid.uuid4().hex)
        if len(data) > SLOW_YAML_BYTES and not FAST_YAML:
            self.notes.append(f"PyYAML was built without libyaml: reading {self.manifest.name} takes ~10x longer")
        self._totals = [int(n) for n in self.db.conn.execute(_TOTALS).fetchone()]

    def _take_blocks(self, blocks: list[bytes]) -> bool:
        """Rows from the file's blocks; False when a block does not read alone (the file is read whole)."""
        conn = self.db.conn
        known = {h: (i, o) for h, i, o in conn.execute("SELECT block_hash, id, ord FROM entries WHERE dirty = 0")}
        seen: dict[str, int] = {}
        read: list[tuple[bytes, Effort]] = []
        for ord_, block in enumerate(blocks):
            hit = known.get(_hash(block))
            if hit is None:
                raw = parse_block(block, self.manifest)
                if raw is None:
                    return False
                read.append((block, effort := effort_from_dict(raw, str(self.manifest), ord_)))
                hit = (effort.id, -1)
            if seen.setdefault(hit[0], ord_) != ord_:
                raise ManifestError(f"{self.manifest}: effort id {hit[0]!r} appears twice")
            if hit[1] != ord_ and hit[1] != -1:
                conn.execute("UPDATE entries SET ord = ? WHERE id = ?", (ord_, hit[0]))
        gone = [(i,) for (i,) in conn.execute("SELECT id FROM entries") if i not in seen]
        conn.executemany("DELETE FROM entries WHERE id = ?", gone)
        samples = [read[0], read[len(read) // 2], read[-1]] if len(read) > 64 else []
        old_shape = any(dump_block(e.to_dict()) != b for b, e in samples)
        for block, effort in read:  # a block not in the standard shape is written again at the next flush
            dirty = old_shape or (len(read) <= 64 and dump_block(effort.to_dict()) != block)
            self._upsert(effort, seen[effort.id], block, int(dirty))
        self._one_active()
        return True

    def _one_active(self) -> None:
        """At most one active effort, whatever the file says (the last one)."""
        active = [e for e in self._efforts("SELECT entry FROM entries WHERE status = 'open' ORDER BY ord") if e.active]
        for effort in active[:-1]:
            effort.active = False
            self._upsert(effort, None, None, 1)  # (dirty: the file says so too at the next flush)

    # ------------------------------------------------------------------ writing
    def save(self, journal: Callable[[list[dict[str, Any]]], object]) -> None:
        """Journal the held efforts that changed (``journal`` appends the fsynced event: the commit
        point), then bring the rows forward. A failed catch-up is ignored: the record has the change."""
        changed = [e.to_dict() for i, e in self._held.items() if self._saved.get(i) != e.to_dict()]
        if not changed:
            return
        try:
            journal(changed)
        except BaseException:
            self._forget_unsaved()
            raise
        try:
            self.catch_up()
        except (DerivedError, ManifestError) as exc:  # (the file broke meanwhile: reported at the next load)
            self.notes.append(f"the effort rows were not brought forward now ({exc})")

    def flush(self) -> bool:
        """Rewrite ``manifest.yaml`` with the rows changed since it was written (the writer lock is
        held). The record is caught up first, in the same transaction: the file is never written from
        rows that lack a journaled change, and a hand edit made meanwhile is kept. False: nothing to do."""
        return self.db.run(self._flush)

    def _flush(self) -> bool:
        with self.db.write_txn() as conn:
            self._catch_up()
            self._generation = self.db.generation
            head = self.db.meta("manifest")["head"]
            if head is not None and not conn.execute("SELECT 1 FROM entries WHERE dirty = 1 LIMIT 1").fetchone():
                return False
            mark = self.db.meta("journal")
            rows = conn.execute(
                "SELECT id, entry, coalesce(block_len, 0), dirty FROM entries"
                + (" WHERE dirty = 1" if head is not None else "")
                + " ORDER BY ord"
            ).fetchall()
            count = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
            new_head = head_bytes(mark, count == 0)
            blocks = {i: dump_block(row_effort(i, e).to_dict()) for i, e, _, _ in rows}
            pieces = [new_head, *blocks.values()] if head is None else self._spliced(new_head, head, rows, blocks)
            stat = write_pieces(self.manifest, pieces)
            conn.executemany(
                "UPDATE entries SET block_len = ?, block_hash = ?, dirty = 0 WHERE id = ?",
                [(len(b), _hash(b), i) for i, b in blocks.items()],
            )
            stamp = [stat.st_size, stat.st_mtime_ns, stat.st_ino]
            self.db.set_meta(manifest={"stamp": stamp, "head": len(new_head), "mark": mark})
            return True

    def unflushed_bytes(self) -> int:
        """Bytes logged to ``events.jsonl`` since the offset ``manifest.yaml`` includes the journal to:
        how far the file lags behind the record (the controller flushes past FLUSH_JOURNAL_BYTES)."""
        known = self.db.run(self.db.meta, "manifest")
        mark = known.get("mark") if isinstance(known, dict) else None
        return max(0, file_size(self.events) - mark) if isinstance(mark, int) else 0

    def _spliced(self, new_head: bytes, head: int, rows: list[Any], blocks: dict[str, bytes]) -> list[Any]:
        """The new file as pieces: the dirty rows' new blocks between ranges of the old file's bytes.
        Where each block starts is summed by SQLite over the narrow (ord, block_len) index."""
        conn = self.db.conn
        size = conn.execute("SELECT coalesce(sum(block_len), 0) FROM entries").fetchone()[0]
        pieces: list[Any] = [new_head]
        copied_to = head
        for (effort_id, _, length, _), before in zip(rows, self._offsets(len(rows))):
            start = head + before
            if start > copied_to:
                pieces.append((copied_to, start - copied_to))
            pieces.append(blocks[effort_id])
            copied_to = start + length
        if head + size > copied_to:
            pieces.append((copied_to, head + size - copied_to))
        return pieces

    def _offsets(self, dirty: int) -> list[int]:
        """Bytes of the blocks before each dirty row, in order: a sum over the rows before each for a
        few, one running sum over every row for many."""
        if dirty <= 16:
            query = (
                "SELECT (SELECT coalesce(sum(b.block_len), 0) FROM entries b WHERE b.ord < e.ord)"
                " FROM entries e WHERE e.dirty = 1 ORDER BY e.ord"
            )
        else:
            query = (
                "SELECT before FROM (SELECT ord, dirty, sum(coalesce(block_len, 0)) OVER (ORDER BY ord ROWS"
                " UNBOUNDED PRECEDING) - coalesce(block_len, 0) AS before FROM entries) WHERE dirty = 1 ORDER BY ord"
            )
        return [n for (n,) in self.db.conn.execute(query)]

    def _forget_unsaved(self) -> None:
        """After a failed save, the held efforts say again what the record says (the same objects, so
        callers that hold one see it too): memory never claims a change that is not on disk."""
        for effort_id, effort in list(self._held.items()):
            saved = self._saved.get(effort_id)
            if saved is None:  # added since the last save: not in the record at all
                del self._held[effort_id]
                self._open.pop(effort_id, None)
                continue
            if saved != effort.to_dict():
                self._put(Effort(**saved))

    def _put(self, effort: Effort) -> Effort:
        """Hold ``effort``'s values: on the object already held for its id (whoever holds that one sees
        them, the open and active ones included), else ``effort`` itself."""
        held = self._held.get(effort.id)
        if held is None:
            self.add(held := effort)
        else:
            vars(held).update(vars(effort))
            self.set_status(held, held.status)
        if held.active:
            self.set_active(held)
        return held

    # ------------------------------------------------------------------ the held efforts
    def _hold(self, effort: Effort) -> Effort:
        self._held[effort.id] = effort
        self._saved[effort.id] = effort.to_dict()
        if effort.is_open:
            self._open[effort.id] = effort
        return effort

    def add(self, effort: Effort) -> None:
        self._held[effort.id] = effort
        if effort.is_open:
            self._open[effort.id] = effort

    def set_status(self, effort: Effort, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        effort.status = status
        if status == OPEN:
            self._open[effort.id] = effort
        else:
            self._open.pop(effort.id, None)
            effort.active = False

    def set_active(self, effort: Effort | None) -> None:
        for e in self._open.values():
            e.active = e is effort

    @property
    def active(self) -> Effort | None:
        return next((e for e in self._open.values() if e.active), None)

    def open_efforts(self) -> list[Effort]:
        return list(self._open.values())

    def held(self) -> list[Effort]:
        return list(self._held.values())

    # ------------------------------------------------------------------ queries (held objects first)
    def _query(self, sql: str, params: Iterable[Any] = (), parse: Callable[..., Any] | None = None) -> list[Any]:
        """Rows of ``sql`` (each passed to ``parse``, which may reject one: the file is rebuilt and the
        rows, caught up from the record, read again)."""

        def fetch() -> list[Any]:
            rows = self.db.conn.execute(sql, tuple(params)).fetchall()
            return rows if parse is None else [parse(*row) for row in rows]

        for _ in range(2):
            if self.db.generation != self._generation:  # the file was rebuilt (corrupt): catch up again
                self.catch_up()
            generation = self.db.generation
            rows = self.db.run(fetch)
            if self.db.generation == generation:
                break
        return rows

    def _efforts(self, sql: str, params: Iterable[Any] = ()) -> list[Effort]:
        sql = sql.replace("SELECT entry FROM", "SELECT id, entry FROM", 1)
        return [self._held.get(e.id, e) for e in self._query(sql, params, row_effort)]

    def get(self, effort_id: str) -> Effort | None:
        effort = self._held.get(effort_id)
        if effort is None and isinstance(effort_id, str):
            found = self._efforts("SELECT entry FROM entries WHERE id = ?", (effort_id,))
            effort = self._hold(found[0]) if found else None
        return effort

    def __contains__(self, effort_id: object) -> bool:
        return isinstance(effort_id, str) and bool(self.existing([effort_id]))

    def existing(self, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` name an effort."""
        wanted = set(ids)
        sql = "SELECT id FROM entries WHERE id IN (SELECT value FROM json_each(?))"
        rows = self._query(sql, (json.dumps(list(wanted - self._held.keys())),))
        return (wanted & self._held.keys()) | {r[0] for r in rows}

    def _unsaved(self, index: int) -> int:
        """What the held efforts add to a total beyond the rows (0: count, 1: concluded, 2: tokens)."""
        return sum(_weight(e.to_dict())[index] - _weight(self._saved.get(i))[index] for i, e in self._held.items())

    def __len__(self) -> int:
        return self._totals[0] + sum(1 for i in self._held if i not in self._saved)

    @property
    def concluded_count(self) -> int:
        return self._totals[1] + self._unsaved(1)

    @property
    def raw_tokens(self) -> int:
        """Tokens of every effort's raw log (the naive figure's efforts part)."""
        return self._totals[2] + self._unsaved(2)

    def __iter__(self) -> Iterator[Effort]:
        """Every effort in manifest order: for a report or an export, never for a turn."""
        yield from self._efforts("SELECT entry FROM entries ORDER BY ord")
        yield from (e for i, e in list(self._held.items()) if i not in self._saved)

    def concluded_page(self, offset: int, limit: int) -> list[Effort]:
        """Concluded efforts, the latest conclusion first."""
        sql = (
            "SELECT entry FROM entries WHERE status = 'concluded' ORDER BY concluded_at DESC, ord DESC LIMIT ? OFFSET ?"
        )
        return self._efforts(sql, (limit, offset))

    def by_digest(self, digest: str) -> list[Effort]:
        return self._efforts("SELECT entry FROM entries WHERE digest = ? ORDER BY ord", (digest,))

    def folded_upto(self) -> int:
        """The last ``raw.jsonl`` line folded into an effort (0: none), from the folded efforts' sources,
        saved or not yet: a fold is recorded once, in the effort it lands (a partial index: no scan)."""
        sql = "SELECT max(folded_last) FROM entries WHERE folded_last IS NOT NULL"
        found = next(iter(self._query(sql, ())), (None,))[0]
        saved = found if type(found) is int and found > 0 else 0
        return max([saved, *(folded_last(e) for e in self._held.values())])

    def by_source_kind(self, kind: str) -> list[Effort]:
        """Efforts whose ``source.kind`` is ``kind`` (the notes effort other agents write to)."""
        found = {
            e.id: e for e in self._efforts("SELECT entry FROM entries WHERE source_kind = ? ORDER BY ord", (kind,))
        }
        found.update((i, e) for i, e in self._held.items() if (e.source or {}).get("kind") == kind)
        return list(found.values())


def _read(path: Path) -> bytes:
    try:
        return read_bytes(path)
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise ManifestError(f"cannot read {path}: {exc.strerror or exc}") from exc


# ---------------------------------------------------------------------- for tools, restore and repair


def _with_list(path: Path, use: Callable[[EffortList], Any]) -> Any:
    db = DerivedDB.for_session(Path(path).parent)
    try:
        efforts = EffortList(db, Path(path).parent)
        efforts.load()
        return use(efforts)
    finally:
        db.close()


def load_manifest(path: Path) -> list[Effort]:
    """Every effort of a session's list (the file and the journal after it). Broken → ManifestError."""
    return _with_list(path, list)


def check_manifest(path: Path) -> None:
    """Raise ManifestError when the manifest cannot be read (cheap when the rows are current)."""
    _with_list(path, len)


def imported_as(path: Path, digest: str) -> list[Effort]:
    """The efforts imported from a transcript with this SHA-256 (one indexed query)."""
    return _with_list(path, lambda efforts: efforts.by_digest(digest))


def save_manifest(path: Path, efforts: list[Effort]) -> None:
    """Write a whole manifest that includes the journal so far (repair, tests, benchmarks)."""
    path = Path(path)
    write_manifest(path, [e.to_dict() for e in efforts], mark=file_size(path.parent / EVENTS_NAME))
