"""The effort catalog: ``manifest.yaml``'s entries in SQLite, so nothing reads 100,000 of them.

Derived data (``.manifest.sqlite`` in the session, safe to delete): one row per effort in
manifest order, with the columns the hot path asks about (status, counts, provenance) and the
entry itself as JSON. It says which file it describes (the manifest's size, mtime and inode),
how far into the journal it is (see :mod:`ccm_tui.core.manifest_journal`) and, per row, how many
bytes its block takes in the current file and whether the row changed since (``dirty``), so the
next manifest write copies the unchanged blocks.

Only the writer (the holder of the session lock) writes the file; a reader that finds it stale
or missing builds a private copy in memory instead.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..storage.durable import StoreError
from .effort import Effort

CATALOG_FILE = ".manifest.sqlite"
SCHEMA = 4  # 2: the layout index, 3: the totals index, 4: the recent index
APPLICATION_ID = 0x43434D4D  # "CCMM"
_IN_CHUNK = 500  # ids per IN (...) query

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS entries (
    ord INTEGER PRIMARY KEY,      -- manifest order
    id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    concluded INTEGER NOT NULL,
    raw_tokens INTEGER NOT NULL,
    created TEXT NOT NULL,
    concluded_at TEXT,
    digest TEXT,                  -- source.sha256 of an import
    data TEXT NOT NULL,           -- the entry (Effort.to_dict) as JSON
    length INTEGER,               -- bytes of its block in the current manifest.yaml (NULL: not in it)
    dirty INTEGER NOT NULL        -- changed since that file was written
);
CREATE INDEX IF NOT EXISTS entries_open ON entries (ord) WHERE status = 'open';
CREATE INDEX IF NOT EXISTS entries_dirty ON entries (ord) WHERE dirty = 1;
CREATE INDEX IF NOT EXISTS entries_layout ON entries (ord, length);  -- sums of lengths without the data
CREATE INDEX IF NOT EXISTS entries_totals ON entries (concluded, raw_tokens);  -- totals without the data
CREATE INDEX IF NOT EXISTS entries_recent ON entries (concluded, concluded_at, ord);  -- the latest conclusions
CREATE INDEX IF NOT EXISTS entries_concluded_at ON entries (concluded_at);
CREATE INDEX IF NOT EXISTS entries_created ON entries (created);
CREATE INDEX IF NOT EXISTS entries_digest ON entries (digest) WHERE digest IS NOT NULL;
"""
# the ambient lines folded into efforts (issue 32): added by a writer to a catalog of any schema 4 (a
# catalog without it answers the same, by a scan), so that no reader finds the catalog "of another
# schema" and rebuilds it in memory
_FOLDED_INDEX = """
CREATE INDEX IF NOT EXISTS entries_folded ON entries (json_extract(data, '$.source.lines[1]'))
    WHERE json_extract(data, '$.source.folded_from') = 'ambient'
"""


class CatalogUnusable(StoreError):
    """The catalog file cannot be used (corrupt, foreign, unreadable): build one in memory."""


class CatalogWriteFailed(StoreError):
    """A write to the catalog file failed (a full disk): nothing of it was kept. The catalog is
    derived, so the journal and the manifest stay the record; the next start rebuilds it."""


@dataclass(frozen=True)
class Totals:
    count: int = 0
    concluded: int = 0
    raw_tokens: int = 0


@dataclass(frozen=True)
class Layout:
    """Where the changed blocks are in the current manifest file: ``head`` bytes before the first
    block, ``size`` bytes of blocks in all, and for each changed row (in manifest order) its ``ord``,
    its block's ``length`` now (0: not in the file yet) and where that block starts after the head."""

    head: int
    size: int
    changed: list[tuple[int, int, int]]  # (ord, length, offset)
    empty: bool  # no entries at all


def _row_values(effort: Effort) -> tuple[Any, ...]:
    source = effort.source if isinstance(effort.source, dict) else {}
    digest = source.get("sha256")
    return (
        effort.id,
        effort.status,
        1 if effort.is_concluded else 0,
        effort.raw_tokens,
        effort.created or "",
        effort.concluded_at,
        digest if isinstance(digest, str) else None,
        json.dumps(effort.to_dict(), ensure_ascii=False, separators=(",", ":")),
    )


def effort_of(data: str) -> Effort:
    try:
        return Effort(**json.loads(data))
    except (TypeError, ValueError) as exc:
        raise CatalogUnusable(f"a damaged row ({exc})") from None


class EffortCatalog:
    """Queries and updates of the catalog (one SQLite connection, used from one thread at a time)."""

    def __init__(self, db: sqlite3.Connection, path: Path | None) -> None:
        self._db = db
        self.path = path

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: Path, *, writable: bool) -> EffortCatalog:
        """The catalog file (created when ``writable``). Raises CatalogUnusable."""
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise CatalogUnusable(f"{path.name} is not a regular file")
        if not writable and not path.exists():
            raise CatalogUnusable("no catalog yet")
        try:
            if writable:
                db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            else:
                db = sqlite3.connect(
                    f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
                )
            catalog = cls(db, path)
            catalog._prepare(writable)
            return catalog
        except sqlite3.Error as exc:
            raise CatalogUnusable(str(exc)) from None

    @classmethod
    def in_memory(cls) -> EffortCatalog:
        catalog = cls(sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None), None)
        catalog._prepare(True)
        return catalog

    def _prepare(self, writable: bool) -> None:
        db = self._db
        db.execute("PRAGMA busy_timeout = 5000")
        app, version = (
            db.execute("PRAGMA application_id").fetchone()[0],
            db.execute("PRAGMA user_version").fetchone()[0],
        )
        fresh = version == 0 and not db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
        if not fresh and (app != APPLICATION_ID or version != SCHEMA):
            if not writable:
                raise CatalogUnusable("another schema")
            db.close()
            assert self.path is not None
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            self._db = db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA busy_timeout = 5000")
            fresh = True
        if writable:
            if self.path is not None:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = OFF")  # derived: a torn file is rebuilt from the manifest
            if fresh:
                db.executescript(_TABLES)
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {SCHEMA}")
            with contextlib.suppress(sqlite3.OperationalError):  # (a full disk: the query scans instead)
                db.execute(_FOLDED_INDEX)
        self.check()

    def check(self) -> None:
        """Raise CatalogUnusable unless the tables answer (a torn or foreign file does not)."""
        try:
            self._db.execute("SELECT ord, id, status, data, length, dirty FROM entries LIMIT 1").fetchall()
            self._db.execute("SELECT key, value FROM meta LIMIT 1").fetchall()
        except sqlite3.Error as exc:
            raise CatalogUnusable(str(exc)) from None

    def close(self) -> None:
        self._db.close()

    def copy_to_memory(self) -> EffortCatalog:
        """A private copy (a reader that must apply the journal without writing the file)."""
        copy = EffortCatalog.in_memory()
        self._db.backup(copy._db)
        return copy

    # ------------------------------------------------------------------ meta
    def meta(self, key: str) -> Any:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def _set_meta(self, **values: Any) -> None:
        self._db.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [(k, json.dumps(v)) for k, v in values.items()],
        )

    def remember(self, **values: Any) -> None:
        """Record facts about the session in the catalog (the writer only; lost with the catalog)."""
        with self._transaction():
            self._set_meta(**values)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write, all or nothing; a failed one (a full disk) raises :class:`CatalogWriteFailed`."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            yield
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            where = self.path.name if self.path is not None else "the catalog"
            raise CatalogWriteFailed(f"could not update {where}: {exc}") from exc
        except BaseException:
            self._rollback()
            raise

    # ------------------------------------------------------------------ writing
    def rebuild(
        self, efforts: list[Effort], lengths: list[int] | None, *, head: int | None, stamp: Any, applied: int
    ) -> None:
        """Replace every row with ``efforts`` read from the manifest file of ``stamp``. Each rebuild
        gets a new ``rebuild`` id: what was derived from the old rows (the search index) must look again."""
        rows = (
            (i, *_row_values(e), lengths[i] if lengths else None, 0 if lengths else 1) for i, e in enumerate(efforts)
        )
        with self._transaction():
            self._db.execute("DELETE FROM entries")
            self._db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._set_meta(
                stamp=stamp, head=head if lengths is not None else None, applied=applied, rebuild=uuid.uuid4().hex
            )
        if self.path is not None:  # readers then open the file, not a WAL of every row
            with contextlib.suppress(sqlite3.Error):  # (only quicker for them)
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def apply(self, efforts: Iterable[Effort], *, applied: int | None) -> None:
        """Upsert changed or new entries (they are now dirty); ``applied``: the journal offset."""
        with self._transaction():
            for effort in efforts:
                values = _row_values(effort)
                updated = self._db.execute(
                    "UPDATE entries SET status = ?, concluded = ?, raw_tokens = ?, created = ?, concluded_at = ?,"
                    " digest = ?, data = ?, dirty = 1 WHERE id = ?",
                    (*values[1:], effort.id),
                )
                if updated.rowcount == 0:
                    self._db.execute(
                        "INSERT INTO entries VALUES ((SELECT coalesce(max(ord), -1) + 1 FROM entries),"
                        " ?, ?, ?, ?, ?, ?, ?, ?, NULL, 1)",
                        values,
                    )
            if applied is not None:
                self._set_meta(applied=applied)

    def written(self, lengths: dict[int, int], *, head: int, stamp: Any, applied: int) -> None:
        """The manifest file was rewritten: these rows' blocks now take these lengths."""
        with self._transaction():  # failed: the stamp stays old, so the next start reads the file
            self._db.executemany(
                "UPDATE entries SET length = ?, dirty = 0 WHERE ord = ?", [(n, o) for o, n in lengths.items()]
            )
            self._set_meta(stamp=stamp, head=head, applied=applied)

    def _rollback(self) -> None:
        try:
            self._db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    # ------------------------------------------------------------------ reading
    def layout(self) -> Layout | None:
        """The changed rows' places in the file, computed by SQLite (no Python object per row: a
        flush at 100,000 efforts costs what the few changed entries cost, plus the copy)."""
        head = self.meta("head")
        if not isinstance(head, int):
            return None
        count, size = self._db.execute("SELECT COUNT(*), COALESCE(SUM(length), 0) FROM entries").fetchone()
        dirty = self._db.execute("SELECT COUNT(*) FROM entries WHERE dirty = 1").fetchone()[0]
        if dirty <= 16:  # a sum over the rows before each (a range scan of the primary key)
            query = (
                "SELECT e.ord, COALESCE(e.length, 0), (SELECT COALESCE(SUM(b.length), 0) FROM entries b"
                " WHERE b.ord < e.ord) FROM entries e WHERE e.dirty = 1 ORDER BY e.ord"
            )
        else:  # one running sum over every row
            query = (
                "SELECT ord, len, before FROM (SELECT ord, dirty, COALESCE(length, 0) AS len,"
                " SUM(COALESCE(length, 0)) OVER (ORDER BY ord ROWS UNBOUNDED PRECEDING) - COALESCE(length, 0)"
                " AS before FROM entries) WHERE dirty = 1 ORDER BY ord"
            )
        return Layout(head, size, [(o, n, b) for o, n, b in self._db.execute(query)], count == 0)

    def dirty_entries(self) -> dict[int, dict[str, Any]]:
        return {o: json.loads(d) for o, d in self._db.execute("SELECT ord, data FROM entries WHERE dirty = 1")}

    def has_dirty(self) -> bool:
        return self._db.execute("SELECT 1 FROM entries WHERE dirty = 1 LIMIT 1").fetchone() is not None

    def all_entries(self) -> Iterator[tuple[int, dict[str, Any]]]:
        for o, d in self._db.execute("SELECT ord, data FROM entries ORDER BY ord"):
            yield o, json.loads(d)

    def get(self, effort_id: str) -> Effort | None:
        row = self._db.execute("SELECT data FROM entries WHERE id = ?", (effort_id,)).fetchone()
        return effort_of(row[0]) if row else None

    def existing(self, ids: Iterable[str]) -> set[str]:
        wanted = list(set(ids))
        found: set[str] = set()
        for i in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[i : i + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self._db.execute(f"SELECT id FROM entries WHERE id IN ({marks})", chunk))
        return found

    def open_efforts(self) -> list[Effort]:
        return [
            effort_of(d) for (d,) in self._db.execute("SELECT data FROM entries WHERE status = 'open' ORDER BY ord")
        ]

    def totals(self) -> Totals:
        count, concluded, raw = self._db.execute(
            "SELECT count(*), total(concluded), total(raw_tokens) FROM entries"
        ).fetchone()
        return Totals(int(count), int(concluded), int(raw))

    def efforts(
        self, *, concluded: bool | None = None, newest_first: bool = False, offset: int = 0, limit: int = -1
    ) -> list[Effort]:
        """A page of efforts in manifest order (or concluded ones, newest conclusion first)."""
        where = "" if concluded is None else f"WHERE concluded = {1 if concluded else 0}"
        order = "concluded_at DESC, ord DESC" if newest_first else "ord"
        query = f"SELECT data FROM entries {where} ORDER BY {order} LIMIT ? OFFSET ?"
        return [effort_of(d) for (d,) in self._db.execute(query, (limit, offset))]

    def iter_efforts(self) -> Iterator[Effort]:
        for (d,) in self._db.execute("SELECT data FROM entries ORDER BY ord"):
            yield effort_of(d)

    def by_digest(self, digest: str) -> list[Effort]:
        return [
            effort_of(d)
            for (d,) in self._db.execute("SELECT data FROM entries WHERE digest = ? ORDER BY ord", (digest,))
        ]

    def folded_upto(self) -> int:
        """The last ``raw.jsonl`` line an effort folded from the ambient chat holds (0: none): the
        folded efforts' ``source.lines`` are the one record of a fold (its partial index: no scan)."""
        query = (
            "SELECT max(json_extract(data, '$.source.lines[1]')) FROM entries"
            " WHERE json_extract(data, '$.source.folded_from') = 'ambient'"
        )
        found = self._db.execute(query).fetchone()[0]
        return found if type(found) is int and found > 0 else 0

    def by_source_kind(self, kind: str) -> list[Effort]:
        """Efforts whose ``source.kind`` is ``kind`` (the notes effort other agents write to)."""
        query = "SELECT data FROM entries WHERE json_extract(data, '$.source.kind') = ? ORDER BY ord"
        return [effort_of(d) for (d,) in self._db.execute(query, (kind,))]

    def changed_since(self, ts: str) -> list[Effort]:
        """Efforts created or concluded at or after ``ts`` (ISO-8601, compared as text)."""
        return [
            effort_of(d)
            for (d,) in self._db.execute(
                "SELECT data FROM entries WHERE ord IN (SELECT ord FROM entries WHERE created >= ?1"
                " UNION SELECT ord FROM entries WHERE concluded_at >= ?1) ORDER BY ord",
                (ts,),
            )
        ]

    def index_rows(self) -> Iterator[tuple[str, str, str | None, str | None]]:
        """(id, status, summary, name) of every effort, for the search index."""
        yield from self._db.execute(
            "SELECT id, status, json_extract(data, '$.summary'), json_extract(data, '$.name') FROM entries ORDER BY ord"
        )
