"""Effort boundaries: which turns form which effort, from a YAML file or a segmenter.

File format (``benchmarks/boundaries/*.yaml``)::

    transcript: aider/brejlator.aider.md      # optional, for the reader
    efforts:
      - id: storefront-steps                  # slug: [a-z0-9][a-z0-9-]{0,63}
        first_turn: 1
        last_turn: 7
        note: template customisation, steps 1-4   # optional
      - id: navbar-mobile-first
        first_turn: 8
        last_turn: 16

Turns are the parser's 1-based human turns. Ranges must not overlap. Turns in
no range are asides: they go to the ambient log. An id that appears again in a
later range means the topic came back: the concluded effort is *reopened*
(``reopen_effort``) for that range and concluded again at its end.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..core.text.topics import EffortSpan
from ..errors import InputError

SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # always fullmatch: "$" would let "abc\n" through
EFFORT_KEYS = {"id", "first_turn", "last_turn", "name", "note"}
TOP_KEYS = {"efforts", "transcript", "format", "note", "notes", "source"}


class BoundaryError(InputError):
    """The boundaries cannot be used; the message is one line naming the problem."""


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BoundaryError(f"{what} must be a whole number, got {value!r}")
    return value


def validate_spans(items: Any, n_turns: int, *, where: str = "boundaries") -> list[EffortSpan]:
    """Check a list of ``{id, first_turn, last_turn}`` mappings against a transcript of ``n_turns``.

    Returns the spans sorted by first turn. Raises :class:`BoundaryError` (one line) for
    anything wrong: not a list, unknown keys, bad ids, turns out of range, overlaps.
    """
    if not isinstance(items, list):
        raise BoundaryError(f"{where}: 'efforts' must be a list of {{id, first_turn, last_turn}}")
    if not items:
        raise BoundaryError(f"{where}: 'efforts' is empty")
    spans: list[EffortSpan] = []
    for index, item in enumerate(items, 1):
        label = f"{where}: effort #{index}"
        if not isinstance(item, dict):
            raise BoundaryError(f"{label} must be a mapping with id, first_turn, last_turn")
        unknown = sorted(str(k) for k in item if k not in EFFORT_KEYS)
        if unknown:
            raise BoundaryError(f"{label}: unknown key(s) {', '.join(unknown)} (expected id, first_turn, last_turn)")
        for key in ("id", "first_turn", "last_turn"):
            if key not in item:
                raise BoundaryError(f"{label}: missing '{key}'")
        eid = item["id"]
        if not isinstance(eid, str) or not SLUG_RE.fullmatch(eid):
            raise BoundaryError(f"{label}: bad id {eid!r} (use lowercase letters, digits and '-', at most 64)")
        label = f"{where}: effort '{eid}'"
        first = _int(item["first_turn"], f"{label}: first_turn")
        last = _int(item["last_turn"], f"{label}: last_turn")
        if first < 1 or last < 1:
            raise BoundaryError(f"{label}: turns start at 1 (got {first}–{last})")
        if first > last:
            raise BoundaryError(f"{label}: first_turn {first} is after last_turn {last}")
        if last > n_turns:
            raise BoundaryError(f"{label}: last_turn {last} is past the end (the transcript has {n_turns} turns)")
        name = item.get("name")
        if name is not None and not isinstance(name, str):
            raise BoundaryError(f"{label}: name must be text")
        spans.append(EffortSpan(eid, first, last, name))
    spans.sort(key=lambda s: (s.first_turn, s.last_turn))
    for a, b in zip(spans, spans[1:]):
        if b.first_turn <= a.last_turn:
            raise BoundaryError(
                f"{where}: efforts '{a.id}' (turns {a.first_turn}–{a.last_turn}) and "
                f"'{b.id}' (turns {b.first_turn}–{b.last_turn}) overlap"
            )
    return spans


def parse_boundaries(data: Any, n_turns: int, *, where: str = "boundaries") -> list[EffortSpan]:
    if isinstance(data, list):  # a bare list of efforts is accepted too
        return validate_spans(data, n_turns, where=where)
    if not isinstance(data, dict) or "efforts" not in data:
        raise BoundaryError(f"{where}: expected a mapping with an 'efforts' list")
    unknown = sorted(str(k) for k in data if k not in TOP_KEYS)
    if unknown:
        raise BoundaryError(f"{where}: unknown top-level key(s) {', '.join(unknown)} (expected efforts)")
    return validate_spans(data["efforts"], n_turns, where=where)


def load_boundaries(path: Path, n_turns: int) -> list[EffortSpan]:
    """Read and validate a boundaries YAML file."""
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BoundaryError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BoundaryError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise BoundaryError(f"{path}: not valid YAML{at}") from None
    return parse_boundaries(data, n_turns, where=str(path))


def turn_plan(spans: list[EffortSpan]) -> dict[int, dict[str, Any]]:
    """Per turn: the effort to open or reopen at it, and whether the effort concludes at it."""
    plan: dict[int, dict[str, Any]] = {}
    seen: set[str] = set()
    for span in spans:
        start = plan.setdefault(span.first_turn, {})
        if span.id in seen:
            start["reopen"] = span.id
        else:
            start["open"] = span.id
            seen.add(span.id)
        start["effort"] = span.id
        plan.setdefault(span.last_turn, {})["close"] = span.id
    return plan
