"""Scoring: how one effort's evidence for a query becomes its score (docs/SEARCH.md, "Ranking")."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .query import or_expression

#: bm25 weights of the meta columns: effort_id, id_words, summary, name, grams (unspaced scripts).
META_COLUMN_WEIGHTS = (3.0, 3.0, 4.0, 5.0, 4.0)
META_BM25_HALF = 8.0  # meta bm25 value that earns half of Weights.meta_bm25
PASSAGE_RERANK = 20  # best-scored efforts whose passage coverage joins their score


@dataclass(frozen=True)
class Weights:
    """The ranking's parameters. The defaults were chosen by leave-one-conversation-out cross-validation
    over the LoCoMo development split from a small grid (``benchmarks/bench_recall.py``, docs/SEARCH.md)."""

    k1: float = 1.6  # BM25 saturation over "messages of the effort containing the term"
    b: float = 0.75  # ... normalised by the effort's log length
    pair: float = 0.25  # a pair of adjacent query words found adjacent, relative to one word
    meta_coverage: float = 5.0  # all query words in id/summary/name (IDF-weighted share): summary matches first
    meta_tf: float = 1.0  # a term in the id/summary/name counts as this many log messages holding it
    meta_bm25: float = 1.0  # the squashed FTS5 bm25() of the meta document adds at most this
    passage: float = 1.0  # the best passage's query coverage (idf-weighted, each term once) adds this share
    stop_words: bool = True  # function and question words are not searched alone (query.STOP_WORDS)


#: The weights every search uses unless it is given others.
WEIGHTS = Weights()


def idf(docs: float, matching: float) -> float:
    """Smoothed (always positive) inverse document frequency."""
    return math.log(1.0 + (docs - matching + 0.5) / (matching + 0.5))


@dataclass
class Postings:
    """The efforts containing one query term in one table.

    Postings are read newest-first and capped, so for a frequent term they
    cover only recent efforts: ``counts`` is exact for efforts with
    ``num >= floor`` (``floor == 0``: complete). ``docs`` is the number of
    documents holding the term — exact when complete, else extrapolated from
    the window.
    """

    docs: float
    counts: dict[int, int]
    floor: int

    @property
    def complete(self) -> bool:
        return self.floor == 0


@dataclass
class Plan:
    """Per-search state: terms (words, then adjacent word pairs), their postings, and weights."""

    terms: list[str]
    words: int  # terms[:words] are single words, the rest word pairs
    meta: list[Postings]
    messages: list[Postings]
    idf: list[float]  # over efforts: how rare the term is among whole efforts
    avg_lines: float
    weights: Weights = WEIGHTS
    lines: float = 0.0  # log lines in the index (0: unknown)
    weight: list[float] = field(init=False)  # idf x (1 for a word, weights.pair for a pair)
    line_weight: list[float] = field(init=False)  # the same with the idf over log lines, not efforts
    coverage: list[float] = field(init=False)  # coverage score earned per word found in meta

    def __post_init__(self) -> None:
        pair, total = self.weights.pair, self.weights.meta_coverage
        self.weight = [idf * (1.0 if i < self.words else pair) for i, idf in enumerate(self.idf)]
        self.line_weight = [
            (idf(self.lines, p.docs) if self.lines else self.idf[i]) * (1.0 if i < self.words else pair)
            for i, p in enumerate(self.messages)
        ]
        word_total = sum(self.idf[: self.words]) or 1.0
        self.coverage = [total * idf / word_total if i < self.words else 0.0 for i, idf in enumerate(self.idf)]

    @property
    def expression(self) -> str:
        return or_expression(self.terms[: self.words])

    @property
    def telling(self) -> list[str]:
        """The words worth marking in a passage: all but those far more common than the rarest one."""
        top = max(self.idf[: self.words], default=0.0)
        return [t for t, idf in zip(self.terms, self.idf[: self.words]) if idf >= top / 8]

    @property
    def telling_expression(self) -> str:
        return or_expression(self.telling)

    def term_score(self, i: int, in_meta: bool, messages: int, lines: float) -> float:
        """BM25 of one term over the effort as one document (its meta + its log messages)."""
        w = self.weights
        tf = messages + (w.meta_tf if in_meta else 0.0)
        if tf <= 0:
            return 0.0
        norm = w.k1 * (1 - w.b + w.b * (lines + w.meta_tf) / (self.avg_lines + w.meta_tf))
        return self.weight[i] * tf * (w.k1 + 1) / (tf + norm) + (self.coverage[i] if in_meta else 0.0)

    def meta_bm25_bonus(self, value: float) -> float:
        """The squashed FTS5 bm25() of a meta document (at most ``weights.meta_bm25``)."""
        return self.weights.meta_bm25 * value / (value + META_BM25_HALF) if value > 0 else 0.0


@dataclass
class Candidate:
    """Evidence gathered for one effort during a search."""

    num: int
    meta_terms: set[int] = field(default_factory=set)  # indices of terms in id/summary/name
    meta_bm25: float = 0.0  # -bm25() of the meta document (selective terms only)
    message_counts: dict[int, int] = field(default_factory=dict)  # term index -> messages containing it
    lines: float = 0.0  # messages in the effort's log (0: use the corpus average)
    first_line: int = 0  # the document's first line (an ambient block's first line in raw.jsonl)

    @property
    def extent(self) -> tuple[int, int]:
        """(first line, line after the last) of the document, as far as known (0 when not)."""
        return self.first_line, self.first_line + int(self.lines) if self.lines else 0

    def score(self, plan: Plan) -> float:
        """Document BM25 over words and word pairs + meta coverage + squashed meta bm25 (docs/SEARCH.md)."""
        lines = self.lines or plan.avg_lines
        total = 0.0
        for i in self.meta_terms | self.message_counts.keys():
            total += plan.term_score(i, i in self.meta_terms, self.message_counts.get(i, 0), lines)
        return total + plan.meta_bm25_bonus(self.meta_bm25)
