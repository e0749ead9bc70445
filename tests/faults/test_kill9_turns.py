"""kill -9 at random points: 20 kills, nothing acknowledged lost or duplicated, nothing corrupt."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest

from tests.helpers.campaigns.kill9_turns import run_campaign
from tests.helpers.campaigns.slow_summary import SUMMARY_MARK, SlowSummaries


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
    each kill waits for a summary call (a /conclude or a close_effort) and lands inside it; a restart
    concludes again what a kill interrupted, and nothing is concluded twice."""
    result = run_campaign(tmp_path, kills=4, seed=7, log=lambda *_: None, summary_delay=1.0)
    assert result.kills == 4 and result.summary_hits >= 3
    assert set(result.hits_by_kind) <= {"/conclude", "close_effort"}
    assert result.violations == [] and result.corrupt_files == []
    assert result.lost_turns == [] and result.duplicated_turns == []
    assert result.duplicated_conclusions == [] and result.not_redone == []
    assert result.rebuilt_differently == []


@pytest.mark.slow
def test_kills_inside_a_fold_summary_fold_once_after_a_restart(tmp_path):
    """A fold's summary step held by the server (a fold writes its summary without a model: the driver
    asks the server from that step); each kill lands there, and the fold is done again, once."""
    result = run_campaign(tmp_path, kills=3, seed=5, log=lambda *_: None, fold=True, summary_delay=1.0)
    assert result.kills == 3 and result.hits_by_kind.get("fold", 0) >= 2
    assert result.violations == [] and result.corrupt_files == []
    assert result.lost_turns == [] and result.duplicated_turns == []
    assert result.interrupted >= 2 and result.not_redone == []
    assert result.folds >= 1 and result.folded_twice == []
    assert result.rebuilt_differently == []


def _summary_call(slow: SlowSummaries) -> threading.Thread:
    body = {"messages": [{"role": "system", "content": SUMMARY_MARK + " that stands in."}]}
    thread = threading.Thread(target=slow, args=(body,))
    thread.start()
    return thread


def test_a_kill_counts_as_inside_a_summary_only_while_the_server_holds_the_call(tmp_path):
    """The hit count is the server's: a kill before the call or after its answer is a miss."""
    slow = SlowSummaries(lambda body: "answer", 0.4, log=tmp_path / "calls.jsonl")
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    since = time.monotonic()
    assert slow.kill_inside(subprocess.Popen(sleeper), since) is None  # no call yet
    thread = _summary_call(slow)
    call = slow.wait_for_one(since, 5)
    assert call is not None and call.kind == "conclusion"
    assert slow.kill_inside(subprocess.Popen(sleeper), since) == "conclusion"
    thread.join()
    assert slow.kill_inside(subprocess.Popen(sleeper), since) is None  # answered: a miss
    records = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [r.get("inside", "-") for r in records if "kill" in r] == [None, "conclusion", None]
