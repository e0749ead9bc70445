"""``search_captures``: the chat's ``/search`` lists the hits in the captured agents' sessions
(``ccm-tui watch``) after this session's, each with its agent, project and how to resume it; off
(the default), ``/search`` stays within this session."""

from __future__ import annotations

import os
from pathlib import Path

from ccm_tui import config
from ccm_tui.config import Settings
from ccm_tui.restore.capture import CaptureOptions, Capturer
from tests.helpers.cli_session import _fast_retries, ccm  # noqa: F401  (fixtures)
from tests.helpers.openai_server import text
from tests.restore.test_capture import UUID, write_turns


def capture_a_claude_session(tmp_path: Path) -> None:
    agent_file = tmp_path / "agents" / "-home-me-calc" / f"{UUID}.jsonl"
    agent_file.parent.mkdir(parents=True)
    write_turns(agent_file, [1, 2])
    Capturer(config.sessions_dir(), Settings(), CaptureOptions()).capture([agent_file])


def test_search_lists_captured_sessions_only_when_the_setting_is_on(ccm, tmp_path: Path) -> None:  # noqa: F811
    capture_a_claude_session(tmp_path)
    ccm.server.push(text("noted"))
    ccm.send("hello")

    off = ccm.send("/search quokka2 parser")
    assert "captures" not in off["result"] and "claude --resume" not in off["reply"]

    config_file = Path(os.environ.get("CCM_CONFIG") or config.config_file())
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text("search_captures = true\n", encoding="utf-8")
    on = ccm.send("/search quokka2 parser")
    [hit] = on["result"]["captures"]
    assert hit["session"] == "capture-claude-code" and hit["agent"] == "claude-code" and hit["project"] == "calc"
    assert hit["resume"] == f"claude --resume {UUID}" and "quokka2" in hit["snippet"]
    assert "In the captured agents' sessions:" in on["reply"] and f"resume: claude --resume {UUID}" in on["reply"]
    assert len(ccm.server.chat_requests()) == 1  # answered without the model
