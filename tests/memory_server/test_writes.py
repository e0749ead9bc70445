"""``--allow-writes``: remember (a note, findable at once) and reopen, through the session controller, taking
the writer lock per write and saying so in plain words when the session stays locked."""

from __future__ import annotations

import yaml

from tests.helpers.mcp_session import log_lines, mcp_server
from tests.helpers.sessionkit import hold_writer_lock

NOTE = "The staging database password rotates every Friday at 17:00 (zebrafish rota)."


def manifest_entry(session_dir, effort_id):
    efforts = yaml.safe_load((session_dir / "manifest.yaml").read_text())["efforts"]
    return next(e for e in efforts if e["id"] == effort_id)


async def test_the_write_tools_are_listed_only_when_allowed(session_dir):
    async with mcp_server("--allow-writes") as client:
        tools = await client.tools()
    assert set(tools) == {"search", "read", "list", "status", "remember", "reopen"}
    for name in ("remember", "reopen"):
        hints = tools[name].annotations
        assert hints.read_only_hint is False and hints.destructive_hint is False and hints.open_world_hint is False
    assert tools["remember"].annotations.idempotent_hint is False
    remember = tools["remember"].input_schema
    assert remember["required"] == ["text"] and remember["properties"]["text"]["maxLength"] == 20_000


async def test_remember_then_search_finds_the_note_in_the_notes_effort_or_the_named_one(session_dir):
    async with mcp_server("--allow-writes") as client:
        noted = await client.call("remember", text=NOTE)
        found = await client.call("search", query="zebrafish rota")
        into = await client.call("remember", text="The auth fix shipped in release quokka-7.", effort_id="auth-bug")
        found_there = await client.call("search", query="quokka release")
        read = await client.call("read", id="notes")
        second = await client.call("remember", text="Deploys freeze on the first Monday of the month.")
        unknown = await client.call("remember", text="x", effort_id="nope")
        empty = await client.call("remember", text="  \n ")
    assert noted.text.startswith("Noted in effort notes, line 1 (the notes effort was made for it)")
    assert found.text.splitlines()[1].startswith("1. notes · concluded") and "**zebrafish** **rota**" in found.text
    assert into.text.startswith("Noted in effort auth-bug, line 9.")
    assert (
        found_there.text.splitlines()[1].startswith("1. auth-bug")
        and '9 note from agent "mcp": The auth fix shipped' in found_there.text
    )
    assert f'1 note from agent "mcp": {NOTE}' in read.text
    assert second.text.startswith("Noted in effort notes, line 2.")
    assert unknown.error and "there is no effort 'nope' in this session" in unknown.text
    assert "leave effort_id out" in unknown.text
    assert empty.error and "the note is empty" in empty.text
    record = log_lines(session_dir / "efforts" / "auth-bug.jsonl")[-1]
    assert record["role"] == "user" and record["note"] is True and record["source"] == "mcp" and record["ts"]
    assert [e["effort_id"] for e in log_lines(session_dir / "events.jsonl") if e["event"] == "note_added"] == [
        "notes",
        "auth-bug",
        "notes",
    ]
    assert manifest_entry(session_dir, "auth-bug")["messages"] == 9
    assert manifest_entry(session_dir, "notes")["status"] == "concluded"


async def test_reopen_makes_the_effort_active_in_the_session(session_dir):
    async with mcp_server("--allow-writes") as client:
        reopened = await client.call("reopen", id="auth-bug")
        again = await client.call("reopen", id="auth-bug")
        unknown = await client.call("reopen", id="nope")
        bad = await client.call("reopen", id="../auth-bug")
        status = await client.call("status")
    assert reopened.text.startswith("Reopened effort auth-bug: it is the active effort there now.")
    assert "Its summary was: Auth bug: 401s" in reopened.text
    assert again.error and "effort 'auth-bug' is open already (active), not concluded" in again.text
    assert unknown.error and "there is no effort 'nope' in this session (search and list give the ids)" in unknown.text
    assert not any("search_efforts" in a.text or "reopen_effort" in a.text for a in (again, unknown))
    assert bad.error and "is not an effort id" in bad.text
    assert "▶ auth-bug" in status.text
    entry = manifest_entry(session_dir, "auth-bug")
    assert entry["status"] == "open" and entry["active"] is True


async def test_a_write_waits_for_the_writer_lock_and_says_so_when_it_stays_locked(session_dir):
    async with mcp_server("--allow-writes", "--wait", "1") as client:
        holder = hold_writer_lock(session_dir)
        first_holder = holder.pid
        try:
            refused = await client.call("remember", text="while locked, at open")
            searched = await client.call("search", query="axolotl")  # reads go on meanwhile
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)
        opened = await client.call("remember", text="once free")
        holder = hold_writer_lock(session_dir)
        second_holder = holder.pid
        try:
            refused_later = await client.call("remember", text="while locked, between writes")
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)
        last = await client.call("remember", text="free again")
    for answer, holder_pid in ((refused, first_holder), (refused_later, second_holder)):  # at open, between writes
        assert answer.error and f"in use by pid {holder_pid}" in answer.text and "stayed so for 1 s" in answer.text
        assert "nothing was written — call remember again in a moment" in answer.text
        assert "send again" not in answer.text  # no chat-app wording for an agent
    assert not searched.error and "auth-bug" in searched.text
    assert not opened.error and not last.error
    notes = [m["content"] for m in log_lines(session_dir / "efforts" / "notes.jsonl")]
    assert notes == ["once free", "free again"]
