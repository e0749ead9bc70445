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


@pytest.mark.slow
def test_kills_while_a_model_without_tools_chats_fold_no_line_twice(tmp_path):
    """The app folds ambient chat after turns for a model without tools; a kill at any point (between
    the fold's log and its effort, or after the effort) never makes a fold land twice."""
    result = run_campaign(tmp_path, kills=12, seed=5, log=lambda *_: None, fold=True)
    assert result.kills == 12
    assert result.violations == [] and result.corrupt_files == []
    assert result.lost_turns == [] and result.duplicated_turns == []
    assert result.folds >= 1 and result.folded_twice == []


@pytest.mark.slow
def test_kills_inside_a_slow_conclusion_lose_nothing(tmp_path):
    """Issue 42, item 9: conclusions were too fast for a kill to land in one; with a slow summary model
    each kill waits for a summary call and lands inside it."""
    result = run_campaign(tmp_path, kills=4, seed=7, log=lambda *_: None, summary_delay=1.0)
    assert result.kills == 4 and result.summary_hits >= 3
    assert result.violations == [] and result.corrupt_files == []
    assert result.lost_turns == [] and result.duplicated_turns == []
