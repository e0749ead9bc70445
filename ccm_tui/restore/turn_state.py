"""The state a restore accumulates over the turns summarized so far (fed into every next turn's prompt).

Goals, decisions and outcomes, constraints and open questions come from the turn
summaries; the files touched come from the parser (facts, kept even when a
turn's summary fails). Every list is bounded, so prompts stay small on long
sessions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ccm_tui.restore.summary_fields import ITEM_CHARS, TurnSummary, is_none, split_items
from ccm_tui.restore.turns import TurnRound

# Bounds of the accumulated state, so prompts stay small on long sessions.
MAX_GOALS = 8
MAX_DECISIONS = 16
MAX_CONSTRAINTS = 16
MAX_QUESTIONS = 10
MAX_ARTIFACTS_SHOWN = 30


@dataclass
class ArtifactRecord:
    """What the session did to one file, in order, and in which turns."""

    actions: list[str] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    last_turn: int = 0


def _append_bounded(items: list[str], new: list[str], cap: int, *, keep_first: bool = False) -> None:
    seen = {i.casefold() for i in items}
    for item in new:
        if item.casefold() not in seen:
            items.append(item)
            seen.add(item.casefold())
    while len(items) > cap:
        del items[1 if keep_first and cap > 1 else 0]


@dataclass
class RestoreState:
    """The state accumulated over the turns summarized so far."""

    goals: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    artifacts: dict[str, ArtifactRecord] = field(default_factory=dict)
    constraints: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    summarized_turns: list[int] = field(default_factory=list)
    skipped_turns: list[int] = field(default_factory=list)

    def note_artifacts(self, turn: TurnRound) -> None:
        """Record the files the parser found in a turn (facts, kept even if its summary fails)."""
        for artifact in turn.artifacts:
            record = self.artifacts.setdefault(artifact.path, ArtifactRecord())
            if artifact.action not in record.actions:
                record.actions.append(artifact.action)
            if turn.turn not in record.turns:
                record.turns.append(turn.turn)
            record.last_turn = max(record.last_turn, turn.turn)

    def update(self, summary: TurnSummary) -> None:
        """Fold one turn summary into the state."""
        n = summary.turn
        if not is_none(summary.user_request):
            _append_bounded(self.goals, [f"T{n}: {summary.user_request[:ITEM_CHARS]}"], MAX_GOALS, keep_first=True)
        outcomes = split_items(summary.key_outcomes) + split_items(summary.state_changes)
        _append_bounded(self.decisions, [f"T{n}: {item}" for item in outcomes], MAX_DECISIONS)
        _append_bounded(self.constraints, split_items(summary.constraints), MAX_CONSTRAINTS)
        self.open_questions = split_items(summary.open_questions)[:MAX_QUESTIONS]
        self.summarized_turns.append(n)

    def render(self) -> str:
        """The state as a compact text block for prompts."""

        def block(title: str, items: list[str]) -> list[str]:
            return [f"{title}:"] + ([f"- {i}" for i in items] or ["- none"])

        lines = block("Goals (user requests so far)", self.goals)
        lines += block("Decisions and outcomes", self.decisions)
        lines += [f"Artifacts touched ({len(self.artifacts)} file(s)):"]
        recent = sorted(self.artifacts.items(), key=lambda kv: kv[1].last_turn, reverse=True)
        for path, record in recent[:MAX_ARTIFACTS_SHOWN]:
            turns = ", ".join(str(t) for t in record.turns[-6:])
            lines.append(f"- {path}: {', '.join(record.actions)} (turns {turns})")
        if len(recent) > MAX_ARTIFACTS_SHOWN:
            lines.append(f"- … and {len(recent) - MAX_ARTIFACTS_SHOWN} more (list_artifacts shows all)")
        if not recent:
            lines.append("- none")
        lines += block("Constraints/assumptions", self.constraints)
        lines += block("Open questions", self.open_questions)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "goals": list(self.goals),
            "decisions": list(self.decisions),
            "artifacts": {p: {"actions": r.actions, "turns": r.turns} for p, r in self.artifacts.items()},
            "constraints": list(self.constraints),
            "open_questions": list(self.open_questions),
            "summarized_turns": list(self.summarized_turns),
            "skipped_turns": list(self.skipped_turns),
        }
