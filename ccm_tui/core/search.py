"""Ranked, incremental, persistent full-text search over efforts.

The index lives in one SQLite file (a session keeps it at
``<session>/search.sqlite``). It is *derived* data: deleting it loses nothing,
the next :meth:`EffortIndex.sync_session` rebuilds it from ``manifest.yaml``
and the ``efforts/<id>.jsonl`` logs. A corrupt or foreign file is deleted and
rebuilt without bothering the caller.

Two FTS5 tables hold the documents:

* ``meta_fts`` — one row per effort: its id, the id split into words
  (``fix-auth_bug`` → ``fix auth bug``, camelCase split too), its summary and
  its name. Its rowid is the effort's number (``efforts.num``).
* ``msg_fts`` — one row per log line: the message content (role stored,
  not indexed). Its rowid is ``num << 32 | line``, so the messages of one
  effort are a contiguous rowid range, which FTS5 can seek to directly: removing
  or re-indexing an effort, or ranking only its messages, never scans the table.

Both use the ``porter unicode61 remove_diacritics 2`` tokenizer, so ``café``
finds ``cafe`` and ``connections`` finds ``connection``.

Ranking (higher is better, always positive) combines, per effort:

* *meta coverage* — the IDF-weighted share of query terms found in the id,
  summary or name (weight :data:`META_COVERAGE_WEIGHT`). IDF uses a smoothed
  formula, so it stays meaningful with three efforts as with ten thousand;
* the FTS5 ``bm25()`` of the meta document with column weights
  (:data:`META_COLUMN_WEIGHTS`), squashed into ``[0, 1)``;
* a bounded contribution of the effort's best few message hits (``bm25()``
  of the top :data:`MESSAGE_TOP_HITS` messages, decaying, squashed into
  ``[0, MESSAGE_WEIGHT)``).

An effort whose summary matches the query therefore ranks above one that
merely mentions a word in a long log, and documents matching more (and rarer)
terms rank higher.

Performance: ranking *every* message that matches a common word of a
million-row table costs hundreds of milliseconds, so :meth:`EffortIndex.search`
never does that. Candidate efforts come from the meta table (small) and from
a global top-N of messages ranked on the query's *selective* terms only (terms
present in at most :data:`SELECTIVE_MESSAGE_DOCS` messages; frequent terms add
little BM25 weight anyway). When every term is frequent, message candidates are
the efforts with the most recent matching messages. Each candidate then gets an
exact score from a per-effort rowid-range query.

Log lines: line numbers are 0-based (line ``n`` is preceded by ``n`` lines), the
same count as ``Effort.messages``. Only complete lines (ending in ``\\n``) are
indexed; a torn tail left by a crash is picked up once completed. Lines that
are not a JSON object are skipped but still count.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ParamSpec, TypeVar

__all__ = ["EffortIndex", "SearchHit", "SearchIndexError", "query_terms"]

# --------------------------------------------------------------------------- constants

APPLICATION_ID = 0x43434D53  # "CCMS": marks the file as ours (PRAGMA application_id)
SCHEMA_VERSION = 1  # PRAGMA user_version; a different value means "rebuild"

TOKENIZER = "porter unicode61 remove_diacritics 2"
_TOKENIZER_FALLBACK = "porter unicode61 remove_diacritics 1"  # SQLite < 3.27

_LINE_BITS = 32
_LINE_MASK = (1 << _LINE_BITS) - 1
_TAIL_BYTES = 64  # bytes before the sync offset remembered to detect rewritten logs

MAX_QUERY_TERMS = 16
MAX_MESSAGE_CHARS = 64_000  # a giant tool dump is indexed by its head only

#: bm25 weights of the meta columns: effort_id, id_words, summary, name.
META_COLUMN_WEIGHTS = (3.0, 3.0, 4.0, 5.0)
META_COVERAGE_WEIGHT = 3.0
META_BM25_WEIGHT = 1.0
META_BM25_HALF = 8.0  # bm25 value that earns half of META_BM25_WEIGHT
MESSAGE_WEIGHT = 1.0
MESSAGE_HALF = 12.0  # combined message bm25 that earns half of MESSAGE_WEIGHT
MESSAGE_FLOOR = 0.05  # share of MESSAGE_WEIGHT earned by any message hit
MESSAGE_TOP_HITS = 3
MESSAGE_HIT_DECAY = 0.5

SELECTIVE_MESSAGE_DOCS = 2_000  # terms in more messages than this are "frequent"
GLOBAL_MESSAGE_ROWS = 200  # messages ranked globally to find candidate efforts
MIN_CANDIDATES = 20

SNIPPET_CHARS = 160
SNIPPET_TOKENS = 26
_MARK_OPEN, _MARK_CLOSE = "\x02", "\x03"

_SCHEMA = """
CREATE TABLE efforts (
    num INTEGER PRIMARY KEY,
    effort_id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    summary TEXT,
    name TEXT,
    log_offset INTEGER NOT NULL DEFAULT 0,  -- bytes of the log consumed (complete lines)
    log_lines INTEGER NOT NULL DEFAULT 0,   -- lines in those bytes
    log_tail BLOB NOT NULL DEFAULT x'',     -- the last bytes before log_offset
    log_size INTEGER,                       -- stat of the log at the last sync
    log_mtime_ns INTEGER,
    log_ino INTEGER,
    indexed_lines INTEGER NOT NULL DEFAULT 0  -- lines 0..n-1 are in msg_fts
);
CREATE VIRTUAL TABLE meta_fts USING fts5(effort_id, id_words, summary, name, tokenize='{tok}');
CREATE VIRTUAL TABLE msg_fts USING fts5(content, role UNINDEXED, tokenize='{tok}');
"""

_P = ParamSpec("_P")
_R = TypeVar("_R")


# --------------------------------------------------------------------------- public types


class SearchIndexError(RuntimeError):
    """The search index cannot be used (unwritable directory, no FTS5, I/O error)."""


@dataclass(frozen=True)
class SearchHit:
    """One effort found by :meth:`EffortIndex.search`.

    ``snippet`` is about 160 characters of the best-matching text — the summary
    when it contains a query term, else the best message — with matched terms
    wrapped in ``**``.
    """

    id: str
    status: str
    summary: str | None
    score: float
    snippet: str


# --------------------------------------------------------------------------- text helpers

_TERM_RE = re.compile(r"[^\W_]+")
_ID_SEPARATORS_RE = re.compile(r"[-_./:\s]+")
_CAMEL_RE = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def query_terms(query: str) -> list[str]:
    """Split free text into distinct lower-case word terms (at most MAX_QUERY_TERMS).

    Everything that is not a letter or digit separates terms, so FTS5 syntax
    (quotes, ``*``, ``NEAR(``, ``-``, ``:``, ``^``, parentheses) is inert.
    """
    text = unicodedata.normalize("NFC", query).lower()
    return list(dict.fromkeys(_TERM_RE.findall(text)))[:MAX_QUERY_TERMS]


def _phrase(term: str) -> str:
    """One term as an FTS5 string literal (terms never contain quotes)."""
    return '"' + term.replace('"', '""') + '"'


def _or_expression(terms: Sequence[str]) -> str:
    return " OR ".join(_phrase(t) for t in terms)


def _id_words(effort_id: str) -> str:
    """``fix-auth_bug`` → ``fix auth bug``; ``fixAuthBug`` → ``fix Auth Bug``."""
    return _CAMEL_RE.sub(" ", _ID_SEPARATORS_RE.sub(" ", effort_id)).strip()


def _normalise(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _message_text(message: Any) -> str | None:
    """The searchable text of one log record, or None when it has none."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):  # multi-part content: keep the text parts
        parts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, dict))]
        content = "\n".join(p for p in parts if isinstance(p, str))
    if not isinstance(content, str) or not content.strip():
        return None
    return _normalise(content[:MAX_MESSAGE_CHARS])


def _format_snippet(raw: str, width: int = SNIPPET_CHARS) -> str:
    """Collapse whitespace, trim around the first match, turn markers into ``**``."""
    text = " ".join(raw.split())
    if len(text) > width:
        first = text.find(_MARK_OPEN)
        start = max(0, first - width // 4) if first >= 0 else 0
        end = start + width
        opened, closed = text.rfind(_MARK_OPEN, 0, end), text.rfind(_MARK_CLOSE, 0, end)
        if opened > closed:  # never cut a marked term in half
            end = text.find(_MARK_CLOSE, opened) + 1
        head = "…" if start > 0 and not text[start:].startswith("…") else ""
        tail = "…" if end < len(text) and not text[:end].endswith("…") else ""
        text = head + text[start:end].strip() + tail
    return text.replace(_MARK_OPEN, "**").replace(_MARK_CLOSE, "**")


def _squash(value: float, half: float) -> float:
    """Map ``[0, inf)`` onto ``[0, 1)``; ``half`` maps to 0.5."""
    return value / (value + half) if value > 0 else 0.0


def _idf(docs: int, matching: int) -> float:
    """Smoothed (always positive) inverse document frequency."""
    return math.log(1.0 + (docs - matching + 0.5) / (matching + 0.5))


# --------------------------------------------------------------------------- sqlite helpers


def _is_corruption(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


class _ForeignDatabase(Exception):
    """The file is an SQLite database, but not (this version of) a search index."""


def _discardable(exc: BaseException) -> bool:
    """Open failures fixed by deleting the file: corrupt, foreign or read-only db."""
    if isinstance(exc, _ForeignDatabase):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    return _is_corruption(exc) or (code is not None and code & 0xFF == sqlite3.SQLITE_READONLY)  # type: ignore[arg-type]


def _has_fts5(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp._fts5_probe")
    except sqlite3.OperationalError:
        return False
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


def _recovering(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run a public method under the lock; rebuild a corrupt db and retry once.

    Any other SQLite failure surfaces as :class:`SearchIndexError`.
    """

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        self: EffortIndex = args[0]  # type: ignore[assignment]
        with self._lock:
            self._ensure_open()
            try:
                return method(*args, **kwargs)
            except sqlite3.Error as exc:
                if not _is_corruption(exc):
                    raise SearchIndexError(f"search index {self.path}: {exc}") from exc
                self._rebuild()
            try:
                return method(*args, **kwargs)
            except sqlite3.Error as exc:
                raise SearchIndexError(f"search index {self.path}: {exc}") from exc

    return wrapper


# --------------------------------------------------------------------------- internal records


@dataclass
class _LogState:
    """What the index remembers about one effort's log file."""

    offset: int = 0
    lines: int = 0
    tail: bytes = b""
    size: int | None = None
    mtime_ns: int | None = None
    ino: int | None = None
    indexed_lines: int = 0

    def unchanged(self, st: os.stat_result) -> bool:
        """True when the file has the size, mtime and inode seen at the last sync."""
        return (self.size, self.mtime_ns, self.ino) == (st.st_size, st.st_mtime_ns, st.st_ino)

    def replaced(self, st: os.stat_result) -> bool:
        """True when the file is not the one indexed so far (new inode or shrunk)."""
        if self.offset == 0 and self.indexed_lines == 0:
            return False
        return (self.ino is not None and self.ino != st.st_ino) or st.st_size < self.offset


@dataclass
class _EffortRow:
    num: int
    effort_id: str
    status: str
    summary: str | None
    name: str | None
    log: _LogState


_ROW_COLUMNS = (
    "num, effort_id, status, summary, name, log_offset, log_lines, log_tail, "
    "log_size, log_mtime_ns, log_ino, indexed_lines"
)


def _row_from_tuple(t: Sequence[Any]) -> _EffortRow:
    log = _LogState(t[5], t[6], bytes(t[7]), t[8], t[9], t[10], t[11])
    return _EffortRow(t[0], t[1], t[2], t[3], t[4], log)


@dataclass
class _Candidate:
    num: int
    coverage: float = 0.0
    meta_bm25: float = 0.0
    message_hits: tuple[tuple[int, float], ...] = ()  # (rowid, -bm25) best first

    @property
    def score(self) -> float:
        combined = 0.0
        for rank, (_, value) in enumerate(self.message_hits):
            combined += value * MESSAGE_HIT_DECAY**rank
        messages = MESSAGE_FLOOR + (1 - MESSAGE_FLOOR) * _squash(combined, MESSAGE_HALF) if self.message_hits else 0.0
        return (
            META_COVERAGE_WEIGHT * self.coverage
            + META_BM25_WEIGHT * _squash(self.meta_bm25, META_BM25_HALF)
            + MESSAGE_WEIGHT * messages
        )


def _effort_entry(entry: Any) -> tuple[str, str, str | None, str | None]:
    """(id, status, summary, name) from a manifest tuple or an Effort-like object."""
    if isinstance(entry, (tuple, list)):
        name = entry[3] if len(entry) > 3 else None
        return str(entry[0]), str(entry[1]), entry[2], name
    return entry.id, entry.status, entry.summary, getattr(entry, "name", None)


# --------------------------------------------------------------------------- the index


class EffortIndex:
    """A persistent, incrementally updated BM25 search index over a session's efforts.

    Thread-safe (one lock around the connection). Use as a context manager or
    call :meth:`close`.
    """

    def __init__(self, db_path: Path) -> None:
        self.path = Path(db_path)
        self._lock = threading.RLock()
        self._depth = 0  # nesting of _write_txn
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self.recreated = False
        """True when this instance created the db from scratch (new, corrupt or
        foreign file): the caller should run :meth:`sync_session`."""
        self._conn = self._open()

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the database (idempotent)."""
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> EffortIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure_open(self) -> None:
        if self._closed or self._conn is None:
            raise SearchIndexError(f"search index {self.path} is closed")

    @property
    def _db(self) -> sqlite3.Connection:
        assert self._conn is not None
        return self._conn

    def _open(self) -> sqlite3.Connection:
        """Connect, rebuilding the file once if it is corrupt or not ours."""
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
                if attempt == 1 or not _discardable(exc):
                    raise SearchIndexError(f"cannot open the search index {self.path}: {exc}") from exc
                self._discard_file()
        raise AssertionError("unreachable")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            if not _has_fts5(conn):
                raise SearchIndexError(
                    f"this Python's SQLite {sqlite3.sqlite_version} lacks FTS5; search needs an FTS5-enabled SQLite"
                )
            conn.execute("PRAGMA busy_timeout = 5000")
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute("PRAGMA synchronous = NORMAL")  # derived data: durability of the last commit is optional
            conn.execute("PRAGMA cache_size = -32000")
            if not self._schema_present(conn):
                self._create_schema(conn)
                self.recreated = True
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
            for table in ("efforts", "meta_fts", "msg_fts"):
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
    def _write_txn(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; nested uses join the outermost one."""
        db = self._db
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

    @contextmanager
    def _read_txn(self) -> Iterator[sqlite3.Connection]:
        """A read snapshot, so a search sees one consistent state."""
        db = self._db
        db.execute("BEGIN")
        try:
            yield db
        finally:
            if db.in_transaction:
                db.execute("COMMIT")

    # ------------------------------------------------------------------ effort rows

    def _row(self, effort_id: str) -> _EffortRow | None:
        found = self._db.execute(f"SELECT {_ROW_COLUMNS} FROM efforts WHERE effort_id = ?", (effort_id,)).fetchone()
        return _row_from_tuple(found) if found else None

    def _all_rows(self) -> dict[str, _EffortRow]:
        rows = self._db.execute(f"SELECT {_ROW_COLUMNS} FROM efforts").fetchall()
        return {t[1]: _row_from_tuple(t) for t in rows}

    def _ensure_row(self, effort_id: str) -> _EffortRow:
        """The effort's row, created as an open effort without summary if unknown."""
        row = self._row(effort_id)
        if row is None:
            row = self._write_meta(None, effort_id, "open", None, None)
        return row

    def _write_meta(
        self, row: _EffortRow | None, effort_id: str, status: str, summary: str | None, name: str | None
    ) -> _EffortRow:
        """Insert or update an effort's row and meta document; no-op when unchanged."""
        db = self._db
        if row is None:
            num = db.execute(
                "INSERT INTO efforts (effort_id, status, summary, name) VALUES (?, ?, ?, ?)",
                (effort_id, status, summary, name),
            ).lastrowid
            assert num is not None
            row = _EffortRow(num, effort_id, status, summary, name, _LogState())
        elif (row.status, row.summary, row.name) == (status, summary, name):
            return row
        else:
            db.execute(
                "UPDATE efforts SET status = ?, summary = ?, name = ? WHERE num = ?",
                (status, summary, name, row.num),
            )
            row.status, row.summary, row.name = status, summary, name
        db.execute(
            "INSERT OR REPLACE INTO meta_fts (rowid, effort_id, id_words, summary, name) VALUES (?, ?, ?, ?, ?)",
            (row.num, effort_id, _id_words(effort_id), _normalise(summary or ""), _normalise(name or "")),
        )
        return row

    def _delete_effort(self, row: _EffortRow) -> None:
        self._clear_messages(row.num)
        self._db.execute("DELETE FROM meta_fts WHERE rowid = ?", (row.num,))
        self._db.execute("DELETE FROM efforts WHERE num = ?", (row.num,))

    def _clear_messages(self, num: int) -> None:
        lo = num << _LINE_BITS
        self._db.execute("DELETE FROM msg_fts WHERE rowid BETWEEN ? AND ?", (lo, lo | _LINE_MASK))

    def _save_log_state(self, num: int, log: _LogState) -> None:
        self._db.execute(
            "UPDATE efforts SET log_offset = ?, log_lines = ?, log_tail = ?, log_size = ?, log_mtime_ns = ?,"
            " log_ino = ?, indexed_lines = ? WHERE num = ?",
            (log.offset, log.lines, log.tail, log.size, log.mtime_ns, log.ino, log.indexed_lines, num),
        )

    def _insert_messages(self, num: int, numbered: Iterable[tuple[int, Any]]) -> int:
        """Index (line, record) pairs; returns how many rows were written."""
        rows = []
        base = num << _LINE_BITS
        for line, message in numbered:
            text = _message_text(message)
            if text is not None and 0 <= line <= _LINE_MASK:
                role = message.get("role")
                rows.append((base | line, text, role if isinstance(role, str) else None))
        if rows:
            self._db.executemany("INSERT OR REPLACE INTO msg_fts (rowid, content, role) VALUES (?, ?, ?)", rows)
        return len(rows)

    # ------------------------------------------------------------------ public: updates

    @_recovering
    def upsert_effort(self, effort_id: str, *, status: str, summary: str | None, name: str | None = None) -> None:
        """Create or update an effort's meta document (id, status, summary, name).

        ``name=None`` keeps the name already stored; pass ``""`` to clear it.
        Status and summary are always replaced (``None`` means no summary).
        """
        with self._write_txn():
            row = self._row(effort_id)
            keep_name = row.name if (row is not None and name is None) else name
            self._write_meta(row, effort_id, status, summary, keep_name)

    @_recovering
    def remove_effort(self, effort_id: str) -> None:
        """Drop an effort and all its messages (no-op if unknown)."""
        with self._write_txn():
            row = self._row(effort_id)
            if row is not None:
                self._delete_effort(row)

    @_recovering
    def add_messages(self, effort_id: str, messages: Iterable[dict[str, Any]], start_line: int) -> int:
        """Index log records appended at 0-based line ``start_line`` onwards.

        The records must be the ones written to the effort's log at those lines;
        a later :meth:`sync_effort_log` then skips them instead of re-reading.
        Unknown efforts are created as open efforts. Returns rows indexed.
        """
        batch = list(messages)
        with self._write_txn():
            row = self._ensure_row(effort_id)
            added = self._insert_messages(row.num, enumerate(batch, start_line))
            if start_line <= row.log.indexed_lines < start_line + len(batch):
                self._db.execute(
                    "UPDATE efforts SET indexed_lines = ? WHERE num = ?", (start_line + len(batch), row.num)
                )
            return added

    @_recovering
    def sync_effort_log(self, effort_id: str, log_path: Path) -> int:
        """Index the complete lines appended to ``log_path`` since the last sync.

        A log that shrank, was replaced (new inode) or rewritten before the
        last synced offset is re-indexed from scratch. Returns lines added.
        """
        with self._write_txn():
            row = self._ensure_row(effort_id)
            return self._sync_log(row, Path(log_path), check_unchanged=True)

    @_recovering
    def sync_session(self, session_dir: Path, efforts: Iterable[Any]) -> int:
        """Bring the index up to date with a session's manifest and logs.

        ``efforts`` yields ``(id, status, summary)`` tuples (an optional fourth
        item is the name; ``Effort`` objects work too). Efforts missing from it
        are removed; changed status/summary/name are updated; logs whose
        (size, mtime_ns, inode) are unchanged are skipped without being opened.
        Returns the number of log lines added.
        """
        wanted = {}
        for entry in efforts:
            effort_id, status, summary, name = _effort_entry(entry)
            wanted[effort_id] = (status, summary, name)
        logs = Path(session_dir) / "efforts"
        added = 0
        with self._write_txn():
            stored = self._all_rows()
            for effort_id in stored.keys() - wanted.keys():
                self._delete_effort(stored[effort_id])
            for effort_id, (status, summary, name) in wanted.items():
                row = stored.get(effort_id)
                keep_name = row.name if (row is not None and name is None) else name
                row = self._write_meta(row, effort_id, status, summary, keep_name)
                if Path(effort_id).name == effort_id:  # never follow a path out of efforts/
                    added += self._sync_log(row, logs / f"{effort_id}.jsonl", check_unchanged=True)
        return added

    def optimize(self) -> None:
        """Merge the FTS5 segments (worth it after a large rebuild; takes seconds at 1M rows)."""
        with self._lock:
            self._ensure_open()
            with self._write_txn() as db:
                db.execute("INSERT INTO meta_fts (meta_fts) VALUES ('optimize')")
                db.execute("INSERT INTO msg_fts (msg_fts) VALUES ('optimize')")

    # ------------------------------------------------------------------ log syncing

    def _open_log(self, path: Path) -> IO[bytes]:
        """Open a log for reading (a seam for tests counting opened files)."""
        return open(path, "rb")  # noqa: SIM115

    def _sync_log(self, row: _EffortRow, path: Path, *, check_unchanged: bool) -> int:
        """Index what was appended to ``path`` since ``row.log``; update the stored state."""
        try:
            st = path.stat()
        except FileNotFoundError:
            if row.log.offset or row.log.indexed_lines or row.log.size is not None:
                self._reset_log(row)
                self._save_log_state(row.num, row.log)
            return 0
        if check_unchanged and row.log.unchanged(st):
            return 0
        with self._open_log(path) as fh:
            st = os.fstat(fh.fileno())
            if row.log.replaced(st):
                self._reset_log(row)
            data = self._read_after(fh, row.log)
            if data is None:  # bytes before the offset changed: the log was rewritten
                self._reset_log(row)
                data = self._read_after(fh, row.log)
                assert data is not None
        added = self._consume(row, data)
        row.log.size, row.log.mtime_ns, row.log.ino = st.st_size, st.st_mtime_ns, st.st_ino
        self._save_log_state(row.num, row.log)
        return added

    def _reset_log(self, row: _EffortRow) -> None:
        """Forget everything indexed from the effort's log."""
        self._clear_messages(row.num)
        row.log = _LogState()

    @staticmethod
    def _read_after(fh: IO[bytes], log: _LogState) -> bytes | None:
        """Bytes after ``log.offset``, or None if the remembered tail no longer matches."""
        start = log.offset - len(log.tail)
        fh.seek(start)
        data = fh.read()
        if not data.startswith(log.tail):
            return None
        return data[len(log.tail) :]

    def _consume(self, row: _EffortRow, data: bytes) -> int:
        """Index the complete lines of ``data`` (which starts at ``row.log.offset``)."""
        end = data.rfind(b"\n") + 1
        if end == 0:
            return 0
        complete = data[:end]
        lines = complete.split(b"\n")[:-1]
        first = row.log.lines
        skip = max(0, row.log.indexed_lines - first)  # already indexed by add_messages
        records = ((first + i, self._parse_line(raw)) for i, raw in enumerate(lines) if i >= skip)
        added = self._insert_messages(row.num, records)
        log = row.log
        log.tail = complete[-_TAIL_BYTES:] if end >= _TAIL_BYTES else (log.tail + complete)[-_TAIL_BYTES:]
        log.offset += len(complete)
        log.lines += len(lines)
        log.indexed_lines = max(log.indexed_lines, log.lines)
        return added

    @staticmethod
    def _parse_line(raw: bytes) -> Any:
        try:
            return json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            return None

    # ------------------------------------------------------------------ public: search

    @_recovering
    def search(self, query: str, limit: int = 10, status: str | None = None) -> list[SearchHit]:
        """Efforts matching ``query`` (free text), best first, ties broken by id.

        ``status`` restricts results to efforts with that status. A query with
        no word characters returns ``[]``; FTS5 syntax in it is treated as text.
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        with self._read_txn():
            return self._search(terms, limit, status)

    def _search(self, terms: list[str], limit: int, status: str | None) -> list[SearchHit]:
        expression = _or_expression(terms)
        wanted = max(MIN_CANDIDATES, 2 * limit)
        candidates = self._meta_candidates(terms, expression, status, wanted)
        for num in self._message_candidate_nums(terms, expression, status, wanted):
            candidates.setdefault(num, _Candidate(num))
        info = self._effort_info(list(candidates))
        if status is not None:
            candidates = {n: c for n, c in candidates.items() if info[n][1] == status}
        for candidate in candidates.values():
            candidate.message_hits = self._best_messages(expression, candidate.num)
        scored = sorted(
            (c for c in candidates.values() if c.score > 0), key=lambda c: (-c.score, info[c.num][0])
        )
        return [self._hit(c, info[c.num], expression) for c in scored[:limit]]

    def _meta_candidates(
        self, terms: list[str], expression: str, status: str | None, wanted: int
    ) -> dict[int, _Candidate]:
        """Efforts whose id/summary/name match, with coverage and bm25; the best ``wanted``."""
        db = self._db
        total = db.execute("SELECT count(*) FROM efforts").fetchone()[0]
        weights: dict[int, float] = {}
        idf_sum = 0.0
        for term in terms:
            nums = [r[0] for r in db.execute("SELECT rowid FROM meta_fts WHERE meta_fts MATCH ?", (_phrase(term),))]
            idf = _idf(total, len(nums))
            idf_sum += idf
            for num in nums:
                weights[num] = weights.get(num, 0.0) + idf
        if not weights:
            return {}
        w = ", ".join(str(x) for x in META_COLUMN_WEIGHTS)
        sql = f"SELECT m.rowid, -bm25(meta_fts, {w}) FROM meta_fts m"
        params: tuple[Any, ...] = (expression,)
        if status is not None:
            sql += " JOIN efforts e ON e.num = m.rowid WHERE meta_fts MATCH ? AND e.status = ?"
            params += (status,)
        else:
            sql += " WHERE meta_fts MATCH ?"
        found = [
            _Candidate(num, coverage=weights.get(num, 0.0) / idf_sum, meta_bm25=value)
            for num, value in db.execute(sql, params)
        ]
        found.sort(key=lambda c: -c.score)
        return {c.num: c for c in found[:wanted]}

    def _message_candidate_nums(
        self, terms: list[str], expression: str, status: str | None, wanted: int
    ) -> list[int]:
        """Efforts with the best message hits (see the module docstring for the strategy)."""
        db = self._db
        if status is not None:
            nums = [r[0] for r in db.execute("SELECT num FROM efforts WHERE status = ? LIMIT ?", (status, wanted + 1))]
            if len(nums) <= wanted:  # few efforts with that status: score them all exactly
                return nums
        selective = [t for t in terms if self._message_doc_count(t, SELECTIVE_MESSAGE_DOCS + 1) <= SELECTIVE_MESSAGE_DOCS]
        if selective:
            sql = "SELECT rowid FROM msg_fts WHERE msg_fts MATCH ? ORDER BY rank LIMIT ?"
            params: tuple[Any, ...] = (_or_expression(selective), GLOBAL_MESSAGE_ROWS)
        else:
            sql = "SELECT rowid FROM msg_fts WHERE msg_fts MATCH ? ORDER BY rowid DESC LIMIT ?"
            params = (expression, GLOBAL_MESSAGE_ROWS)
        nums = list(dict.fromkeys(rowid >> _LINE_BITS for (rowid,) in db.execute(sql, params)))
        return nums[: wanted if status is None else 4 * wanted]

    def _message_doc_count(self, term: str, cap: int) -> int:
        """How many messages contain ``term``, counting no further than ``cap``."""
        sql = "SELECT count(*) FROM (SELECT 1 FROM msg_fts WHERE msg_fts MATCH ? LIMIT ?)"
        return self._db.execute(sql, (_phrase(term), cap)).fetchone()[0]

    def _best_messages(self, expression: str, num: int) -> tuple[tuple[int, float], ...]:
        """The effort's top messages for ``expression`` as (rowid, -bm25)."""
        lo = num << _LINE_BITS
        rows = self._db.execute(
            "SELECT rowid, -bm25(msg_fts) FROM msg_fts WHERE msg_fts MATCH ? AND rowid BETWEEN ? AND ?"
            " ORDER BY rank LIMIT ?",
            (expression, lo, lo | _LINE_MASK, MESSAGE_TOP_HITS),
        ).fetchall()
        return tuple((rowid, value) for rowid, value in rows)

    def _effort_info(self, nums: list[int]) -> dict[int, tuple[str, str, str | None]]:
        """num → (effort_id, status, summary)."""
        info: dict[int, tuple[str, str, str | None]] = {}
        for start in range(0, len(nums), 500):
            chunk = nums[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for num, effort_id, status, summary in self._db.execute(
                f"SELECT num, effort_id, status, summary FROM efforts WHERE num IN ({marks})", chunk
            ):
                info[num] = (effort_id, status, summary)
        return info

    def _hit(self, candidate: _Candidate, info: tuple[str, str, str | None], expression: str) -> SearchHit:
        effort_id, status, summary = info
        return SearchHit(
            id=effort_id,
            status=status,
            summary=summary,
            score=candidate.score,
            snippet=self._snippet(candidate, summary, expression) or effort_id,
        )

    def _snippet(self, candidate: _Candidate, summary: str | None, expression: str) -> str:
        """Marked summary if it contains a match, else the marked best message, else the summary."""
        args = (_MARK_OPEN, _MARK_CLOSE, "…", SNIPPET_TOKENS)
        if candidate.coverage > 0 and summary:
            raw = self._db.execute(
                "SELECT snippet(meta_fts, 2, ?, ?, ?, ?) FROM meta_fts WHERE meta_fts MATCH ? AND rowid = ?",
                (*args, expression, candidate.num),
            ).fetchone()
            if raw and _MARK_OPEN in raw[0]:
                return _format_snippet(raw[0])
        if candidate.message_hits:
            raw = self._db.execute(
                "SELECT snippet(msg_fts, 0, ?, ?, ?, ?) FROM msg_fts WHERE msg_fts MATCH ? AND rowid = ?",
                (*args, expression, candidate.message_hits[0][0]),
            ).fetchone()
            if raw:
                return _format_snippet(raw[0])
        return _format_snippet(summary or "")
