"""A long-lived MCP server and a session renamed or removed under it (issue 33, hole 10): a write-enabled server
no longer holds the session's presence between its writes (a rename said "open in another ccm-tui"), and after a
rename or a removal every tool says so — "holds no conversation yet" was wrong, and a write must never make
the old session again."""

from __future__ import annotations

import os
import shutil

import pytest

from ccm_tui.core.api import rename_session
from ccm_tui.core.session.sessions_folder import SessionOpen
from tests.helpers.mcp_session import mcp_server, sessions_root

GONE = "session default was renamed or removed while this server ran"


@pytest.mark.parametrize("writes", [True, False])
async def test_a_rename_between_calls_is_allowed_and_said(session_dir, writes, tmp_path):
    errlog = tmp_path / "stderr.log"
    args = ("--allow-writes",) if writes else ()
    async with mcp_server(*args, errlog=errlog) as client:
        if writes:
            noted = await client.call("remember", text="The staging rota changed to Fridays.")
            assert not noted.error, noted.text
        found = await client.call("search", query="weather")
        assert not found.error
        moved = rename_session(sessions_root(), "default", "renamed")  # not refused: no ccm-tui holds it open
        answers = [await client.call("status"), await client.call("search", query="weather")]
        answers.append(await client.call("read", id="ambient"))
        if writes:
            answers.append(await client.call("remember", text="after the rename"))
        for answer in answers:
            assert answer.error and GONE in answer.text, answer.text
    assert moved.name == "renamed" and not session_dir.exists()  # nothing made the old session again
    said = errlog.read_text(encoding="utf-8")
    assert str(sessions_root()) not in said and "Traceback" not in said


async def test_a_removed_session_is_said_and_never_made_again(session_dir, tmp_path):
    async with mcp_server("--allow-writes", errlog=tmp_path / "stderr.log") as client:
        assert not (await client.call("remember", text="a first note")).error
        shutil.rmtree(session_dir)
        again = await client.call("remember", text="a second note")
        read = await client.call("list")
    assert again.error and GONE in again.text and read.error and GONE in read.text
    assert not os.path.exists(session_dir)


async def test_a_write_in_progress_holds_the_presence_only_while_it_runs(session_dir):
    """A rename is refused while the session is open in a process that holds it (the TUI), not because an
    agent's server wrote to it once."""
    from ccm_tui.core.session.lock import Presence

    async with mcp_server("--allow-writes") as client:
        assert not (await client.call("remember", text="note one")).error
        held = Presence(session_dir)
        held.hold()
        try:
            with pytest.raises(SessionOpen):
                rename_session(sessions_root(), "default", "other")
        finally:
            held.release()
        assert not (await client.call("remember", text="note two")).error
    assert rename_session(sessions_root(), "default", "other").name == "other"
