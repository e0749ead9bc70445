"""``derived.sqlite``: the one file of a session that holds only what can be derived from its record.

It holds the effort list's rows (``entries``, kept by :mod:`ccm_tui.core.manifest.effort_list`), the
search index (``efforts``, ``ambient_log``, ``meta_fts``, ``msg_fts``, kept by :mod:`ccm_tui.core.search`,
which reads an effort's status, summary and name from ``entries``: ``fts_stale`` and ``entries_gone``
tell it which meta documents to write again or drop),
the lines withdrawal markers withdraw (``withdrawn``) and ``meta`` (how far each part has read the
record: the manifest's stamp, the journal offset, the logs marker). Deleting it loses nothing: the next
open rebuilds it from ``manifest.yaml``, ``events.jsonl`` and the logs (see docs/TRUTH.md).

One schema version (``PRAGMA user_version``), one ``application_id`` and one recovery path: a file that
is foreign, of another version, corrupt or read-only is deleted and created again (empty: each part
then catches up from the record); a symbolic link or a FIFO in its place is refused; a directory that
cannot be written gets a database in memory. Nothing in the file is trusted beyond being rebuilt: it is
opened with ``trusted_schema`` off (the schema calls no function), a schema that is not exactly the one created here (an extra trigger,
a view in place of a table, a changed column or index) is foreign, a row its readers reject
(:class:`RowRejected`) rebuilds it, and every operation has a deadline of SQLite work
(:data:`QUERY_DEADLINE`), so a hostile file can hang no reader. A session owns one :class:`DerivedDB` (one connection
per session per process). The files of the two earlier derived databases (``search.sqlite*``,
``.manifest.sqlite*``) are deleted once this one is open.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from ...errors import CcmError, Interruption
from .durable import no_space_left, require_regular

DERIVED_FILE = "derived.sqlite"
OLD_FILES = ("search.sqlite", ".manifest.sqlite")  # the derived files before issue 32 (deleted)
SUFFIXES = ("", "-wal", "-shm", "-journal")
APPLICATION_ID = 0x43434D44  # "CCMD": marks the file as ours (PRAGMA application_id)
SCHEMA_VERSION = 4  # PRAGMA user_version; any other value means "rebuild" (4: no function in the schema)

TOKENIZER = "porter unicode61 remove_diacritics 2"
_TOKENIZER_FALLBACK = "porter unicode61 remove_diacritics 1"  # SQLite < 3.27

IN_MEMORY = Path(":memory:")  # a database that lives in memory only (a directory that cannot be written)
BUSY_TIMEOUT = 5.0  # seconds a statement waits for another connection's lock before DerivedBusy
QUERY_DEADLINE = 60.0  # seconds of SQLite work one operation (run) may take before it is interrupted
_PROGRESS_STEPS = 20_000  # virtual machine steps between two looks at the clock
_IDLE_GAP = 0.5  # seconds between two looks that are Python's time, not SQLite's (not counted)

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
-- the effort list (manifest/effort_list.py): one row per effort, the entry itself as JSON
CREATE TABLE entries (
    id TEXT PRIMARY KEY,
    ord INTEGER NOT NULL,                   -- manifest order
    status TEXT NOT NULL,
    raw_tokens INTEGER NOT NULL,
    concluded_at TEXT,
    digest TEXT,                            -- source.sha256 of an import
    source_kind TEXT,                       -- source.kind
    entry TEXT NOT NULL,                    -- Effort.to_dict() as JSON
    block_len INTEGER,                      -- bytes of its block in manifest.yaml (NULL: not in it)
    block_hash INTEGER,                     -- blake2b-64 of those bytes: a hand edit re-reads changed blocks only
    dirty INTEGER NOT NULL,                 -- changed since manifest.yaml was written
    fts_stale INTEGER NOT NULL DEFAULT 1,   -- summary or name not yet in the search's meta_fts (new: 1)
    folded_last INTEGER                     -- a fold of ambient chat: the last raw.jsonl line it took (else NULL)
);
CREATE INDEX entries_ord ON entries (ord, block_len);
CREATE INDEX entries_open ON entries (ord) WHERE status = 'open';
CREATE INDEX entries_dirty ON entries (ord) WHERE dirty = 1;
CREATE INDEX entries_totals ON entries (status, raw_tokens);
CREATE INDEX entries_recent ON entries (status, concluded_at, ord);
CREATE INDEX entries_digest ON entries (digest) WHERE digest IS NOT NULL;
CREATE INDEX entries_kind ON entries (source_kind) WHERE source_kind IS NOT NULL;
CREATE INDEX entries_folded ON entries (folded_last) WHERE folded_last IS NOT NULL;  -- ambient lines folded
CREATE INDEX entries_fts ON entries (ord) WHERE fts_stale = 1;
CREATE INDEX entries_status ON entries (status, id);   -- the search's status filter, both ways (covering)
-- the ids of deleted rows, until the search index drops their documents
CREATE TABLE entries_gone (id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TRIGGER entries_deleted AFTER DELETE ON entries BEGIN
    INSERT OR IGNORE INTO entries_gone (id) VALUES (old.id);
END;
-- the search index (search/): an effort's log (its status, summary and name are its entries row's),
-- or a block of raw.jsonl
CREATE TABLE efforts (
    num INTEGER PRIMARY KEY,
    effort_id TEXT NOT NULL UNIQUE,
    log_offset INTEGER NOT NULL DEFAULT 0,  -- bytes of the log consumed (complete lines), of a block: its lines
    log_lines INTEGER NOT NULL DEFAULT 0,   -- lines in those bytes (their ratio: the ranking's line size)
    log_tail BLOB NOT NULL DEFAULT x'',     -- the last bytes before log_offset
    log_size INTEGER,                       -- stat of the log at the last sync
    log_mtime_ns INTEGER,
    log_ino INTEGER,
    indexed_lines INTEGER NOT NULL DEFAULT 0, -- lines 0..n-1 are in msg_fts (a block: lines in it)
    source TEXT NOT NULL DEFAULT 'effort',   -- 'effort', or 'ambient': a block of raw.jsonl
    first_line INTEGER NOT NULL DEFAULT 0,   -- a block's first line (0-based) in raw.jsonl
    first_byte INTEGER                       -- ... and its byte offset
);
CREATE INDEX efforts_source ON efforts (source);
CREATE INDEX efforts_sizes ON efforts (indexed_lines, log_offset, log_lines);
CREATE TABLE ambient_log (                  -- raw.jsonl, as efforts.log_* for an effort's log
    id INTEGER PRIMARY KEY CHECK (id = 0),
    log_offset INTEGER NOT NULL,
    log_lines INTEGER NOT NULL,
    log_tail BLOB NOT NULL,
    log_size INTEGER,
    log_mtime_ns INTEGER,
    log_ino INTEGER
);
-- grams: the unspaced-script runs (CJK, Thai, ...) of the other columns as character pairs
CREATE VIRTUAL TABLE meta_fts USING fts5(effort_id, id_words, summary, name, grams, tokenize='{tok}');
CREATE VIRTUAL TABLE msg_fts USING fts5(content, role UNINDEXED, grams, tokenize='{tok}');
-- lines a withdrawal marker took back, 0-based and inclusive of the marker (log: efforts.num, -1: raw.jsonl)
CREATE TABLE withdrawn (
    log INTEGER NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    PRIMARY KEY (log, last)
) WITHOUT ROWID;
"""
_TABLES = ("meta", "entries", "entries_gone", "efforts", "ambient_log", "meta_fts", "msg_fts", "withdrawn")

_P = ParamSpec("_P")
_R = TypeVar("_R")


class DerivedError(CcmError, RuntimeError):
    """``derived.sqlite`` cannot be used now (an unusable directory, no FTS5, an I/O error)."""


class DerivedBusy(DerivedError):
    """Another connection held the database's lock for longer than this one waits."""


class DerivedWriteFailed(DerivedError):
    """A write to ``derived.sqlite`` failed on a full disk and was rolled back. Callers that already
    wrote the record ignore it: the derived rows catch up from the record later."""


class _ForeignDatabase(Interruption):
    """The file is an SQLite database, but not (this version of) ours."""


class RowRejected(CcmError, sqlite3.DatabaseError):
    """A row read back breaks a rule the record keeps (an id that is not a slug, a path, a reserved id):
    the file was not written by us. :meth:`DerivedDB.run` treats it as corruption: the file is rebuilt
    from the record and the operation tried again."""


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def _is_corruption(exc: BaseException) -> bool:
    if isinstance(exc, RowRejected):
        return True
    code = _code(exc)
    if code is not None:
        return code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def _error(path: Path, exc: sqlite3.Error) -> DerivedError:
    code = _code(exc)
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return DerivedBusy(f"{path}: {exc}")
    if code == sqlite3.SQLITE_FULL or "disk is full" in str(exc) or (code == sqlite3.SQLITE_IOERR and _full(path)):
        return DerivedWriteFailed(f"the disk is full: {path} not updated ({exc})")
    return DerivedError(f"{path}: {exc}")


def _full(path: Path) -> bool:
    return path != IN_MEMORY and no_space_left(path.parent)


def _discardable(exc: BaseException) -> bool:
    """Open failures fixed by deleting the file: corrupt, foreign or read-only."""
    return isinstance(exc, _ForeignDatabase) or _code(exc) == sqlite3.SQLITE_READONLY or _is_corruption(exc)


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


_EXPECTED: dict[str, frozenset[tuple[str, str, str, str | None]]] = {}


def _schema_rows(conn: sqlite3.Connection) -> frozenset[tuple[str, str, str, str | None]]:
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return frozenset(
        (str(t), str(n), str(b), None if q is None else str(q))
        for t, n, b, q in rows
        if not (t == "table" and str(n) in _STATISTICS)  # the planner's statistics (PRAGMA optimize) are ours too
    )


_STATISTICS = {"sqlite_stat1", "sqlite_stat4"}


def _expected_schema(tokenizer: str) -> frozenset[tuple[str, str, str, str | None]]:
    """``sqlite_master`` as :meth:`DerivedDB._create_schema` leaves it (made once in memory)."""
    if tokenizer not in _EXPECTED:
        probe = sqlite3.connect(":memory:", isolation_level=None)
        try:
            probe.executescript(_SCHEMA.format(tok=tokenizer))
            _EXPECTED[tokenizer] = _schema_rows(probe)
        finally:
            probe.close()
    return _EXPECTED[tokenizer]


def peek(path: Path, deadline: float = 1.0) -> sqlite3.Connection | None:
    """A read-only connection to someone's ``derived.sqlite`` for a glance (a count for a list of
    sessions): None unless it is ours exactly (application, version, schema); its statements are cut
    after ``deadline`` seconds. Never writes, never rebuilds."""
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        ends = time.monotonic() + deadline
        conn.set_progress_handler(lambda: int(time.monotonic() > ends), _PROGRESS_STEPS)
        app_id, version = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("application_id", "user_version"))
        ours = (_expected_schema(TOKENIZER), _expected_schema(_TOKENIZER_FALLBACK))
        if app_id == APPLICATION_ID and version == SCHEMA_VERSION and _schema_rows(conn) in ours:
            return conn
    except sqlite3.Error:
        pass
    conn.close()
    return None


def delete_files(path: Path) -> None:
    for suffix in SUFFIXES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def remove_old_files(directory: Path) -> None:
    """Delete the derived files of earlier versions (their content is rebuilt here)."""
    for name in OLD_FILES:
        with contextlib.suppress(OSError):
            delete_files(directory / name)


def derived_path(directory: Path) -> Path:
    """Where a session's derived database lives: its file, or memory when the directory cannot be
    written (a reader of someone else's session)."""
    directory = Path(directory)
    if directory.is_dir() and not os.access(directory, os.W_OK | os.X_OK):
        return IN_MEMORY
    return directory / DERIVED_FILE


class DerivedDB:
    """The connection to ``derived.sqlite``: opening (and discarding a file that is not usable),
    transactions, the ``meta`` table, and recovery from corruption while in use (:meth:`run`).

    Thread-safe: one re-entrant lock around the connection (:meth:`run`, :meth:`locked`). Users read
    :attr:`conn` each time: a rebuild replaces the connection and bumps :attr:`generation`.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._depth = 0  # nesting of write_txn
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self.generation = 0  # connections opened so far: a rebuilt file is never mistaken for the one before
        self.recreated = False  # this instance created the file from scratch: every part catches up
        self.failures = 0  # operations that failed: an update may be missing (see search.sync.IndexWatch)
        self._ino: int | None = None
        self._spent = 0.0  # seconds of SQLite work in the current operation (see QUERY_DEADLINE)
        self._seen: float | None = None  # the progress handler's last look at the clock (None: no operation)
        self._conn = self._open()

    @classmethod
    def for_session(cls, directory: Path) -> DerivedDB:
        """The session's derived database (in memory when its directory cannot be written); the
        earlier derived files are deleted once it is open."""
        db = cls(derived_path(directory))
        if db.path != IN_MEMORY:
            remove_old_files(Path(directory))
        return db

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @property
    def conn(self) -> sqlite3.Connection:
        """The open connection (a rebuild replaces it: read it each time, never keep it)."""
        if self._closed or self._conn is None:
            raise DerivedError(f"{self.path} is closed")
        return self._conn

    def reopen_if_replaced(self) -> None:
        """Another process deleted the file (it found it corrupt) and built a new one: use that."""
        if self.path == IN_MEMORY or self._closed:
            return
        try:
            ino: int | None = os.stat(self.path).st_ino
        except OSError:
            ino = None
        if ino != self._ino:
            with self._lock:
                self._reconnect(discard=False)

    def run(self, operation: Callable[_P, _R], /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """Run ``operation`` under the lock; rebuild a corrupt file and retry once. Any other SQLite
        failure surfaces as :class:`DerivedError` (:class:`DerivedBusy`, :class:`DerivedWriteFailed`)."""
        with self._lock:
            self.conn  # noqa: B018 - raises when closed
            outermost = self._seen is None
            if outermost:
                self._start_clock()
            try:
                try:
                    return operation(*args, **kwargs)
                except sqlite3.Error as exc:
                    if not _is_corruption(exc):
                        self.failures += 1
                        raise _error(self.path, exc) from exc
                    if self._depth:  # inside another operation's transaction: that one rebuilds
                        raise
                    self._reconnect(discard=True)
                self._start_clock()
                try:
                    return operation(*args, **kwargs)
                except sqlite3.Error as exc:
                    self.failures += 1
                    raise _error(self.path, exc) from exc
            finally:
                if outermost:
                    self._seen = None

    def _start_clock(self) -> None:
        self._spent, self._seen = 0.0, time.monotonic()

    def _progress(self) -> int:
        """SQLite's progress handler: non-zero interrupts the statement ("interrupted": DerivedError)."""
        if self._seen is None:
            return 0
        now = time.monotonic()
        if now - self._seen < _IDLE_GAP:
            self._spent += now - self._seen
        self._seen = now
        return int(self._spent > QUERY_DEADLINE)

    def rebuild(self) -> None:
        """Delete the file and create it again (a reader found a row it rejects outside :meth:`run`)."""
        with self._lock:
            self._reconnect(discard=True)

    def locked(self) -> threading.RLock:
        return self._lock

    def _open(self) -> sqlite3.Connection:
        """Connect, deleting and creating the file again once if it is corrupt, foreign or old."""
        if self.path == IN_MEMORY:
            return self._connect()
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DerivedError(f"cannot create the directory of {self.path}: {exc}") from exc
        if not os.access(directory, os.W_OK | os.X_OK):
            raise DerivedError(f"the directory of {self.path} is not writable")
        for attempt in range(2):
            try:
                return self._connect()
            except (sqlite3.Error, _ForeignDatabase) as exc:
                if _full(self.path):  # SQLite says "disk I/O error" or "database or disk is full"
                    raise DerivedWriteFailed(f"the disk is full: cannot open {self.path}; free some space") from exc
                if attempt == 1 or not _discardable(exc):
                    raise DerivedError(f"cannot open {self.path}: {exc}") from exc
                self._discard_file()
        raise AssertionError("unreachable")

    def _connect(self) -> sqlite3.Connection:
        self.generation += 1
        if self.path != IN_MEMORY:  # a FIFO would hang the first read; a link would be written through
            for suffix in SUFFIXES:
                require_regular(self.path.with_name(self.path.name + suffix))  # StoreError: refused
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA trusted_schema = OFF")  # no function with side effects from the file's schema
            conn.set_progress_handler(self._progress, _PROGRESS_STEPS)
            if not _has_fts5(conn):
                raise DerivedError(
                    f"this Python's SQLite {sqlite3.sqlite_version} lacks FTS5; ccm-tui needs an FTS5-enabled SQLite"
                )
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute("PRAGMA synchronous = NORMAL")  # derived: losing the last commit costs a catch-up
            conn.execute("PRAGMA journal_size_limit = 33554432")  # shrink the WAL after big syncs
            conn.execute("PRAGMA cache_size = -32000")
            if not self._schema_present(conn):
                self._create_schema(conn)
                self.recreated = True
            if self.path != IN_MEMORY:
                self._ino = os.stat(self.path).st_ino
            return conn
        except BaseException:
            conn.close()
            raise

    @staticmethod
    def _schema_present(conn: sqlite3.Connection) -> bool:
        """True for our schema, False for an empty file; raises _ForeignDatabase otherwise (another
        application or version, or any object in ``sqlite_master`` that is not exactly one we create)."""
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if objects == 0 and app_id == 0:
            return False
        if app_id != APPLICATION_ID or version != SCHEMA_VERSION:
            raise _ForeignDatabase(f"application_id={app_id:#x} user_version={version}")
        found = _schema_rows(conn)
        if found not in (_expected_schema(TOKENIZER), _expected_schema(_TOKENIZER_FALLBACK)):
            raise _ForeignDatabase("its schema is not the one ccm-tui creates")
        try:
            for table in _TABLES:
                conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchall()
        except sqlite3.OperationalError as exc:
            if _is_corruption(exc):
                raise
            raise _ForeignDatabase(str(exc)) from exc
        return True

    @staticmethod
    def _create_schema(conn: sqlite3.Connection) -> None:
        schema = _SCHEMA.format(tok=_tokenizer_for(conn))
        version = f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
        try:  # (a script: the trigger's body holds semicolons)
            conn.executescript(f"BEGIN IMMEDIATE; {schema} {version} COMMIT;")
        except sqlite3.OperationalError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if "already exists" not in str(exc) or not DerivedDB._schema_present(conn):
                raise  # (another process created it first: used when it is ours, else _ForeignDatabase)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _discard_file(self) -> None:
        try:
            delete_files(self.path)
        except OSError as exc:
            raise DerivedError(f"cannot delete the broken {self.path}: {exc}") from exc

    def _reconnect(self, *, discard: bool) -> None:
        """Close, (delete the file: it is derived data,) and open again."""
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None
        self._depth = 0
        if discard and self.path != IN_MEMORY:
            self._discard_file()
        self._conn = self._open()
        if discard:
            self.recreated = True

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def write_txn(self) -> Iterator[sqlite3.Connection]:
        """A write transaction under the lock; nested uses join the outermost one."""
        with self._lock:
            db = self.conn
            if self._depth == 0:
                db.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield db
            except BaseException:
                self._depth -= 1
                if self._depth == 0 and db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
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
        then raise :class:`DerivedBusy`: a reader that must never block uses the rows as they are."""
        with self._lock:
            self.conn.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")
            try:
                yield
            finally:
                if self._conn is not None:
                    self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")

    def state_version(self) -> tuple[int, int, int]:
        """Changes when anyone (this connection included) modified the database, or it was rebuilt."""
        conn = self.conn
        return self.generation, conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes

    # ------------------------------------------------------------------ meta
    def meta(self, key: str) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def set_meta(self, **values: Any) -> None:
        self.conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [(k, json.dumps(v)) for k, v in values.items()],
        )

    def remember(self, **values: Any) -> None:
        """Record facts in ``meta`` in a transaction of their own (lost with the file, by design)."""

        def write() -> None:
            with self.write_txn():
                self.set_meta(**values)

        self.run(write)
