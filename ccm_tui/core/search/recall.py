"""Recall: the few logged lines that answer the user's new message, found before every request.

A model that never searches still answers "what was my locker code?" forty turns
later if the line that says it is put back into its context. Recall looks for it
on every turn, so it must cost next to nothing: it searches only the message's
*rare* words (each matching at most :data:`RARE_DOCS` logged lines, which a
capped FTS5 lookup tells without counting the rest), scores the lines holding
them by how many rare words each run of three consecutive lines holds and how
rare they are, and answers only for a strong hit — two rare words in one passage,
or one very rare word (:data:`VERY_RARE_DOCS`). Lines the context already holds
(open or expanded efforts, the ambient window) are left out by the caller's
``skip`` rules.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from .database import _LINE_BITS, _LINE_MASK, IndexDatabase, _recovering
from .query import parse_query, phrase

RARE_DOCS = 40  # a word in more logged lines than this says too little to recall by
VERY_RARE_DOCS = 4  # ... in this few, it is a strong hit alone (a code, a name)
MIN_WORD_CHARS = 3  # shorter words (and shorter numbers) are too easily shared
PASSAGE_LINES = 3  # consecutive lines of one log shown for a hit
MAX_TERMS = 10  # the message's longest words are tried, at most this many


@dataclass(frozen=True)
class RecallHit:
    source: str  # "effort" or "ambient"
    log: str  # the effort id, or "ambient"
    lines: tuple[int, int]  # 1-based, inclusive
    messages: tuple[tuple[int, str, str], ...]  # (line, role, content)
    terms: tuple[str, ...]  # the rare words it holds
    score: float


def candidate_words(message: str) -> list[str]:
    """The words of a message that may be rare: no stop words, no short ones, longest first."""
    words, _ = parse_query(message)
    kept = [w for w in words if len(w) >= MIN_WORD_CHARS]
    return sorted(kept, key=lambda w: (-len(w), w))[:MAX_TERMS]


class IndexRecall(IndexDatabase):
    @_recovering
    def recall(self, message: str, *, skip: Callable[[str, str, int], bool] | None = None) -> RecallHit | None:
        """The strongest passage for ``message`` among the logged lines ``skip(source, log, line)``
        does not leave out (line 1-based), or None when nothing answers it strongly enough."""
        words = candidate_words(message)
        if not words:
            return None
        # one statement: each word's first RARE_DOCS + 1 lines (a capped lookup: no word is counted in full)
        part = "SELECT {i}, rowid FROM (SELECT rowid FROM msg_fts WHERE msg_fts MATCH ? LIMIT {n})"
        sql = " UNION ALL ".join(part.format(i=i, n=RARE_DOCS + 1) for i in range(len(words)))
        found: dict[int, set[int]] = defaultdict(set)
        for i, rowid in self._db.execute(sql, [phrase(w) for w in words]):
            found[i].add(rowid)
        rare = {words[i]: rows for i, rows in found.items() if len(rows) <= RARE_DOCS}
        return self._best_passage(rare, skip) if rare else None

    def _best_passage(
        self, rare: dict[str, set[int]], skip: Callable[[str, str, int], bool] | None
    ) -> RecallHit | None:
        weight = {word: math.log(1 + RARE_DOCS / len(rows)) for word, rows in rare.items()}
        by_log: dict[int, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
        for word, rows in rare.items():
            for rowid in rows:
                by_log[rowid >> _LINE_BITS][rowid & _LINE_MASK].add(word)
        logs = self._logs(list(by_log))
        best: tuple[float, int, int, set[str]] | None = None
        for num, lines in by_log.items():
            source, log = logs.get(num, ("", ""))
            for line in lines:
                if not log or (skip is not None and skip(source, log, line + 1)):
                    continue
                window = set().union(*(lines.get(line + k, set()) for k in range(PASSAGE_LINES)))
                score = sum(weight[w] for w in window)
                if best is None or score > best[0]:
                    best = (score, num, line, window)
        if best is None:
            return None
        score, num, line, words = best
        if len(words) < 2 and min(len(rare[w]) for w in words) > VERY_RARE_DOCS:
            return None  # one common-ish word: not a strong hit
        source, log = logs[num]
        return self._recall_hit(source, log, num, line, words, score)

    def _logs(self, nums: list[int]) -> dict[int, tuple[str, str]]:
        """(source, log) of each document number: an effort's id, or "ambient" for a block."""
        marks = ",".join("?" * len(nums))
        rows = self._db.execute(f"SELECT num, effort_id, source FROM efforts WHERE num IN ({marks})", nums)
        return {num: (source, "ambient" if source == "ambient" else effort_id) for num, effort_id, source in rows}

    def _recall_hit(self, source: str, log: str, num: int, line: int, words: set[str], score: float) -> RecallHit:
        base = num << _LINE_BITS
        rows = self._db.execute(
            "SELECT rowid, role, content FROM msg_fts WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
            (base | line, base | (line + PASSAGE_LINES - 1)),
        ).fetchall()
        messages = tuple(
            ((rowid & _LINE_MASK) + 1, str(role or ""), str(content or "")) for rowid, role, content in rows
        )
        first, last = messages[0][0], messages[-1][0]
        return RecallHit(source, log, (first, last), messages, tuple(sorted(words)), score)
