"""A ``derived.sqlite`` replaced by an attacker (a synced or received session) can do no more than be
rebuilt (issue 42, item 1): a row naming a path, a trigger that deletes efforts, a view that never ends."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.helpers.cli_session import open_auth_bug
from tests.helpers.openai_server import text

ESCAPE = "../../../../x"


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return subprocess.run(  # a hang fails on the timeout
        [sys.executable, "-m", "ccm_tui.cli", *argv], capture_output=True, text=True, timeout=40, env=env
    )


def tamper(ccm, *statements: str, params: tuple = ()) -> None:
    ccm.run("status", "--session-dir", str(ccm.dir))  # the rows are caught up
    conn = sqlite3.connect(ccm.dir / "derived.sqlite", isolation_level=None)
    try:
        for sql in statements:
            conn.execute(sql, params if "?" in sql else ())
    finally:
        conn.close()


def files_outside(root: Path, session: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and session not in p.parents and p.suffix == ".jsonl"]


def test_a_row_whose_id_is_a_path_is_rejected_and_the_file_rebuilt(ccm, tmp_path):
    open_auth_bug(ccm)
    entry = {**ccm.effort("auth-bug"), "id": ESCAPE, "raw_file": f"efforts/{ESCAPE}.jsonl"}
    tamper(ccm, "UPDATE entries SET id = ?, entry = ? WHERE id = 'auth-bug'", params=(ESCAPE, json.dumps(entry)))
    before = len(ccm.lines("efforts/auth-bug.jsonl"))
    ccm.server.push(text("The token expires after an hour."))
    ccm.send("why 401 after an hour?")
    assert files_outside(tmp_path, ccm.dir) == []
    assert not (ccm.dir / "x.jsonl").exists() and not (tmp_path.parent / "x.jsonl").exists()
    assert [e["id"] for e in ccm.manifest()["efforts"]] == ["auth-bug"]
    assert len(ccm.lines("efforts/auth-bug.jsonl")) > before  # the exchange is in the effort's own log
    assert ccm.status()["efforts"][0]["id"] == "auth-bug"


def test_a_trigger_added_to_the_file_never_runs(ccm):
    open_auth_bug(ccm)
    tamper(ccm, "CREATE TRIGGER wipe AFTER UPDATE ON entries BEGIN DELETE FROM entries; END")
    ccm.server.push(text("Noted."))
    ccm.send("the 401s start at exactly 60 minutes")
    assert [e["id"] for e in ccm.manifest()["efforts"]] == ["auth-bug"]
    conn = sqlite3.connect(ccm.dir / "derived.sqlite")
    try:
        assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall() == [
            ("entries_deleted",)
        ]
    finally:
        conn.close()


def test_a_view_that_never_ends_in_place_of_a_table_hangs_no_reader(ccm):
    open_auth_bug(ccm)
    tamper(
        ccm,
        "DROP TABLE entries",
        "CREATE VIEW entries AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
        " SELECT 'e' || i AS id, i AS ord, 'open' AS status, 0 AS raw_tokens, NULL AS concluded_at,"
        " NULL AS digest, NULL AS source_kind, '{}' AS entry, NULL AS block_len, NULL AS block_hash,"
        " 0 AS dirty, 0 AS fts_stale FROM n WHERE i < 0",
    )
    done = run_cli("status", "--session-dir", str(ccm.dir), "--json")
    assert done.returncode == 0, done.stderr
    assert [e["id"] for e in json.loads(done.stdout)["efforts"]] == ["auth-bug"]
    done = run_cli("search", "--session-dir", str(ccm.dir), "401")
    assert done.returncode == 0, done.stderr


def test_the_list_of_sessions_counts_no_row_of_a_foreign_file(ccm):
    open_auth_bug(ccm)
    tamper(
        ccm,
        "DROP TABLE entries",
        "CREATE VIEW entries AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i AS id FROM n",
    )
    glance = "import sys; from pathlib import Path; from ccm_tui.core.session import sessions_folder as f; "
    glance += "print(f._efforts(Path(sys.argv[1])))"
    done = subprocess.run(
        [sys.executable, "-c", glance, str(ccm.dir)],
        capture_output=True,
        text=True,
        timeout=40,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"  # not ours: no count rather than a count that never ends
