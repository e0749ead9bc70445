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

from .search import RecallHit
from .session import Session
from .tokens import TokenCounter, cap_tokens

Skip = Callable[[str, str, int], bool]
Find = Callable[[str, Skip], RecallHit | None]
MIN_TOKENS = 120  # a recall smaller than this would cut its passage to nothing useful
HEADER = (
    "Recalled for this message (lines logged earlier that may answer it; they are not otherwise in your "
    "context — use them if they do, and say where they come from):"
)


@dataclass(frozen=True)
class Recalled:
    hit: RecallHit
    text: str  # what closes the system message

    def where(self) -> dict[str, object]:
        """Where the lines come from, for the event log."""
        hit = self.hit
        return {"source": hit.source, "log": hit.log, "lines": list(hit.lines), "terms": list(hit.terms)}

    @property
    def label(self) -> str:
        where = "ambient chat" if self.hit.source == "ambient" else self.hit.log
        first, last = self.hit.lines
        return f"{where} lines {first}-{last}" if last != first else f"{where} line {first}"


def skip_rule(session: Session) -> Skip:
    """What recall leaves out: lines the context already holds (open and expanded efforts, the
    ambient window) and efforts the manifest no longer knows."""
    in_context = {e.id for e in session.efforts.open_efforts()} | set(session.view.expanded)
    window_starts_after = session.state.ambient_messages - len(session.ambient_messages())
    folded_upto = session.state.ambient_folded_upto  # those lines are efforts now: found there

    def skip(source: str, log: str, line: int) -> bool:
        if source == "ambient":
            return line > window_starts_after or line <= folded_upto
        return log in in_context or session.efforts.get(log) is None

    return skip


def render(hit: RecallHit, max_tokens: int, counter: TokenCounter) -> str:
    """The recall block: the header, where the lines come from, the lines (each cut to its share)."""
    where = "the ambient chat" if hit.source == "ambient" else f"effort {hit.log}"
    head = f"{HEADER}\n[{where}, lines {hit.lines[0]}-{hit.lines[1]}]"
    share = (max_tokens - counter.count_text(head)) // max(1, len(hit.messages))
    while share >= 16:
        lines = [f"{role}: {cap_tokens(content, share, counter)}" for _line, role, content in hit.messages]
        text = head + "\n" + "\n".join(lines)
        if counter.count_text(text) <= max_tokens:
            return text
        share = share * 3 // 4
    return ""


def recall_for(session: Session, find: Find, message: str, max_tokens: int) -> Recalled | None:
    """The recall for ``message``, or None (nothing strong enough, or no room for it)."""
    if max_tokens < MIN_TOKENS:
        return None
    hit = find(message, skip_rule(session))
    if hit is None or not hit.messages:
        return None
    text = render(hit, max_tokens, session.counter)
    return Recalled(hit, text) if text else None
