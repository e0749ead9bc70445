"""`ambient` and `notes` name other things wherever an effort id is read: no effort the user or a model names
takes them (issue 33, hole 8) — `/open ambient` made an effort that MCP's read could not reach."""

from __future__ import annotations

import json

import pytest

from ccm_tui.config import Settings
from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.efforts.names import RESERVED_IDS
from ccm_tui.core.efforts.states import ActionRefused
from ccm_tui.core.engine._notes import append_note
from ccm_tui.core.engine.opening import open_engine
from tests.helpers.openai_server import call, text, tool_calls


@pytest.mark.parametrize("name", ["ambient", "Ambient!", " notes ", "NOTES"])
def test_opening_an_effort_with_a_reserved_id_is_refused_in_one_line(tmp_path, name):
    engine = open_engine(tmp_path / "s", Settings(), probe_model_window=False)
    try:
        with pytest.raises(ActionRefused) as refused:
            lifecycle.open_effort(engine._session, name, turn=1)
        assert len(engine._session.efforts) == 0
    finally:
        engine.close()
    said = str(refused.value)
    assert "is reserved" in said and "another name" in said and "\n" not in said


def test_the_slash_command_and_the_models_tool_are_refused(ccm):
    rc, out, err = ccm.run(*ccm.send_argv("/open ambient"))
    assert rc == 1 and err.strip().splitlines() == [
        "ccm-tui: 'ambient' is reserved: it names the chat between efforts; give the effort another name"
    ]
    ccm.server.push(tool_calls(call("open_effort", {"name": "notes"})), text("Fine, another name then."))
    reply = ccm.send("keep notes")
    assert reply["logged_to"] == "ambient" and reply["active_effort"] is None
    tool_result = next(m for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool")
    assert "'notes' is reserved" in json.loads(tool_result["content"])["error"]


def test_an_import_named_so_takes_the_next_id_and_the_notes_effort_keeps_its_own(tmp_path):
    engine = open_engine(tmp_path / "s", Settings(), probe_model_window=False)
    try:
        session = engine._session
        messages = [{"role": "user", "content": "hi", "ts": "2026-01-01T00:00:00Z"}]
        ids = [lifecycle.land_imported(session, name, messages, "s", {"kind": "restore"}).id for name in RESERVED_IDS]
        assert ids == ["ambient-2", "notes-2"]
        note = append_note(session, "a fact to keep")
        assert note.effort_id == "notes" and note.created
    finally:
        engine.close()
