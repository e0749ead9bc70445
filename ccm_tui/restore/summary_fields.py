"""The summary schemas of a restore: TURN SUMMARY and SESSION SUMMARY fields, read from a model's answer.

A model answers with ``Label: value`` lines (values may continue on following
lines, decorated with markdown or not); :func:`parse_fields` reads them by key
and :func:`split_items` splits a field into its items, dropping "none"-like
entries. :class:`TurnSummary` is one parsed TURN SUMMARY.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError

ITEM_CHARS = 300

_NONE_VALUES = {"", "none", "n/a", "na", "-", "—", "nothing", "(none)", "none.", "no", "nil", "null"}

TURN_FIELDS: tuple[tuple[str, str], ...] = (
    ("turn_number", "Turn number"),
    ("user_request", "User request summary"),
    ("agent_response", "Agent response summary"),
    ("key_outcomes", "Key outcomes"),
    ("state_changes", "State changes"),
    ("artifacts_modified", "Artifacts modified"),
    ("constraints", "Constraints/assumptions added"),
    ("open_questions", "Open questions after this turn"),
)
_TURN_ALIASES = {
    "constraints/assumptions": "constraints",
    "constraints and assumptions added": "constraints",
    "constraints": "constraints",
    "open questions": "open_questions",
    "artifacts": "artifacts_modified",
    "user request": "user_request",
    "agent response": "agent_response",
    "outcomes": "key_outcomes",
}

SESSION_FIELDS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"),
    ("goal", "Goal"),
    ("outcome", "Outcome"),
    ("decisions", "Key decisions"),
    ("artifacts", "Artifacts"),
    ("constraints", "Constraints"),
    ("next_steps", "Open questions / next steps"),
)
SESSION_ALIASES = {"open questions": "next_steps", "next steps": "next_steps", "decisions": "decisions"}


class SummaryParseError(InputError):
    """The model's answer does not follow the requested schema."""


def _label_pattern(labels: dict[str, str]) -> re.Pattern[str]:
    names = sorted(labels, key=len, reverse=True)
    alternation = "|".join(re.escape(n) for n in names)
    return re.compile(
        r"^\s*(?:[-*#>]+\s*)?(?:\*\*|__)?\s*(" + alternation + r")\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*(.*)$",
        re.IGNORECASE,
    )


def parse_fields(text: str, fields: Sequence[tuple[str, str]], aliases: dict[str, str] | None = None) -> dict[str, str]:
    """Read ``Label: value`` lines (values may continue on following lines) into a dict by key.

    Tolerates markdown decoration (``**Label:**``, bullets, headings, code fences)."""
    labels = {label.lower(): key for key, label in fields}
    labels.update(aliases or {})
    pattern = _label_pattern(labels)
    values: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```") or stripped.strip("*#_ ").upper() in ("TURN SUMMARY", "SESSION SUMMARY"):
            continue
        match = pattern.match(line)
        if match:
            current = labels[match.group(1).lower()]
            values.setdefault(current, []).append(match.group(2).strip().rstrip("*_").strip())
        elif current is not None and stripped:
            values[current].append(stripped)
    return {key: "\n".join(part for part in parts if part).strip() for key, parts in values.items()}


def split_items(value: str) -> list[str]:
    """Split a field into items on ``;`` and bullet lines, dropping "none"-like entries."""
    items = []
    for line in value.splitlines():
        for piece in line.split(";"):
            item = piece.strip().lstrip("-*•").strip().rstrip(".").strip()
            if item.lower() not in _NONE_VALUES:
                items.append(item[:ITEM_CHARS])
    return items


def is_none(value: str) -> bool:
    """Whether a field's value says "nothing" (none, n/a, -, …)."""
    return value.strip().rstrip(".").strip().lower() in _NONE_VALUES


@dataclass
class TurnSummary:
    """One TURN SUMMARY (the schema of the restore prompt)."""

    turn: int
    user_request: str = ""
    agent_response: str = ""
    key_outcomes: str = ""
    state_changes: str = ""
    artifacts_modified: str = ""
    constraints: str = ""
    open_questions: str = ""

    @classmethod
    def parse(cls, text: str, turn: int) -> TurnSummary:
        """Parse a model answer; raises :class:`SummaryParseError` when it has no usable fields."""
        values = parse_fields(text, TURN_FIELDS, _TURN_ALIASES)
        values.pop("turn_number", None)  # we know which turn we asked about
        if not any(values.get(k) for k in ("user_request", "agent_response", "key_outcomes")):
            preview = " ".join(text.split())[:80]
            raise SummaryParseError(f"the answer is not a TURN SUMMARY ({preview!r})" if preview else "empty answer")
        return cls(turn=turn, **{k: v for k, v in values.items() if k in cls.__dataclass_fields__})

    def render(self) -> str:
        """The summary as a TURN SUMMARY text block."""
        lines = ["TURN SUMMARY", ""]
        for key, label in TURN_FIELDS:
            value = str(self.turn) if key == "turn_number" else getattr(self, key) or "none"
            lines.append(f"{label}: {value}")
        return "\n".join(lines)

    def one_line(self) -> str:
        """A compact form for long digests: request → outcome."""
        outcome = self.key_outcomes if not is_none(self.key_outcomes) else self.agent_response
        return f"Turn {self.turn}: {' '.join(self.user_request.split())} → {' '.join(outcome.split())}"

    def to_dict(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in self.__dataclass_fields__}


# A batched answer (several turns in one call): one TURN SUMMARY block per turn.
_HEADING = re.compile(r"^[\s*#_>`-]*TURN SUMMARY\b", re.IGNORECASE | re.MULTILINE)
_TURN_NUMBER_LINE = re.compile(r"^[\s*#_>-]*turn number\b", re.IGNORECASE | re.MULTILINE)
_NUMBER = re.compile(r"\d+")


def _blocks(text: str) -> list[str]:
    """The answer cut at its TURN SUMMARY headings (at its ``Turn number`` lines when it has fewer
    than two headings: a model that dropped them)."""
    starts = [m.start() for m in _HEADING.finditer(text)]
    if len(starts) < 2:
        starts = [m.start() for m in _TURN_NUMBER_LINE.finditer(text)] or [0]
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def parse_turn_summaries(text: str, turns: Sequence[int]) -> dict[int, TurnSummary | str]:
    """Each turn's summary from an answer that covers ``turns``, or why it has none.

    A block goes to the turn its ``Turn number`` names (when that is one of ``turns`` not yet
    given); blocks without a usable number fill the turns left, in order."""
    found: dict[int, str] = {}
    unnumbered: list[str] = []
    for block in _blocks(text):
        number = _NUMBER.search(parse_fields(block, TURN_FIELDS, _TURN_ALIASES).get("turn_number", ""))
        turn = int(number.group()) if number else None
        if turn is not None and turn in turns and turn not in found:
            found[turn] = block
        else:
            unnumbered.append(block)
    for turn in turns:
        if turn not in found and unnumbered:
            found[turn] = unnumbered.pop(0)
    out: dict[int, TurnSummary | str] = {}
    for turn in turns:
        if turn not in found:
            out[turn] = "the answer has no TURN SUMMARY for it"
            continue
        try:
            out[turn] = TurnSummary.parse(found[turn], turn)
        except SummaryParseError as err:
            out[turn] = str(err)
    return out
