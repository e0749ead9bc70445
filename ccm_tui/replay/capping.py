"""Caps on the size of one replayed message, so that no request passes the token budget.

Coding-agent transcripts hold single "agent responses" of tens of thousands
of tokens (file dumps, tool output, whole rewritten files). A chat model does
not answer with 45K tokens, and no working context under a 16K budget can hold
one: compaction keeps an open effort's newest messages verbatim
(``KEEP_RECENT_MESSAGES`` = the last two exchanges), so the request after a
giant reply cannot fit whatever else is dropped.

The replay therefore caps each logged message, keeping its head and its tail
(where agents put their conclusion) around an explicit marker that says how
much was left out. The caps follow from the budget: after the fixed part
(system prompt + tool definitions) and a reserve for headers, a checkpoint
summary and tool plumbing, the rest must hold two verbatim exchanges plus the
new user message: ``3·user_cap + 2·reply_cap ≤ available``. With reply_cap =
3·user_cap that is ``reply_cap = available / 3``. At the default 16,000-token
budget: replies ≤ ~4,400 tokens, user messages ≤ ~1,450.

The naive figure is computed from the *uncapped* transcript (see runner), and
the report says how many messages were capped and how many tokens were cut.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.text.tokens import TokenCounter, keep_head_and_tail
from ..errors import InputError

RESERVE = 800  # effort headers, checkpoint summary (≤ 300), tool calls and results, effort-state lines
MARKER = "[… {cut:,} tokens of this {what} left out by the replay (message cap {cap:,} tokens) …]"
HEAD_SHARE = 0.6
MIN_CAP = 64


class BudgetTooSmall(InputError):
    pass


@dataclass
class Caps:
    user: int
    reply: int

    @classmethod
    def for_budget(cls, budget: int, fixed: int) -> Caps:
        available = budget - fixed - RESERVE
        reply = available // 3
        user = available // 9
        if user < MIN_CAP:
            raise BudgetTooSmall(
                f"a {budget:,}-token budget leaves {max(0, available):,} tokens beside the "
                f"{fixed:,}-token system prompt and tools: too small to replay a conversation"
            )
        return cls(user=user, reply=reply)


@dataclass
class CapStats:
    user_capped: int = 0
    user_tokens_cut: int = 0
    replies_capped: int = 0
    reply_tokens_cut: int = 0

    @property
    def tokens_cut(self) -> int:
        return self.user_tokens_cut + self.reply_tokens_cut

    def as_dict(self, caps: Caps) -> dict[str, int]:
        return {
            "user_cap": caps.user,
            "reply_cap": caps.reply,
            "user_capped": self.user_capped,
            "user_tokens_cut": self.user_tokens_cut,
            "replies_capped": self.replies_capped,
            "reply_tokens_cut": self.reply_tokens_cut,
        }


def cap_text(text: str, cap: int, counter: TokenCounter, what: str) -> tuple[str, int]:
    """``text`` within ``cap`` tokens (head + marker + tail), and how many tokens were left out."""
    return keep_head_and_tail(text, cap, counter, lambda cut: MARKER.format(cut=cut, what=what, cap=cap), HEAD_SHARE)
