"""The restore pipeline as a library: turn summaries → evidence search → SESSION SUMMARY.

The command (:mod:`ccm_tui.commands.restore`) parses flags, prints progress and
lands the result with :mod:`.landing`; everything that talks to the model is here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccm_tui.config import Settings
from ccm_tui.restore.turns import ParsedTranscript

MAX_SUMMARY_RETRIES = 2


class ModelCallMeter:
    """Wraps the model client: counts the calls the restore makes and the tokens it sends."""

    def __init__(self, llm: Any, counter: Any) -> None:
        self._llm = llm
        self._counter = counter
        self.calls = 0
        self.tokens_sent = 0

    def _count(self, messages: list[dict[str, Any]], tools: Any = None) -> None:
        self.calls += 1
        self.tokens_sent += sum(self._counter.count_message(m) for m in messages)
        if tools:
            self.tokens_sent += self._counter.count_json(tools)  # as the context counts tool definitions

    async def complete(self, messages: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        self._count(messages)
        return await self._llm.complete(messages, *args, **kwargs)

    async def chat_once(self, messages: list[dict[str, Any]], tools: Any = None, *args: Any, **kwargs: Any) -> Any:
        self._count(messages, tools)
        return await self._llm.chat_once(messages, tools, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)


@dataclass
class RestoreOutcome:
    """Everything the model work produced, before landing."""

    turns: Any  # summarizer.TurnSummaries
    session: Any  # summarizer.SessionSummary
    evidence: Any = None  # evidence.EvidenceResult | None
    notes: list[str] = field(default_factory=list)


async def restore_pipeline(
    llm,
    parsed: ParsedTranscript,
    log_text: str,
    counter,
    *,
    name: str,
    root: Path | None,
    root_reason: str,
    skip_evidence: bool = False,
    max_searches: int = 8,
    progress=None,
    retries: int = 0,
    retry_base: float = 1.0,
    on_turns_done=None,
) -> RestoreOutcome:
    """Summarize the turns, search for evidence, write the SESSION SUMMARY.

    Raises :class:`summarizer.RestoreAborted` when summarizing cannot go on.
    """
    from ccm_tui.core.llm import LLMError
    from ccm_tui.restore import evidence as ev
    from ccm_tui.restore import summarizer as sm

    turns = await sm.summarize_turns(llm, parsed, counter, progress=progress, retries=retries, retry_base=retry_base)
    outcome = RestoreOutcome(turns=turns, session=None, notes=list(turns.notes))
    if on_turns_done is not None:
        on_turns_done(turns)
    if not skip_evidence and max_searches > 0:
        tools = ev.EvidenceTools(log_text, parsed, ev.FileAccess(root, root_reason, parsed.cwd))
        context = ev.evidence_context(
            parsed, sm.turn_digest(turns.summaries, counter, ev.CONTEXT_TOKENS), turns.state.render(), name
        )
        outcome.evidence = await ev.gather_evidence(llm, tools, context, max_rounds=max_searches, progress=progress)
        outcome.notes.extend(outcome.evidence.notes)
    if progress:
        progress(0, 1, "writing the session summary")
    findings = outcome.evidence.findings if outcome.evidence else None
    try:
        outcome.session = await sm.summarize_session(llm, parsed, turns, findings, counter, name=name)
    except LLMError as err:
        if err.kind in sm.FATAL_KINDS:
            raise sm.RestoreAborted(str(err), provider_refuses=True) from None
        outcome.notes.append(f"session summary failed ({err}); used a summary built from the turn summaries")
        outcome.session = sm.offline_summary(parsed, turns, counter, name=name)
    if progress:
        progress(1, 1, "session summary written")
    return outcome


def source_extras(settings: Settings, outcome: RestoreOutcome, max_turns: int | None) -> dict[str, Any]:
    """What the manifest's ``source`` entry records about how the effort was made."""
    extra: dict[str, Any] = {"model": settings.effective_summary_model}
    if outcome.turns.state.skipped_turns:
        extra["skipped_turns"] = list(outcome.turns.state.skipped_turns)
    if outcome.evidence is not None:
        extra["evidence"] = {
            "rounds": outcome.evidence.rounds,
            "ended_by": outcome.evidence.ended_by,
            "tool_calls": len(outcome.evidence.calls),
        }
    if max_turns is not None:
        extra["max_turns"] = max_turns
    if outcome.session.offline:
        extra["summary_offline"] = True
    return extra
