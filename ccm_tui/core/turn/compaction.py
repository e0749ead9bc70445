"""Auto-compaction: fit the working context under the hard token budget.

When the next request would pass the budget, compaction runs in order of
least harm, re-measuring after each step and stopping as soon as it fits:

1. collapse expansions (least recently referenced first);
2. evict concluded summaries from working memory (least recently referenced first; pinned ones
   only as the very last step, after 4, with a banner that says so);
3. shrink the ambient window (halving it);
4. checkpoint-summarize the oldest part of backgrounded, then active, open
   efforts — the checkpoint is stored in the manifest so it is not recomputed
   every turn; raw logs are never touched.

Each run logs ``compaction_start``/``compaction_complete`` with its number;
every second compaction rebuilds working state from disk (a "full
plan reload"). The user sees ``AUTO-COMPACTION #N: before → after tokens``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...config import Settings
from ...errors import Refused
from ..efforts import lifecycle
from ..efforts.salience import is_pinned
from ..efforts.summaries import summarize_messages
from ..efforts.working_context import WorkingContext
from ..models.interface import ChatModel
from ..models.litellm_client import LLMError
from ..session.session import Session
from ..storage import eventlog as ev

KEEP_RECENT_MESSAGES = 4  # an open effort's newest messages always stay verbatim
MIN_CHECKPOINT_MESSAGES = 2


class ContextTooLarge(Refused):
    """Nothing more can be compacted and the request still passes the budget."""

    kind = "budget"
    partial = ""


COLLAPSED_BY_COMPACTION = "Collapsed effort: {id} (auto-compaction)"


@dataclass
class CompactionReport:
    context: WorkingContext
    before: int
    after: int
    number: int
    banners: list[str] = field(default_factory=list)
    # effort changes said as the user's and the model's own are ("--- Collapsed effort: x (auto-compaction) ---")
    effort_banners: list[str] = field(default_factory=list)
    changes: list[tuple[str, str]] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)


class Compactor:
    def __init__(self, session: Session, settings: Settings, llm: ChatModel | None) -> None:
        self.session = session
        self.settings = settings
        self.llm = llm

    async def compact(self, build: Callable[[], WorkingContext], budget: int, turn: int) -> CompactionReport:
        session = self.session
        wc = build()
        before = wc.total
        turn_tokens = wc.layers.get("turn", 0)
        fixed = wc.layers.get("system", 0) + wc.layers.get("tools", 0)
        if turn_tokens + fixed > budget:
            raise ContextTooLarge(
                f"this message needs {turn_tokens + fixed:,} tokens with the system prompt, over the "
                f"{budget:,}-token budget: shorten it or raise token_budget"
            )
        session.state.compaction_count += 1
        number = session.state.compaction_count
        session.save_manifest()
        session.save_view()
        session.save_state()
        session.log_event(ev.COMPACTION_START, compaction_number=number, tokens=before, budget=budget)
        report = CompactionReport(context=wc, before=before, after=before, number=number)

        def fits() -> bool:
            report.context = build()
            return report.context.total <= budget

        fitted = (
            self._collapse_expansions(report, fits)
            or self._evict_summaries(report, fits)
            or self._shrink_ambient(report, fits)
            or await self._checkpoint_open_efforts(report, fits, budget)
            or self._evict_summaries(report, fits, pinned=True)
        )
        session.save_manifest()
        session.save_view()
        session.save_state()
        full_reload = number % 2 == 0
        if full_reload:
            session.load()
            report.context = build()
        report.after = report.context.total
        session.log_event(
            ev.COMPACTION_COMPLETE,
            compaction_number=number,
            tokens=report.after,
            full_reload=full_reload,
            steps=report.steps,
            fitted=bool(fitted),
        )
        report.banners.append(f"AUTO-COMPACTION #{number}: {before:,} → {report.after:,} tokens")
        if not fitted and report.after > budget:
            raise ContextTooLarge(
                f"the context is {report.after:,} tokens after compaction, over the {budget:,}-token budget"
            )
        return report

    def _by_staleness(self, ids: list[str]) -> list[str]:
        last = self.session.view.last_referenced
        summaries = self.session.view.summaries
        return sorted(ids, key=lambda i: (max(last.get(i, -1), summaries.get(i, -1)), i))

    def _collapse_expansions(self, report: CompactionReport, fits) -> bool:
        for effort_id in self._by_staleness(list(self.session.view.expanded)):
            lifecycle.collapse(self.session, effort_id, reason="compaction")
            report.changes.append((effort_id, "collapsed"))
            report.steps.append(f"collapsed {effort_id}")
            report.effort_banners.append(f"--- {COLLAPSED_BY_COMPACTION.format(id=effort_id)} ---")
            if fits():
                return True
        return False

    def _evict_summaries(self, report: CompactionReport, fits, *, pinned: bool = False) -> bool:
        """Evict summaries, stalest first: the unpinned ones, or (``pinned``, the last resort) the
        pinned ones, each with a banner."""
        view = self.session.view
        for effort_id in self._by_staleness(list(view.summaries)):
            if is_pinned(self.session, effort_id) != pinned:
                continue
            lifecycle.evict_summary(self.session, effort_id, reason="compaction")
            report.changes.append((effort_id, "evicted"))
            report.steps.append(f"evicted {effort_id}")
            if pinned:
                report.banners.append(f"pinned effort '{effort_id}' left working memory: nothing else was left to drop")
            if fits():
                return True
        return False

    def _shrink_ambient(self, report: CompactionReport, fits) -> bool:
        state = self.session.state
        while self.session.ambient_window > 0:
            state.ambient_window = self.session.ambient_window // 2
            report.steps.append(f"ambient window → {state.ambient_window}")
            if fits():
                return True
        return False

    async def _checkpoint_open_efforts(self, report: CompactionReport, fits, budget: int) -> bool:
        if self.llm is None:
            return False
        efforts = sorted(self.session.efforts.open_efforts(), key=lambda e: e.active)  # backgrounded first
        for effort in efforts:
            while True:
                log = self.session.effort_log(effort.id)
                start = effort.checkpoint_upto
                upto = len(log) - KEEP_RECENT_MESSAGES
                if upto - start < MIN_CHECKPOINT_MESSAGES:
                    break
                # Fold about half of what is still verbatim, more if far over the budget.
                overshoot = report.context.total - budget
                span = max(MIN_CHECKPOINT_MESSAGES, (upto - start) // 2)
                if overshoot > report.context.total // 2:
                    span = upto - start
                end = start + span
                material = []
                if effort.checkpoint:
                    material.append({"role": "system", "content": f"Earlier checkpoint: {effort.checkpoint}"})
                material += [m for m in log[start:end] if m.get("role") in ("user", "assistant", "system")]
                try:
                    text = await summarize_messages(
                        self.llm,
                        material,
                        counter=self.session.counter,
                        max_tokens=max(self.settings.summary_max_tokens, 300),
                        kind="checkpoint",
                        title=effort.name or effort.id,
                    )
                except LLMError as exc:
                    report.steps.append(f"checkpoint of {effort.id} failed: {exc}")
                    break
                lifecycle.checkpoint(effort, text, end)
                report.steps.append(f"checkpointed {effort.id} up to message {end}")
                report.changes.append((effort.id, "checkpointed"))
                if fits():
                    return True
        return False

    def relax(self, build: Callable[[], WorkingContext], budget: int) -> None:
        """Give back a shrunk ambient window once there is room again."""
        state = self.session.state
        if state.ambient_window is None:
            return
        saved = state.ambient_window
        state.ambient_window = None
        if build().total > budget * 0.8:
            state.ambient_window = saved
