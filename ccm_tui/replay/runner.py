"""Replaying a parsed transcript through the real engine, turn by turn, measuring tokens.

For every human turn the runner plans the lifecycle calls from the effort
boundaries, hands the plan to the :class:`~.model.ReplayModel`, and runs
``engine.run_turn(user text)`` — the same orchestrator, context assembly,
salience, budget and compaction code as a live chat. It records per turn:

* ``ccm``: tokens of the request the engine actually sent this turn (the
  last request of the turn's tool loop: ``Outcome.request.total``);
* ``naive``: tokens a naive chat would send for the same turn — system prompt
  and tool definitions (as sent on an empty session), every earlier
  user/assistant message *as in the transcript* (uncapped) and this turn's
  message, each counted like the engine counts a message. It does not depend on
  the boundaries. ``naive_logged`` is the engine's own naive figure (every raw
  log of the session in context: the capped messages), without the turn's
  tool plumbing;
* ``open`` / ``concluded`` / ``evicted``: effort counts after the turn;
* ``after``: the working context between turns (what the next request starts
  from); the end figure ``ccm`` is this value after the last turn;
* the billed comparison (:mod:`.billing`): per turn the tokens each side sent, the prefix each
  shares with its previous request, and the cost in input-price units under no caching, OpenAI's
  automatic caching and Anthropic's 5-minute caching (``sent``, ``shared``, ``cost`` per side), and
  whether an effort changed state (``state_change``: an effort opened, concluded, was expanded,
  collapsed, evicted or switched, a summary was rewritten, or a compaction ran).

Nothing is estimated: every count is the session's tiktoken counter.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings
from ..core.efforts.working_context import cache_breakpoints
from ..core.engine.engine import Engine
from ..core.engine.opening import open_engine
from ..core.models.client_setup import resolve_budget
from ..core.models.interface import ChatModel
from ..core.text.tokens import TokenCounter
from ..core.turn.events import savings_share
from ..core.turn.orchestrator import clean_user_text
from ..errors import CcmError
from ..restore.turns import ParsedTranscript
from . import billing
from .boundaries import EffortSpan, turn_plan
from .capping import Caps, CapStats, cap_text
from .model import ReplayModel, TurnPlan

EMPTY_USER = "(empty message)"
NO_RESPONSE = "(no response recorded)"  # as an import lands a request the agent never answered


class ReplayFailed(CcmError, RuntimeError):
    """The engine refused a replayed turn (e.g. over the budget); the message is one line."""


@dataclass
class TurnFigures:
    turn: int
    naive: int
    ccm: int
    open: int
    concluded: int
    evicted: int
    after: int
    naive_logged: int
    logged_to: str
    effort: str | None = None
    compactions: int = 0
    # the billed comparison: tokens sent this turn, prefix shared with the previous request, cost per rule
    sent: dict[str, int] = field(default_factory=dict)  # {"ccm", "naive"}
    shared: dict[str, int] = field(default_factory=dict)
    carried: dict[str, int] = field(default_factory=dict)  # tokens the previous request had too, wherever
    held: dict[str, int] = field(default_factory=dict)  # tokens of the previous request
    cost: dict[str, dict[str, float]] = field(default_factory=dict)  # side → rule → input-price units
    state_change: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "naive": self.naive,
            "ccm": self.ccm,
            "open": self.open,
            "concluded": self.concluded,
            "evicted": self.evicted,
            "after": self.after,
            "naive_logged": self.naive_logged,
            "logged_to": self.logged_to,
            "sent": dict(self.sent),
            "shared": dict(self.shared),
            "carried": dict(self.carried),
            "held": dict(self.held),
            "cost": {side: {r: round(v, 1) for r, v in rules.items()} for side, rules in self.cost.items()},
            "state_change": self.state_change,
        }


@dataclass
class ReplayResult:
    transcript: str
    format: str
    segmenter: str
    summarizer: str
    budget: int
    encoding: str
    caps: Caps
    cap_stats: CapStats
    turns: list[TurnFigures] = field(default_factory=list)
    spans: list[EffortSpan] = field(default_factory=list)
    efforts: list[dict[str, Any]] = field(default_factory=list)
    end_ccm: int = 0
    end_naive: int = 0
    end_naive_logged: int = 0
    end_layers: dict[str, int] = field(default_factory=dict)
    compactions: int = 0
    checkpoints: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    billed: dict[str, dict[str, float]] = field(default_factory=dict)  # side → rule → input-price units
    timed: bool = False  # the transcript had timestamps: the Anthropic cache expired in its time
    floor: float = 0.0  # ccm's requests under the Anthropic rule at best (billing.Side.floor)

    def prefix_share(self, state_change: bool, side: str = "ccm", of: str = "sent") -> tuple[float, int]:
        """Share of a side's input tokens that were the previous request's prefix, over the turns where an
        effort changed state (or not), and how many such turns there were. ``of="carried"``: the share
        of what the previous request had too (new lines aside: what the layout keeps or loses);
        ``of="held"``: the share of the previous request this one repeats as its prefix."""
        turns = [t for t in self.turns if t.state_change == state_change and t.sent]
        whole = sum(getattr(t, of).get(side, 0) for t in turns)
        return (sum(t.shared.get(side, 0) for t in turns) / whole if whole else 0.0), len(turns)

    @property
    def floor_ratio(self) -> float:
        """ccm's floor under the Anthropic rule over the naive chat's Anthropic bill (:mod:`.billing`)."""
        naive = self.billed.get("naive", {}).get("anthropic", 0.0)
        return self.floor / naive if naive else 0.0

    def billed_ratio(self, rule: str) -> float:
        """ccm's cost over the naive chat's under a rule (below 1: ccm is cheaper)."""
        naive = self.billed.get("naive", {}).get(rule, 0.0)
        return self.billed.get("ccm", {}).get(rule, 0.0) / naive if naive else 0.0

    @property
    def savings(self) -> float:
        return savings_share(self.end_ccm, self.end_naive)

    @property
    def savings_logged(self) -> float:
        return savings_share(self.end_ccm, self.end_naive_logged)

    @property
    def max_ccm(self) -> int:
        return max([t.ccm for t in self.turns] + [t.after for t in self.turns] + [0])

    @property
    def over_budget(self) -> list[int]:
        return [t.turn for t in self.turns if t.ccm > self.budget or t.after > self.budget]


Progress = Callable[[int, int], None]


def _state(engine: Engine) -> tuple[Any, ...]:
    """The effort state a request shows (which efforts are open, active, concluded, expanded, in memory,
    with which summary): a turn that changes it is a turn with an effort change."""
    return tuple((e.id, e.state, e.in_memory, e.summary) for e in engine.full_status().efforts)


def _counts(engine: Engine) -> tuple[int, int, int]:
    efforts = engine.full_status().efforts
    open_ = sum(1 for e in efforts if e.state.is_open)
    concluded = len(efforts) - open_
    evicted = sum(1 for e in efforts if e.evicted)
    return open_, concluded, evicted


async def replay(
    parsed: ParsedTranscript,
    spans: list[EffortSpan],
    settings: Settings,
    *,
    transcript: str = "",
    segmenter: str = "offline",
    summarizer: ChatModel | None = None,
    session_dir: Path | None = None,
    progress: Progress | None = None,
    times: list[float | None] | None = None,
) -> ReplayResult:
    """Replay ``parsed`` with efforts at ``spans``; ``summarizer`` writes the summaries (None: offline)."""
    started = time.monotonic()
    keep = session_dir is not None
    directory = Path(session_dir) if session_dir is not None else Path(tempfile.mkdtemp(prefix="ccm-replay-"))
    counter = TokenCounter(settings.model)
    model = ReplayModel(counter, summarizer)
    budget = resolve_budget(settings, probe_model=summarizer is not None)
    engine = open_engine(directory, settings, llm=model, budget=budget, retry_base=0)
    try:
        counter = model.counter = engine.counter  # one tokenizer cache for the whole replay
        figures = engine.figures()
        fixed = figures.layers.get("system", 0) + figures.layers.get("tools", 0)
        caps = Caps.for_budget(budget, fixed)
        result = ReplayResult(
            transcript=transcript,
            format=parsed.format,
            segmenter=segmenter,
            summarizer="offline" if summarizer is None else "model",
            budget=budget,
            encoding=counter.encoding_name,
            caps=caps,
            cap_stats=CapStats(),
            spans=list(spans),
        )
        plan_of = turn_plan(spans)
        effort_at: dict[int, str] = {}
        for span in spans:
            for t in range(span.first_turn, span.last_turn + 1):
                effort_at[t] = span.id
        stats = result.cap_stats
        # naive = system prompt + tool definitions (as sent on an empty session) + every message so far
        naive_base = fixed
        history = 0
        ccm_side, naive_side = billing.Side(counter), billing.Side(counter)
        naive_blocks = [
            billing.Block("naive:tools", figures.layers.get("tools", 0)),
            billing.Block("naive:system", figures.layers.get("system", 0), system=True),
        ]
        result.timed = times is not None
        model.observe = lambda: (_state(engine), engine.compactions)
        previous_state: Any = None
        total = len(parsed.turns)
        for index, turn in enumerate(parsed.turns, 1):
            user = clean_user_text(turn.user) or EMPTY_USER
            user_sent, user_cut = cap_text(user, caps.user, counter, "user message")
            reply_full = "\n\n".join(r.strip() for r in turn.agent_responses if r and r.strip()).strip()
            reply_sent, reply_cut = cap_text(reply_full, caps.reply, counter, "agent response")
            reply_sent = reply_sent.strip() or NO_RESPONSE  # a request never answered (a re-send came next)
            if user_cut:
                stats.user_capped += 1
                stats.user_tokens_cut += user_cut
            if reply_cut:
                stats.replies_capped += 1
                stats.reply_tokens_cut += reply_cut
            step = plan_of.get(index, {})
            plan = TurnPlan(
                turn=index,
                user=clean_user_text(user_sent),
                reply=reply_sent,
                open=step.get("open"),
                reopen=step.get("reopen"),
                close="close" in step,
            )
            model.start_turn(plan)
            model.requests.clear()
            model.states.clear()
            side_before = model.side_tokens
            compactions_before = engine.compactions
            outcome = await engine.run_turn(user_sent)
            if not outcome.ok:
                raise ReplayFailed(f"turn {index}: {outcome.reason}")
            request, after = outcome.request, outcome.context
            assert request is not None and after is not None, "a turn without an error has its figures"
            open_, concluded, evicted = _counts(engine)
            # The engine's naive figure also counts this turn's tool plumbing (the lifecycle calls
            # and their results) and the effort-state lines of the system prompt; a naive chat has
            # neither. ``naive`` is counted directly, from the transcript as it is (uncapped).
            user_tokens = counter.count_message({"role": "user", "content": clean_user_text(user_sent)})
            naive_request = request.naive - request.layers.get("turn", 0) + user_tokens
            user_full = counter.count_message({"role": "user", "content": user})
            now = times[index - 1] if times is not None and index - 1 < len(times) else None
            sent = {"ccm": 0, "naive": 0}
            shared = {"ccm": 0, "naive": 0}
            carried = {"ccm": 0, "naive": 0}
            held = {"ccm": 0, "naive": 0}
            cost = {"ccm": dict.fromkeys(billing.RULES, 0.0), "naive": dict.fromkeys(billing.RULES, 0.0)}
            # an effort changed state, or a compaction ran, since the side's previous request
            state_change = False
            for (messages, tools), state in zip(model.requests, model.states, strict=True):
                state_change |= previous_state is not None and state != previous_state
                previous_state = state
                blocks = billing.message_blocks(messages, tools, counter)
                marks = [i + 1 for i in cache_breakpoints(messages)]  # (block 0: the tool definitions)
                bill = ccm_side.bill(billing.Request(blocks, marks), now)
                sent["ccm"] += bill.tokens
                shared["ccm"] += bill.shared
                carried["ccm"] += bill.carried
                held["ccm"] += bill.held
                for rule in billing.RULES:
                    cost["ccm"][rule] += bill.cost[rule]
            side = model.side_tokens - side_before
            if side:
                ccm_side.bill_plain(side)
                for rule in billing.RULES:
                    cost["ccm"][rule] += side
            user_block = billing.Block(f"naive:user:{index}", user_full)
            request_blocks = [*naive_blocks, user_block]
            bill = naive_side.bill(billing.Request(request_blocks, [1, len(request_blocks) - 1]), now)
            sent["naive"], shared["naive"], cost["naive"] = bill.tokens, bill.shared, dict(bill.cost)
            carried["naive"], held["naive"] = bill.carried, bill.held
            naive_blocks += [
                user_block,
                billing.Block(
                    f"naive:reply:{index}", counter.count_message({"role": "assistant", "content": reply_full})
                ),
            ]
            result.turns.append(
                TurnFigures(
                    turn=index,
                    naive=naive_base + history + user_full,
                    ccm=request.total,
                    open=open_,
                    concluded=concluded,
                    evicted=evicted,
                    after=after.total,
                    naive_logged=naive_request,
                    logged_to=outcome.logged_to or "",
                    effort=effort_at.get(index),
                    compactions=engine.compactions - compactions_before,
                    sent=sent,
                    shared=shared,
                    carried=carried,
                    held=held,
                    cost=cost,
                    state_change=state_change,
                )
            )
            history += user_full + counter.count_message({"role": "assistant", "content": reply_full})
            if progress is not None:
                progress(index, total)
        final = engine.figures()
        result.end_ccm = final.total
        result.end_layers = dict(final.layers)
        result.end_naive_logged = final.naive
        result.end_naive = naive_base + history
        result.compactions = engine.compactions
        result.checkpoints = model.stats.checkpoints
        result.billed = {"ccm": dict(ccm_side.totals), "naive": dict(naive_side.totals)}
        result.floor = ccm_side.floor
        status = engine.full_status()
        first_turn: dict[str, int] = {}
        last_turn: dict[str, int] = {}
        for span in spans:
            first_turn.setdefault(span.id, span.first_turn)
            last_turn[span.id] = span.last_turn
        result.efforts = [
            {
                "id": e.id,
                "status": e.status,
                "evicted": e.evicted,
                "first_turn": first_turn.get(e.id),
                "last_turn": last_turn.get(e.id),
                "raw_tokens": e.raw_tokens,
                "reopen_count": e.reopen_count,
                "summary_tokens": counter.count_text(e.summary or ""),
                "summary": e.summary,
            }
            for e in status.efforts
        ]
        result.seconds = time.monotonic() - started
        return result
    finally:
        engine.close()
        if not keep:
            shutil.rmtree(directory, ignore_errors=True)
