"""Recall: before each request, the logged lines that answer the user's message go into its context.

Memory must not depend on the model calling a tool. Before every turn the message is
searched (:meth:`~.search.EffortIndex.recall`: its rare words only, so it costs about
a millisecond) over everything said that this request does not hold word for word —
concluded efforts, chat beyond the ambient window, the checkpointed part of an open
effort, a line the context cuts to the message cap (:func:`skip_rule`) — and a strong
hit's passage, labelled with where it comes from, closes the context note of this
turn's requests, within ``recall_share`` of the budget. It is counted as its own layer
("recall"), shown in the inspector, and announced with a banner (``Recalled: trip lines
12-14``). A request that would pass the budget with it is compacted to make room for it
(the orchestrator's ``fit``; after a compaction the message is searched again, since
lines may have just left the context); it is left out only when compaction cannot.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..search import RecallHit
from ..session.numbered_lines import file_records
from ..session.session import Session
from ..session.withdrawn import window_lines, withdrawn_lines
from ..text.tokens import TokenCounter, cap_tokens

Skip = Callable[[str, str, int], bool]
Find = Callable[[str, Skip], list[RecallHit]]
SHOWN_ROLES = ("user", "assistant", "system")  # the roles of logged lines the working context shows
MAX_LINE = 1 << 40  # past any log's last line
MIN_TOKENS = 120  # a recall smaller than this would cut its passage to nothing useful
MAX_PLACES = 20  # places of each word found by that an excerpt of a long line is chosen among
HEADER = (
    "Recalled for this message (lines logged earlier that may answer it; they are not otherwise in your "
    "context — use them if they do, and say where they come from):"
)


@dataclass(frozen=True)
class RecallSource:
    """One recalled passage as the inspector shows it: where its lines come from and the words of the
    message it was found by (so a user can tell why it came back)."""

    label: str  # "garden lines 1-2", "ambient chat line 7"
    source: str  # "effort" or "ambient"
    log: str  # the effort id, or "ambient"
    lines: tuple[int, int]
    terms: tuple[str, ...]


@dataclass(frozen=True)
class Recalled:
    hits: tuple[RecallHit, ...]
    text: str  # what closes the context note (working_context.assemble)

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

    def sources(self) -> tuple[RecallSource, ...]:
        return tuple(RecallSource(_label(h), h.source, h.log, h.lines, h.terms) for h in self.hits)


def _label(hit: RecallHit) -> str:
    where = "ambient chat" if hit.source == "ambient" else hit.log
    first, last = hit.lines
    return f"{where} lines {first}-{last}" if last != first else f"{where} line {first}"


def skip_rule(session: Session, message_cap: int | None = None) -> Skip:
    """What recall leaves out: the lines this request holds word for word — the logs of open and
    expanded efforts after their checkpoint, the ambient window — ambient lines folded into an effort
    (found there) and efforts the manifest no longer knows. Everything else said is recallable: a
    concluded effort, chat beyond the window, the checkpointed part of an open effort, a line the
    context cuts to ``message_cap``, a line the context does not show (a tool's)."""
    counter = session.counter
    window = session.ambient_messages()
    in_window = window_lines(session)  # raw.jsonl line → its message in the window
    folded_upto = session.efforts.folded_upto()
    gone: dict[str, set[int]] = {}  # each log's withdrawn lines, read once per request
    in_context = {e.id: e for e in session.efforts.open_efforts()}
    in_context.update((e.id, e) for e in session.expanded_efforts())
    known: dict[str, bool] = {}

    def verbatim(message: dict[str, Any]) -> bool:
        """Shown word for word: a role the context shows, not cut to the message cap."""
        if message.get("role") not in SHOWN_ROLES:
            return False
        return not message_cap or counter.within(str(message.get("content") or ""), message_cap)

    def skip(source: str, log: str, line: int) -> bool:
        which = "ambient" if source == "ambient" else log
        if which not in gone:
            gone[which] = withdrawn_lines(session, which, 1, MAX_LINE)
        if line in gone[which]:
            return True  # taken back by the user (regenerate, edit): never put back
        if source == "ambient":
            if line <= folded_upto:
                return True
            at = in_window.get(line)
            return at is not None and verbatim(window[at])
        effort = in_context.get(log)
        if effort is None:
            if log not in known:  # asked once per log, and without holding its effort in memory
                known[log] = bool(session.efforts.existing([log]))
            return not known[log]
        if effort.checkpoint and line <= effort.checkpoint_upto:
            return False  # a checkpoint summary stands for it
        record = dict(file_records(session.effort_path(log), line, line)).get(line)
        return record is None or verbatim(record)  # (by its file line: the context shows it as logged)

    return skip


def excerpt(content: str, terms: tuple[str, ...], max_tokens: int, counter: TokenCounter) -> str:
    """``content`` within ``max_tokens``: whole, or the part that holds most of ``terms`` (the head when
    it holds none as written), marked with ``…`` where it is cut."""
    text = " ".join(content.split())
    if counter.count_text(text) <= max_tokens:
        return text
    chars = max_tokens * 4
    at = _densest(text.lower(), terms, chars)
    if at < 0:
        return cap_tokens(text, max_tokens, counter)
    while chars > 8:
        start = max(0, at - chars // 3)
        start = text.rfind(" ", 0, start) + 1 if start else 0
        end = text.find(" ", min(len(text), start + chars))
        end = len(text) if end < 0 else end
        piece = ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")
        if counter.count_text(piece) <= max_tokens:
            return piece
        chars = chars * 3 // 4
    return cap_tokens(text[at:], max_tokens, counter)


def _densest(lowered: str, terms: tuple[str, ...], width: int) -> int:
    """Where in ``lowered`` a passage of ``width`` characters starting a third of it before would
    hold the most of ``terms`` (by their stems: the index matches "tomatoes" for "tomato"), or -1."""
    places: list[tuple[int, int]] = []  # (where, which term)
    for i, term in enumerate(terms):
        stem, start = term[: max(4, len(term) - 2)], 0
        for _ in range(MAX_PLACES):
            if (found := lowered.find(stem, start)) < 0:
                break
            places.append((found, i))
            start = found + len(stem)
    if not places:
        return -1
    places.sort()
    wheres = [where for where, _ in places]

    def held(at: int) -> int:
        lo, hi = bisect_left(wheres, at - width // 3), bisect_left(wheres, at + width * 2 // 3)
        return len({i for _, i in places[lo:hi]})

    return max((where for where, _ in places), key=lambda at: (held(at), -at))


def render(hits: tuple[RecallHit, ...], max_tokens: int, counter: TokenCounter) -> str:
    """The recall block: the header, then each passage — where its lines come from, the lines (each
    cut to its share of ``max_tokens``, around the words it was found by)."""
    lines = sum(len(hit.messages) for hit in hits)
    share = (max_tokens - counter.count_text(HEADER)) // max(1, lines) - 12
    while share >= 16:
        parts = [HEADER]
        for hit in hits:
            where = "the ambient chat" if hit.source == "ambient" else f"effort {hit.log}"
            parts.append(f"[{where}, lines {hit.lines[0]}-{hit.lines[1]}]")
            parts += [f"{role}: {excerpt(content, hit.terms, share, counter)}" for _line, role, content in hit.messages]
        text = "\n".join(parts)
        if counter.count_text(text) <= max_tokens:
            return text
        share = share * 3 // 4
    return ""


def recall_for(
    session: Session, find: Find, message: str, max_tokens: int, message_cap: int | None = None
) -> Recalled | None:
    """The recall for ``message``, or None (nothing strong enough, or no room for it). ``message_cap``:
    the most tokens the context shows of one logged line (a longer one is cut there: recallable)."""
    if max_tokens < MIN_TOKENS:
        return None
    hits = tuple(hit for hit in find(message, skip_rule(session, message_cap)) if hit.messages)
    if not hits:
        return None
    text = render(hits, max_tokens, session.counter)
    return Recalled(hits, text) if text else None
