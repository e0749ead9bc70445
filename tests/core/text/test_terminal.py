"""No escape, C1 or bidirectional control survives the one cleaning the commands, the TUI and the MCP server
use, whatever the text (issue 33, hole 5): a property over arbitrary text."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ccm_tui.core.text.terminal import StreamCleaner, clean_name, json_safe, terminal_safe
from tests.helpers.terminal_text import SOME, clean_of, hostile


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
