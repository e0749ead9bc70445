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

A passage earns its tokens once: recalled for a message, it is not recalled for another one in the
next :data:`COOLDOWN_TURNS` turns (the exchange that used it is in the context now), nor for more
than :data:`MAX_REPEATS` messages of a session's run (issue 38: one capped paste was recalled 9
times) — :class:`RecallMemory`, kept per open session, in memory. A line of an imported agent
session needs stronger evidence than the user's own chat (:meth:`SkipRule.words_needed`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from ..efforts.working_context import shown_ambient
from ..search import Evidence, RecallHit, word_places
from ..session.numbered_lines import file_records
from ..session.session import Session
from ..session.withdrawn import withdrawn_lines
from ..text.tokens import TokenCounter, cap_tokens

Skip = Callable[[str, str, int], bool]
Find = Callable[[str, Skip], list[RecallHit]]
SHOWN_ROLES = ("user", "assistant", "system")  # the roles of logged lines the working context shows
MAX_LINE = 1 << 40  # past any log's last line
MIN_TOKENS = 120  # a recall smaller than this would cut its passage to nothing useful
MAX_PLACES = 20  # places of each word found by that an excerpt of a long line is chosen among
COOLDOWN_TURNS = 3  # turns after a recall in which its passage is not recalled for another message
MAX_REPEATS = 3  # messages one passage is recalled for at most while the session is open
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


@dataclass
class RecallMemory:
    """The passages recalled lately: (log, first line, last line) → the turns and messages each was
    recalled for. A preview (the inspector's draft) is not remembered."""

    recalled: dict[tuple[str, int, int], list[tuple[int, str]]] = field(default_factory=dict)

    def note(self, hits: tuple[RecallHit, ...], turn: int, message: str) -> None:
        for hit in hits:
            said = self.recalled.setdefault((_which(hit.source, hit.log), *hit.lines), [])
            if (turn, message) not in said:
                said.append((turn, message))

    def spent(self, which: str, line: int, turn: int, message: str) -> bool:
        """Whether ``line`` of log ``which`` was recalled lately for another message, or too often."""
        for (log, first, last), said in self.recalled.items():
            if log != which or not first <= line <= last:
                continue
            others = [(t, m) for t, m in said if m != message]
            if len(others) >= MAX_REPEATS or any(0 <= turn - t <= COOLDOWN_TURNS for t, _ in others):
                return True
        return False


_MEMORIES: WeakKeyDictionary[Session, RecallMemory] = WeakKeyDictionary()


def memory_of(session: Session) -> RecallMemory:
    """The recall memory of an open session (made on first use; it goes with the session object)."""
    if session not in _MEMORIES:
        _MEMORIES[session] = RecallMemory()
    return _MEMORIES[session]


def _which(source: str, log: str) -> str:
    return "ambient" if source == "ambient" else log


class SkipRule:
    """What recall leaves out (see :func:`skip_rule`), and what a log needs as evidence."""

    def __init__(self, skip: Skip, needed: Callable[[str, str, Evidence], float]) -> None:
        self._skip, self._needed = skip, needed

    def __call__(self, source: str, log: str, line: int) -> bool:
        return self._skip(source, log, line)

    def words_needed(self, source: str, log: str, evidence: Evidence) -> float:
        """The weight of words a line of ``log`` must hold: more in an imported agent session."""
        return self._needed(source, log, evidence)


def is_imported(source: dict[str, Any] | None) -> bool:
    """Whether an effort's ``source`` says it was imported from another agent's transcript (not folded
    from the ambient chat, not carried over from another effort, not the notes effort)."""
    return isinstance(source, dict) and "format" in source and "file" in source


def skip_rule(
    session: Session, message_cap: int | None = None, *, message: str = "", memory: RecallMemory | None = None
) -> SkipRule:
    """What recall leaves out: the lines this request holds word for word — the logs of open and
    expanded efforts after their checkpoint, the ambient window as the request shows it (stepped, see
    ``shown_ambient``) — ambient lines folded into an effort (found there) and efforts the manifest
    no longer knows. Everything else said is recallable: a
    concluded effort, chat beyond the window, the checkpointed part of an open effort, a line the
    context cuts to ``message_cap``, a line the context does not show (a tool's)."""
    counter = session.counter
    turn = session.state.turn
    shown = shown_ambient(session)  # the window as the request shows it
    window = [message for _line, message in shown]
    in_window = {line: at for at, (line, _message) in enumerate(shown)}  # raw.jsonl line → its message in the window
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
        which = _which(source, log)
        if memory is not None and memory.spent(which, line, turn, message):
            return True  # recalled lately for another message (its exchange is in the context), or too often
        if which not in gone:
            gone[which] = withdrawn_lines(session, which, 1, MAX_LINE)
        if line in gone[which]:
            return True  # withdrawn by the user (regenerate, edit): never put back
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

    imported: dict[str, bool] = {}

    def needed(source: str, log: str, evidence: Evidence) -> float:
        if source == "ambient":
            return evidence.words
        if log not in imported:
            effort = session.efforts.get(log)
            imported[log] = effort is not None and is_imported(effort.source)
        return evidence.imported if imported[log] else evidence.words

    return SkipRule(skip, needed)


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
    places = [(where, terms.index(term)) for where, term in word_places(lowered, terms, MAX_PLACES)]
    if not places:
        return -1
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
    session: Session,
    find: Find,
    message: str,
    max_tokens: int,
    message_cap: int | None = None,
    *,
    remember: bool = True,
) -> Recalled | None:
    """The recall for ``message``, or None (nothing strong enough, or no room for it). ``message_cap``:
    the most tokens the context shows of one logged line (a longer one is cut there: recallable).
    ``remember``: the recall goes into the request (not a preview): its passages are spent for a while
    (:class:`RecallMemory`)."""
    if max_tokens < MIN_TOKENS:
        return None
    memory = memory_of(session)
    rule = skip_rule(session, message_cap, message=message, memory=memory)
    hits = tuple(hit for hit in find(message, rule) if hit.messages)
    if not hits:
        return None
    text = render(hits, max_tokens, session.counter)
    if not text:
        return None
    if remember:
        memory.note(hits, session.state.turn, message)
    return Recalled(hits, text)
