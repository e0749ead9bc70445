"""Ctrl+F with ``*`` first searches every session (captured agents' sessions included): each hit says
its session, agent, project and date, and Enter copies the command that resumes it in its agent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ccm_tui.config import Settings
from ccm_tui.restore.capture import Capturer
from ccm_tui.ui.palette import all_sessions_hits
from tests.restore.test_capture import UUID, write_turns


class Shown:
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.copied: list[str] = []

    def notify(self, text: str, **_: Any) -> None:
        self.notes.append(text)

    def copy_to_clipboard(self, text: str) -> None:
        self.copied.append(text)


async def test_a_hit_in_another_agents_session_says_where_it_is_and_how_to_resume_it(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "projects" / "-home-me-calc"
    folder.mkdir(parents=True)
    sessions = Path(os.environ["CCM_HOME"]) / "sessions"
    Capturer(sessions, Settings()).capture([write_turns(folder / f"{UUID}.jsonl", [1, 2])])
    app = Shown()

    hits = [hit async for hit in all_sessions_hits(app, "quokka2")]
    assert len(hits) == 1
    assert hits[0].text is not None and hits[0].text.startswith("capture-claude-code · ")
    assert "(claude-code · calc · " in hits[0].text
    hits[0].command()
    assert app.copied == [f"claude --resume {UUID}"]
    assert [hit async for hit in all_sessions_hits(app, "  ")] == []
