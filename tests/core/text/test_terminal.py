"""No escape, C1 or bidirectional control survives the one cleaning the commands, the TUI and the MCP server
use, whatever the text (issue 33, hole 5): a property over arbitrary text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, JSONRPCResponse

from ccm_tui.core.text.terminal import StreamCleaner, clean_name, json_safe, terminal_safe
from ccm_tui.memory_server.wire import clean_message

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
FORBIDDEN = frozenset([chr(c) for c in (*range(0, 9), *range(11, 32), *range(0x7F, 0xA0))] + list(BIDI))
# Text heavy in what a terminal acts on: escapes and their parts, C1, bidi controls, and anything else.
hostile = st.lists(
    st.one_of(
        st.sampled_from(["\x1b", "\x1b[", "\x1b]", "\x1bP", "\x07", "\x9b", "\x9d", "\x9c", "\x1b\\", "52;c;", "2J"]),
        st.sampled_from(sorted(FORBIDDEN)),
        st.text(max_size=8),
    ),
    max_size=30,
).map("".join)
SOME = settings(max_examples=400, deadline=None)


def clean_of(text: str) -> bool:
    return not FORBIDDEN.intersection(text)


@SOME
@given(hostile)
def test_terminal_safe_leaves_no_control_and_keeps_lines_and_tabs(text):
    out = terminal_safe(text)
    assert clean_of(out)
    assert terminal_safe(out) == out  # cleaning twice changes nothing
    assert clean_of(clean_name(text)) and "\n" not in clean_name(text)
    assert clean_of(json_safe(json.dumps(text, ensure_ascii=False)))
    assert json.loads(json_safe(json.dumps(text, ensure_ascii=False))) == text  # the same data, escaped


@SOME
@given(st.lists(hostile, max_size=6))
def test_a_stream_cleaned_piece_by_piece_leaves_no_control(pieces):
    cleaner = StreamCleaner()
    out = "".join(cleaner.feed(p) for p in pieces) + cleaner.flush()
    assert clean_of(out)


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)


@SOME
@given(hostile, hostile, st.one_of(st.integers(), hostile))
def test_every_mcp_answer_leaves_no_control_but_keeps_the_request_id(text, error, request_id):
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    answers = [
        SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)),
        SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=-32600, message=error))),
    ]
    for answer in answers:
        sent = clean_message(answer).message.model_dump(by_alias=True, exclude_unset=True, mode="json")
        assert sent["id"] == request_id
        assert all(clean_of(s) for s in strings({k: v for k, v in sent.items() if k != "id"}))
