"""The disk-full campaign, CI-sized: commands on a small tmpfs filled to random levels lose,
duplicate and corrupt nothing, and fail only with the one plain message (issue 25;
benchmarks/kill9.py --target disk-full runs more)."""

from __future__ import annotations

import sqlite3

import pytest

from ccm_tui.core.manifest.effort_list import load_manifest
from ccm_tui.core.session.session import Session
from ccm_tui.core.storage.derived import DerivedWriteFailed
from tests.helpers.campaigns.disk_full import SmallDiskUnavailable, run_disk_full_campaign
from tests.helpers.sessionkit import concluded_effort


@pytest.mark.slow
def test_a_full_disk_loses_duplicates_and_corrupts_nothing(tmp_path):
    try:
        report = run_disk_full_campaign(tmp_path, runs=6, seed=4, log=lambda *_: None)
    except SmallDiskUnavailable as exc:
        pytest.skip(str(exc))
    assert report.runs == 6
    assert report.acknowledged + report.failed_cleanly == 6, report.bad_messages
    assert report.failed_cleanly >= 1  # the disk was full for some of them
    assert report.bad_messages == []  # no bare [Errno 28], no traceback, no other message
    assert report.violations == []  # status and search answered; a retry with space went through
    assert report.lost == [] and report.corrupt == []
    assert report.not_found == []  # the index caught up with every stored message
    # a send whose tools ran before the disk filled is not given back (the next start logs it), and a
    # restore stored once its entry is journaled is not reported failed: nothing is duplicated
    assert report.duplicated == [] and report.stored_though_failed == []


class FullDiskConnection:
    """The derived database's SQLite connection on a full disk: every write fails as SQLite says it."""

    def __init__(self, db) -> None:
        self.db = db
        self.full = True

    def execute(self, sql: str, *args):
        if self.full and sql.lstrip().upper().startswith(("BEGIN", "INSERT", "UPDATE", "DELETE")):
            raise sqlite3.OperationalError("database or disk is full")
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self.db, name)


def test_a_save_the_full_disk_keeps_from_the_derived_rows_is_kept_by_the_journal_and_written_later(tmp_path):
    """Found by the campaign: a send whose exchange was stored reported 'the disk is full' (resending
    duplicated it) because the derived rows' update after the journal raised; and manifest.yaml must
    never be rewritten from rows that lack a saved change."""
    session = Session.open(tmp_path / "s")
    concluded_effort(session, "first topic")
    session.flush_manifest()
    full = FullDiskConnection(session.derived._conn)
    session.derived._conn = full

    effort = concluded_effort(session, "second topic", summary="Second summary.")  # no error: journaled

    assert session.unclean_reason is None  # the record holds it: nothing to reconcile
    with pytest.raises(DerivedWriteFailed, match="the disk is full"):
        session.flush_manifest()
    assert "second-topic" not in (session.dir / "manifest.yaml").read_text()
    full.full = False
    assert session.flush_manifest() is True
    session.lock.release()
    written = {e.id: e for e in load_manifest(session.dir / "manifest.yaml")}
    assert written[effort.id].status == "concluded" and written[effort.id].summary == "Second summary."
    reader = Session.open(session.dir, readonly=True)
    assert reader.efforts.get(effort.id).summary == "Second summary."
