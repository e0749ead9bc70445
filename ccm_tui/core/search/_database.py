"""The search index's SQLite file: opening, schema, transactions, and recovery from corruption.

The index is *derived* data, so any file that is corrupt, foreign (another
application or schema version) or read-only is deleted and rebuilt instead of
reported; only an unusable directory or a SQLite without FTS5 is an error
(:class:`SearchIndexError`).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from ...errors import CcmError, Interruption
from ..storage.durable import StoreError, no_space_left, require_regular

APPLICATION_ID = 0x43434D53  # "CCMS": marks the file as ours (PRAGMA application_id)
SCHEMA_VERSION = 4  # PRAGMA user_version; a different value means "rebuild" (2: grams, 3: ambient blocks,
# 4: withdrawn lines)

TOKENIZER = "porter unicode61 remove_diacritics 2"
_TOKENIZER_FALLBACK = "porter unicode61 remove_diacritics 1"  # SQLite < 3.27

IN_MEMORY = Path(":memory:")  # an index that lives in memory only (see IndexDatabase._open)
BUSY_TIMEOUT = 5.0  # seconds a statement waits for another connection's lock before SearchIndexBusy

_LINE_BITS = 32
_LINE_MASK = (1 << _LINE_BITS) - 1

_SCHEMA = """
CREATE TABLE efforts (
    num INTEGER PRIMARY KEY,
    effort_id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    summary TEXT,
    name TEXT,
    log_offset INTEGER NOT NULL DEFAULT 0,  -- bytes of the log consumed (complete lines), of a block: its lines
    log_lines INTEGER NOT NULL DEFAULT 0,   -- lines in those bytes (their ratio: the ranking's line size)
    log_tail BLOB NOT NULL DEFAULT x'',     -- the last bytes before log_offset
    log_size INTEGER,                       -- stat of the log at the last sync
    log_mtime_ns INTEGER,
    log_ino INTEGER,
    indexed_lines INTEGER NOT NULL DEFAULT 0, -- lines 0..n-1 are in msg_fts (a block: lines in it)
    source TEXT NOT NULL DEFAULT 'effort',   -- 'effort', or 'ambient': a block of raw.jsonl (ambient.py)
    first_line INTEGER NOT NULL DEFAULT 0,   -- a block's first line (0-based) in raw.jsonl
    first_byte INTEGER                       -- ... and its byte offset
);
CREATE INDEX efforts_status ON efforts (status);
CREATE INDEX efforts_source ON efforts (source);
CREATE TABLE ambient_log (                  -- raw.jsonl, as efforts.log_* for an effort's log
    id INTEGER PRIMARY KEY CHECK (id = 0),
    log_offset INTEGER NOT NULL,
    log_lines INTEGER NOT NULL,
    log_tail BLOB NOT NULL,
    log_size INTEGER,
    log_mtime_ns INTEGER,
    log_ino INTEGER
);
-- grams: the unspaced-script runs (CJK, Thai, ...) of the other columns as character pairs (unspaced.py)
CREATE VIRTUAL TABLE meta_fts USING fts5(effort_id, id_words, summary, name, grams, tokenize='{tok}');
CREATE VIRTUAL TABLE msg_fts USING fts5(content, role UNINDEXED, grams, tokenize='{tok}');
-- lines a withdrawal marker took back (core/retraction.py), 0-based and inclusive of the marker;
-- log: the effort's num, or -1 for raw.jsonl (records.AMBIENT_LOG)
CREATE TABLE withdrawn (
    log INTEGER NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    PRIMARY KEY (log, last)
) WITHOUT ROWID;
"""

_P = ParamSpec("_P")
_R = TypeVar("_R")


class SearchIndexError(CcmError, RuntimeError):
    """The search index cannot be used (unwritable directory, no FTS5, I/O error)."""


class SearchIndexBusy(SearchIndexError):
    """Another connection held the index's lock for longer than this one waits (its busy timeout)."""


def _index_error(path: Path, exc: sqlite3.Error) -> SearchIndexError:
    code = getattr(exc, "sqlite_errorcode", None)
    busy = isinstance(code, int) and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return (SearchIndexBusy if busy else SearchIndexError)(f"search index {path}: {exc}")


def _add_narrow_indexes(conn: sqlite3.Connection) -> None:
    """Indexes added since the schema's version (derived, so an index made earlier just lacks them
    until a writer adds them): the corpus figures read one narrow index, not every row's log tail."""
    try:
        conn.execute("CREATE INDEX IF NOT EXISTS efforts_sizes ON efforts (indexed_lines, log_offset, log_lines)")
        conn.execute("DROP INDEX IF EXISTS efforts_corpus")  # the former one: indexed_lines alone
    except sqlite3.OperationalError:
        pass  # busy or read-only now: added by the next open


def _is_corruption(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


class _ForeignDatabase(Interruption):
    """The file is an SQLite database, but not (this version of) a search index."""


def _discardable(exc: BaseException) -> bool:
    """Open failures fixed by deleting the file: corrupt, foreign or read-only db."""
    if isinstance(exc, _ForeignDatabase):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    read_only = isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_READONLY
    return read_only or _is_corruption(exc)


def _has_fts5(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp._fts5_probe")
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc).lower():  # "no such module: fts5"; a full disk is not a missing module
            return False
        raise
    return True


def _tokenizer_for(conn: sqlite3.Connection) -> str:
    try:
        conn.execute(f"CREATE VIRTUAL TABLE temp._tok_probe USING fts5(x, tokenize='{TOKENIZER}')")
        conn.execute("DROP TABLE temp._tok_probe")
    except sqlite3.OperationalError:
        return _TOKENIZER_FALLBACK
    return TOKENIZER


def _delete_db_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class _Part(Protocol):
    """A part of the index (ingest, ranking, ...): it reaches the database through ``db``."""

    @property
    def db(self) -> IndexDatabase: ...


_PartT = TypeVar("_PartT", bound=_Part)


def recovering(method: Callable[Concatenate[_PartT, _P], _R]) -> Callable[Concatenate[_PartT, _P], _R]:
    """A part's public method run by its database's :meth:`IndexDatabase.run` (under the lock; a
    corrupt db is rebuilt and the method retried once)."""

    @functools.wraps(method)
    def wrapper(part: _PartT, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return part.db.run(method, part, *args, **kwargs)

    return wrapper


class IndexDatabase:
    """The index's SQLite connection: opening (and discarding a file that is not a usable index),
    transactions, and recovery from corruption while in use (:meth:`run`).

    Thread-safe: one lock around the connection, taken by :meth:`run`. The parts of
    :class:`~._index.EffortIndex` hold this object and read :attr:`conn` each time they use it: a
    rebuild replaces the connection.
    """

    def __init__(self, db_path: Path) -> None:
        self.path = Path(db_path)
        self._lock = threading.RLock()
        self._depth = 0  # nesting of write_txn
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._generation = 0  # connections opened so far: a rebuilt db is never mistaken for the one before
        self.recreated = False
        """True when this instance created the db from scratch (new, corrupt or
        foreign file): the caller should run ``sync_session``."""
        self.failures = 0  # operations that failed: an update may be missing (see mark_synced)
        self._conn = self._open()

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the database (idempotent)."""
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _ensure_open(self) -> None:
        if self._closed or self._conn is None:
            raise SearchIndexError(f"search index {self.path} is closed")

    @property
    def conn(self) -> sqlite3.Connection:
        """The open connection (a rebuild replaces it: read it each time, never keep it)."""
        assert self._conn is not None
        return self._conn

    def run(self, operation: Callable[_P, _R], /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """Run ``operation`` under the lock; rebuild a corrupt db and retry once.

        Any other SQLite failure surfaces as :class:`SearchIndexError`.
        """
        with self._lock:
            self._ensure_open()
            try:
                return operation(*args, **kwargs)
            except sqlite3.Error as exc:
                if not _is_corruption(exc):
                    self.failures += 1
                    raise _index_error(self.path, exc) from exc
                self._rebuild()
            try:
                return operation(*args, **kwargs)
            except sqlite3.Error as exc:
                self.failures += 1
                raise _index_error(self.path, exc) from exc

    def _open(self) -> sqlite3.Connection:
        """Connect, rebuilding the file once if it is corrupt or not ours."""
        if self.path == IN_MEMORY:  # a read-only session's search: built for one query, written nowhere
            return self._connect()
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SearchIndexError(f"cannot create the search index directory {directory}: {exc}") from exc
        if not os.access(directory, os.W_OK | os.X_OK):
            raise SearchIndexError(f"search index directory {directory} is not writable")
        for attempt in range(2):
            try:
                return self._connect()
            except (sqlite3.Error, _ForeignDatabase) as exc:
                if no_space_left(directory):  # SQLite says "disk I/O error" or "database or disk is full"
                    raise SearchIndexError(
                        f"the disk is full: cannot open the search index {self.path}; free some space and try again"
                    ) from exc
                if attempt == 1 or not _discardable(exc):
                    raise SearchIndexError(f"cannot open the search index {self.path}: {exc}") from exc
                self._discard_file()
        raise AssertionError("unreachable")

    def _connect(self) -> sqlite3.Connection:
        self._generation += 1
        try:
            if self.path != IN_MEMORY:  # a FIFO would hang the first read; a link would be written through
                for suffix in ("", "-wal", "-shm", "-journal"):
                    require_regular(self.path.with_name(self.path.name + suffix))
        except StoreError as exc:
            raise SearchIndexError(str(exc)) from None
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            if not _has_fts5(conn):
                raise SearchIndexError(
                    f"this Python's SQLite {sqlite3.sqlite_version} lacks FTS5;"
                    " effort search needs an FTS5-enabled SQLite"
                )
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute("PRAGMA synchronous = NORMAL")  # derived data: losing the last commit is fine
            conn.execute("PRAGMA journal_size_limit = 33554432")  # shrink the WAL after big syncs
            conn.execute("PRAGMA cache_size = -32000")
            if not self._schema_present(conn):
                self._create_schema(conn)
                self.recreated = True
            _add_narrow_indexes(conn)
            return conn
        except BaseException:
            conn.close()
            raise

    @staticmethod
    def _schema_present(conn: sqlite3.Connection) -> bool:
        """True for our schema, False for an empty file; raises _ForeignDatabase otherwise."""
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if objects == 0 and app_id == 0:
            return False
        if app_id != APPLICATION_ID or version != SCHEMA_VERSION:
            raise _ForeignDatabase(f"application_id={app_id:#x} user_version={version}")
        try:
            for table in ("efforts", "ambient_log", "meta_fts", "msg_fts"):
                conn.execute(f"SELECT rowid FROM {table} LIMIT 1").fetchall()
        except sqlite3.OperationalError as exc:
            if _is_corruption(exc):
                raise
            raise _ForeignDatabase(str(exc)) from exc
        return True

    @staticmethod
    def _create_schema(conn: sqlite3.Connection) -> None:
        tokenizer = _tokenizer_for(conn)
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.format(tok=tokenizer).split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _discard_file(self) -> None:
        try:
            _delete_db_files(self.path)
        except OSError as exc:
            raise SearchIndexError(f"cannot delete the broken search index {self.path}: {exc}") from exc

    def _rebuild(self) -> None:
        """Throw the database away and start an empty one (it is derived data)."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        self._depth = 0
        self._discard_file()
        self._conn = self._open()
        self.recreated = True

    # ------------------------------------------------------------------ transactions

    @contextmanager
    def write_txn(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; nested uses join the outermost one."""
        db = self.conn
        if self._depth == 0:
            db.execute("BEGIN IMMEDIATE")
        self._depth += 1
        try:
            yield db
        except BaseException:
            self._depth -= 1
            if self._depth == 0 and db.in_transaction:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise
        self._depth -= 1
        if self._depth == 0:
            db.execute("COMMIT")

    def commit_point(self) -> None:
        """Commit the outermost write transaction so far and start the next one."""
        if self._depth == 1:
            self.conn.execute("COMMIT")
            self.conn.execute("BEGIN IMMEDIATE")

    @contextmanager
    def read_txn(self) -> Iterator[sqlite3.Connection]:
        """A read snapshot, so a search sees one consistent state."""
        db = self.conn
        db.execute("BEGIN")
        try:
            yield db
        finally:
            if db.in_transaction:
                db.execute("COMMIT")

    @contextmanager
    def waiting_at_most(self, seconds: float) -> Iterator[None]:
        """Statements inside wait at most ``seconds`` for another connection's lock (0: not at all),
        then raise :class:`SearchIndexBusy`. A reader that must never block (the MCP server) brings
        the index up to date this way and, while another process writes to it, searches it as it is."""
        with self._lock:
            self._ensure_open()
            self.conn.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")
            try:
                yield
            finally:
                if self._conn is not None:
                    self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")

    def state_version(self) -> tuple[int, int, int]:
        """Changes when anyone (this connection included) modified the database, or it was rebuilt:
        what the parts' caches are kept for."""
        conn = self.conn
        return self._generation, conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes

    def optimize(self) -> None:
        """Merge the FTS5 segments (worth it after a large rebuild; takes seconds at 1M rows)."""
        self.run(self._optimize)

    def _optimize(self) -> None:
        with self.write_txn() as db:
            db.execute("INSERT INTO meta_fts (meta_fts) VALUES ('optimize')")
            db.execute("INSERT INTO msg_fts (msg_fts) VALUES ('optimize')")
