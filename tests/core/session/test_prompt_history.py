"""The input's memory of a session: sent messages (Up/Down) and the draft."""

from __future__ import annotations

from ccm_tui.core.session.prompt_history import DRAFT_FILE, HISTORY_FILE, PromptHistory


def test_a_torn_line_costs_that_line_only_and_walking_stops_at_both_ends(tmp_path):
    (tmp_path / HISTORY_FILE).write_text('{"text": "one"}\n{"text": "two"}\n{"text": "thr', encoding="utf-8")
    history = PromptHistory(tmp_path)
    assert history.entries == ["one", "two"]
    assert [history.older(), history.older(), history.older()] == ["two", "one", None]
    assert [history.newer(), history.newer(), history.newer()] == ["two", "", None]


def test_sent_messages_are_kept_once_in_a_row_and_the_draft_goes_with_an_empty_input(tmp_path):
    history = PromptHistory(tmp_path)
    history.add("hello")
    history.add("hello")
    assert PromptHistory(tmp_path).entries == ["hello"]
    history.save_draft("unsent")
    assert PromptHistory(tmp_path).draft() == "unsent"
    history.save_draft("  ")
    assert not (tmp_path / DRAFT_FILE).exists()


def test_a_session_not_created_yet_gets_no_files(tmp_path):
    history = PromptHistory(tmp_path / "not-yet")
    history.add("hi")
    history.save_draft("draft")
    assert history.entries == ["hi"] and not (tmp_path / "not-yet").exists()
