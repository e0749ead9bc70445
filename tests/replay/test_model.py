"""The replay model: lifecycle tool calls first, then the transcript's reply; offline summaries."""

from __future__ import annotations

import json

import pytest

from ccm_tui import paths
from ccm_tui.core.text.tokens import TokenCounter
from ccm_tui.replay.boundaries import BoundaryError
from ccm_tui.replay.model import ReplayModel, ReplayToolError, TurnPlan
from ccm_tui.replay.model_segmenter import one_liners, parse_answer

TOOLS = [{"type": "function", "function": {"name": "open_effort"}}]


async def test_tool_calls_then_reply():
    model = ReplayModel(TokenCounter())
    model.start_turn(TurnPlan(turn=3, user="u", reply="the answer", open="auth-bug", close=True))
    first = await model.stream_chat([], TOOLS)
    assert [c.name for c in first.tool_calls] == ["open_effort", "close_effort"]
    assert json.loads(first.tool_calls[0].arguments) == {"name": "auth-bug"}
    assert first.content == ""
    second = await model.stream_chat([{"role": "tool", "content": '{"status": "opened"}'}], TOOLS)
    assert second.tool_calls == [] and second.content == "the answer"


async def test_reopen_and_plain_turns():
    model = ReplayModel(TokenCounter())
    model.start_turn(TurnPlan(turn=1, user="u", reply="r", reopen="a"))
    assert [c.name for c in (await model.stream_chat([], TOOLS)).tool_calls] == ["reopen_effort"]
    model.start_turn(TurnPlan(turn=2, user="u", reply="plain"))
    assert (await model.stream_chat([], TOOLS)).content == "plain"


async def test_a_failed_lifecycle_call_is_a_replay_bug():
    model = ReplayModel(TokenCounter())
    model.start_turn(TurnPlan(turn=1, user="u", reply="r", close=True))
    await model.stream_chat([], TOOLS)
    with pytest.raises(ReplayToolError, match="turn 1: close_effort: no effort"):
        await model.stream_chat([{"role": "tool", "content": '{"error": "close_effort: no effort"}'}], TOOLS)


async def test_offline_summary_includes_the_closing_reply_and_halves_the_headroom():
    counter = TokenCounter()
    model = ReplayModel(counter)
    model.start_turn(
        TurnPlan(turn=2, user="Is the bug fixed?", reply="Yes, the RefreshToken bug is fixed in auth.py.", close=True)
    )
    messages = [
        {"role": "system", "content": paths.prompt("summarize")},
        {"role": "user", "content": "Effort: bug\n\nUSER: The login breaks after refresh.\n\nUSER: Is the bug fixed?"},
    ]
    completion = await model.complete(messages, max_tokens=120)
    assert "RefreshToken" in completion.content
    assert counter.count_text(completion.content) <= 60
    assert model.stats.summaries == 1 and model.stats.checkpoints == 0
    messages[0]["content"] = paths.prompt("checkpoint")
    await model.complete(messages, max_tokens=600)
    assert model.stats.checkpoints == 1


def test_model_segmentation_answers_are_validated():
    assert one_liners(["a\nb", "x" * 300]).splitlines()[0] == "1. a b"
    spans = parse_answer(
        'Sure! {"efforts": [{"id": "Login Bug", "first_turn": 1, "last_turn": 2},'
        ' {"name": "login bug", "first_turn": 3, "last_turn": 3}]}',
        3,
    )
    assert [(s.id, s.first_turn, s.last_turn) for s in spans] == [("login-bug", 1, 2), ("login-bug-2", 3, 3)]
    for bad in (
        "no json here",
        '{"efforts": 3}',
        '{"efforts": [{"id": "a", "first_turn": 1, "last_turn": 9}]}',
        '{"efforts": [{"id": "a", "first_turn": 1, "last_turn": 2}, {"id": "b", "first_turn": 2, "last_turn": 3}]}',
    ):
        with pytest.raises(BoundaryError):
            parse_answer(bad, 3)
