"""Model summaries of captured sessions (``ccm_tui.restore.capture_summaries``): newest first, within
the calls per hour of the settings, kept across runs; nothing sent without a budget."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.config import Settings
from ccm_tui.core.engine.reader import SessionReader
from ccm_tui.restore.capture import Capturer
from ccm_tui.restore.capture_summaries import summarize_captures, waiting
from tests.helpers.restore_runs import FINAL_SUMMARY, MODEL, responder
from tests.restore.test_capture import write_turns


def captured(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    for name in ("0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0", "1f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"):
        folder = tmp_path / "home" / ".claude" / "projects" / "-home-me-calc"
        folder.mkdir(parents=True, exist_ok=True)
        Capturer(sessions, Settings()).capture([write_turns(folder / f"{name}.jsonl", [1, 2])])
    return sessions


def test_summaries_keep_to_the_hourly_budget_newest_first_and_across_runs(tmp_path: Path, llm_server) -> None:
    llm_server.responder = responder
    sessions = captured(tmp_path)
    settings = Settings(model=MODEL, api_base=llm_server.base_url, capture_summary_calls_per_hour=4)
    said: list[str] = []
    ledger = tmp_path / "ledger.json"
    clock = [1_000_000.0]

    first = summarize_captures(sessions, settings, ledger, say=said.append, now=lambda: clock[0])
    assert (first.sessions_waiting, first.summarized, first.calls) == (2, 1, 3)  # 2 turns + the summary
    assert len(llm_server.chat_requests()) == 3
    assert said[0].startswith("summaries: 2 captured session(s) wait for a model summary, up to 6 call(s)")
    assert "the budget is spent for now; 1 session(s) wait" in said[-1]
    again = summarize_captures(sessions, settings, ledger, say=said.append, now=lambda: clock[0])
    assert again.summarized == 0 and len(llm_server.chat_requests()) == 3  # the ledger holds the hour's calls
    clock[0] += 3601
    later = summarize_captures(sessions, settings, ledger, say=said.append, now=lambda: clock[0])
    assert later.summarized == 1 and waiting(sessions) == []
    with SessionReader(sessions / "capture-claude-code", Settings()) as reader:
        assert {e.view.summary for e in reader.efforts()} == {FINAL_SUMMARY}


def test_without_a_budget_nothing_is_sent(tmp_path: Path, llm_server) -> None:
    sessions = captured(tmp_path)
    settings = Settings(model=MODEL, api_base=llm_server.base_url)
    run = summarize_captures(sessions, settings, tmp_path / "ledger.json", say=lambda _line: None)
    assert run.summarized == 0 and llm_server.chat_requests() == [] and len(waiting(sessions)) == 2
