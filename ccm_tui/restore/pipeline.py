"""The restore pipeline as a library: turn summaries → evidence search → SESSION SUMMARY.

The importer (:mod:`.importer`) runs it for each transcript and lands the result
with :mod:`.landing`; everything that talks to the model is here, through any
:class:`~ccm_tui.core.models.interface.ChatModel`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccm_tui.config import Settings
from ccm_tui.core.models.interface import ChatModel, Completion, OnDelta
from ccm_tui.core.models.provider_errors import OTHER, LLMError
from ccm_tui.core.text.tokens import TokenCounter
from ccm_tui.restore.turns import ParsedTranscript, TurnRound

if TYPE_CHECKING:
    from ccm_tui.restore.evidence import EvidenceResult
    from ccm_tui.restore.summarizer import Progress, SessionSummary, TurnSummaries

MAX_SUMMARY_RETRIES = 2


class ModelCallMeter:
    """A :class:`ChatModel` around another one that counts the calls a restore makes and the
    tokens it sends (restore's cost report), and holds each file to its call limit
    (:attr:`.call_plan.CallPlan.ceiling`): a call past it fails as a provider error would, and
    the import goes on with what it has (the turns left are skipped, the summary is built
    without the model)."""

    def __init__(self, llm: ChatModel, counter: TokenCounter) -> None:
        self._llm = llm
        self.counter = counter
        self.model = llm.model
        self.calls = 0
        self.tokens_sent = 0
        self.file_calls = 0
        self.file_limit: int | None = None

    def start_file(self, limit: int | None) -> None:
        """A new file starts: count its calls from zero, and allow at most ``limit`` (None: no limit)."""
        self.file_calls, self.file_limit = 0, limit

    @property
    def api_base(self) -> str | None:
        return self._llm.api_base

    @property
    def loaded(self) -> bool:
        return self._llm.loaded

    def load(self) -> None:
        self._llm.load()

    def _count(self, messages: list[dict[str, Any]], tools: Any = None) -> None:
        if self.file_limit is not None and self.file_calls >= self.file_limit:
            raise LLMError(OTHER, f"this file's limit of {self.file_limit} model calls is reached")
        self.file_calls += 1
        self.calls += 1
        self.tokens_sent += sum(self.counter.count_message(m) for m in messages)
        if tools:
            self.tokens_sent += self.counter.count_json(tools)  # as the context counts tool definitions

    async def stream_chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, on_delta: OnDelta | None = None
    ) -> Completion:
        self._count(messages, tools)
        return await self._llm.stream_chat(messages, tools, on_delta)

    async def complete(
        self, messages: list[dict[str, Any]], *, max_tokens: int | None = None, summary: bool = True
    ) -> Completion:
        self._count(messages)
        return await self._llm.complete(messages, max_tokens=max_tokens, summary=summary)

    async def chat_once(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Completion:
        self._count(messages, tools)
        return await self._llm.chat_once(messages, tools)


@dataclass
class RestoreOutcome:
    """Everything the model work produced, before landing."""

    turns: TurnSummaries
    session: SessionSummary
    evidence: EvidenceResult | None = None
    notes: list[str] = field(default_factory=list)


async def restore_pipeline(
    llm: ChatModel,
    parsed: ParsedTranscript,
    log_text: str,
    counter: TokenCounter,
    *,
    name: str,
    root: Path | None,
    root_reason: str,
    skip_evidence: bool = False,
    max_searches: int = 8,
    progress: Progress | None = None,
    retries: int = 0,
    retry_base: float = 1.0,
    on_turns_done: Callable[[TurnSummaries], None] | None = None,
    batches: Sequence[Sequence[TurnRound]] | None = None,
) -> RestoreOutcome:
    """Summarize the turns (``batches``: grouped by call, see :mod:`.call_plan`; default one call
    per turn), search for evidence, write the SESSION SUMMARY.

    Raises :class:`summarizer.RestoreAborted` when summarizing cannot go on.
    """
    from ccm_tui.restore import evidence as ev
    from ccm_tui.restore import summarizer as sm

    turns = await sm.summarize_turns(
        llm, parsed, counter, progress=progress, retries=retries, retry_base=retry_base, batches=batches
    )
    notes = list(turns.notes)
    if on_turns_done is not None:
        on_turns_done(turns)
    evidence: EvidenceResult | None = None
    if not skip_evidence and max_searches > 0:
        tools = ev.EvidenceTools(log_text, parsed, ev.FileAccess(root, root_reason, parsed.cwd))
        context = ev.evidence_context(
            parsed, sm.turn_digest(turns.summaries, counter, ev.CONTEXT_TOKENS), turns.state.render(), name
        )
        evidence = await ev.gather_evidence(llm, tools, context, max_rounds=max_searches, progress=progress)
        notes.extend(evidence.notes)
    if progress:
        progress(0, 1, "writing the session summary")
    findings = evidence.findings if evidence else None
    try:
        session = await sm.summarize_session(llm, parsed, turns, findings, counter, name=name)
    except LLMError as err:
        if err.kind in sm.FATAL_KINDS:
            raise sm.RestoreAborted(str(err), provider_refuses=True) from None
        notes.append(f"session summary failed ({err}); used a summary built from the turn summaries")
        session = sm.offline_summary(parsed, turns, counter, name=name)
    if progress:
        progress(1, 1, "session summary written")
    return RestoreOutcome(turns=turns, session=session, evidence=evidence, notes=notes)


def source_extras(settings: Settings, outcome: RestoreOutcome, max_turns: int | None) -> dict[str, Any]:
    """What the manifest's ``source`` entry records about how the effort was made."""
    extra: dict[str, Any] = {"model": settings.effective_summary_model}
    if outcome.turns.state.skipped_turns:
        extra["skipped_turns"] = list(outcome.turns.state.skipped_turns)
    if outcome.evidence is not None:
        extra["evidence"] = {
            "rounds": outcome.evidence.rounds,
            "ended_by": outcome.evidence.ended_by.value,
            "tool_calls": len(outcome.evidence.searches),
        }
    if max_turns is not None:
        extra["max_turns"] = max_turns
    if outcome.session.offline:
        extra["summary_offline"] = True
    return extra
