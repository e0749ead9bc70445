"""Scoring: how one effort's evidence for a query becomes its score (docs/SEARCH.md, "Ranking")."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ._query import or_expression

#: bm25 weights of the meta columns: effort_id, id_words, summary, name, grams (unspaced scripts).
META_COLUMN_WEIGHTS = (3.0, 3.0, 4.0, 5.0, 4.0)
META_BM25_HALF = 8.0  # meta bm25 value that earns half of Weights.meta_bm25
PASSAGE_RERANK = 20  # best-scored efforts whose passage coverage joins their score


@dataclass(frozen=True)
class Weights:
    """The ranking's parameters. The defaults are what a coordinate search chooses on the LoCoMo development
    split, the search whose choices on four conversations are scored on the fifth for the cross-validated
    figures (``benchmarks/bench_recall.py``, docs/SEARCH.md); ``size`` was chosen on real agent transcripts
    (``benchmarks/bench_planted.py``)."""

    k1: float = 1.6  # BM25 saturation over "messages of the effort containing the term"
    b: float = 0.75  # ... normalised by the effort's log length (effective_lines)
    pair: float = 0.35  # a pair of adjacent query words found adjacent, relative to one word
    meta_coverage: float = 5.0  # all query words in id/summary/name (IDF-weighted share): summary matches first
    meta_tf: float = 1.0  # a term in the id/summary/name counts as this many log messages holding it
    meta_bm25: float = 1.0  # the squashed FTS5 bm25() of the meta document adds at most this
    passage: float = 1.5  # the best passage's query coverage (idf-weighted, each term once) adds this share
    stop_words: bool = True  # function and question words are not searched alone (query.STOP_WORDS)
    size: float = 0.5  # a log's length is its lines x (its bytes per line / the index's) ** size
    message: float = 0.0  # the best single message's query weight (each term once) adds this share


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
    line_bytes: float = 0.0  # mean bytes of a log line in the index (0: unknown)
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

    def effective_lines(self, lines: float, line_bytes: float) -> float:
        """A log's length for BM25's normalisation: its lines, scaled by how long they are against the
        index's mean line (to the power ``weights.size``): a log of a few huge tool dumps holds almost
        any word somewhere, and counting its messages alone made it look as short as a chat."""
        if not (self.weights.size and line_bytes > 0 and self.line_bytes > 0):
            return lines
        return lines * (line_bytes / self.line_bytes) ** self.weights.size

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
    line_bytes: float = 0.0  # mean bytes of its log lines (0: unknown)

    @property
    def extent(self) -> tuple[int, int]:
        """(first line, line after the last) of the document, as far as known (0 when not)."""
        return self.first_line, self.first_line + int(self.lines) if self.lines else 0

    def score(self, plan: Plan) -> float:
        """Document BM25 over words and word pairs + meta coverage + squashed meta bm25 (docs/SEARCH.md)."""
        lines = plan.effective_lines(self.lines, self.line_bytes) if self.lines else plan.avg_lines
        total = 0.0
        for i in self.meta_terms | self.message_counts.keys():
            total += plan.term_score(i, i in self.meta_terms, self.message_counts.get(i, 0), lines)
        return total + plan.meta_bm25_bonus(self.meta_bm25)
