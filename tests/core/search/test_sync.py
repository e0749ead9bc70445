"""The index follows the effort list it reads from (search/sync.py): a summary edited by hand or saved
through the journal, an effort deleted from manifest.yaml, a conclusion — each seen by the next
search, at the cost of what changed (issue 32: status, summary and name have one truth, the list's
rows; the index keeps only the documents derived from them)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.search import EffortIndex
from ccm_tui.core.search import _ingest as ingest_mod
from ccm_tui.core.search import _records as records_mod
from ccm_tui.core.search.sync import sync_index
from ccm_tui.core.session.session import Session
from tests.helpers.sessionkit import concluded_effort, exchange, open_effort


@pytest.fixture
def session(tmp_path: Path):
    session = Session.open(tmp_path / "s")
    for i in range(20):
        concluded_effort(session, f"filler {i}", exchange(f"chatter {i}", "ok"), summary=f"Routine work number {i}.")
    concluded_effort(
        session, "billing", exchange("migrate the billing tables", "done"), summary="Moved invoices to Postgres."
    )
    session.flush_manifest()
    yield session
    session.lock.release()


@pytest.fixture
def index(session: Session):
    with EffortIndex(session.derived) as index:
        sync_index(index, session)
        yield index


def ids(index: EffortIndex, query: str, status: str | None = None) -> list[str]:
    return [h.id for h in index.search(query, status=status)]


def stale_rows(session: Session) -> list[str]:
    assert session.derived is not None
    return [i for (i,) in session.derived.conn.execute("SELECT id FROM entries WHERE fts_stale = 1")]


def logs_opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    real = records_mod.open_log
    monkeypatch.setattr(records_mod, "open_log", lambda path: opened.append(Path(path).name) or real(path))
    return opened


def test_a_summary_edited_by_hand_is_found_by_its_new_words_only_rewriting_its_own_document(
    session: Session, index: EffortIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ids(index, "invoices postgres") == ["billing"]
    path = session.dir / "manifest.yaml"
    path.write_text(path.read_text().replace("Moved invoices to Postgres.", "Archived receipts in S3."))
    session.load()  # the hand edit is taken in (as any process's next read does)

    assert stale_rows(session) == ["billing"]  # one meta document to write again, not twenty-one
    opened = logs_opened(monkeypatch)
    sync_index(index, session)
    assert opened == [] and stale_rows(session) == []  # no log read: the logs did not change
    assert ids(index, "archived receipts") == ["billing"]
    assert index.search("invoices postgres") == []
    hit = index.search("receipts")[0]
    assert hit.summary == "Archived receipts in S3." and "**receipts**" in hit.snippet


def test_a_summary_saved_through_the_journal_is_found_at_once(session: Session, index: EffortIndex) -> None:
    effort = session.efforts.get("billing")
    assert effort is not None
    lifecycle.reopen(session, effort, turn=1)
    lifecycle.conclude(session, effort, "Sharded the ledger by region.", turn=2)  # saved: journal, then rows
    assert stale_rows(session) == ["billing"]
    assert index.sync_efforts() == 1  # what the engine does after a save
    assert ids(index, "sharded ledger") == ["billing"]
    assert index.search("invoices postgres") == []


def test_an_effort_deleted_from_the_manifest_by_hand_leaves_the_results(
    session: Session, index: EffortIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ids(index, "billing tables") == ["billing"]
    path = session.dir / "manifest.yaml"
    head, _, rest = path.read_text().partition("- id: billing\n")
    following = rest.find("\n- id: ")
    path.write_text(head + (rest[following + 1 :] if following >= 0 else ""))
    session.load()

    assert "billing" not in session.efforts
    assert index.search("billing tables") == []  # at once: the list no longer holds it
    opened = logs_opened(monkeypatch)
    sync_index(index, session)
    assert opened == []
    assert index.search("billing tables") == [] and index.search("invoices") == []
    db = index.database.conn
    assert db.execute("SELECT count(*) FROM efforts WHERE effort_id = 'billing'").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM entries_gone").fetchone()[0] == 0


def test_a_search_of_open_or_concluded_efforts_follows_a_conclusion(session: Session, index: EffortIndex) -> None:
    effort = open_effort(session, "kafka tuning", exchange("the kafka consumer lags", "raise the fetch size"))
    index.sync_efforts()
    index.sync_effort_log(effort.id, session.effort_path(effort.id))
    assert ids(index, "kafka consumer", "open") == [effort.id]
    assert ids(index, "kafka consumer", "concluded") == []

    lifecycle.conclude(session, effort, "Kafka consumer lag fixed.", turn=1)
    assert ids(index, "kafka consumer", "open") == []  # the status is the list's row: no sync needed
    assert ids(index, "kafka consumer", "concluded") == [effort.id]
    assert index.search("kafka consumer")[0].status == "concluded"


def test_a_status_search_over_many_efforts_looks_up_the_postings_not_the_status(
    session: Session, index: EffortIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With more efforts of a status than candidates, only the documents in the postings are looked up."""
    monkeypatch.setattr("ccm_tui.core.search._ranking.MIN_CANDIDATES", 5)
    found = index.search("routine work", limit=1, status="concluded")
    assert [h.status for h in found] == ["concluded"]
    assert index.search("routine work", status="open") == []


def test_a_file_rebuilt_during_the_sync_is_brought_back_in_one_call(
    session: Session, index: EffortIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The effort rows live in the same file as the index: found corrupt mid-sync, both are rebuilt,
    the rows catch up from the record, and the sync runs again before the index says it is in step."""
    real = ingest_mod.Ingest._sync_entry
    calls = {"n": 0}

    def corrupt_once(self: ingest_mod.Ingest, *args: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.DatabaseError("database disk image is malformed")
        return real(self, *args)

    monkeypatch.setattr(ingest_mod.Ingest, "_sync_entry", corrupt_once)
    session.append_ambient(exchange("a new aside about zeppelins", "noted"))  # the marker moves: a sync
    sync_index(index, session)
    assert index.recreated
    assert ids(index, "invoices postgres") == ["billing"]
    assert index.search("zeppelins")[0].source == "ambient"
    assert index.synced_marker() == session.index_marker()
