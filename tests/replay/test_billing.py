"""The billed comparison's rules (replay/billing.py): prefix sharing, OpenAI's automatic cache,
Anthropic's breakpoints with a 5-minute expiry, and transcript timestamps."""

from __future__ import annotations

import pytest

from ccm_tui.replay.billing import (
    ANTHROPIC_TTL,
    Block,
    Request,
    Side,
    openai_cached,
    shared_prefix,
    turn_times,
)


def blocks(*sizes: int, prefix: str = "b") -> list[Block]:
    return [Block(f"{prefix}{i}", n) for i, n in enumerate(sizes)]


def test_the_shared_prefix_stops_at_the_first_block_that_differs():
    a = blocks(1000, 500, 200)
    b = [*a[:2], Block("other", 200), a[2]]
    assert shared_prefix(a, b) == 1500
    assert shared_prefix([], b) == 0


def test_openai_reads_prefixes_of_1024_tokens_and_more_in_steps_of_128():
    assert openai_cached(1023) == 0
    assert openai_cached(1024) == 1024
    assert openai_cached(1024 + 127) == 1024 and openai_cached(1024 + 128) == 1152


def test_a_naive_chat_with_a_last_message_breakpoint_reads_its_history_and_pays_for_new_lines():
    side = Side()
    history = blocks(2000, 300, 400, prefix="h")
    first = side.bill(Request(history, [0, 2]), 0.0)
    assert first.cost["anthropic"] == pytest.approx(1.25 * 2700)  # all written
    grown = [*history, Block("reply", 500), Block("next", 100)]
    second = side.bill(Request(grown, [0, 4]), 60.0)
    assert second.shared == 2700
    assert second.cost["anthropic"] == pytest.approx(0.1 * 2700 + 1.25 * 600)
    assert second.cost["openai"] == pytest.approx(3300 - 0.5 * openai_cached(2700))
    assert second.cost["none"] == 3300


def test_the_anthropic_cache_expires_five_minutes_after_its_last_use():
    side = Side()
    request = Request(blocks(3000, 100), [0, 1])
    side.bill(request, 0.0)
    assert side.bill(request, ANTHROPIC_TTL - 1).cost["anthropic"] == pytest.approx(0.1 * 3100)
    # read at 299 s: the entry lives until 599 s
    assert side.bill(request, 2 * ANTHROPIC_TTL - 2).cost["anthropic"] == pytest.approx(0.1 * 3100)
    assert side.bill(request, 4 * ANTHROPIC_TTL).cost["anthropic"] == pytest.approx(1.25 * 3100)


def test_a_prefix_under_the_minimum_is_never_cached():
    side = Side()
    request = Request(blocks(500, 100), [1])
    side.bill(request, 0.0)
    assert side.bill(request, 1.0).cost["anthropic"] == 600


def test_a_changed_block_keeps_the_stable_head_cached_and_rewrites_the_rest():
    side = Side()
    head = Block("head", 1500, system=True)
    side.bill(Request([Block("tools", 900), head, Block("state-1", 200, system=True), Block("m", 50)], [1, 3]), 0.0)
    changed = [Block("tools", 900), head, Block("state-2", 200, system=True), Block("m", 50)]
    bill = side.bill(Request(changed, [1, 3]), 1.0)
    assert bill.shared == 2400 and bill.carried == 2450
    assert bill.cost["anthropic"] == pytest.approx(0.1 * 2400 + 1.25 * 250)


def test_turn_times_come_from_the_transcripts_own_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"type":"user","timestamp":"2026-01-17T03:42:22.086Z"}\n'
        '{"type":"assistant"}\n'
        '{"type":"assistant"}\n'
        '{"type":"user","timestamp":"2026-01-17T03:50:22Z"}\n'
    )
    first, second = turn_times(path, [1, 4])
    assert second - first == 480
    assert turn_times(path, [3, 3, 4]) is None  # too few turns have a time


def test_the_floor_pays_each_new_block_once_and_reads_every_repeated_one_and_held_is_the_previous_request():
    side = Side()
    first = side.bill(Request(blocks(2000, 300), [0, 1]), 0.0)
    moved = [Block("new", 100), *blocks(2000, 300)]  # the same blocks behind a new one: no prefix at all
    second = side.bill(Request(moved, [0, 2]), 0.0)
    side.bill_plain(50)  # a summary request: 1× at best too
    assert side.floor == pytest.approx(2300 + 100 + 0.1 * 2300 + 50)
    assert side.floor < side.totals["anthropic"]
    assert first.held == 0 and second.held == 2300 and second.shared == 0 and second.carried == 2300
