"""Ranking: which efforts match a query and in which order (reading postings, short-listing, scoring).

Query processing is in :mod:`._query`, the score of one effort in :mod:`._scoring`,
snippets and passages in :mod:`._results`.
"""

from __future__ import annotations

import heapq
import json

from . import _scoring as scoring
from ._ambient import AMBIENT
from ._database import _LINE_BITS, _LINE_MASK, IndexDatabase, recovering
from ._query import or_expression, parse_query, phrase
from ._results import EffortInfo, Results, SearchHit, Window
from ._scoring import META_COLUMN_WEIGHTS, PASSAGE_RERANK, Candidate, Plan, Postings, Weights, idf

DF_SAMPLE = 48  # efforts probed to estimate how many efforts hold a frequent term
MESSAGE_WINDOW = 2_000  # newest message postings read per term
MESSAGE_ROW_BUDGET = 12_000  # ... and for all terms together
META_WINDOW = 3_000
META_ROW_BUDGET = 12_000
MIN_WINDOW = 500
META_BM25_ROWS = 4_000  # meta rows ranked by bm25() per search at most
MIN_CANDIDATES = 30  # efforts scored exactly per search: max(this, 3 * limit)

# [0] for an effort's status (its row's in the list), [1] for 'ambient'
_OF_STATUS = (  # the documents of status ?1: up to ?2 of them ...
    "SELECT d.num FROM entries n JOIN efforts d ON d.effort_id = n.id WHERE n.status = ?1 LIMIT ?2",
    "SELECT num FROM efforts WHERE source = 'ambient' LIMIT ?2",  # (?1: 'ambient')
)
_IN_POSTINGS_OF_STATUS = (  # ... or those among the documents ?2 (each looked up: CROSS JOIN keeps this order)
    "SELECT d.num FROM json_each(?2) j CROSS JOIN efforts d ON d.num = j.value"
    " CROSS JOIN entries n ON n.id = d.effort_id WHERE n.status = ?1",
    "SELECT d.num FROM json_each(?2) j CROSS JOIN efforts d ON d.num = j.value"
    " WHERE d.source = 'ambient'",  # (?1: 'ambient')
)
_INFO = (  # what a hit shows: an effort's status and summary are its row's in the effort list
    "SELECT d.num, d.effort_id, CASE d.source WHEN 'ambient' THEN 'ambient' ELSE n.status END,"
    " json_extract(n.entry, '$.summary'), d.indexed_lines, d.source, d.first_line, d.log_offset, d.log_lines"
    " FROM efforts d LEFT JOIN entries n ON n.id = d.effort_id AND d.source = 'effort'"
)


class Ranking:
    """Reads from the index: which documents match a query, in which order; their snippets and passages
    come from ``results`` (:class:`~._results.Results`). The corpus figures and the sample of efforts
    are cached until the database changes."""

    def __init__(self, db: IndexDatabase, results: Results) -> None:
        self.db = db
        self._results = results
        self._corpus_cache: tuple[tuple[int, int, int], tuple[int, int, int, float]] | None = None
        self._sample_cache: tuple[tuple[int, int, int], list[int]] | None = None

    # ------------------------------------------------------------------ public: search

    @recovering
    def search(
        self, query: str, limit: int = 10, status: str | None = None, *, weights: Weights | None = None
    ) -> list[SearchHit]:
        """Efforts (and stretches of ambient chat) matching ``query`` (free text), best first, ties
        broken by id.

        ``status`` restricts results to efforts with that status (``"ambient"``: ambient chat only).
        A query with no word characters returns ``[]``; FTS5 syntax in it is treated as text.
        ``weights`` replaces the ranking's parameters (:data:`.scoring.WEIGHTS`), for benchmarks.
        """
        weights = weights or scoring.WEIGHTS
        words, pairs = parse_query(query, stop_words=weights.stop_words)
        if not words or limit <= 0:
            return []
        with self.db.read_txn():
            return self._search(words + pairs, limit, status, weights)

    def _search(self, terms: list[str], limit: int, status: str | None, weights: Weights) -> list[SearchHit]:
        plan = self._plan(terms, weights)
        shortlist = self._shortlist(plan, status, max(MIN_CANDIDATES, 3 * limit))
        self._complete_evidence(plan, shortlist)
        info = self._effort_info([c.num for c in shortlist])
        shortlist = [c for c in shortlist if c.num in info and (c.meta_terms or c.message_counts)]
        for candidate in shortlist:
            _, _, _, candidate.lines, _, candidate.first_line, candidate.line_bytes = info[candidate.num]
        ranked = sorted(
            ((c.score(plan), info[c.num][0], c) for c in shortlist),
            key=lambda t: (-t[0], t[1]),
        )
        windows: dict[int, Window] = {}
        for _, _, c in ranked[: max(PASSAGE_RERANK, limit)]:  # the best passage (and line) adds its coverage
            windows[c.num] = self._results.window(plan, c)
        ranked = sorted(
            (
                (score + (windows[c.num][1] if c.num in windows else 0.0), effort_id, c)
                for score, effort_id, c in ranked
            ),
            key=lambda t: (-t[0], t[1]),
        )
        return [self._results.hit(plan, c, score, info[c.num], windows.get(c.num)) for score, _, c in ranked[:limit]]

    # -- planning

    def _plan(self, terms: list[str], weights: Weights) -> Plan:
        """Read every term's (windowed) postings in both tables and derive IDFs over efforts."""
        efforts, lines, _, line_bytes = self._corpus_size()
        meta_window = max(MIN_WINDOW, min(META_WINDOW, META_ROW_BUDGET // len(terms)))
        message_window = max(MIN_WINDOW, min(MESSAGE_WINDOW, MESSAGE_ROW_BUDGET // len(terms)))
        meta = [self._postings("meta_fts", t, meta_window, efforts) for t in terms]
        messages = [self._postings("msg_fts", t, message_window, lines) for t in terms]
        return Plan(
            terms=terms,
            words=sum(1 for t in terms if " " not in t),
            meta=meta,
            messages=messages,
            idf=[idf(efforts, self._efforts_with(t, m, g, efforts)) for t, m, g in zip(terms, meta, messages)],
            avg_lines=max(1.0, lines / efforts) if efforts else 1.0,
            weights=weights,
            lines=float(lines),
            line_bytes=line_bytes,
        )

    def _efforts_with(self, term: str, meta: Postings, messages: Postings, efforts: int) -> float:
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
                    self.db.conn.execute(
                        "SELECT 1 FROM msg_fts WHERE msg_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT 1",
                        (phrase(term), lo, lo | _LINE_MASK),
                    ).fetchone()
                    is not None
                )
        in_logs = found * efforts / max(1, len(sample))
        return min(float(efforts), max(meta.docs, in_logs, float(len(messages.counts))))

    def _effort_sample(self) -> list[int]:
        """Up to DF_SAMPLE effort numbers evenly spread over the index (all of them in a small one)."""
        version = self.db.state_version()
        if self._sample_cache is None or self._sample_cache[0] != version:
            count, _, top, _ = self._corpus_size()
            if count <= DF_SAMPLE:
                nums = [num for (num,) in self.db.conn.execute("SELECT num FROM efforts ORDER BY num")]
            else:  # one primary-key seek per point spread over the numbers (no scan of every row)
                first = self.db.conn.execute("SELECT min(num) FROM efforts").fetchone()[0] or 0
                step = (top - first) / DF_SAMPLE
                seek = "SELECT num FROM efforts WHERE num >= ? ORDER BY num LIMIT 1"
                found = (self.db.conn.execute(seek, (first + int(i * step),)).fetchone() for i in range(DF_SAMPLE))
                nums = sorted({row[0] for row in found if row is not None})
            self._sample_cache = (version, nums)
        return self._sample_cache[1]

    def _corpus_size(self) -> tuple[int, int, int, float]:
        """(documents, log lines indexed, highest document number, mean bytes of a log line or 0),
        cached until the db changes (one narrow index read: efforts_sizes)."""
        version = self.db.state_version()
        if self._corpus_cache is None or self._corpus_cache[0] != version:
            efforts, lines, top, size, sized_lines = self.db.conn.execute(
                "SELECT count(*), total(indexed_lines), max(num), total(log_offset), total(log_lines) FROM efforts"
            ).fetchone()
            line_bytes = size / sized_lines if sized_lines else 0.0
            self._corpus_cache = (version, (efforts, int(lines), top or 0, line_bytes))
        return self._corpus_cache[1]

    def _postings(self, table: str, term: str, window: int, total_docs: int) -> Postings:
        """Up to ``window`` newest documents of ``table`` containing ``term``, counted per effort."""
        shift = _LINE_BITS if table == "msg_fts" else 0
        counts = dict(
            self.db.conn.execute(
                f"SELECT rowid >> {shift}, count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ?"
                " ORDER BY rowid DESC LIMIT ?) GROUP BY 1",
                (phrase(term), window),
            ).fetchall()
        )
        seen = sum(counts.values())
        if seen < window:
            return Postings(float(seen), counts, 0)
        floor = min(counts)
        if shift:  # the oldest effort in the window may be cut: leave it out
            del counts[floor]
            floor += 1
            # documents in the window ≈ efforts since the floor × average log length
            window_docs = (self._corpus_size()[2] - floor + 1) * total_docs / max(1, self._corpus_size()[0])
            docs = sum(counts.values()) * total_docs / window_docs if window_docs > 0 else 0.0
        else:  # meta tables are small: count exactly
            sql = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"
            docs = float(self.db.conn.execute(sql, (phrase(term),)).fetchone()[0])
        return Postings(min(float(total_docs), max(docs, float(seen))), counts, max(floor, 1))

    def _of_status(self, status: str, partial: dict[int, float], wanted: int) -> dict[int, float]:
        """``partial`` restricted to the documents of ``status``; all of them when it has ``wanted`` or
        fewer (the postings' windows may have missed some: they are judged on their evidence too)."""
        sql = _OF_STATUS[status == AMBIENT]
        few = [num for (num,) in self.db.conn.execute(sql, (status, wanted + 1))]
        if len(few) <= wanted:
            return {num: partial.get(num, 0.0) for num in few}
        sql = _IN_POSTINGS_OF_STATUS[status == AMBIENT]
        return {num: partial[num] for (num,) in self.db.conn.execute(sql, (status, json.dumps(list(partial))))}

    # -- evidence

    def _shortlist(self, plan: Plan, status: str | None, wanted: int) -> list[Candidate]:
        """The ``wanted`` efforts (of ``status`` only, when given) with the best scores on the evidence
        in the postings.

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
            partial[num] = partial.get(num, 0.0) + plan.meta_bm25_bonus(value)
        if status is not None:
            partial = self._of_status(status, partial, wanted)
        best = heapq.nlargest(wanted, partial.items(), key=lambda item: item[1])
        return [self._candidate(plan, num, bm25.get(num, 0.0)) for num, _ in best]

    @staticmethod
    def _candidate(plan: Plan, num: int, meta_bm25: float) -> Candidate:
        """A candidate with the evidence the postings hold for it."""
        return Candidate(
            num,
            meta_terms={i for i, p in enumerate(plan.meta) if num in p.counts},
            meta_bm25=meta_bm25,
            message_counts={i: p.counts[num] for i, p in enumerate(plan.messages) if num in p.counts},
        )

    def _meta_bm25(self, plan: Plan) -> dict[int, float]:
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
            self.db.conn.execute(
                f"SELECT rowid, -bm25(meta_fts, {weights}) FROM meta_fts WHERE meta_fts MATCH ?",
                (or_expression(chosen),),
            ).fetchall()
        )

    def _complete_evidence(self, plan: Plan, shortlist: list[Candidate]) -> None:
        """Look up frequent terms for short-listed efforts older than their postings window."""
        for i, postings in enumerate(plan.meta):
            older = [c for c in shortlist if c.num < postings.floor]
            for start in range(0, len(older), 500):
                chunk = {c.num: c for c in older[start : start + 500]}
                marks = ",".join("?" * len(chunk))
                for (num,) in self.db.conn.execute(
                    f"SELECT rowid FROM meta_fts WHERE meta_fts MATCH ? AND rowid IN ({marks})",
                    (phrase(plan.terms[i]), *chunk),
                ):
                    chunk[num].meta_terms.add(i)
        for i, postings in enumerate(plan.messages):
            for candidate in shortlist:
                if candidate.num < postings.floor:
                    lo = candidate.num << _LINE_BITS
                    (n,) = self.db.conn.execute(
                        "SELECT count(*) FROM msg_fts WHERE msg_fts MATCH ? AND rowid BETWEEN ? AND ?",
                        (phrase(plan.terms[i]), lo, lo | _LINE_MASK),
                    ).fetchone()
                    if n:
                        candidate.message_counts[i] = n

    def _effort_info(self, nums: list[int]) -> dict[int, EffortInfo]:
        """num → (effort_id, status, summary, indexed lines, source, first line, mean bytes per line), for
        the documents of efforts in the list and of the ambient log (a document the list does not hold,
        e.g. of an effort deleted by a hand edit and not yet dropped, is no result)."""
        info: dict[int, EffortInfo] = {}
        for start in range(0, len(nums), 500):
            chunk = nums[start : start + 500]
            sql = f"{_INFO} WHERE d.num IN ({','.join('?' * len(chunk))})"
            for num, effort_id, status, summary, lines, source, first, size, sized in self.db.conn.execute(sql, chunk):
                if status is not None:
                    info[num] = (effort_id, status, summary, lines, source, first, size / sized if sized else 0.0)
        return info
