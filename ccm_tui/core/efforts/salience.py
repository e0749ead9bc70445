"""Salience: which efforts a turn referenced, and what decays or leaves working memory.

A turn *references* an effort when the user message or the reply mentions its
id (``auth-bug`` or ``auth bug``) or at least two salient keywords of its
summary, or when a tool touched it. Expanded efforts collapse after
``decay_threshold`` turns without reference (each on its own counter);
concluded summaries leave working memory after ``summary_eviction_threshold``
turns without reference, unless the user pinned them. Open efforts never decay. Nothing is deleted.

Costs stay flat as history grows: id mentions are found by looking up the
message's word n-grams among the ids (one indexed query); keyword matching runs
only over the efforts in working memory, whose number the thresholds bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..session.session import Session
from ..text.words import KEYWORD_STOP_WORDS, words
from . import lifecycle

MIN_KEYWORD_MATCHES = 2
MAX_ID_WORDS = 8


@lru_cache(maxsize=4096)
def salient_keywords(summary: str) -> frozenset[str]:
    """Words of a summary specific enough to count as a reference (≥ 4 letters, not stopwords)."""
    return frozenset(w for w in words(summary) if len(w) >= 4 and w not in KEYWORD_STOP_WORDS and not w.isdigit())


def id_phrase(effort_id: str) -> tuple[str, ...]:
    return tuple(w for w in effort_id.split("-") if w)


class IdIndex:
    """Finds effort ids mentioned in a text in O(text length): each run of up to
    ``MAX_ID_WORDS`` words, joined by hyphens, is a candidate id, and ``known`` says which
    candidates name an effort (the session's effort table answers from its catalog, so the cost
    does not grow with the number of efforts)."""

    def __init__(self, known: Callable[[set[str]], set[str]]) -> None:
        self.known = known

    @classmethod
    def build(cls, ids: Iterable[str]) -> IdIndex:
        """An index of a fixed set of ids (tests, tools)."""
        by_phrase = {"-".join(id_phrase(i)): i for i in ids}
        return cls(lambda candidates: {by_phrase[c] for c in candidates if c in by_phrase})

    def mentioned(self, text: str) -> set[str]:
        toks = words(text)
        candidates = {
            "-".join(toks[i : i + n]) for i in range(len(toks)) for n in range(1, min(MAX_ID_WORDS, len(toks) - i) + 1)
        }
        return self.known(candidates) if candidates else set()


def keyword_references(session: Session, texts: list[str]) -> set[str]:
    """Efforts in working memory whose summary shares ≥ 2 salient keywords with the texts."""
    vocabulary = set()
    for text in texts:
        vocabulary.update(words(text))
    found = set()
    candidates = {e.id: e for e in session.summaries_in_memory()}
    for e in session.expanded_efforts():
        candidates[e.id] = e
    for effort in candidates.values():
        if effort.summary and len(salient_keywords(effort.summary) & vocabulary) >= MIN_KEYWORD_MATCHES:
            found.add(effort.id)
    return found


def is_pinned(session: Session, effort_id: str) -> bool:
    """Whether the user pinned the effort (its summary stays in working memory)."""
    effort = session.efforts.get(effort_id)
    return effort is not None and effort.pinned


@dataclass
class SalienceReport:
    referenced: set[str]
    collapsed: list[str]
    evicted: list[str]
    restored: list[str]


def referenced_efforts(session: Session, ids: IdIndex, texts: list[str], touched: set[str]) -> set[str]:
    found = set(touched)
    for text in texts:
        found |= ids.mentioned(text)
    found |= keyword_references(session, texts)
    return {eid for eid in found if session.efforts.get(eid) is not None}


def end_of_turn(
    session: Session,
    turn: int,
    referenced: set[str],
    *,
    decay_threshold: int,
    eviction_threshold: int,
) -> SalienceReport:
    """Advance decay counters after a turn; collapse and evict what went stale.

    The caller saves ``expanded.json`` afterwards.
    """
    view = session.view
    report = SalienceReport(referenced=referenced, collapsed=[], evicted=[], restored=[])
    for effort_id in referenced:
        if lifecycle.mark_referenced(session, effort_id, turn):
            report.restored.append(effort_id)
    for effort_id in list(view.expanded):
        if effort_id in referenced:
            view.expanded[effort_id] = 0
            continue
        view.expanded[effort_id] += 1
        if view.expanded[effort_id] >= decay_threshold:
            lifecycle.collapse(session, effort_id, reason=f"inactive for {decay_threshold} turns")
            report.collapsed.append(effort_id)
    for effort_id, last in list(view.summaries.items()):
        if effort_id in view.expanded:
            continue
        if turn - last >= eviction_threshold and not is_pinned(session, effort_id):
            lifecycle.evict_summary(session, effort_id, idle_turns=turn - last)
            report.evicted.append(effort_id)
    return report
