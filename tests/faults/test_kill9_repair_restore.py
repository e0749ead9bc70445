"""kill -9 at random moments of ``repair`` and ``restore`` (benchmarks/kill9.py runs more)."""

from __future__ import annotations

import pytest

from tests.helpers.campaigns.kill9_repair_restore import run_repair_campaign, run_restore_campaign


@pytest.mark.slow
def test_killing_repair_never_leaves_the_session_without_a_manifest(tmp_path):
    report = run_repair_campaign(tmp_path, kills=12, seed=2, efforts=80, events_mb=3.0, log=lambda *_: None)
    assert report.kills == 12
    assert report.violations == []
    assert report.missing_manifest == 0
    assert report.lost == []
    assert report.corrupt_files == []


@pytest.mark.slow
def test_killing_restore_corrupts_nothing_and_a_rerun_imports_once(tmp_path):
    report = run_restore_campaign(tmp_path, kills=3, seed=2, log=lambda *_: None)
    assert report.kills == 3
    assert report.violations == []
    assert report.corrupt_files == []
    assert report.lost == []
    assert report.duplicated == 0


@pytest.mark.slow
def test_kills_inside_a_slow_restore_summary_import_once(tmp_path):
    """Issue 42, item 9: each kill lands while one of the restore's turn-by-turn summary calls is held by
    the server; the run again imports once, every turn summarized (the interrupted one done again)."""
    report = run_restore_campaign(tmp_path, kills=3, seed=4, log=lambda *_: None, summary_delay=1.0)
    assert report.kills == 3 and report.summary_hits == 3
    assert report.violations == [] and report.corrupt_files == []  # (a partial import is a violation)
    assert report.lost == [] and report.duplicated == 0
