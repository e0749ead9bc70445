"""What a search result carries: :class:`SearchHit`, its snippet, and its best passage with line numbers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import _unspaced as unspaced
from ._ambient import AMBIENT
from ._database import _LINE_BITS, _LINE_MASK, IndexDatabase
from ._query import or_expression, phrase
from ._records import AMBIENT_LOG, in_ranges, withdrawn_ranges
from ._scoring import Candidate, Plan

SNIPPET_CHARS = 160
SNIPPET_TOKENS = 26
PASSAGE_MESSAGES = 3  # consecutive log lines in a result's passage
PASSAGE_CHARS = 480  # ... at most about this many characters (~120 tokens) together
PASSAGE_SCAN_ROWS = 2_000  # matching lines of one effort looked at per term to place the passage
_MARK_OPEN, _MARK_CLOSE = "\x02", "\x03"
WORD_SLACK = 24  # a snippet's cut moves at most this far to fall between two words

#: (effort_id, status, summary, indexed lines, source, first line, mean bytes per line or 0) of one document,
#: as the ranking reads them
EffortInfo = tuple[str, str, str | None, int, str, int, float]
#: the query's terms in each line of a document (line -> term indices), and what its lines add to its score
Window = tuple[dict[int, set[int]], float]


Span = tuple[int, int]  # [start, end) character offsets of a match in a text


@dataclass(frozen=True)
class Marked:
    """Text with the matches a search found in it, as spans: what a terminal or a UI styles without
    parsing markup (the text itself may hold ``**``, ``[`` or anything else, and stays as it is).
    Spans are in order and never overlap or touch the ends of a line break."""

    text: str
    spans: tuple[Span, ...] = ()

    @classmethod
    def from_markers(cls, marked: str) -> Marked:
        """From text whose matches are between the index's markers (\x02 … \x03)."""
        out: list[str] = []
        spans: list[Span] = []
        size, start = 0, -1
        for piece in re.split(f"([{_MARK_OPEN}{_MARK_CLOSE}])", marked):
            if piece == _MARK_OPEN:
                start = size if start < 0 else start
            elif piece == _MARK_CLOSE:
                if 0 <= start < size:
                    spans.append((start, size))
                start = -1
            else:
                out.append(piece)
                size += len(piece)
        if 0 <= start < size:
            spans.append((start, size))
        return cls("".join(out), tuple(spans))

    def markdown(self, *, plain: bool = False) -> str:
        """The text with each match wrapped in ``**`` (the JSON's and the model's form); ``plain``
        drops the text's own Markdown markers first, so that every ``**`` left marks a match."""

        def own(text: str) -> str:
            return _MARKDOWN_MARKS_RE.sub("", text) if plain else text

        parts, at = [], 0
        for start, end in self.spans:
            parts += [own(self.text[at:start]), "**", self.text[start:end], "**"]
            at = end
        return "".join([*parts, own(self.text[at:])])

    def lines(self) -> list[Marked]:
        """One :class:`Marked` per line of the text, each with its own spans."""
        out, at = [], 0
        for line in self.text.split("\n"):
            end = at + len(line)
            spans = tuple((max(a, at) - at, min(b, end) - at) for a, b in self.spans if a < end and b > at)
            out.append(Marked(line, spans))
            at = end + 1
        return out

    def cut(self, width: int) -> Marked:
        """The first ``width`` characters, spans clipped."""
        if len(self.text) <= width:
            return self
        return Marked(self.text[:width], tuple((a, min(b, width)) for a, b in self.spans if a < width))


@dataclass(frozen=True)
class SearchHit:
    """One effort, or one stretch of ambient chat, found by :meth:`~._index.EffortIndex.search`.

    ``snippet`` is about 160 characters of the best-matching text — the summary
    when it contains a query term, else the best message — with matched terms
    wrapped in ``**``. ``passage`` is the best run of up to three consecutive log
    messages (``role: text`` lines, matches wrapped in ``**``, about 120 tokens
    at most) and ``lines`` their first and last 1-based line numbers in the
    effort's raw log; both are None when only the id/summary/name matched.

    ``source`` is ``"effort"``, or ``"ambient"`` for exchanges of the ambient log
    (``raw.jsonl``): then ``id`` and ``status`` are ``"ambient"``, ``summary`` is
    None and ``lines`` are line numbers in ``raw.jsonl``.
    """

    id: str
    status: str
    summary: str | None
    score: float
    snippet: str
    passage: str | None = None
    lines: tuple[int, int] | None = None
    source: str = "effort"
    # the snippet and the passage as plain text with the spans of their matches (``snippet`` and
    # ``passage`` are these with ``**``): what a terminal or the UI styles
    marked_snippet: Marked | None = None
    marked_passage: Marked | None = None


_MARKDOWN_MARKS_RE = re.compile(r"\*\*|__|`+|^#{1,6}\s+|(?<=\s)#{1,6}\s+")


def _inside_word(text: str, i: int) -> bool:
    """True when a cut at ``i`` would split a word of a spaced script (CJK and the like have no
    spaces: a cut between two of their letters splits nothing)."""
    if not 0 < i < len(text):
        return False
    left, right = text[i - 1], text[i]
    return left.isalnum() and right.isalnum() and not unspaced.is_unspaced(left) and not unspaced.is_unspaced(right)


def _word_start(text: str, i: int, limit: int) -> int:
    """Where a snippet cut at ``i`` starts so as not to begin mid-word: the next word, if it starts
    before ``limit`` (the first match), else the start of the word ``i`` is in, if it is at most
    WORD_SLACK characters back; ``i`` itself inside a longer run (a hash, a URL)."""
    if not _inside_word(text, i):
        return i
    space = text.find(" ", i, limit)
    if space >= 0:
        return space + 1
    back = text.rfind(" ", 0, i)
    return back + 1 if back >= 0 and i - back <= WORD_SLACK else i


def _word_end(text: str, i: int, floor: int) -> int:
    """Where a snippet cut at ``i`` ends so as not to end mid-word: after the last whole word, if
    that keeps the snippet past ``floor``; ``i`` itself inside a longer run."""
    if not _inside_word(text, i):
        return i
    space = text.rfind(" ", floor, i)
    return space if space > floor and i - space <= WORD_SLACK else i


def _near_first_mark(raw: str, width: int) -> str:
    """The part of ``raw`` a snippet of ``width`` characters can be cut from: from ``2 * width``
    before its first mark to ``8 * width`` after (and through that mark's end), with ``…`` where it
    starts late; the whole of a short text."""
    if len(raw) <= 10 * width:
        return raw
    first = raw.find(_MARK_OPEN)
    start = max(0, first - 2 * width) if first >= 0 else 0
    end = start + 10 * width
    opened, closed = raw.rfind(_MARK_OPEN, start, end), raw.rfind(_MARK_CLOSE, start, end)
    if opened > closed and (close := raw.find(_MARK_CLOSE, end)) >= 0:  # never cut a marked term in half
        end = close + 1
    return ("…" if start else "") + raw[start:end] + ("…" if end < len(raw) else "")


def format_snippet(raw: str, width: int = SNIPPET_CHARS, *, plain: bool = False) -> str:
    """Collapse whitespace, trim around the first match, turn markers into ``**``.

    ``plain`` first drops the text's own Markdown markers (``**``, ``__``, backticks,
    heading hashes), so that every ``**`` left marks a match."""
    return _trimmed(raw, width, plain=plain).replace(_MARK_OPEN, "**").replace(_MARK_CLOSE, "**")


def _trimmed(raw: str, width: int = SNIPPET_CHARS, *, plain: bool = False) -> str:
    """:func:`format_snippet` with the index's markers kept (for :meth:`Marked.from_markers`). A long
    text is first cut to the part the snippet can come from (see :func:`_near_first_mark`): it costs
    its width, not its length."""
    raw = _near_first_mark(raw, width)
    text = " ".join((_MARKDOWN_MARKS_RE.sub("", raw, count=0) if plain else raw).split())
    if len(text) > width:
        first = text.find(_MARK_OPEN)
        start = _word_start(text, max(0, first - width // 4), first) if first >= 0 else 0
        end = _word_end(text, start + width, start + width // 2)
        opened, closed = text.rfind(_MARK_OPEN, 0, end), text.rfind(_MARK_CLOSE, 0, end)
        if opened > closed:  # never cut a marked term in half
            end = text.find(_MARK_CLOSE, opened) + 1
        head = "…" if start > 0 and not text[start:].startswith("…") else ""
        tail = "…" if end < len(text) and not text[:end].endswith("…") else ""
        text = head + text[start:end].strip() + tail
    return text


def best_window(
    weight: Sequence[float], line_terms: dict[int, set[int]], floor: int = 0, end: int = 0, *, per_line: bool = False
) -> tuple[int, float]:
    """(first line, weight) of the PASSAGE_MESSAGES consecutive lines of the document (lines
    ``floor`` to ``end - 1``; ``end`` 0: unknown) holding the most query ``weight``: each term
    counted once in the run, or (``per_line``) once in every line holding it. On a tie, the run
    that starts with a match (the match, then what follows it), else the earliest. (floor, 0.0)
    for no match."""
    span = PASSAGE_MESSAGES - 1
    starts = {max(floor, line - k) for line in line_terms for k in range(span + 1)}
    if end > floor:  # no run starts after the last start that still fits
        top = max(floor, end - 1 - span)
        starts = {min(start, top) for start in starts}
    get = line_terms.get
    if per_line:
        sums = {line: sum(weight[i] for i in terms) for line, terms in line_terms.items()}
    best, best_total, best_at_match = floor, 0.0, False
    for start in sorted(starts):
        if per_line:
            total = sum(sums.get(line, 0.0) for line in range(start, start + span + 1))
        else:
            held: set[int] = set()
            for line in range(start, start + span + 1):
                held.update(get(line, ()))
            total = sum(weight[i] for i in held)
        if total > best_total or (total == best_total and not best_at_match and start in line_terms and total > 0):
            best, best_total, best_at_match = start, total, start in line_terms
    return best, best_total


def place_passage(plan: Plan, line_terms: dict[int, set[int]], floor: int = 0, end: int = 0) -> int:
    """First line of the passage to show: the PASSAGE_MESSAGES consecutive lines holding the most
    query weight, every line counting its own terms, a term weighing its rarity among log lines —
    which tells the lines of one effort apart, where a word found in every effort may still sit in
    few of its lines. (Measured on real transcripts, benchmarks/bench_planted.py: this finds the
    answering line more often than placing by the ranking's own coverage, or damping long lines.)"""
    return best_window(plan.line_weight, line_terms, floor, end, per_line=True)[0]


class Results:
    """Builds the results of a search: snippets and passages read from the index."""

    def __init__(self, db: IndexDatabase) -> None:
        self.db = db

    def hit(
        self,
        plan: Plan,
        candidate: Candidate,
        score: float,
        info: EffortInfo,
        window: Window | None = None,
    ) -> SearchHit:
        effort_id, status, summary, _, source, *_ = info
        snippet = Marked.from_markers(self._snippet(plan, candidate, summary) or effort_id)
        marked, lines = self._passage(plan, candidate, window, AMBIENT_LOG if source == AMBIENT else candidate.num)
        passage = Marked.from_markers(marked) if marked is not None else None
        shown = (snippet.markdown(), passage.markdown(plain=True) if passage else None, lines)
        if source == AMBIENT:
            return SearchHit(
                AMBIENT, AMBIENT, None, score, *shown, source=AMBIENT, marked_snippet=snippet, marked_passage=passage
            )
        return SearchHit(effort_id, status, summary, score, *shown, marked_snippet=snippet, marked_passage=passage)

    def window(self, plan: Plan, candidate: Candidate) -> Window:
        """The query's terms in each line of the effort, and what the ranking adds for them: the query
        weight over efforts of the best run of lines (``weights.passage``) and of the best single line
        (``weights.message``), each term counted once, as the rest of the score counts. (Where the
        passage shown goes is decided for the returned hits only: place_passage.)"""
        line_terms = self._line_terms(plan, candidate)
        w = plan.weights
        bonus = w.passage * best_window(plan.weight, line_terms, *candidate.extent)[1]
        if w.message:
            bonus += w.message * max((sum(plan.weight[i] for i in t) for t in line_terms.values()), default=0.0)
        return line_terms, bonus

    def _line_terms(self, plan: Plan, candidate: Candidate) -> dict[int, set[int]]:
        """0-based log line -> indices of the terms it holds, for the terms in the effort's log."""
        lo = candidate.num << _LINE_BITS
        found: dict[int, set[int]] = {}
        for i in candidate.message_counts:
            for (rowid,) in self.db.conn.execute(
                "SELECT rowid FROM msg_fts WHERE msg_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT ?",
                (phrase(plan.terms[i]), lo, lo | _LINE_MASK, PASSAGE_SCAN_ROWS),
            ):
                found.setdefault(rowid & _LINE_MASK, set()).add(i)
        return found

    def _passage(
        self, plan: Plan, candidate: Candidate, window: Window | None, log_key: int
    ) -> tuple[str | None, tuple[int, int] | None]:
        """The PASSAGE_MESSAGES consecutive log lines of place_passage, marked and capped at
        PASSAGE_CHARS, with their 1-based line numbers; (None, None) when the log holds no match.
        A line the user took back (regenerate, edit) says so: ``user (withdrawn): …``."""
        if not candidate.message_counts:
            return None, None
        line_terms = window[0] if window is not None else self._line_terms(plan, candidate)
        if not line_terms:
            return None, None
        withdrawn = withdrawn_ranges(self.db.conn, [log_key])[log_key]
        live = {line: terms for line, terms in line_terms.items() if not in_ranges(withdrawn, line)}
        first = place_passage(plan, live or line_terms, *candidate.extent)  # what still stands, if it matches
        lo = candidate.num << _LINE_BITS
        span = PASSAGE_MESSAGES - 1
        rows = self.db.conn.execute(
            "SELECT rowid, role, content FROM msg_fts WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
            (lo | first, lo | (first + span)),
        ).fetchall()
        marked = dict(
            self.db.conn.execute(
                "SELECT rowid, highlight(msg_fts, 0, ?, ?) FROM msg_fts WHERE msg_fts MATCH ?"
                " AND rowid BETWEEN ? AND ?",
                (_MARK_OPEN, _MARK_CLOSE, plan.telling_expression, lo | first, lo | (first + span)),
            ).fetchall()
        )
        if not rows:
            return None, None
        width = PASSAGE_CHARS // len(rows)
        telling = [t for t in plan.telling if unspaced.is_unspaced(t)]  # FTS5 cannot mark these
        parts = [
            _speaker(role, in_ranges(withdrawn, rowid & _LINE_MASK))
            + _trimmed(unspaced.mark(marked.get(rowid, content), telling), width)
            for rowid, role, content in rows
        ]
        lines = (rows[0][0] & _LINE_MASK) + 1, (rows[-1][0] & _LINE_MASK) + 1
        return "\n".join(parts), lines

    def _snippet(self, plan: Plan, candidate: Candidate, summary: str | None) -> str:
        """The marked summary if it contains a match, else the marked best message (markers kept)."""
        args = (_MARK_OPEN, _MARK_CLOSE, "…", SNIPPET_TOKENS)
        if candidate.meta_terms and summary:
            found = self.db.conn.execute(
                "SELECT snippet(meta_fts, 2, ?, ?, ?, ?) FROM meta_fts WHERE meta_fts MATCH ? AND rowid = ?",
                (*args, plan.expression, candidate.num),
            ).fetchone()
            if found and _MARK_OPEN in found[0]:
                return _trimmed(found[0])
            marked = unspaced.mark(summary, [plan.terms[i] for i in candidate.meta_terms])
            if _MARK_OPEN in marked:
                return _trimmed(marked)
        if candidate.message_counts:
            found = self._best_message_snippet(plan, candidate, args)
            if found:
                return _trimmed(found)
        return _trimmed(summary or "")

    def _best_message_snippet(self, plan: Plan, candidate: Candidate, args: tuple[Any, ...]) -> str | None:
        """Snippet of the effort's best message by FTS5 bm25 over its selective
        (complete-postings) terms; the newest matching message if it has none."""
        present = sorted(candidate.message_counts)
        selective = [plan.terms[i] for i in present if plan.messages[i].complete]
        lo = candidate.num << _LINE_BITS
        order = "rank" if selective else "rowid DESC"
        chosen = selective or [plan.terms[i] for i in present]
        unspaced_terms = [t for t in chosen if unspaced.is_unspaced(t)]
        if unspaced_terms:  # FTS5 cannot mark these: the whole message, marked here, trimmed later
            found = self.db.conn.execute(
                f"SELECT highlight(msg_fts, 0, ?, ?) FROM msg_fts WHERE msg_fts MATCH ?"
                f" AND rowid BETWEEN ? AND ? ORDER BY {order} LIMIT 1",
                (*args[:2], or_expression(chosen), lo, lo | _LINE_MASK),
            ).fetchone()
            return unspaced.mark(found[0], unspaced_terms) if found else None
        found = self.db.conn.execute(
            f"SELECT snippet(msg_fts, 0, ?, ?, ?, ?) FROM msg_fts WHERE msg_fts MATCH ?"
            f" AND rowid BETWEEN ? AND ? ORDER BY {order} LIMIT 1",
            (*args, or_expression(chosen), lo, lo | _LINE_MASK),
        ).fetchone()
        return found[0] if found else None


def _speaker(role: str | None, withdrawn: bool) -> str:
    """A passage line's prefix: its role, and whether it was withdrawn."""
    said = " (withdrawn)" if withdrawn else ""
    return f"{role}{said}: " if role else (f"{said.strip()}: " if said else "")


def without_folded(hits: list[SearchHit], folded_upto: int) -> list[SearchHit]:
    """Search results without ambient chat folded into efforts (lines up to ``folded_upto``): the
    efforts holding a copy of it are found instead."""
    if folded_upto <= 0:
        return hits
    return [h for h in hits if not (h.source == "ambient" and h.lines and h.lines[1] <= folded_upto)]
