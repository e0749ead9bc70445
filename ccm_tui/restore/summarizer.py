"""Turn-by-turn summaries of a restored transcript and the final SESSION SUMMARY.

Each turn round is summarized with the TURN SUMMARY schema (``prompts/restore_turn.md``). Its prompt
carries the current turn (user messages, agent responses cut to a token cap,
the artifacts the parser found), the previous turn's summary and the state
accumulated over all earlier turns (:class:`~.turn_state.RestoreState`), which
is updated from every summary. A file whose turns would pass the call budget has
small consecutive turns share a call (:mod:`.call_plan`; ``prompts/restore_turns.md``):
the model writes one TURN SUMMARY per turn, and the state is updated from each in
order, as if they had come one by one. Error policy: a turn whose request fails or
whose answer cannot be parsed is noted and skipped, and the previous state is
kept. Finally :func:`summarize_session` writes the SESSION SUMMARY from the
turn summaries, the state and the evidence found by :mod:`.evidence`.

This module makes the requests and the calls; the answers' fields are read by
:mod:`.summary_fields`, the state is kept by :mod:`.turn_state`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ccm_tui import paths
from ccm_tui.core.models.interface import ChatModel
from ccm_tui.core.models.litellm_client import AUTH, NOT_FOUND, LLMError
from ccm_tui.core.models.provider_errors import ProviderFailure
from ccm_tui.core.text.tokens import TokenCounter, cap_tokens
from ccm_tui.restore.redaction import redact_text
from ccm_tui.restore.summary_fields import (
    SESSION_ALIASES,
    SESSION_FIELDS,
    SummaryParseError,
    TurnSummary,
    parse_fields,
    parse_turn_summaries,
)
from ccm_tui.restore.turn_state import RestoreState
from ccm_tui.restore.turns import ParsedTranscript, TurnRound

from ..errors import CcmError

# Per-turn prompt caps (tokens).
USER_TOKENS = 1_500
AGENT_TOKENS = 2_500
TURN_REPLY_TOKENS = 700
TURN_SUMMARY_WORDS = 220
BATCH_SUMMARY_WORDS = 120  # per turn, when several turns share a call
BATCH_REPLY_TOKENS = 4_000
# Final summary: the effort summary kept in working memory, and the whole report.
SUMMARY_TOKENS = 300
REPORT_TOKENS = 1_500
FINAL_REPLY_TOKENS = 1_600
DIGEST_TOKENS = 12_000
# A session whose first turns all fail this way is not worth going on with.
FATAL_KINDS = (AUTH, NOT_FOUND)
MAX_CONSECUTIVE_FAILURES = 5

Progress = Callable[[int, int, str], None]
"""``progress(done, total, label)``: called before and after each unit of work."""


class RestoreAborted(CcmError):
    """Summarizing cannot go on (bad key, unknown model, every turn failing); one-line message.
    ``provider_refuses``: the provider refuses every request (key, model), so other transcripts
    of the same run would fail the same way."""

    def __init__(self, message: str, *, provider_refuses: bool = False) -> None:
        super().__init__(message)
        self.provider_refuses = provider_refuses


# ----------------------------------------------------------------------------- turn prompts
def truncate_middle(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """Cut ``text`` to about ``max_tokens``, keeping its start (1/3) and its end (2/3)."""
    if counter.count_text(text) <= max_tokens:
        return text
    tokens = counter.encoding.encode(text, disallowed_special=())
    head_n = max(1, max_tokens // 3)
    tail_n = max(1, max_tokens - head_n)
    head = counter.encoding.decode(tokens[:head_n])
    tail = counter.encoding.decode(tokens[-tail_n:])
    return f"{head}\n[… {len(tokens) - head_n - tail_n} tokens omitted …]\n{tail}"


def render_turn(
    turn: TurnRound, counter: TokenCounter, *, user_tokens: int = USER_TOKENS, agent_tokens: int = AGENT_TOKENS
) -> str:
    """The current turn as prompt text: user messages, agent responses (capped) and artifacts.

    Secret-looking values are redacted (before the cut, so that no key is cut in half and missed):
    what the agent printed of ``.env`` or ``~/.aws/credentials`` stays home."""
    user = truncate_middle(redact_text(turn.user.strip()) or "(no text)", user_tokens, counter)
    agent = truncate_middle(
        redact_text("\n\n".join(r.strip() for r in turn.agent_responses if r.strip())) or "(no response)",
        agent_tokens,
        counter,
    )
    artifacts = [f"- {a.action} {a.path} (transcript line {a.line})" for a in turn.artifacts] or ["- none"]
    return "\n".join(
        [
            f"USER MESSAGES (transcript lines {turn.start_line}-{turn.end_line}):",
            "<<<",
            user,
            ">>>",
            f"AGENT RESPONSES (cut to about {agent_tokens} tokens when longer):",
            "<<<",
            agent,
            ">>>",
            "ARTIFACTS (found by the parser):",
            *artifacts,
        ]
    )


def turn_messages(
    turn: TurnRound, total: int, previous: TurnSummary | None, state: RestoreState, counter: TokenCounter, fmt: str = ""
) -> list[dict[str, str]]:
    """The request for one turn: schema instructions + current turn, previous summary, state."""
    system = (
        paths.prompt("restore_turn").replace("{turn}", str(turn.turn)).replace("{max_words}", str(TURN_SUMMARY_WORDS))
    )
    body = "\n\n".join(
        [
            f"SESSION FORMAT: {fmt or 'unknown'} — this is turn {turn.turn} of {total}.",
            "PREVIOUS TURN SUMMARY:\n"
            + (previous.render() if previous else "(none: this is the first turn summarized)"),
            "ACCUMULATED STATE:\n" + state.render(),
            f"CURRENT TURN {turn.turn}:\n" + render_turn(turn, counter),
        ]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": body}]


def batch_messages(
    batch: Sequence[TurnRound],
    total: int,
    previous: TurnSummary | None,
    state: RestoreState,
    counter: TokenCounter,
    fmt: str = "",
) -> list[dict[str, str]]:
    """The request for several consecutive turns that share a call: one TURN SUMMARY per turn."""
    first, last = batch[0].turn, batch[-1].turn
    system = (
        paths.prompt("restore_turns")
        .replace("{count}", str(len(batch)))
        .replace("{first}", str(first))
        .replace("{last}", str(last))
        .replace("{max_words}", str(BATCH_SUMMARY_WORDS))
    )
    body = "\n\n".join(
        [
            f"SESSION FORMAT: {fmt or 'unknown'} — these are turns {first} to {last} of {total}.",
            "PREVIOUS TURN SUMMARY:\n"
            + (previous.render() if previous else "(none: these are the first turns summarized)"),
            "ACCUMULATED STATE:\n" + state.render(),
            *(f"CURRENT TURN {turn.turn}:\n" + render_turn(turn, counter) for turn in batch),
        ]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": body}]


# ----------------------------------------------------------------------------- turn summarizer
@dataclass
class TurnSummaries:
    """The outcome of summarizing every turn: summaries, final state and what was skipped."""

    summaries: list[TurnSummary]
    state: RestoreState
    notes: list[str] = field(default_factory=list)
    failed_calls_in_a_row: int = 0

    @property
    def failed(self) -> list[int]:
        return list(self.state.skipped_turns)

    @property
    def previous(self) -> TurnSummary | None:
        """The latest turn summary (a skipped turn keeps the one before it)."""
        return self.summaries[-1] if self.summaries else None

    def settle(self, answers: Sequence[tuple[TurnRound, TurnSummary | str]], max_failed_calls: int) -> None:
        """Take one call's answers in turn order: a summary updates the state, a string is why the
        turn was skipped. Raises :class:`RestoreAborted` after ``max_failed_calls`` calls in a row
        with nothing summarized yet."""
        succeeded = False
        for turn, answer in answers:
            if isinstance(answer, TurnSummary):
                self.state.update(answer)
                self.summaries.append(answer)
                succeeded = True
            else:
                self.notes.append(f"turn {turn.turn} skipped: {answer}")
                self.state.skipped_turns.append(turn.turn)
        self.failed_calls_in_a_row = 0 if succeeded else self.failed_calls_in_a_row + 1
        if self.failed_calls_in_a_row >= max_failed_calls and not self.summaries:
            raise RestoreAborted(
                f"the first {len(self.state.skipped_turns)} turns all failed to summarize (last: {self.notes[-1]})"
            )


async def summarize_turns(
    llm: ChatModel,
    parsed: ParsedTranscript,
    counter: TokenCounter,
    *,
    progress: Progress | None = None,
    retries: int = 0,
    retry_base: float = 1.0,
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
    batches: Sequence[Sequence[TurnRound]] | None = None,
) -> TurnSummaries:
    """Summarize each turn in order, feeding the previous summary and the accumulated state.

    ``batches``: the turns grouped by call (:func:`.call_plan.plan_calls`); by default one call
    per turn. A failed turn (provider error after ``retries`` transient retries, or an answer
    that is not a TURN SUMMARY) is noted and skipped; the state is kept. Raises
    :class:`RestoreAborted` on errors no later turn can fix (bad key, unknown model) or after
    ``max_consecutive_failures`` failed calls in a row with no success yet.
    """
    result = TurnSummaries([], RestoreState())
    total = len(parsed.turns)
    done = 0
    for batch in batches if batches is not None else [(turn,) for turn in parsed.turns]:
        if progress:
            label = f"turn {batch[0].turn}" if len(batch) == 1 else f"turns {batch[0].turn}-{batch[-1].turn}"
            progress(done, total, f"summarizing {label}")
        for turn in batch:
            result.state.note_artifacts(turn)
        try:
            answers = await _summarize_batch(
                llm, batch, total, result, counter, parsed.format, retries=retries, retry_base=retry_base
            )
        except LLMError as err:
            if err.kind in FATAL_KINDS:
                raise RestoreAborted(str(err), provider_refuses=True) from None
            answers = [(turn, str(err)) for turn in batch]
        result.settle(answers, max_consecutive_failures)
        done += len(batch)
    if progress:
        progress(total, total, "turns summarized")
    return result


async def _summarize_batch(
    llm: ChatModel,
    batch: Sequence[TurnRound],
    total: int,
    result: TurnSummaries,
    counter: TokenCounter,
    fmt: str,
    *,
    retries: int,
    retry_base: float,
) -> list[tuple[TurnRound, TurnSummary | str]]:
    """One call for ``batch``: each turn's summary, or why it has none. Raises LLMError."""
    if len(batch) == 1:
        messages = turn_messages(batch[0], total, result.previous, result.state, counter, fmt)
        content = await _request(llm, messages, TURN_REPLY_TOKENS, retries, retry_base)
        try:
            return [(batch[0], TurnSummary.parse(content, batch[0].turn))]
        except SummaryParseError as err:
            return [(batch[0], str(err))]
    messages = batch_messages(batch, total, result.previous, result.state, counter, fmt)
    reply_tokens = min(BATCH_REPLY_TOKENS, TURN_REPLY_TOKENS * len(batch))
    content = await _request(llm, messages, reply_tokens, retries, retry_base)
    parsed = parse_turn_summaries(content, [turn.turn for turn in batch])
    return [(turn, parsed[turn.turn]) for turn in batch]


async def _request(
    llm: ChatModel, messages: list[dict[str, str]], max_tokens: int, retries: int, retry_base: float
) -> str:
    """The answer's text; transient faults are retried ``retries`` times with back-off."""
    attempt = 0
    while True:
        try:
            completion = await llm.complete(messages, max_tokens=max_tokens)
            return completion.content
        except LLMError as err:
            if not err.transient or attempt >= retries:
                raise
            attempt += 1
            await asyncio.sleep(retry_base * 2 ** (attempt - 1))


# ----------------------------------------------------------------------------- final summary
def turn_digest(summaries: Sequence[TurnSummary], counter: TokenCounter, budget: int = DIGEST_TOKENS) -> str:
    """Turn summaries within a token budget: the latest in full, older ones as one line each,
    the oldest dropped with a note if even that does not fit."""
    if not summaries:
        return "(no turn could be summarized)"
    parts: list[str] = []
    used = 0
    index = len(summaries) - 1
    while index >= 0:
        text = summaries[index].render()
        cost = counter.count_text(text)
        if used + cost > budget * 2 // 3 and parts:
            break
        parts.append(text)
        used += cost
        index -= 1
    while index >= 0:
        line = summaries[index].one_line()[:400]
        cost = counter.count_text(line)
        if used + cost > budget:
            parts.append(f"({index + 1} earlier turn(s) omitted here; the accumulated state covers them)")
            break
        parts.append(line)
        used += cost
        index -= 1
    return "\n\n".join(reversed(parts))


@dataclass
class SessionSummary:
    """The final SESSION SUMMARY: ``summary`` (short, for working memory) and the full ``report``."""

    summary: str
    report: str
    fields: dict[str, str] = field(default_factory=dict)
    offline: bool = False  # True when built without the model (the final request failed)


def final_messages(
    parsed: ParsedTranscript, result: TurnSummaries, evidence: str | None, counter: TokenCounter, name: str
) -> list[dict[str, str]]:
    """The request for the final SESSION SUMMARY."""
    system = (
        paths.prompt("restore_final")
        .replace("{summary_words}", str(int(SUMMARY_TOKENS * 0.6)))
        .replace("{max_words}", str(int(REPORT_TOKENS * 0.6)))
    )
    skipped = result.state.skipped_turns
    body = "\n\n".join(
        [
            f"SESSION: {name} ({parsed.format}, {len(parsed.turns)} turn(s)"
            + (f"; turns {', '.join(map(str, skipped))} could not be summarized" if skipped else "")
            + ")",
            "TURN SUMMARIES:\n" + turn_digest(result.summaries, counter),
            "ACCUMULATED STATE:\n" + result.state.render(),
            "EVIDENCE:\n" + (evidence.strip() if evidence and evidence.strip() else "(no evidence search was run)"),
        ]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": body}]


async def summarize_session(
    llm: ChatModel,
    parsed: ParsedTranscript,
    result: TurnSummaries,
    evidence: str | None,
    counter: TokenCounter,
    *,
    name: str = "",
    summary_tokens: int = SUMMARY_TOKENS,
) -> SessionSummary:
    """Write the SESSION SUMMARY. Raises LLMError; callers may fall back to :func:`offline_summary`."""
    messages = final_messages(parsed, result, evidence, counter, name or parsed.title or "session")
    completion = await llm.complete(messages, max_tokens=FINAL_REPLY_TOKENS)
    text = completion.content.strip()
    if not text:
        raise LLMError(ProviderFailure.OTHER, "the summary model returned an empty session summary")
    values = parse_fields(text, SESSION_FIELDS, SESSION_ALIASES)
    short = values.get("summary") or text
    report = text if text.lstrip().upper().startswith("SESSION SUMMARY") else "SESSION SUMMARY\n\n" + text
    return SessionSummary(
        summary=cap_tokens(short, summary_tokens, counter),
        report=_cap_report(report, counter),
        fields=values,
    )


def offline_summary(
    parsed: ParsedTranscript,
    result: TurnSummaries,
    counter: TokenCounter,
    *,
    name: str = "",
    summary_tokens: int = SUMMARY_TOKENS,
) -> SessionSummary:
    """A SESSION SUMMARY assembled from the accumulated state alone (no model call)."""
    state = result.state
    files = sorted(state.artifacts, key=lambda p: state.artifacts[p].last_turn, reverse=True)[:8]
    parts = [
        f"Restored {parsed.format} session {name or parsed.title or ''}".rstrip() + f" ({len(parsed.turns)} turns)."
    ]
    if state.goals:
        parts.append("Requests: " + "; ".join(g.split(": ", 1)[-1] for g in state.goals) + ".")
    elif parsed.turns:
        parts.append("First request: " + " ".join(parsed.turns[0].user.split())[:300] + ".")
    if state.decisions:
        parts.append("Outcomes: " + "; ".join(d.split(": ", 1)[-1] for d in state.decisions[-6:]) + ".")
    if files:
        parts.append("Files: " + ", ".join(files) + ".")
    if state.open_questions:
        parts.append("Open: " + "; ".join(state.open_questions) + ".")
    summary = cap_tokens(" ".join(parts), summary_tokens, counter)
    report = "\n".join(["SESSION SUMMARY", "", f"Summary: {summary}", "", "Accumulated state:", state.render()])
    return SessionSummary(summary=summary, report=_cap_report(report, counter), offline=True)


def _cap_report(report: str, counter: TokenCounter) -> str:
    if counter.count_text(report) <= REPORT_TOKENS:
        return report.strip()
    return truncate_middle(report.strip(), REPORT_TOKENS, counter)
