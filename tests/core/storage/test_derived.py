"""derived.sqlite's schema: the effort list's rows carry what the search index needs to follow them
(``fts_stale``, and ``entries_gone`` filled by a trigger)."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.core.storage.derived import DerivedDB


def test_a_deleted_row_is_remembered_for_the_index_and_an_update_is_not_a_deletion(tmp_path: Path) -> None:
    db = DerivedDB(tmp_path / "derived.sqlite")
    try:
        conn = db.conn
        insert = (
            "INSERT INTO entries (id, ord, status, concluded, raw_tokens, created, entry, dirty) VALUES (?, ?, 'open',"
            " 0, 0, '', '{}', 0) ON CONFLICT (id) DO UPDATE SET ord = excluded.ord"
        )
        conn.executemany(insert, [("a", 0), ("b", 1)])
        assert conn.execute("SELECT id, fts_stale FROM entries ORDER BY id").fetchall() == [("a", 1), ("b", 1)]
        conn.execute(insert, ("a", 5))  # an upsert updates in place
        assert conn.execute("SELECT count(*) FROM entries_gone").fetchone()[0] == 0
        conn.execute("DELETE FROM entries")
        assert [i for (i,) in conn.execute("SELECT id FROM entries_gone ORDER BY id")] == ["a", "b"]
    finally:
        db.close()
