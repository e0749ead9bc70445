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

Ranking (higher is better, always positive) adds up, per effort:

* *meta coverage* — the IDF-weighted share of query terms found in the id,
  summary or name, times :data:`META_COVERAGE_WEIGHT` (3). The IDF is the
  smoothed ``ln(1 + (N - n + 0.5) / (n + 0.5))``, which stays positive and
  meaningful with three efforts as with ten thousand (FTS5's own IDF drops to
  ~0 for a word in half the documents, which small sessions hit all the time);
* the FTS5 ``bm25()`` of the meta document with column weights
  (:data:`META_COLUMN_WEIGHTS`), squashed into ``[0, META_BM25_WEIGHT)``;
* a bounded log contribution in ``[0, MESSAGE_WEIGHT)`` (1): BM25 computed at
  the effort level, where the "term frequency" of a term is the number of the
  effort's messages containing it (saturated with ``k1``, normalised by log
  length with ``b``), as a share of what the query could earn; any message hit
  earns at least :data:`MESSAGE_FLOOR` of it.

So an effort whose summary matches ranks above one that merely mentions the
word in a long log, and efforts matching more (and rarer) terms rank higher.
Ties are broken by effort id.

Why not rank messages with FTS5 ``bm25()``? Measured on 1M messages: every
statement using ``bm25()`` first counts each phrase's documents over the whole
table (~20 ns per posting: ~20 ms for a word in 95% of messages), then costs
~1.3 µs per matching row. Ranking all messages for a common word takes seconds,
and even one ``bm25()`` query per candidate effort adds up. Postings alone are
cheap (reading a rowid is ~0.2 µs; seeking an effort's rowid range ~30 µs).
So :meth:`EffortIndex.search`:

1. reads, per term and table, the newest postings — at most
   :data:`MESSAGE_WINDOW` / :data:`META_WINDOW` rows, grouped per effort in
   SQL. A term with fewer postings is *selective* and seen completely; for a
   frequent one the window covers the most recent efforts, and its document
   count is extrapolated from the window (meta: counted exactly);
2. scores every effort seen from that evidence (plus ``bm25()`` over the
   meta documents of selective terms) and keeps the best
   ``max(MIN_CANDIDATES, 3 * limit)``;
3. completes their evidence for frequent terms outside the windows with
   per-effort rowid-range counts, and ranks them exactly.

An old effort whose only link to the query is a frequent word in its log can
therefore be missed; everything matching a selective word, and every meta
(id/summary/name) match of a selective word, is always considered. Snippets
come from the summary when it contains a match, else from the effort's best
message by FTS5 ``bm25()`` over the selective terms (the newest matching
message when all terms are frequent).

Log lines: line numbers are 0-based (line ``n`` is preceded by ``n`` lines), the
same count as ``Effort.messages``. Only complete lines (ending in ``\\n``) are
indexed; a torn tail left by a crash is picked up once completed. Lines that
are not a JSON object are skipped but still count.
"""

from __future__ import annotations

import functools
import heapq
import json
import math
import os
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
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
META_COVERAGE_WEIGHT = 3.0  # all query terms in id/summary/name (IDF-weighted share)
META_BM25_WEIGHT = 1.0
META_BM25_HALF = 8.0  # meta bm25 value that earns half of META_BM25_WEIGHT
MESSAGE_WEIGHT = 1.0  # cap of the whole log's contribution: below any full meta match
MESSAGE_FLOOR = 0.05  # share of MESSAGE_WEIGHT earned by any message hit
BM25_K1 = 1.2  # BM25 saturation over "messages of the effort containing the term"
BM25_B = 0.5  # ... normalised by the effort's log length

MESSAGE_WINDOW = 2_000  # newest message postings read per term
MESSAGE_ROW_BUDGET = 12_000  # ... and for all terms together
META_WINDOW = 3_000
META_ROW_BUDGET = 12_000
MIN_WINDOW = 500
META_BM25_ROWS = 4_000  # meta rows ranked by bm25() per search at most
MIN_CANDIDATES = 30  # efforts scored exactly per search: max(this, 3 * limit)

SYNC_BATCH_LINES = 100_000  # sync_session commits after about this many new lines

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
CREATE INDEX efforts_status ON efforts (status);
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


def _idf(docs: float, matching: float) -> float:
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
    read_only = isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_READONLY
    return read_only or _is_corruption(exc)


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
class _Postings:
    """The efforts containing one query term in one table.

    Postings are read newest-first and capped, so for a frequent term they
    cover only recent efforts: ``counts`` is exact for efforts with
    ``num >= floor`` (``floor == 0``: complete). ``docs`` is the number of
    documents holding the term — exact when complete, else extrapolated from
    the window.
    """

    docs: float
    counts: dict[int, int]
    floor: int

    @property
    def complete(self) -> bool:
        return self.floor == 0


@dataclass
class _Plan:
    """Per-search state: terms, their postings, and per-term score weights."""

    terms: list[str]
    meta: list[_Postings]
    messages: list[_Postings]
    meta_idf: list[float]
    message_idf: list[float]
    avg_lines: float
    meta_weight: list[float] = field(init=False)  # coverage score earned per term found in meta
    message_weight: list[float] = field(init=False)  # share of the message score per term

    def __post_init__(self) -> None:
        meta_total, message_total = sum(self.meta_idf), sum(self.message_idf) * (BM25_K1 + 1)
        self.meta_weight = [META_COVERAGE_WEIGHT * idf / meta_total for idf in self.meta_idf]
        self.message_weight = [idf / message_total for idf in self.message_idf]

    @property
    def expression(self) -> str:
        return _or_expression(self.terms)


@dataclass
class _Candidate:
    """Evidence gathered for one effort during a search."""

    num: int
    meta_terms: set[int] = field(default_factory=set)  # indices of terms in id/summary/name
    meta_bm25: float = 0.0  # -bm25() of the meta document (selective terms only)
    message_counts: dict[int, int] = field(default_factory=dict)  # term index -> messages containing it
    lines: float = 0.0  # messages in the effort's log (0: use the corpus average)

    def score(self, plan: _Plan) -> float:
        """Meta coverage + squashed meta bm25 + bounded message contribution (see module doc)."""
        total = 0.0
        for i in self.meta_terms:
            total += plan.meta_weight[i]
        if self.meta_bm25 > 0:
            total += META_BM25_WEIGHT * self.meta_bm25 / (self.meta_bm25 + META_BM25_HALF)
        if self.message_counts:
            lines = self.lines or plan.avg_lines
            norm = BM25_K1 * (1 - BM25_B + BM25_B * lines / plan.avg_lines)
            share = 0.0
            for i, n in self.message_counts.items():
                share += plan.message_weight[i] * n * (BM25_K1 + 1) / (n + norm)
            total += MESSAGE_WEIGHT * (MESSAGE_FLOOR + (1 - MESSAGE_FLOOR) * share)
        return total


def _safe_file_name(effort_id: str) -> bool:
    """True when ``<id>.jsonl`` names a file inside efforts/ (never a path out of it)."""
    return bool(effort_id) and effort_id not in (".", "..") and "/" not in effort_id and os.sep not in effort_id


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
        self._corpus_cache: tuple[tuple[int, int], tuple[int, int, int]] | None = None
        self._sync_cache: tuple[tuple[int, int], dict[str, tuple[Any, ...]]] | None = None
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
                    f"this Python's SQLite {sqlite3.sqlite_version} lacks FTS5;"
                    " effort search needs an FTS5-enabled SQLite"
                )
            conn.execute("PRAGMA busy_timeout = 5000")
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute("PRAGMA synchronous = NORMAL")  # derived data: losing the last commit is fine
            conn.execute("PRAGMA journal_size_limit = 33554432")  # shrink the WAL after big syncs
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
        self._corpus_cache = self._sync_cache = None
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

    def _commit_point(self) -> None:
        """Commit the outermost write transaction so far and start the next one."""
        if self._depth == 1:
            self._db.execute("COMMIT")
            self._db.execute("BEGIN IMMEDIATE")

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
        sql = f"SELECT {_ROW_COLUMNS} FROM efforts WHERE effort_id = ?"
        found = self._db.execute(sql, (effort_id,)).fetchone()
        return _row_from_tuple(found) if found else None

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
            text_changed = (row.summary, row.name) != (summary, name)
            row.status, row.summary, row.name = status, summary, name
            if not text_changed:  # the status lives in `efforts` only
                return row
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

    def add_messages(self, effort_id: str, messages: Iterable[dict[str, Any]], start_line: int) -> int:
        """Index log records appended at 0-based line ``start_line`` onwards.

        The records must be the ones written to the effort's log at those lines;
        a later :meth:`sync_effort_log` then skips them instead of re-reading.
        Unknown efforts are created as open efforts. Returns rows indexed.
        """
        return self._add_messages(effort_id, list(messages), start_line)  # a list survives a retry

    @_recovering
    def _add_messages(self, effort_id: str, batch: list[dict[str, Any]], start_line: int) -> int:
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
            return self._sync_log(row, log_path)

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
        return self._sync_session(session_dir, wanted)

    @_recovering
    def _sync_session(self, session_dir: Path, wanted: dict[str, tuple[str, str | None, str | None]]) -> int:
        logs = os.path.join(os.fspath(session_dir), "efforts", "")
        added = pending = 0
        with self._write_txn():
            version = self._state_version()
            stored = self._sync_state(version)
            for effort_id in stored.keys() - wanted.keys():
                self._delete_effort(self._ensure_row(effort_id))
            for effort_id, (status, summary, name) in wanted.items():
                lines = self._sync_entry(stored.get(effort_id), effort_id, status, summary, name, logs)
                added, pending = added + lines, pending + lines
                if pending >= SYNC_BATCH_LINES:  # bound the WAL and memory of a big (re)build
                    self._commit_point()
                    pending = 0
            unchanged = self._state_version() == version
        self._sync_cache = (version, stored) if unchanged else None
        if added >= SYNC_BATCH_LINES:  # a big (re)build: give the WAL's disk space back
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return added

    def _state_version(self) -> tuple[int, int]:
        """Changes when anyone (this connection included) modified the database."""
        return self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes

    def _sync_state(self, version: tuple[int, int]) -> dict[str, tuple[Any, ...]]:
        """id → (status, summary, name, log_size, log_mtime_ns, log_ino), reused while unchanged."""
        if self._sync_cache is not None and self._sync_cache[0] == version:
            return self._sync_cache[1]
        return {
            t[0]: t[1:]
            for t in self._db.execute(
                "SELECT effort_id, status, summary, name, log_size, log_mtime_ns, log_ino FROM efforts"
            )
        }

    def _sync_entry(
        self,
        stored: tuple[Any, ...] | None,
        effort_id: str,
        status: str,
        summary: str | None,
        name: str | None,
        logs: str,
    ) -> int:
        """sync_session for one manifest entry; the common no-change case costs one stat()."""
        safe = _safe_file_name(effort_id)
        path = logs + effort_id + ".jsonl" if safe else None
        try:
            st = os.stat(path) if path else None
        except OSError:
            st = None
        if stored is not None and stored[:2] == (status, summary) and name in (None, stored[2]):
            if st is None and stored[3] is None:
                return 0
            if st is not None and stored[3:] == (st.st_size, st.st_mtime_ns, st.st_ino):
                return 0
        row = self._row(effort_id)
        keep_name = row.name if (row is not None and name is None) else name
        row = self._write_meta(row, effort_id, status, summary, keep_name)
        return self._sync_log(row, path) if path else 0

    @_recovering
    def optimize(self) -> None:
        """Merge the FTS5 segments (worth it after a large rebuild; takes seconds at 1M rows)."""
        with self._write_txn() as db:
            db.execute("INSERT INTO meta_fts (meta_fts) VALUES ('optimize')")
            db.execute("INSERT INTO msg_fts (msg_fts) VALUES ('optimize')")

    # ------------------------------------------------------------------ log syncing

    def _open_log(self, path: str | Path) -> IO[bytes]:
        """Open a log for reading (a seam for tests counting opened files)."""
        return open(path, "rb")

    def _sync_log(self, row: _EffortRow, path: str | Path) -> int:
        """Index what was appended to ``path`` since ``row.log``; update the stored state.

        A log whose (size, mtime_ns, inode) match the last sync is not opened.
        """
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if row.log.offset or row.log.indexed_lines or row.log.size is not None:
                self._reset_log(row)
                self._save_log_state(row.num, row.log)
            return 0
        if row.log.unchanged(st):
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
        plan = self._plan(terms)
        allowed = self._nums_with_status(status) if status is not None else None
        shortlist = self._shortlist(plan, allowed, max(MIN_CANDIDATES, 3 * limit))
        self._complete_evidence(plan, shortlist)
        info = self._effort_info([c.num for c in shortlist])
        shortlist = [c for c in shortlist if c.num in info and (c.meta_terms or c.message_counts)]
        for candidate in shortlist:
            candidate.lines = info[candidate.num][3]
        ranked = sorted(
            ((c.score(plan), info[c.num][0], c) for c in shortlist),
            key=lambda t: (-t[0], t[1]),
        )
        return [self._hit(plan, c, score, info[c.num]) for score, _, c in ranked[:limit]]

    # -- planning

    def _plan(self, terms: list[str]) -> _Plan:
        """Read every term's (windowed) postings in both tables and derive IDFs."""
        efforts, lines, _ = self._corpus_size()
        meta_window = max(MIN_WINDOW, min(META_WINDOW, META_ROW_BUDGET // len(terms)))
        message_window = max(MIN_WINDOW, min(MESSAGE_WINDOW, MESSAGE_ROW_BUDGET // len(terms)))
        meta = [self._postings("meta_fts", t, meta_window, efforts) for t in terms]
        messages = [self._postings("msg_fts", t, message_window, lines) for t in terms]
        return _Plan(
            terms=terms,
            meta=meta,
            messages=messages,
            meta_idf=[_idf(efforts, p.docs) for p in meta],
            message_idf=[_idf(lines, p.docs) for p in messages],
            avg_lines=max(1.0, lines / efforts) if efforts else 1.0,
        )

    def _corpus_size(self) -> tuple[int, int, int]:
        """(efforts, log lines indexed, highest effort number), cached until the db changes."""
        version = self._state_version()
        if self._corpus_cache is None or self._corpus_cache[0] != version:
            efforts, lines, top = self._db.execute(
                "SELECT count(*), total(indexed_lines), max(num) FROM efforts"
            ).fetchone()
            self._corpus_cache = (version, (efforts, int(lines), top or 0))
        return self._corpus_cache[1]

    def _postings(self, table: str, term: str, window: int, total_docs: int) -> _Postings:
        """Up to ``window`` newest documents of ``table`` containing ``term``, counted per effort."""
        shift = _LINE_BITS if table == "msg_fts" else 0
        counts = dict(
            self._db.execute(
                f"SELECT rowid >> {shift}, count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ?"
                " ORDER BY rowid DESC LIMIT ?) GROUP BY 1",
                (_phrase(term), window),
            ).fetchall()
        )
        seen = sum(counts.values())
        if seen < window:
            return _Postings(float(seen), counts, 0)
        floor = min(counts)
        if shift:  # the oldest effort in the window may be cut: leave it out
            del counts[floor]
            floor += 1
            # documents in the window ≈ efforts since the floor × average log length
            window_docs = (self._corpus_size()[2] - floor + 1) * total_docs / max(1, self._corpus_size()[0])
            docs = sum(counts.values()) * total_docs / window_docs if window_docs > 0 else 0.0
        else:  # meta tables are small: count exactly
            sql = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"
            docs = float(self._db.execute(sql, (_phrase(term),)).fetchone()[0])
        return _Postings(min(float(total_docs), max(docs, float(seen))), counts, max(floor, 1))

    def _nums_with_status(self, status: str) -> set[int]:
        return {num for (num,) in self._db.execute("SELECT num FROM efforts WHERE status = ?", (status,))}

    # -- evidence

    def _shortlist(self, plan: _Plan, allowed: set[int] | None, wanted: int) -> list[_Candidate]:
        """The ``wanted`` efforts with the best scores on the evidence in the postings.

        Runs over every effort in the postings (thousands for frequent terms),
        so it sums plain dicts and builds candidates for the winners only.
        """
        bm25 = self._meta_bm25(plan)
        partial: dict[int, float] = {}
        for weight, postings in zip(plan.meta_weight, plan.meta):
            for num in postings.counts:
                partial[num] = partial.get(num, 0.0) + weight
        for num, value in bm25.items():
            partial[num] = partial.get(num, 0.0) + META_BM25_WEIGHT * value / (value + META_BM25_HALF)
        shares: dict[int, float] = {}
        for weight, postings in zip(plan.message_weight, plan.messages):
            weight *= BM25_K1 + 1
            for num, n in postings.counts.items():
                shares[num] = shares.get(num, 0.0) + weight * n / (n + BM25_K1)
        floor, rest = MESSAGE_WEIGHT * MESSAGE_FLOOR, MESSAGE_WEIGHT * (1 - MESSAGE_FLOOR)
        for num, share in shares.items():
            partial[num] = partial.get(num, 0.0) + floor + rest * share
        if allowed is not None:
            partial = (
                {num: partial.get(num, 0.0) for num in allowed}
                if len(allowed) <= wanted
                else {num: value for num, value in partial.items() if num in allowed}
            )  # few efforts with that status: judge them all
        best = heapq.nlargest(wanted, partial.items(), key=lambda item: item[1])
        return [self._candidate(plan, num, bm25.get(num, 0.0)) for num, _ in best]

    @staticmethod
    def _candidate(plan: _Plan, num: int, meta_bm25: float) -> _Candidate:
        """A candidate with the evidence the postings hold for it."""
        return _Candidate(
            num,
            meta_terms={i for i, p in enumerate(plan.meta) if num in p.counts},
            meta_bm25=meta_bm25,
            message_counts={i: p.counts[num] for i, p in enumerate(plan.messages) if num in p.counts},
        )

    def _meta_bm25(self, plan: _Plan) -> dict[int, float]:
        """FTS5 bm25 (column-weighted) of meta documents, over the selective terms
        (complete postings), as long as that ranks few rows: num → -bm25."""
        chosen, rows = [], 0.0
        for term, postings in sorted(zip(plan.terms, plan.meta), key=lambda tp: tp[1].docs):
            if postings.complete and postings.docs and rows + postings.docs <= META_BM25_ROWS:
                chosen.append(term)
                rows += postings.docs
        if not chosen:
            return {}
        weights = ", ".join(str(w) for w in META_COLUMN_WEIGHTS)
        return dict(
            self._db.execute(
                f"SELECT rowid, -bm25(meta_fts, {weights}) FROM meta_fts WHERE meta_fts MATCH ?",
                (_or_expression(chosen),),
            ).fetchall()
        )

    def _complete_evidence(self, plan: _Plan, shortlist: list[_Candidate]) -> None:
        """Look up frequent terms for short-listed efforts older than their postings window."""
        for i, postings in enumerate(plan.meta):
            older = [c for c in shortlist if c.num < postings.floor]
            for start in range(0, len(older), 500):
                chunk = {c.num: c for c in older[start : start + 500]}
                marks = ",".join("?" * len(chunk))
                for (num,) in self._db.execute(
                    f"SELECT rowid FROM meta_fts WHERE meta_fts MATCH ? AND rowid IN ({marks})",
                    (_phrase(plan.terms[i]), *chunk),
                ):
                    chunk[num].meta_terms.add(i)
        for i, postings in enumerate(plan.messages):
            for candidate in shortlist:
                if candidate.num < postings.floor:
                    lo = candidate.num << _LINE_BITS
                    (n,) = self._db.execute(
                        "SELECT count(*) FROM msg_fts WHERE msg_fts MATCH ? AND rowid BETWEEN ? AND ?",
                        (_phrase(plan.terms[i]), lo, lo | _LINE_MASK),
                    ).fetchone()
                    if n:
                        candidate.message_counts[i] = n

    def _effort_info(self, nums: list[int]) -> dict[int, tuple[str, str, str | None, int]]:
        """num → (effort_id, status, summary, indexed lines)."""
        info: dict[int, tuple[str, str, str | None, int]] = {}
        for start in range(0, len(nums), 500):
            chunk = nums[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT num, effort_id, status, summary, indexed_lines FROM efforts WHERE num IN ({marks})"
            for num, *rest in self._db.execute(sql, chunk):
                info[num] = (rest[0], rest[1], rest[2], rest[3])
        return info

    # -- results

    def _hit(
        self, plan: _Plan, candidate: _Candidate, score: float, info: tuple[str, str, str | None, int]
    ) -> SearchHit:
        effort_id, status, summary, _ = info
        snippet = self._snippet(plan, candidate, summary) or effort_id
        return SearchHit(id=effort_id, status=status, summary=summary, score=score, snippet=snippet)

    def _snippet(self, plan: _Plan, candidate: _Candidate, summary: str | None) -> str:
        """The marked summary if it contains a match, else the marked best message."""
        args = (_MARK_OPEN, _MARK_CLOSE, "…", SNIPPET_TOKENS)
        if candidate.meta_terms and summary:
            found = self._db.execute(
                "SELECT snippet(meta_fts, 2, ?, ?, ?, ?) FROM meta_fts WHERE meta_fts MATCH ? AND rowid = ?",
                (*args, plan.expression, candidate.num),
            ).fetchone()
            if found and _MARK_OPEN in found[0]:
                return _format_snippet(found[0])
        if candidate.message_counts:
            found = self._best_message_snippet(plan, candidate, args)
            if found:
                return _format_snippet(found)
        return _format_snippet(summary or "")

    def _best_message_snippet(self, plan: _Plan, candidate: _Candidate, args: tuple[Any, ...]) -> str | None:
        """Snippet of the effort's best message by FTS5 bm25 over its selective
        (complete-postings) terms; the newest matching message if it has none."""
        present = sorted(candidate.message_counts)
        selective = [plan.terms[i] for i in present if plan.messages[i].complete]
        lo = candidate.num << _LINE_BITS
        order = "rank" if selective else "rowid DESC"
        expression = _or_expression(selective or [plan.terms[i] for i in present])
        found = self._db.execute(
            f"SELECT snippet(msg_fts, 0, ?, ?, ?, ?) FROM msg_fts WHERE msg_fts MATCH ?"
            f" AND rowid BETWEEN ? AND ? ORDER BY {order} LIMIT 1",
            (*args, expression, lo, lo | _LINE_MASK),
        ).fetchone()
        return found[0] if found else None
