"""The type-ahead-after-crash campaign, CI-sized: a ``send`` killed mid-reply, then the real TUI in
tmux typed into at once (issue 25, item 2; benchmarks/kill9.py --target type-ahead runs more)."""

from __future__ import annotations

import pytest

from tests.helpers.campaigns.type_ahead import TmuxUnavailable, run_type_ahead_campaign


def campaign(tmp_path, **kwargs):
    try:
        return run_type_ahead_campaign(tmp_path, log=lambda *_: None, **kwargs)
    except TmuxUnavailable as exc:
        pytest.skip(str(exc))


@pytest.mark.slow
def test_what_is_typed_while_the_app_starts_after_a_crash_is_sent_once_as_typed(tmp_path):
    report = campaign(tmp_path, runs=3, seed=5, after_frame=True)
    assert report.violations == []
    assert report.orphans_left == 3  # each kill left an unanswered message behind
    assert report.crashes == []
    assert report.unwanted_resends == 0
    assert report.swallowed == [] and report.mangled == [] and report.left_in_input == []
    assert report.delivered_intact == 3


@pytest.mark.slow
def test_a_message_typed_with_enter_before_the_app_has_taken_the_terminal_is_sent(tmp_path):
    report = campaign(tmp_path, runs=1, seed=6, after_frame=False, delay=0.0, slowly=False)
    assert report.typed_early == 1  # the terminal was still in line mode when the keys came
    assert report.crashes == [] and report.swallowed == [] and report.mangled == []
    assert report.unwanted_resends == 0
    # read from the terminal's queue and handed to the input, its Enter sends it (not a new line)
    assert report.left_in_input == [] and report.delivered_intact == 1


@pytest.mark.slow
def test_a_message_typed_after_the_app_took_the_terminal_and_before_it_drew_anything_is_sent(tmp_path):
    """The keys come after ``ccm-tui`` read what was typed before (out of line mode) and before the chat
    input exists: Textual's driver hands them to the app before any screen is ready (they went nowhere)."""
    report = campaign(tmp_path, runs=2, seed=7, after_terminal_taken=True, delay=0.0, slowly=False)
    assert report.typed_early == 0 and report.typed_before_frame == 2  # the moment this test is about
    assert report.crashes == [] and report.unwanted_resends == 0
    assert report.swallowed == [] and report.mangled == [] and report.left_in_input == []
    assert report.delivered_intact == 2
