"""Message caps: within the cap, head and tail kept, the cut announced and counted."""

from __future__ import annotations

import pytest

from ccm_tui.core.text.tokens import TokenCounter
from ccm_tui.replay.capping import BudgetTooSmall, Caps, cap_text

COUNTER = TokenCounter()


def test_short_text_is_untouched():
    assert cap_text("hello there", 100, COUNTER, "agent response") == ("hello there", 0)


def test_long_text_keeps_head_and_tail_within_the_cap():
    text = "START of the reply. " + " ".join(f"word{i}" for i in range(5000)) + " END: the fix works."
    out, cut = cap_text(text, 300, COUNTER, "agent response")
    assert COUNTER.count_text(out) <= 300
    assert out.startswith("START of the reply.")
    assert out.endswith("END: the fix works.")
    assert "tokens of this agent response left out by the replay" in out
    assert cut == COUNTER.count_text(text) - COUNTER.count_text(out)


def test_caps_follow_the_budget():
    caps = Caps.for_budget(16_000, 1_650)
    assert caps.reply == (16_000 - 1_650 - 800) // 3
    assert 3 * caps.user + 2 * caps.reply + 1_650 + 800 <= 16_000
    with pytest.raises(BudgetTooSmall, match="too small to replay"):
        Caps.for_budget(2_500, 1_650)
