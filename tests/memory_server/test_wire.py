"""A line that is not a JSON-RPC message gets a JSON-RPC error on stdout — with the request's id when the line
yields one — instead of silence that would leave the client waiting forever; stdout still carries JSON-RPC only."""

from __future__ import annotations

from tests.helpers.mcp_session import raw_exchange

LONE_SURROGATE = (
    '{"jsonrpc": "2.0", "id": 6, "method": "tools/call", '
    '"params": {"name": "search", "arguments": {"query": "\\ud800 axolotl"}}}'
)


def test_unreadable_lines_are_answered_with_parse_or_invalid_request_errors(session_dir):
    lines = [
        LONE_SURROGATE,
        "this is not json",
        "   ",  # a blank line: nothing to answer
        '{"jsonrpc": "2.0", "id": "seven", "method": 5}',
        "[]",
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "axolotl"}},
        },
    ]
    out, errors = raw_exchange(lines, {6, "seven", 8})
    assert all(m.get("jsonrpc") == "2.0" for m in out)
    by_id = {m["id"]: m for m in out if m.get("id") is not None}
    assert by_id[6]["error"]["code"] == -32700 and "lone UTF-16 surrogate" in by_id[6]["error"]["message"]
    assert (
        by_id["seven"]["error"]["code"] == -32600 and "not a JSON-RPC 2.0 message" in by_id["seven"]["error"]["message"]
    )
    unknown = [m["error"] for m in out if "id" in m and m["id"] is None]  # no id to be read: null, as JSON-RPC says
    assert [e["code"] for e in unknown] == [-32700, -32600]
    assert "not valid JSON" in unknown[0]["message"]
    assert "axolotl" in by_id[8]["result"]["content"][0]["text"]  # and it goes on serving
    assert len(out) == 1 + 3 + 2  # initialize, the three ids, the two nulls: nothing for the blank line
    assert "Traceback" not in errors


def test_a_request_whose_id_is_no_string_or_integer_is_answered_once_and_a_notification_never():
    """JSON-RPC: a request's id is a string or an integer here (MCP); 1.5, true, an object, an array or null
    is an invalid request (-32600, id null) — the SDK alone read it as a notification and never answered."""
    bad_ids = [1.5, True, False, {"a": 1}, [1], None, 2.0, -0.0]
    lines = [{"jsonrpc": "2.0", "id": given, "method": "tools/list"} for given in bad_ids]
    lines += [
        '{"jsonrpc": "2.0", "\\u0069d": 3.5, "\\u006dethod": "ping"}',  # the same, its keys escaped
        {"jsonrpc": "2.0", "method": "tools/list"},  # a notification (no id): no answer
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "ok", "method": "ping"},
        {"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
    ]
    out, errors = raw_exchange(lines, {"ok", 9})
    nulls = [m for m in out if m.get("id") is None]
    assert len(nulls) == len(bad_ids) + 1  # one answer for each bad request, none for the notifications
    assert all(
        m["error"]["code"] == -32600 and "must be a string or an integer" in m["error"]["message"] for m in nulls
    )
    assert "got 1.5" in nulls[0]["error"]["message"] and "got true" in nulls[1]["error"]["message"]
    assert len(out) == 1 + len(nulls) + 2  # initialize, the bad ones, "ok" and 9: every line counted
    assert {m["id"] for m in out} == {1, None, "ok", 9} and "Traceback" not in errors
