"""Tool calls written as text: the shapes local models use, and only for tools we offered."""

from __future__ import annotations

import json

import pytest

from ccm_tui.core.turn._text_tool_calls import (
    HOLD_DECIDE_CHARS,
    MAX_SCANNED_CHARS,
    CallHoldback,
    extract_text_tool_calls,
)

OFFERED = {"open_effort", "close_effort", "search_efforts"}


def args(call) -> dict:
    return json.loads(call.arguments)


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "open_effort", "arguments": {"name": "auth bug"}}',
        '{"name": "open_effort", "parameters": {"name": "auth bug"}}',
        '{"name": "open_effort", "arguments": "{\\"name\\": \\"auth bug\\"}"}',
        '{"function": {"name": "open_effort", "arguments": "{\\"name\\": \\"auth bug\\"}"}}',
        '{"type": "function", "function": {"name": "open_effort", "arguments": {"name": "auth bug"}}}',
        '[{"name": "open_effort", "arguments": {"name": "auth bug"}}]',
        '```json\n{"name": "open_effort", "arguments": {"name": "auth bug"}}\n```',
        '```\n{"name": "open_effort", "arguments": {"name": "auth bug"}}\n```',
        '<tool_call>\n{"name": "open_effort", "arguments": {"name": "auth bug"}}\n</tool_call>',
        '<tool_call>{"name": "open_effort", "arguments": {"name": "auth bug"}}',  # unclosed tag at the end
        '{"tool_calls": [{"function": {"name": "open_effort", "arguments": {"name": "auth bug"}}}]}',
    ],
)
def test_common_shapes_become_calls_and_leave_no_text(content):
    text, calls = extract_text_tool_calls(content, OFFERED)
    assert text == ""
    assert [(c.name, args(c)) for c in calls] == [("open_effort", {"name": "auth bug"})]


def test_prose_around_the_call_stays_as_the_reply():
    content = (
        "Let me open an effort for this.\n\n"
        '<tool_call>{"name": "open_effort", "arguments": {"name": "auth"}}</tool_call>\n\n'
        "Then we look at the logs."
    )
    text, calls = extract_text_tool_calls(content, OFFERED)
    assert text == "Let me open an effort for this.\n\nThen we look at the logs."
    assert [c.name for c in calls] == ["open_effort"]


def test_several_calls_in_order():
    content = (
        '{"name": "search_efforts", "arguments": {"query": "auth"}}\n'
        '{"name": "open_effort", "arguments": {"name": "auth"}}'
    )
    _, calls = extract_text_tool_calls(content, OFFERED)
    assert [c.name for c in calls] == ["search_efforts", "open_effort"]


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "delete_everything", "arguments": {}}',  # a tool we did not offer
        '{"name": "Bob", "age": 3}',  # ordinary JSON the user asked for
        '```json\n{"name": "open_effort", "arguments": [1, 2]}\n```',  # arguments not an object
        'Use `{"name": ...}` in your config; no call here.',
        "plain prose without braces",
        '[{"name": "open_effort", "arguments": {}}, {"name": "nope", "arguments": {}}]',  # not all offered
    ],
)
def test_other_text_is_left_alone(content):
    text, calls = extract_text_tool_calls(content, OFFERED)
    assert calls == [] and text == content


def stream(content: str, size: int = 3) -> tuple[str, CallHoldback]:
    holdback = CallHoldback()
    shown = "".join(holdback.feed(content[i : i + size]) for i in range(0, len(content), size))
    return shown, holdback


def test_holdback_never_streams_a_call_written_as_json():
    content = 'Opening it.\n{"name": "open_effort", "arguments": {"name": "auth"}}'
    shown, holdback = stream(content)
    assert shown.strip() == "Opening it." and "open_effort" not in shown
    assert holdback.shown.strip() == "Opening it."


@pytest.mark.parametrize(
    "content",
    [
        "Plain text streams straight through, line after line.\nSecond line.",
        "Code:\n```python\ndef f():\n    return {'a': 1}\n```\nDone, with more words after it to pass the window.",
        "A dict:\n{\n  'not': 'a call', 'but': 'a dict literal in prose', 'long': 'enough to decide'\n} end",
    ],
)
def test_holdback_releases_ordinary_text_in_full(content):
    shown, holdback = stream(content)
    assert shown + holdback.flush() == content
    assert len(shown) >= len(content) - 60  # held back only near markers, never the whole reply


@pytest.mark.parametrize(
    "content",
    [
        # a user asked for an example: quoting a call is not making it
        'Here is an example:\n```json\n{"name": "open_effort", "arguments": {"name": "auth bug"}}\n```\n'
        "A model sends this when it starts a topic.",
        'For example, a model may write {"name": "close_effort", "arguments": {}} in its reply.',
    ],
)
def test_a_call_quoted_in_prose_is_text_not_a_call(content):
    text, calls = extract_text_tool_calls(content, OFFERED)
    assert calls == []
    assert text == content


def test_json_nested_too_deep_is_text_not_a_crash():
    content = '{"a":' * 2000
    assert extract_text_tool_calls(content, OFFERED) == (content, [])


# --------------------------------------------------------------------------- linear streaming (issue 25, item 9)
PROSE = "A line of prose with a { brace, a [list] and a `tick`.\n  {not a call at all, only a brace in text}\n"


@pytest.mark.parametrize("size", [1, 7, 64])
def test_the_holdback_examines_each_character_a_bounded_number_of_times(size):
    content = PROSE * (400_000 // len(PROSE))  # 400,000 characters: quadratic would be 10^10 / size
    holdback = CallHoldback()
    shown = "".join(holdback.feed(content[i : i + size]) for i in range(0, len(content), size))
    assert shown + holdback.flush() == content
    assert holdback.examined <= 20 * len(content)  # re-scanning the text on every delta: ~len^2 / size


def test_a_written_call_is_held_as_pieces_and_what_is_held_is_capped():
    call = '{"name": "open_effort", "arguments": {"name": "' + "x" * 3_000_000 + '"}}'
    holdback = CallHoldback()
    shown = [holdback.feed(call[i : i + 100]) for i in range(0, len(call), 100)]
    assert holdback.held_chars <= MAX_SCANNED_CHARS + 100  # past the scan limit it is text: streamed
    assert holdback.examined <= 10 * MAX_SCANNED_CHARS
    assert "".join(shown) + holdback.flush() == call
    small = '{"name": "open_effort", "arguments": {"name": "auth"}}'
    holdback = CallHoldback()
    assert "".join(holdback.feed(small[i : i + 2]) for i in range(0, len(small), 2)) == ""
    assert holdback.examined <= 4 * len(small) * HOLD_DECIDE_CHARS
