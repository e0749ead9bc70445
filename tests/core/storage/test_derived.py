"""derived.sqlite's schema: one truth per fact (issue 32). The search index keeps no copy of an effort's
status, summary or name (it reads the effort list's rows); the rows carry what the index needs to
follow them (``fts_stale``, and ``entries_gone`` filled by a trigger)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ccm_tui.core.storage.derived import SCHEMA_VERSION, DerivedDB


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def test_the_search_documents_hold_no_copy_of_status_summary_or_name(tmp_path: Path) -> None:
    db = DerivedDB(tmp_path / "derived.sqlite")
    try:
        docs = columns(db.conn, "efforts")
        assert {"num", "effort_id", "source", "log_offset", "indexed_lines"} <= docs
        assert not docs & {"status", "summary", "name"}
        assert {"status", "entry", "fts_stale"} <= columns(db.conn, "entries")
        assert columns(db.conn, "entries_gone") == {"id"}
    finally:
        db.close()


def test_a_deleted_row_is_remembered_for_the_index_and_an_update_is_not_a_deletion(tmp_path: Path) -> None:
    db = DerivedDB(tmp_path / "derived.sqlite")
    try:
        conn = db.conn
        insert = (
            "INSERT INTO entries (id, ord, status, raw_tokens, entry, dirty) VALUES (?, ?, 'open', 0, '{}', 0)"
            " ON CONFLICT (id) DO UPDATE SET ord = excluded.ord"
        )
        conn.executemany(insert, [("a", 0), ("b", 1)])
        assert conn.execute("SELECT id, fts_stale FROM entries ORDER BY id").fetchall() == [("a", 1), ("b", 1)]
        conn.execute(insert, ("a", 5))  # an upsert updates in place
        assert conn.execute("SELECT count(*) FROM entries_gone").fetchone()[0] == 0
        conn.execute("DELETE FROM entries")
        assert [i for (i,) in conn.execute("SELECT id FROM entries_gone ORDER BY id")] == ["a", "b"]
    finally:
        db.close()


def test_a_file_of_the_previous_schema_is_rebuilt_without_the_copies(tmp_path: Path) -> None:
    path = tmp_path / "derived.sqlite"
    DerivedDB(path).close()
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE efforts ADD COLUMN status TEXT")  # as schema 1 had it
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    conn.close()
    db = DerivedDB(path)
    try:
        assert db.recreated
        assert "status" not in columns(db.conn, "efforts")
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        db.close()


def test_an_operation_that_runs_past_the_deadline_is_interrupted(tmp_path, monkeypatch):
    """No derived file can hang a reader: SQLite work in one operation has a deadline (issue 42)."""
    from ccm_tui.core.storage import derived

    monkeypatch.setattr(derived, "QUERY_DEADLINE", 0.2)
    db = derived.DerivedDB.for_session(tmp_path)
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    with pytest.raises(derived.DerivedError, match="interrupted"):
        db.run(lambda: db.conn.execute(endless).fetchone())
    assert db.run(lambda: db.conn.execute("SELECT count(*) FROM entries").fetchone()) == (0,)  # still usable
    db.close()
