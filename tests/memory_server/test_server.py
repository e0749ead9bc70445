"""``ccm-tui mcp`` through the SDK's stdio client: its tools, a search of a raw log read around the hit,
ambient chat, and bad input answered as tool errors in plain words."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers.mcp_session import DETAIL, LOCKER, first_hit_lines, log_lines, mcp_server, raw_exchange

READS = {"search", "read", "list", "status"}


async def test_the_read_tools_are_listed_with_typed_schemas_and_read_only_annotations(session_dir):
    async with mcp_server() as client:
        assert client.init.server_info.name == "ccm-tui"
        assert "search" in (client.init.instructions or "")
        tools = await client.tools()
    assert set(tools) == READS  # no write tools without --allow-writes
    for tool in tools.values():
        hints = tool.annotations
        assert hints.read_only_hint is True and hints.idempotent_hint is True and hints.open_world_hint is False
        assert len(tool.description) > 100  # says when to use it and what comes back
        assert "session" not in tool.input_schema["properties"]  # one session served: nothing to name
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["query"]["type"] == "string" and search["properties"]["query"]["maxLength"] == 500
    assert (search["properties"]["limit"]["minimum"], search["properties"]["limit"]["maximum"]) == (1, 25)
    read = tools["read"].input_schema
    assert read["required"] == ["id"] and read["properties"]["id"]["pattern"] == "^(ambient|[a-z0-9][a-z0-9-]{0,63})$"
    assert read["properties"]["limit"]["maximum"] == 60
    assert tools["list"].input_schema["properties"]["state"]["enum"][0] == "any"
    # DESIGN §11: a tool whose name contains "search", taking a query string, and one that reads an effort
    # by id (read/fetch/get/open, never reopen), both readOnlyHint
    assert any("search" in name and tools[name].annotations.read_only_hint for name in tools)
    readers = [n for n in tools if any(w in n for w in ("read", "fetch", "get", "open")) and "reopen" not in n]
    assert readers and all(tools[n].annotations.read_only_hint for n in readers)


async def test_a_word_of_a_raw_log_is_found_and_read_around_its_line(session_dir):
    detail_line = next(
        n for n, m in enumerate(log_lines(session_dir / "efforts" / "auth-bug.jsonl"), 1) if m["content"] == DETAIL
    )
    async with mcp_server() as client:
        found = await client.call("search", query="axolotl")
        assert not found.error
        assert found.text.splitlines()[1].startswith("1. auth-bug · concluded")  # the effort, first
        assert f"{detail_line} assistant: The **axolotl** middleware" in found.text
        first, last = first_hit_lines(found.text)
        assert first <= detail_line <= last
        read = await client.call("read", id="auth-bug", around_line=detail_line, limit=4)
        page = await client.call("read", id="auth-bug", offset=1, limit=2)
    assert not read.error
    assert read.text.splitlines()[1].startswith("summary: Auth bug: 401s")
    assert f"{detail_line} assistant: {DETAIL}" in read.text
    assert f"lines {detail_line - 2}-{detail_line + 2} of 8:" in read.text
    assert "1 user: Let's work on the auth bug" in page.text and "lines 1-2 of 8:" in page.text
    assert "more from offset=3" in page.text


async def test_ambient_chat_that_left_the_window_is_found_and_read(session_dir):
    async with mcp_server() as client:
        found = await client.call("search", query="locker code gym")
        assert found.text.splitlines()[1].startswith("1. ambient chat · lines 1-")
        line = first_hit_lines(found.text)[0]
        read = await client.call("read", id="ambient", around_line=line, limit=4)
        listed = await client.call("list")
        status = await client.call("status")
    assert f"1 user: {LOCKER}" in read.text and "ambient chat" in read.text.splitlines()[0]
    assert "auth-bug · concluded · turn " in listed.text and "· 8 lines · auth bug" in listed.text
    assert "Concluded:" in status.text and "context " in status.text


BAD_CALLS = [
    ("read", {"id": "nope"}, "there is no effort 'nope'"),
    ("read", {"id": "../../etc/passwd"}, "'../../etc/passwd' is not an effort id"),
    ("read", {"id": "efforts/x"}, "'efforts/x' is not an effort id"),
    ("read", {"id": "auth-bug\n"}, "is not an effort id"),
    ("read", {"id": "Auth-Bug"}, "is not an effort id"),
    ("read", {"id": 42}, "id: input should be a valid string (got 42)"),
    ("read", {"id": "auth-bug", "around_line": -3}, "around_line: input should be greater than or equal to 1"),
    ("read", {"id": "auth-bug", "around_line": 10**12}, "around_line: input should be less than or equal to"),
    ("read", {"id": "auth-bug", "offset": 9999}, "effort 'auth-bug' has 8 log lines; line 9999 does not exist"),
    ("read", {"id": "auth-bug", "limit": 10_000}, "limit: input should be less than or equal to 60"),
    ("read", {"id": "ambient", "around_line": 5000}, "the ambient chat has"),
    ("read", {}, "id: is required"),
    ("search", {"query": ""}, "query: string should have at least 1 character"),
    ("search", {"query": "   "}, "the query is empty"),
    ("search", {"query": "x", "limit": 1000}, "limit: input should be less than or equal to 25 (got 1000)"),
    ("search", {"query": ["a", "b"]}, "query: input should be a valid string"),
    ("search", {"query": "x" * 501}, "query: string should have at most 500 characters"),
    ("list", {"state": "deleted"}, "state: input should be"),
    ("list", {"limit": -1}, "limit: input should be greater than or equal to 1"),
    ("remember", {"text": "hi"}, "Unknown tool: remember"),  # writes are off: not even listed
]


@pytest.mark.parametrize(
    ("tool", "arguments", "said"), BAD_CALLS, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD_CALLS)]
)
async def test_bad_input_is_a_tool_error_in_plain_words(session_dir, tmp_path, tool, arguments, said):
    errlog = tmp_path / "stderr.log"
    async with mcp_server(errlog=errlog) as client:
        answer = await client.call(tool, **arguments)
    assert answer.error, answer.text
    assert said in answer.text
    assert "Traceback" not in answer.text and "pydantic" not in answer.text
    assert "Traceback" not in errlog.read_text()


def test_stdout_carries_json_rpc_only_even_for_garbage_and_crashes(session_dir):
    """Raw JSON-RPC over a pipe: every line on stdout is a JSON-RPC message, whatever comes in."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "read", "arguments": {"id": "../../etc/passwd"}},
        },
        "this is not json",
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", "arguments": "not an object"}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope", "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "axolotl"}},
        },
    ]
    out, errors = raw_exchange(lines, {2, 3, 4, 5})
    assert all(m.get("jsonrpc") == "2.0" for m in out)
    by_id = {m.get("id"): m for m in out}
    assert by_id[2]["result"]["isError"] is True
    assert "error" in by_id[3] or by_id[3]["result"]["isError"] is True
    assert by_id[4]["result"]["isError"] is True
    assert "axolotl" in by_id[5]["result"]["content"][0]["text"]
    assert by_id[None]["error"]["code"] == -32700  # the line that is not JSON
    assert "Traceback" not in errors


def test_the_command_rejects_all_sessions_with_a_session(session_dir):
    done = subprocess.run(
        [sys.executable, "-m", "ccm_tui.cli", "mcp", "--all-sessions", "--session", "default"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "--all-sessions" in done.stderr and done.stdout == ""
