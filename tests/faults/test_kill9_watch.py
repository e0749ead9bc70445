"""kill -9 of ``ccm-tui watch`` at random moments of its backfill, while a file grows between runs: every
turn captured once, none lost, no corrupt line (``benchmarks/kill9.py --target watch`` at scale)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.campaigns.kill9_watch import run_watch_campaign


@pytest.mark.slow
def test_watch_killed_during_backfill_and_appends_captures_every_turn_once(tmp_path: Path) -> None:
    report = run_watch_campaign(tmp_path, kills=4, seed=7, log=lambda _line: None)
    assert report.kills == 4 and report.files == 8
    assert report.violations == []
