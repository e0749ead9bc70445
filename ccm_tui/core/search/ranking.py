"""Ranking: which efforts match a query, in which order, with which evidence."""

from __future__ import annotations

import heapq
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .database import _LINE_BITS, _LINE_MASK, IndexDatabase, _recovering

MAX_QUERY_TERMS = 16
#: bm25 weights of the meta columns: effort_id, id_words, summary, name.
META_COLUMN_WEIGHTS = (3.0, 3.0, 4.0, 5.0)
META_COVERAGE_WEIGHT = 5.0  # all query words in id/summary/name (IDF-weighted share): summary matches first
META_BM25_WEIGHT = 1.0
META_BM25_HALF = 8.0  # meta bm25 value that earns half of META_BM25_WEIGHT
META_TF = 1.0  # a term in the id/summary/name counts as this many log messages holding it
BM25_K1 = 1.6  # BM25 saturation over "messages of the effort containing the term"
BM25_B = 0.75  # ... normalised by the effort's log length
BIGRAM_WEIGHT = 0.35  # a pair of adjacent query words found adjacent, relative to one word
MAX_BIGRAMS = 12
DF_SAMPLE = 48  # efforts probed to estimate how many efforts hold a frequent term

MESSAGE_WINDOW = 2_000  # newest message postings read per term
MESSAGE_ROW_BUDGET = 12_000  # ... and for all terms together
META_WINDOW = 3_000
META_ROW_BUDGET = 12_000
MIN_WINDOW = 500
META_BM25_ROWS = 4_000  # meta rows ranked by bm25() per search at most
MIN_CANDIDATES = 30  # efforts scored exactly per search: max(this, 3 * limit)

SNIPPET_CHARS = 160
PASSAGE_MESSAGES = 3  # consecutive log lines in a result's passage
PASSAGE_CHARS = 480  # ... at most about this many characters (~120 tokens) together
PASSAGE_SCAN_ROWS = 2_000  # matching lines of one effort looked at per term to place the passage
PASSAGE_WEIGHT = 0.5  # the best passage's query coverage (idf-weighted, each term once) adds this share
PASSAGE_RERANK = 20  # best-scored efforts whose passage coverage joins their score
SNIPPET_TOKENS = 26
_MARK_OPEN, _MARK_CLOSE = "\x02", "\x03"


@dataclass(frozen=True)
class SearchHit:
    """One effort found by :meth:`EffortIndex.search`.

    ``snippet`` is about 160 characters of the best-matching text — the summary
    when it contains a query term, else the best message — with matched terms
    wrapped in ``**``. ``passage`` is the best run of up to three consecutive log
    messages (``role: text`` lines, matches wrapped in ``**``, about 120 tokens
    at most) and ``lines`` their first and last 1-based line numbers in the
    effort's raw log; both are None when only the id/summary/name matched.
    """

    id: str
    status: str
    summary: str | None
    score: float
    snippet: str
    passage: str | None = None
    lines: tuple[int, int] | None = None


_TERM_RE = re.compile(r"[^\W_]+")


def query_terms(query: str) -> list[str]:
    """Split free text into distinct lower-case word terms (at most MAX_QUERY_TERMS).

    Everything that is not a letter or digit separates terms, so FTS5 syntax
    (quotes, ``*``, ``NEAR(``, ``-``, ``:``, ``^``, parentheses) is inert.
    """
    text = unicodedata.normalize("NFC", query).lower()
    return list(dict.fromkeys(_TERM_RE.findall(text)))[:MAX_QUERY_TERMS]


def word_pairs(query: str) -> list[str]:
    """Distinct pairs of adjacent query words (``"support group"``), at most MAX_BIGRAMS."""
    words = _TERM_RE.findall(unicodedata.normalize("NFC", query).lower())
    pairs = (f"{a} {b}" for a, b in zip(words, words[1:]) if a != b)
    return list(dict.fromkeys(pairs))[:MAX_BIGRAMS]


def _phrase(term: str) -> str:
    """One term (a word, or two words: a phrase) as an FTS5 string literal (terms never contain quotes)."""
    return '"' + term.replace('"', '""') + '"'


def _or_expression(terms: Sequence[str]) -> str:
    return " OR ".join(_phrase(t) for t in terms)


_MARKDOWN_MARKS_RE = re.compile(r"\*\*|__|`+|^#{1,6}\s+|(?<=\s)#{1,6}\s+")


def _format_snippet(raw: str, width: int = SNIPPET_CHARS, *, plain: bool = False) -> str:
    """Collapse whitespace, trim around the first match, turn markers into ``**``.

    ``plain`` first drops the text's own Markdown markers (``**``, ``__``, backticks,
    heading hashes), so that every ``**`` left marks a match."""
    text = " ".join((_MARKDOWN_MARKS_RE.sub("", raw, count=0) if plain else raw).split())
    if len(text) > width:
        first = text.find(_MARK_OPEN)
        start = max(0, first - width // 4) if first >= 0 else 0
        end = start + width
        opened, closed = text.rfind(_MARK_OPEN, 0, end), text.rfind(_MARK_CLOSE, 0, end)
        if opened > closed:  # never cut a marked term in half
            end = text.find(_MARK_CLOSE, opened) + 1
        head = "…" if start > 0 and not text[start:].startswith("…") else ""
        tail = "…" if end < len(text) and not text[:end].endswith("…") else ""
        text = head + text[start:end].strip() + tail
    return text.replace(_MARK_OPEN, "**").replace(_MARK_CLOSE, "**")


def _idf(docs: float, matching: float) -> float:
    """Smoothed (always positive) inverse document frequency."""
    return math.log(1.0 + (docs - matching + 0.5) / (matching + 0.5))


@dataclass
class _Postings:
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
class _Plan:
    """Per-search state: terms (words, then adjacent word pairs), their postings, and weights."""

    terms: list[str]
    words: int  # terms[:words] are single words, the rest word pairs
    meta: list[_Postings]
    messages: list[_Postings]
    idf: list[float]  # over efforts: how rare the term is among whole efforts
    avg_lines: float
    weight: list[float] = field(init=False)  # idf x (1 for a word, BIGRAM_WEIGHT for a pair)
    coverage: list[float] = field(init=False)  # coverage score earned per word found in meta

    def __post_init__(self) -> None:
        self.weight = [idf * (1.0 if i < self.words else BIGRAM_WEIGHT) for i, idf in enumerate(self.idf)]
        word_total = sum(self.idf[: self.words]) or 1.0
        self.coverage = [
            META_COVERAGE_WEIGHT * idf / word_total if i < self.words else 0.0 for i, idf in enumerate(self.idf)
        ]

    @property
    def expression(self) -> str:
        return _or_expression(self.terms[: self.words])

    @property
    def telling_expression(self) -> str:
        """The words worth marking in a passage: all but those far more common than the rarest one."""
        top = max(self.idf[: self.words], default=0.0)
        return _or_expression([t for t, idf in zip(self.terms, self.idf[: self.words]) if idf >= top / 8])

    def term_score(self, i: int, in_meta: bool, messages: int, lines: float) -> float:
        """BM25 of one term over the effort as one document (its meta + its log messages)."""
        tf = messages + (META_TF if in_meta else 0.0)
        if tf <= 0:
            return 0.0
        norm = BM25_K1 * (1 - BM25_B + BM25_B * (lines + META_TF) / (self.avg_lines + META_TF))
        return self.weight[i] * tf * (BM25_K1 + 1) / (tf + norm) + (self.coverage[i] if in_meta else 0.0)


@dataclass
class _Candidate:
    """Evidence gathered for one effort during a search."""

    num: int
    meta_terms: set[int] = field(default_factory=set)  # indices of terms in id/summary/name
    meta_bm25: float = 0.0  # -bm25() of the meta document (selective terms only)
    message_counts: dict[int, int] = field(default_factory=dict)  # term index -> messages containing it
    lines: float = 0.0  # messages in the effort's log (0: use the corpus average)

    def score(self, plan: _Plan) -> float:
        """Document BM25 over words and word pairs + meta coverage + squashed meta bm25 (docs/SEARCH.md)."""
        lines = self.lines or plan.avg_lines
        total = 0.0
        for i in self.meta_terms | self.message_counts.keys():
            total += plan.term_score(i, i in self.meta_terms, self.message_counts.get(i, 0), lines)
        if self.meta_bm25 > 0:
            total += META_BM25_WEIGHT * self.meta_bm25 / (self.meta_bm25 + META_BM25_HALF)
        return total


class IndexRanking(IndexDatabase):
    """Reads from the index: ranked search with snippets and passages."""

    # ------------------------------------------------------------------ public: search

    @_recovering
    def search(self, query: str, limit: int = 10, status: str | None = None) -> list[SearchHit]:
        """Efforts matching ``query`` (free text), best first, ties broken by id.

        ``status`` restricts results to efforts with that status. A query with
        no word characters returns ``[]``; FTS5 syntax in it is treated as text.
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        with self._read_txn():
            return self._search(terms + word_pairs(query), limit, status)

    def _search(self, terms: list[str], limit: int, status: str | None) -> list[SearchHit]:
        plan = self._plan(terms)
        allowed = self._nums_with_status(status) if status is not None else None
        shortlist = self._shortlist(plan, allowed, max(MIN_CANDIDATES, 3 * limit))
        self._complete_evidence(plan, shortlist)
        info = self._effort_info([c.num for c in shortlist])
        shortlist = [c for c in shortlist if c.num in info and (c.meta_terms or c.message_counts)]
        for candidate in shortlist:
            candidate.lines = info[candidate.num][3]
        ranked = sorted(
            ((c.score(plan), info[c.num][0], c) for c in shortlist),
            key=lambda t: (-t[0], t[1]),
        )
        windows: dict[int, tuple[int, float]] = {}
        for _, _, c in ranked[: max(PASSAGE_RERANK, limit)]:  # the best passage adds its coverage
            windows[c.num] = self._best_window(plan, self._line_terms(plan, c))
        ranked = sorted(
            (
                (score + PASSAGE_WEIGHT * windows.get(c.num, (0, 0.0))[1], effort_id, c)
                for score, effort_id, c in ranked
            ),
            key=lambda t: (-t[0], t[1]),
        )
        return [self._hit(plan, c, score, info[c.num], windows.get(c.num)) for score, _, c in ranked[:limit]]

    # -- planning

    def _plan(self, terms: list[str]) -> _Plan:
        """Read every term's (windowed) postings in both tables and derive IDFs over efforts."""
        efforts, lines, _ = self._corpus_size()
        meta_window = max(MIN_WINDOW, min(META_WINDOW, META_ROW_BUDGET // len(terms)))
        message_window = max(MIN_WINDOW, min(MESSAGE_WINDOW, MESSAGE_ROW_BUDGET // len(terms)))
        meta = [self._postings("meta_fts", t, meta_window, efforts) for t in terms]
        messages = [self._postings("msg_fts", t, message_window, lines) for t in terms]
        return _Plan(
            terms=terms,
            words=sum(1 for t in terms if " " not in t),
            meta=meta,
            messages=messages,
            idf=[_idf(efforts, self._efforts_with(t, m, g, efforts)) for t, m, g in zip(terms, meta, messages)],
            avg_lines=max(1.0, lines / efforts) if efforts else 1.0,
        )

    def _efforts_with(self, term: str, meta: _Postings, messages: _Postings, efforts: int) -> float:
        """How many efforts hold a term in their meta or their log: exact for a selective term,
        else estimated from up to DF_SAMPLE efforts spread over the whole index."""
        if meta.complete and messages.complete:
            return float(len(meta.counts.keys() | messages.counts.keys()))
        if messages.complete:
            return min(float(efforts), max(meta.docs, float(len(messages.counts))))
        sample = self._effort_sample()
        found = 0
        for num in sample:
            if num >= messages.floor:
                found += num in messages.counts
            else:
                lo = num << _LINE_BITS
                found += (
                    self._db.execute(
                        "SELECT 1 FROM msg_fts WHERE msg_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT 1",
                        (_phrase(term), lo, lo | _LINE_MASK),
                    ).fetchone()
                    is not None
                )
        in_logs = found * efforts / max(1, len(sample))
        return min(float(efforts), max(meta.docs, in_logs, float(len(messages.counts))))

    def _effort_sample(self) -> list[int]:
        """Up to DF_SAMPLE effort numbers evenly spread over the index (all of them in a small one)."""
        version = self._state_version()
        if self._sample_cache is None or self._sample_cache[0] != version:
            nums = [num for (num,) in self._db.execute("SELECT num FROM efforts ORDER BY num")]
            step = max(1.0, len(nums) / DF_SAMPLE)
            self._sample_cache = (version, [nums[int(i * step)] for i in range(min(len(nums), DF_SAMPLE))])
        return self._sample_cache[1]

    def _corpus_size(self) -> tuple[int, int, int]:
        """(efforts, log lines indexed, highest effort number), cached until the db changes."""
        version = self._state_version()
        if self._corpus_cache is None or self._corpus_cache[0] != version:
            efforts, lines, top = self._db.execute(
                "SELECT count(*), total(indexed_lines), max(num) FROM efforts"
            ).fetchone()
            self._corpus_cache = (version, (efforts, int(lines), top or 0))
        return self._corpus_cache[1]

    def _postings(self, table: str, term: str, window: int, total_docs: int) -> _Postings:
        """Up to ``window`` newest documents of ``table`` containing ``term``, counted per effort."""
        shift = _LINE_BITS if table == "msg_fts" else 0
        counts = dict(
            self._db.execute(
                f"SELECT rowid >> {shift}, count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ?"
                " ORDER BY rowid DESC LIMIT ?) GROUP BY 1",
                (_phrase(term), window),
            ).fetchall()
        )
        seen = sum(counts.values())
        if seen < window:
            return _Postings(float(seen), counts, 0)
        floor = min(counts)
        if shift:  # the oldest effort in the window may be cut: leave it out
            del counts[floor]
            floor += 1
            # documents in the window ≈ efforts since the floor × average log length
            window_docs = (self._corpus_size()[2] - floor + 1) * total_docs / max(1, self._corpus_size()[0])
            docs = sum(counts.values()) * total_docs / window_docs if window_docs > 0 else 0.0
        else:  # meta tables are small: count exactly
            sql = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"
            docs = float(self._db.execute(sql, (_phrase(term),)).fetchone()[0])
        return _Postings(min(float(total_docs), max(docs, float(seen))), counts, max(floor, 1))

    def _nums_with_status(self, status: str) -> set[int]:
        return {num for (num,) in self._db.execute("SELECT num FROM efforts WHERE status = ?", (status,))}

    # -- evidence

    def _shortlist(self, plan: _Plan, allowed: set[int] | None, wanted: int) -> list[_Candidate]:
        """The ``wanted`` efforts with the best scores on the evidence in the postings.

        Runs over every effort in the postings (thousands for frequent terms),
        so it sums plain dicts and builds candidates for the winners only.
        """
        bm25 = self._meta_bm25(plan)
        in_meta: dict[int, set[int]] = {}
        for i, postings in enumerate(plan.meta):
            for num in postings.counts:
                in_meta.setdefault(num, set()).add(i)
        in_log: dict[int, dict[int, int]] = {}
        for i, postings in enumerate(plan.messages):
            for num, n in postings.counts.items():
                in_log.setdefault(num, {})[i] = n
        partial: dict[int, float] = {}
        none: set[int] = set()
        for num in in_meta.keys() | in_log.keys():
            found, counts = in_meta.get(num, none), in_log.get(num, {})
            partial[num] = sum(
                plan.term_score(i, i in found, counts.get(i, 0), plan.avg_lines) for i in found | counts.keys()
            )
        for num, value in bm25.items():
            partial[num] = partial.get(num, 0.0) + META_BM25_WEIGHT * value / (value + META_BM25_HALF)
        if allowed is not None:
            partial = (
                {num: partial.get(num, 0.0) for num in allowed}
                if len(allowed) <= wanted
                else {num: value for num, value in partial.items() if num in allowed}
            )  # few efforts with that status: judge them all
        best = heapq.nlargest(wanted, partial.items(), key=lambda item: item[1])
        return [self._candidate(plan, num, bm25.get(num, 0.0)) for num, _ in best]

    @staticmethod
    def _candidate(plan: _Plan, num: int, meta_bm25: float) -> _Candidate:
        """A candidate with the evidence the postings hold for it."""
        return _Candidate(
            num,
            meta_terms={i for i, p in enumerate(plan.meta) if num in p.counts},
            meta_bm25=meta_bm25,
            message_counts={i: p.counts[num] for i, p in enumerate(plan.messages) if num in p.counts},
        )

    def _meta_bm25(self, plan: _Plan) -> dict[int, float]:
        """FTS5 bm25 (column-weighted) of meta documents, over the selective terms
        (complete postings), as long as that ranks few rows: num → -bm25."""
        chosen, rows = [], 0.0
        for term, postings in sorted(zip(plan.terms, plan.meta), key=lambda tp: tp[1].docs):
            if postings.complete and postings.docs and rows + postings.docs <= META_BM25_ROWS:
                chosen.append(term)
                rows += postings.docs
        if not chosen:
            return {}
        weights = ", ".join(str(w) for w in META_COLUMN_WEIGHTS)
        return dict(
            self._db.execute(
                f"SELECT rowid, -bm25(meta_fts, {weights}) FROM meta_fts WHERE meta_fts MATCH ?",
                (_or_expression(chosen),),
            ).fetchall()
        )

    def _complete_evidence(self, plan: _Plan, shortlist: list[_Candidate]) -> None:
        """Look up frequent terms for short-listed efforts older than their postings window."""
        for i, postings in enumerate(plan.meta):
            older = [c for c in shortlist if c.num < postings.floor]
            for start in range(0, len(older), 500):
                chunk = {c.num: c for c in older[start : start + 500]}
                marks = ",".join("?" * len(chunk))
                for (num,) in self._db.execute(
                    f"SELECT rowid FROM meta_fts WHERE meta_fts MATCH ? AND rowid IN ({marks})",
                    (_phrase(plan.terms[i]), *chunk),
                ):
                    chunk[num].meta_terms.add(i)
        for i, postings in enumerate(plan.messages):
            for candidate in shortlist:
                if candidate.num < postings.floor:
                    lo = candidate.num << _LINE_BITS
                    (n,) = self._db.execute(
                        "SELECT count(*) FROM msg_fts WHERE msg_fts MATCH ? AND rowid BETWEEN ? AND ?",
                        (_phrase(plan.terms[i]), lo, lo | _LINE_MASK),
                    ).fetchone()
                    if n:
                        candidate.message_counts[i] = n

    def _effort_info(self, nums: list[int]) -> dict[int, tuple[str, str, str | None, int]]:
        """num → (effort_id, status, summary, indexed lines)."""
        info: dict[int, tuple[str, str, str | None, int]] = {}
        for start in range(0, len(nums), 500):
            chunk = nums[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT num, effort_id, status, summary, indexed_lines FROM efforts WHERE num IN ({marks})"
            for num, *rest in self._db.execute(sql, chunk):
                info[num] = (rest[0], rest[1], rest[2], rest[3])
        return info

    # -- results

    def _hit(
        self,
        plan: _Plan,
        candidate: _Candidate,
        score: float,
        info: tuple[str, str, str | None, int],
        window: tuple[int, float] | None = None,
    ) -> SearchHit:
        effort_id, status, summary, _ = info
        snippet = self._snippet(plan, candidate, summary) or effort_id
        passage, lines = self._passage(plan, candidate, window)
        return SearchHit(effort_id, status, summary, score, snippet, passage, lines)

    def _line_terms(self, plan: _Plan, candidate: _Candidate) -> dict[int, set[int]]:
        """0-based log line -> indices of the terms it holds, for the terms in the effort's log."""
        lo = candidate.num << _LINE_BITS
        found: dict[int, set[int]] = {}
        for i in candidate.message_counts:
            for (rowid,) in self._db.execute(
                "SELECT rowid FROM msg_fts WHERE msg_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT ?",
                (_phrase(plan.terms[i]), lo, lo | _LINE_MASK, PASSAGE_SCAN_ROWS),
            ):
                found.setdefault(rowid & _LINE_MASK, set()).add(i)
        return found

    @staticmethod
    def _best_window(plan: _Plan, line_terms: dict[int, set[int]]) -> tuple[int, float]:
        """(first line, coverage) of the PASSAGE_MESSAGES consecutive lines holding the most query
        weight, each term counted once (the earliest such run on a tie); (0, 0.0) for no match."""
        span = PASSAGE_MESSAGES - 1
        best = (0, 0.0)
        for start in sorted({max(0, line - k) for line in line_terms for k in range(span + 1)}):
            held: set[int] = set()
            for line in range(start, start + span + 1):
                held |= line_terms.get(line, set())
            coverage = sum(plan.weight[i] for i in held)
            if coverage > best[1]:
                best = (start, coverage)
        return best

    def _passage(
        self, plan: _Plan, candidate: _Candidate, window: tuple[int, float] | None
    ) -> tuple[str | None, tuple[int, int] | None]:
        """The best PASSAGE_MESSAGES consecutive log lines (most query weight), marked and capped
        at PASSAGE_CHARS, with their 1-based line numbers; (None, None) when the log holds no match."""
        if not candidate.message_counts:
            return None, None
        if window is None:
            window = self._best_window(plan, self._line_terms(plan, candidate))
        first, coverage = window
        if coverage <= 0:
            return None, None
        lo = candidate.num << _LINE_BITS
        span = PASSAGE_MESSAGES - 1
        rows = self._db.execute(
            "SELECT rowid, role, content FROM msg_fts WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
            (lo | first, lo | (first + span)),
        ).fetchall()
        marked = dict(
            self._db.execute(
                "SELECT rowid, highlight(msg_fts, 0, ?, ?) FROM msg_fts WHERE msg_fts MATCH ?"
                " AND rowid BETWEEN ? AND ?",
                (_MARK_OPEN, _MARK_CLOSE, plan.telling_expression, lo | first, lo | (first + span)),
            ).fetchall()
        )
        if not rows:
            return None, None
        width = PASSAGE_CHARS // len(rows)
        parts = [
            (f"{role}: " if role else "") + _format_snippet(marked.get(rowid, content), width, plain=True)
            for rowid, role, content in rows
        ]
        lines = (rows[0][0] & _LINE_MASK) + 1, (rows[-1][0] & _LINE_MASK) + 1
        return "\n".join(parts), lines

    def _snippet(self, plan: _Plan, candidate: _Candidate, summary: str | None) -> str:
        """The marked summary if it contains a match, else the marked best message."""
        args = (_MARK_OPEN, _MARK_CLOSE, "…", SNIPPET_TOKENS)
        if candidate.meta_terms and summary:
            found = self._db.execute(
                "SELECT snippet(meta_fts, 2, ?, ?, ?, ?) FROM meta_fts WHERE meta_fts MATCH ? AND rowid = ?",
                (*args, plan.expression, candidate.num),
            ).fetchone()
            if found and _MARK_OPEN in found[0]:
                return _format_snippet(found[0])
        if candidate.message_counts:
            found = self._best_message_snippet(plan, candidate, args)
            if found:
                return _format_snippet(found)
        return _format_snippet(summary or "")

    def _best_message_snippet(self, plan: _Plan, candidate: _Candidate, args: tuple[Any, ...]) -> str | None:
        """Snippet of the effort's best message by FTS5 bm25 over its selective
        (complete-postings) terms; the newest matching message if it has none."""
        present = sorted(candidate.message_counts)
        selective = [plan.terms[i] for i in present if plan.messages[i].complete]
        lo = candidate.num << _LINE_BITS
        order = "rank" if selective else "rowid DESC"
        expression = _or_expression(selective or [plan.terms[i] for i in present])
        found = self._db.execute(
            f"SELECT snippet(msg_fts, 0, ?, ?, ?, ?) FROM msg_fts WHERE msg_fts MATCH ?"
            f" AND rowid BETWEEN ? AND ? ORDER BY {order} LIMIT 1",
            (*args, expression, lo, lo | _LINE_MASK),
        ).fetchone()
        return found[0] if found else None
