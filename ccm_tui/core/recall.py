"""Recall: before each request, the logged lines that answer the user's message go into its context.

Memory must not depend on the model calling a tool. Before every turn the message is
searched (:meth:`~.search.EffortIndex.recall`: its rare words only, so it costs about
a millisecond) over what the context does not hold — concluded efforts and chat that
has left the ambient window — and a strong hit's passage, labelled with where it
comes from, closes the system message for this turn's requests, within
``recall_share`` of the budget. It is counted as its own layer ("recall"), shown in
the inspector, and announced with a banner (``Recalled: trip lines 12-14``). It is
the first thing dropped when a request would pass the budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .retraction import ambient_window_start, is_withdrawn
from .search import RecallHit
from .session import Session
from .tokens import TokenCounter, cap_tokens

Skip = Callable[[str, str, int], bool]
Find = Callable[[str, Skip], list[RecallHit]]
MIN_TOKENS = 120  # a recall smaller than this would cut its passage to nothing useful
HEADER = (
    "Recalled for this message (lines logged earlier that may answer it; they are not otherwise in your "
    "context — use them if they do, and say where they come from):"
)


@dataclass(frozen=True)
class Recalled:
    hits: tuple[RecallHit, ...]
    text: str  # what closes the system message

    @property
    def hit(self) -> RecallHit:
        return self.hits[0]

    def where(self) -> dict[str, object]:
        """Where the lines come from, for the event log (the first passage; ``also``: the others)."""
        places: list[dict[str, object]] = [
            {"source": h.source, "log": h.log, "lines": list(h.lines), "terms": list(h.terms)} for h in self.hits
        ]
        first, others = places[0], places[1:]
        return {**first, "also": others} if others else first

    @property
    def label(self) -> str:
        return "; ".join(_label(hit) for hit in self.hits)


def _label(hit: RecallHit) -> str:
    where = "ambient chat" if hit.source == "ambient" else hit.log
    first, last = hit.lines
    return f"{where} lines {first}-{last}" if last != first else f"{where} line {first}"


def skip_rule(session: Session) -> Skip:
    """What recall leaves out: lines the context already holds (open and expanded efforts, the
    ambient window) and efforts the manifest no longer knows."""
    in_context = {e.id for e in session.efforts.open_efforts()} | set(session.view.expanded)
    window_starts_after = ambient_window_start(session, len(session.ambient_messages()))
    folded_upto = session.state.ambient_folded_upto  # those lines are efforts now: found there

    def skip(source: str, log: str, line: int) -> bool:
        if is_withdrawn(session, "ambient" if source == "ambient" else log, line):
            return True  # taken back by the user (regenerate, edit): never put back
        if source == "ambient":
            return line > window_starts_after or line <= folded_upto
        return log in in_context or session.efforts.get(log) is None

    return skip


def render(hits: tuple[RecallHit, ...], max_tokens: int, counter: TokenCounter) -> str:
    """The recall block: the header, then each passage — where its lines come from, the lines (each
    cut to its share of ``max_tokens``)."""
    lines = sum(len(hit.messages) for hit in hits)
    share = (max_tokens - counter.count_text(HEADER)) // max(1, lines) - 12
    while share >= 16:
        parts = [HEADER]
        for hit in hits:
            where = "the ambient chat" if hit.source == "ambient" else f"effort {hit.log}"
            parts.append(f"[{where}, lines {hit.lines[0]}-{hit.lines[1]}]")
            parts += [f"{role}: {cap_tokens(content, share, counter)}" for _line, role, content in hit.messages]
        text = "\n".join(parts)
        if counter.count_text(text) <= max_tokens:
            return text
        share = share * 3 // 4
    return ""


def recall_for(session: Session, find: Find, message: str, max_tokens: int) -> Recalled | None:
    """The recall for ``message``, or None (nothing strong enough, or no room for it)."""
    if max_tokens < MIN_TOKENS:
        return None
    hits = tuple(hit for hit in find(message, skip_rule(session)) if hit.messages)
    if not hits:
        return None
    text = render(hits, max_tokens, session.counter)
    return Recalled(hits, text) if text else None
