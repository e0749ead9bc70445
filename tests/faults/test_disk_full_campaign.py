"""The disk-full campaign, CI-sized: commands on a small tmpfs filled to random levels lose,
duplicate and corrupt nothing, and fail only with the one plain message (issue 25;
benchmarks/kill9.py --target disk-full runs more)."""

from __future__ import annotations

import pytest

from tests.faults.campaign_disk_full import SmallDiskUnavailable, run_disk_full_campaign


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
    assert report.stored_though_failed == []  # a failure means the message is not in the logs
    assert report.lost == [] and report.duplicated == []
    assert report.corrupt == []
    assert report.not_found == []  # the index caught up with every stored message
