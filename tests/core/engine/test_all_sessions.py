"""``search --all-sessions`` (``core.engine.all_sessions``): a session whose index holds all of it is
searched through its index alone, with the same hits and captures a reader gives; a session whose
index is behind (or missing) is searched through a reader, which brings it up to date."""

from __future__ import annotations

import os
from pathlib import Path

from ccm_tui.config import Settings
from ccm_tui.core.engine.all_sessions import _index_alone, _through_reader, search_all_sessions
from tests.restore.test_capture import capturer, write_turns


def captured(tmp_path: Path, agent_file: Path) -> Path:
    agent_file.parent.mkdir(parents=True)
    write_turns(agent_file, [1, 2, 3])
    capturer(tmp_path).capture([agent_file])
    return tmp_path / "sessions"


def shown(found):
    return [(h.id, round(h.score, 9), h.snippet, h.passage, h.lines, capture) for h, capture in found]


def test_an_index_in_step_is_searched_alone_with_the_hits_a_reader_gives(tmp_path: Path) -> None:
    root = captured(tmp_path, tmp_path / "home" / "-home-me-calc" / "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0.jsonl")
    session = root / "capture-claude-code"
    for query in ("quokka2 parser", "answer 3", "request number"):
        alone = _index_alone(session, query, 10)
        assert alone is not None and alone, query
        assert shown(alone) == shown(_through_reader(session, Settings(), query, 10))
        assert alone[0][1] is not None and alone[0][1]["agent"] == "claude-code"


def test_an_index_behind_its_session_or_missing_is_brought_up_to_date_by_a_reader(tmp_path: Path) -> None:
    root = captured(tmp_path, tmp_path / "home" / "-home-me-calc" / "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0.jsonl")
    session = root / "capture-claude-code"
    raw = session / "raw.jsonl"
    raw.write_text("", encoding="utf-8")
    os.utime(raw, ns=(1, 1))  # the session changed behind the index's back
    assert _index_alone(session, "quokka2", 10) is None
    [hit] = search_all_sessions(root, "quokka2", 10).hits
    assert hit.session == "capture-claude-code" and hit.capture and hit.capture["project"] == "calc"
    assert _index_alone(session, "quokka2", 10)  # the reader synced it: alone again

    (session / "derived.sqlite").unlink()
    assert _index_alone(session, "quokka2", 10) is None
    assert [h.session for h in search_all_sessions(root, "quokka2", 10).hits] == ["capture-claude-code"]
