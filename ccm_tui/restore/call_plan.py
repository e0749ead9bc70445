"""How many model calls one transcript's import will make, said before the first one: the call plan.

A restore makes one call per turn (the seed's turn-by-turn summaries), up to ``max_searches + 1``
for the evidence search and one for the SESSION SUMMARY. Unbounded, that is one hostile file's
licence to spend: a 4 MB Markdown file of 100,000 tiny turns asks for 100,000 calls. So:

* while a file's calls fit the **budget** (``--max-calls``, :data:`DEFAULT_MAX_CALLS` per file),
  every turn gets its own call, as before;
* past it, consecutive turns **share a call** — up to :data:`MAX_TURNS_PER_CALL` turns and
  :data:`BATCH_TURN_TOKENS` tokens of turn text, as few per call as the budget allows — and the
  model writes one TURN SUMMARY per turn, so each turn still has its summary and the
  accumulated state still grows turn by turn (:func:`.summarizer.summarize_turns`);
* if even that passes the budget, the import **asks** before the first call (the caller decides:
  a question on a terminal, ``--yes``, or a refusal that says the estimate and the way on).

The plan's :attr:`CallPlan.ceiling` (its calls plus room for retries of transient faults) is a
hard limit per file, enforced where the calls are counted
(:class:`~.pipeline.ModelCallMeter`): past it a call fails as a provider error would, and the
import ends with what it has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ccm_tui.restore.turns import TurnRound

DEFAULT_MAX_CALLS = 500  # model calls per file before asking
MAX_TURNS_PER_CALL = 8
BATCH_TURN_TOKENS = 3_000  # turn text one shared call carries (a longer turn goes alone)
# Rough prompt sizes (tokens) for the estimate, fitted to the shared corpus (10 real sessions
# restored against the scripted server: the estimate is 0.9-1.4 times what was sent): the
# instructions, the previous summary and the state a turn call carries (a turn's own text is
# measured); an evidence round's instructions, tools and context, and the answers each round
# adds (counted for a typical search of 4 calls: most end long before their rounds are used);
# the final request's digest, growing with the turns up to its cap.
TURN_OVERHEAD_TOKENS = 900
TURN_TEXT_CAP_TOKENS = 4_100  # a turn's text is cut to about this (summarizer.USER_TOKENS + AGENT_TOKENS)
EVIDENCE_BASE_TOKENS = 2_000
EVIDENCE_CONTEXT_PER_TURN_TOKENS = 60  # up to evidence.CONTEXT_TOKENS
EVIDENCE_CONTEXT_MAX_TOKENS = 6_000
EVIDENCE_ANSWERS_TOKENS = 1_500
TYPICAL_EVIDENCE_CALLS = 4
SUMMARY_PER_TURN_TOKENS = 120
SUMMARY_MAX_TOKENS = 14_000


@dataclass(frozen=True)
class CallPlan:
    """The calls one import will make: turn calls (as batches of turns), evidence, summary."""

    batches: tuple[tuple[TurnRound, ...], ...]
    evidence_calls: int
    summary_calls: int
    tokens: int  # a rough figure of the tokens sent (with a typical evidence search)
    budget: int

    @property
    def turns(self) -> int:
        return sum(len(batch) for batch in self.batches)

    @property
    def turn_calls(self) -> int:
        return len(self.batches)

    @property
    def calls(self) -> int:
        return self.turn_calls + self.evidence_calls + self.summary_calls

    @property
    def over_budget(self) -> bool:
        return self.calls > self.budget

    @property
    def ceiling(self) -> int:
        """The most calls this file may make: the plan and room for retries of transient faults."""
        return self.calls + max(3, self.calls // 10)

    def describe(self) -> str:
        """The estimate in one line: ``up to 20 model calls (~25,000 tokens sent): 10 turn(s) …``."""
        shared = self.turn_calls < self.turns
        turns = f"{self.turns:,} turn(s) in {self.turn_calls:,} call(s)" + (
            f" (up to {max(len(b) for b in self.batches)} turns per call)" if shared else ""
        )
        parts = [turns]
        if self.evidence_calls:
            parts.append(f"evidence search up to {self.evidence_calls}")
        parts.append("session summary 1")
        return (
            f"up to {self.calls:,} model call(s) (~{self.tokens:,} tokens sent): {', '.join(parts)}; "
            f"{self.ceiling:,} at most with retries"
        )

    def refusal(self, name: str) -> str:
        """Why the file was not imported, and how to go on (one line)."""
        return refusal(name, self.calls, self.tokens, self.budget)


@dataclass(frozen=True)
class RunPlan:
    """The calls a bulk import will make in all: one estimate and one question for the whole run
    (the budget, ``--max-calls``, is the run's as well as each file's: N files must not spend
    N times the budget unasked). ``per_file``: (file, calls, tokens) of each file that will ask the
    model, in the run's order."""

    per_file: tuple[tuple[Path, int, int], ...]
    budget: int

    @property
    def files(self) -> int:
        return len(self.per_file)

    @property
    def calls(self) -> int:
        return sum(calls for _, calls, _ in self.per_file)

    @property
    def tokens(self) -> int:
        return sum(tokens for _, _, tokens in self.per_file)

    @property
    def over_budget(self) -> bool:
        return self.calls > self.budget

    def describe(self) -> str:
        return (
            f"the run: {self.files:,} file(s) to import, up to {self.calls:,} model call(s) "
            f"(~{self.tokens:,} tokens sent) in all"
        )

    def left_out(self) -> dict[Path, str]:
        """When the run over the budget is not approved: the files left out, each with why (in order,
        a file is imported while the run's calls so far and its own fit the budget)."""
        used, out = 0, {}
        for path, calls, tokens in self.per_file:
            if used + calls <= self.budget:
                used += calls
            elif calls > self.budget:
                out[path] = refusal(path.name, calls, tokens, self.budget)
            else:
                out[path] = (
                    f"not imported: with {path.name}'s {calls:,} model calls the run would need more than its budget "
                    f"of {self.budget:,} ({self.calls:,} in all for {self.files:,} files); run again with --yes to go "
                    "ahead, --max-calls N to raise the budget, or name fewer files"
                )
        return out


def refusal(name: str, calls: int, tokens: int, budget: int) -> str:
    """Why a file was not imported, and how to go on (one line)."""
    return (
        f"not imported: {name} needs up to {calls:,} model calls (~{tokens:,} tokens sent), over the "
        f"budget of {budget:,} per file; run again with --yes to go ahead, --max-calls N to raise the "
        "budget, or --max-turns N to import fewer turns"
    )


def turn_tokens(turn: TurnRound) -> int:
    """A quick, rough token count of a turn's text as its prompt carries it (UTF-8 bytes / 4, capped)."""
    size = len(turn.user.encode("utf-8", "replace")) + sum(
        len(r.encode("utf-8", "replace")) for r in turn.agent_responses
    )
    return min(TURN_TEXT_CAP_TOKENS, size // 4) + 20 * len(turn.artifacts) + 40


def plan_calls(turns: Sequence[TurnRound], *, evidence_rounds: int, budget: int = DEFAULT_MAX_CALLS) -> CallPlan:
    """The call plan for ``turns`` (see the module's policy); ``evidence_rounds`` 0: no evidence search."""
    evidence_calls = evidence_rounds + 1 if evidence_rounds > 0 else 0
    fixed = evidence_calls + 1
    sizes = [turn_tokens(turn) for turn in turns]
    per_call = 1
    if len(turns) + fixed > budget:
        per_call = max(2, min(MAX_TURNS_PER_CALL, math.ceil(len(turns) / max(1, budget - fixed))))
    batches, batch_tokens = _batches(turns, sizes, per_call)
    tokens = sum(TURN_OVERHEAD_TOKENS + size for size in batch_tokens)
    context = EVIDENCE_BASE_TOKENS + min(EVIDENCE_CONTEXT_MAX_TOKENS, EVIDENCE_CONTEXT_PER_TURN_TOKENS * len(turns))
    tokens += sum(context + n * EVIDENCE_ANSWERS_TOKENS for n in range(min(evidence_calls, TYPICAL_EVIDENCE_CALLS)))
    tokens += min(SUMMARY_MAX_TOKENS, TURN_OVERHEAD_TOKENS + SUMMARY_PER_TURN_TOKENS * len(turns))
    return CallPlan(batches, evidence_calls, 1, tokens, budget)


def _batches(
    turns: Sequence[TurnRound], sizes: list[int], per_call: int
) -> tuple[tuple[tuple[TurnRound, ...], ...], list[int]]:
    """Consecutive turns, ``per_call`` at most together and :data:`BATCH_TURN_TOKENS` of text at
    most (a longer turn goes alone), and the text tokens of each batch."""
    batches: list[tuple[TurnRound, ...]] = []
    totals: list[int] = []
    current: list[TurnRound] = []
    used = 0
    for turn, size in zip(turns, sizes, strict=True):
        if current and (len(current) >= per_call or used + size > BATCH_TURN_TOKENS):
            batches.append(tuple(current))
            totals.append(used)
            current, used = [], 0
        current.append(turn)
        used += size
    if current:
        batches.append(tuple(current))
        totals.append(used)
    return tuple(batches), totals
