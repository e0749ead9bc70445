"""kill -9 at random points: 20 kills, nothing acknowledged lost or duplicated, nothing corrupt."""

from __future__ import annotations

import pytest

from tests.helpers.campaigns.kill9_turns import run_campaign


@pytest.mark.slow
def test_twenty_kills_lose_nothing(tmp_path):
    result = run_campaign(tmp_path, kills=20, seed=3, log=lambda *_: None)
    assert result.kills == 20
    assert result.violations == []
    assert result.corrupt_files == []
    assert result.lost_turns == []
    assert result.duplicated_turns == []  # an orphan re-sent after it was logged
    assert result.acked >= 20
    assert result.recoveries >= 10  # most restarts found an unclean end and reported it
