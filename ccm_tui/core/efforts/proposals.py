"""Efforts for models that do not manage them: topic proposals and folding ambient chat into efforts.

A model that calls no effort tool (it has none, or a small one never does) leaves
everything in the ambient chat, where it leaves the context after the window. So,
while the model does not manage efforts (no effort tool called in the last
:data:`MANAGED_WINDOW` turns), the offline topic segmenter (:mod:`.topics`) reads
the recent chat and proposes:

* **open** — the ambient chat has settled on one topic for a few exchanges and no
  effort is open: open an effort named after it;
* **switch** — the active effort's conversation has moved to another topic:
  conclude it and open one for the new topic;

and **folds** ambient chat that has left the window into concluded efforts at topic
boundaries, each with an extracted summary (no model call), so the sidebar and
search show it as topics. The TUI offers a proposal on one key; with
``auto_efforts`` the controller carries it out. Nothing the user opened is ever
concluded without a yes, unless ``auto_efforts`` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..text.topics import EffortSpan, TurnText, goes_on, holds_topic, last_turn_fits, sustained, topics_of

MANAGED_WINDOW = 8  # turns: a model that called an effort tool within them manages efforts itself
MIN_TOPIC = 3  # exchanges on one topic before an effort is proposed for it
RECENT = 24  # exchanges the segmenter reads for a proposal
FOLD_MIN = 3  # exchanges a folded topic (and the one after it) hold at least
FOLD_READ = 200  # exchanges read at most per fold step
EFFORT_TOOLS = frozenset({"open_effort", "close_effort", "switch_effort", "reopen_effort", "route_to_ambient"})


@dataclass(frozen=True)
class Exchange:
    """A user message and the reply after it, with their lines in the log (1-based)."""

    first_line: int
    last_line: int
    user: str
    agent: str = ""

    def text(self) -> TurnText:
        return TurnText(self.user, self.agent)


@dataclass(frozen=True)
class Proposal:
    kind: str  # "open", "switch" (conclude the active effort, open one for the new topic) or "fold"
    name: str  # the new effort's name
    conclude: str | None = None  # switch: the effort to conclude
    # fold: the ambient lines it takes; open: the ambient lines of the topic (the new effort starts with
    # them); switch: the new topic's lines in the log of the effort concluded
    lines: tuple[int, int] | None = None

    @property
    def text(self) -> str:
        if self.kind == "open":
            return f"New topic? Ctrl+Y opens effort '{self.name}'"
        if self.kind == "switch":
            return f"The topic moved on? Ctrl+Y concludes '{self.conclude}' and opens '{self.name}'"
        assert self.lines is not None
        return f"Ambient chat (lines {self.lines[0]}-{self.lines[1]}) folded into effort '{self.name}'"


def exchanges_of(numbered: Sequence[tuple[int, dict]]) -> list[Exchange]:
    """Exchanges from numbered log records: each user message with the assistant lines after it."""
    out: list[Exchange] = []
    for line, record in numbered:
        role, content = record.get("role"), record.get("content")
        if not isinstance(content, str):
            continue
        if role == "user":
            out.append(Exchange(line, line, content))
        elif role == "assistant" and out:
            last = out[-1]
            agent = f"{last.agent}\n\n{content}".strip()
            out[-1] = Exchange(last.first_line, line, last.user, agent)
    return out


def _segments(exchanges: Sequence[Exchange], *, keep_tail: bool = False) -> list[EffortSpan]:
    return topics_of([x.text() for x in exchanges], keep_tail=keep_tail) if exchanges else []


def propose_open(recent_ambient: Sequence[Exchange]) -> Proposal | None:
    """No effort is open: the latest topic of the ambient chat, if it has lasted a few exchanges."""
    recent = recent_ambient[-RECENT:]
    spans = _segments(recent, keep_tail=True)
    if not spans or spans[-1].turns < MIN_TOPIC or not last_turn_fits([x.text() for x in recent], spans[-1]):
        return None
    topic = recent[spans[-1].first_turn - 1 : spans[-1].last_turn]
    if not sustained([x.text() for x in topic], MIN_TOPIC):
        return None
    return Proposal("open", spans[-1].id, lines=(topic[0].first_line, topic[-1].last_line))


def propose_switch(active_id: str, active_tail: Sequence[Exchange]) -> Proposal | None:
    """The active effort's latest exchanges are on another topic than the ones before them."""
    tail = active_tail[-RECENT:]
    spans = _segments(tail, keep_tail=True)
    if len(spans) < 2 or spans[-1].turns < MIN_TOPIC - 1:
        return None
    taken = tail[spans[-1].first_turn - 1 : spans[-1].last_turn]
    if not sustained([x.text() for x in taken], MIN_TOPIC):
        return None
    if goes_on([x.text() for x in tail[: spans[-1].first_turn - 1]], [x.text() for x in taken]):
        return None  # the same topic's next part (the segmenter cut "sourdough starter" from "sourdough bake")
    return Proposal("switch", spans[-1].id, conclude=active_id, lines=(taken[0].first_line, taken[-1].last_line))


def propose_folds(unfolded: Sequence[Exchange], window_starts: int) -> list[Proposal]:
    """Topics of ambient chat that ended before the ambient window (line ``window_starts``): each
    becomes a concluded effort, once the topic after it has settled too (or, for the last one read,
    once it has left the window whole: the chat went on elsewhere)."""
    spans = _segments(unfolded[-FOLD_READ:])
    offset = max(0, len(unfolded) - FOLD_READ)
    folds: list[Proposal] = []
    start = None  # the first line of short asides waiting for the topic after them
    for i, span in enumerate(spans):
        taken = unfolded[offset + span.first_turn - 1 : offset + span.last_turn]
        if taken[-1].last_line >= window_starts:
            break
        first = taken[0].first_line if start is None else start
        if len(taken) < FOLD_MIN or not holds_topic([x.text() for x in taken], FOLD_MIN):
            start = first  # too short, or small talk: not an effort of its own; it goes with the topic after it
            continue
        if i + 1 < len(spans) and spans[i + 1].turns < FOLD_MIN and not _settles(spans[i + 1 :]):
            break
        folds.append(Proposal("fold", span.id, lines=(first, taken[-1].last_line)))
        start = None
    return folds


def _settles(after: Sequence[EffortSpan]) -> bool:
    """Short asides and then a topic that lasted: what came after a topic has settled."""
    return any(span.turns >= FOLD_MIN for span in after)
