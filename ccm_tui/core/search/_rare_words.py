"""Recall: the few logged lines that answer the user's new message, found before every request.

A model that never searches still answers "what was my locker code?" forty turns
later if the line that says it is put back into its context. Recall looks for it
on every turn, so it must cost next to nothing: it searches only the message's
*rare* words (each matching at most :data:`RARE_DOCS` logged lines, which a
capped FTS5 lookup tells without counting the rest), scores the lines holding
them by how many rare words each holds and how rare they are (a line the user
wrote weighs more), and answers only for a strong hit — two rare words in one
line, or one very rare word (:data:`VERY_RARE_DOCS`; :data:`USER_RARE_DOCS` in a
user's line). The hit is that line with its neighbour. A line the user took back
(regenerate, edit: the index keeps what each withdrawal marker withdrew) is never
recalled, nor shown as a neighbour. Words any message may use
(:data:`COMMON_WORDS`: "how long should ...") are never searched: in a short session
every word is rare, and they would recall lines that do not answer; nor are the words that steer
the conversation (:mod:`~ccm_tui.core.text.words`: "ok, that's done, conclude it" recalled
another effort's last lines). Each hit carries the words it was found by (``terms``: the inspector shows them). Lines the
request holds word for word are left out by the caller's ``skip`` rule.

A recall costs tokens and attention, so it needs evidence that earns them (issue 38: 7 of 22 recalls
in a day were found by ``www``, ``plan``, ``type``, ``path``, ``check``, ``main``, ``command``). Each
word of the message weighs (:func:`word_weights`): a word any chat about code or plans uses
(:data:`GENERIC_WORDS`), a part of a URL or of a code identifier (``main`` of ``main.py``) weighs half;
the scheme and host boilerplate of a URL (``www``, ``com``) nothing. A line is recalled when the words
it holds weigh :attr:`Evidence.words` (two words, one of them plain), or for one word alone when that
word is a code or a number in very few lines, or a plain word in one line only of a long session. In a long line (an agent's dump) the words must
stand together (:func:`clustered`); one word alone counts only as written (:func:`stands_as_written`:
the index's stemmer joins "political leaning" and "people to lean on"). A name in the message (capitalized
inside a sentence, or quoted: :func:`named`) that no logged line holds (:data:`UNSEEN_WEIGHT`) says it
asks about something this session never spoke of: "a plan for learning Rust in a month" recalled a line
about learning something else this month; each such name asks more of a line. A log
the caller's ``skip`` says comes from an imported agent session (``words_needed``) needs more
(:attr:`Evidence.imported`: three words).
:data:`BEFORE` is the rule as it was, for the benchmark (``benchmarks/bench_recall.py``).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..text.words import COMMON_WORDS, is_control_word
from ._database import _LINE_BITS, _LINE_MASK, IndexDatabase, recovering
from ._query import parse_query, phrase
from ._records import AMBIENT_LOG, in_ranges, withdrawn_ranges

RARE_DOCS = 40  # a word in more logged lines than this says too little to recall by
VERY_RARE_DOCS = 4  # ... in this few, it is a strong hit alone (a code, a name)
MIN_WORD_CHARS = 3  # shorter words (and shorter numbers) are too easily shared
PASSAGE_LINES = 2  # consecutive lines of one log shown for a hit (the line and its neighbour)
USER_LINE_WEIGHT = 1.5  # a line the user wrote: facts are stated by the user
USER_RARE_DOCS = 12  # one word in this few lines, in a line the user wrote, is a strong hit
MAX_TERMS = 10  # the message's longest words are tried, at most this many
MAX_HITS = 2  # passages recalled at most
NEAR_BEST = 0.8  # a second passage scores at least this share of the first
CLUSTER_CHARS = 400  # the words that recall a long line stand within this many characters of each other
MAX_PLACES = 20  # places of each word looked at in a long line
MAX_TRIED = 12  # candidate lines looked at for a passage, best first


# Words any chat about code, plans or tools uses: rare in one session's lines, yet no evidence that a
# line answers the message (issue 38's false recalls, and their kin).
GENERIC_WORDS = frozenset(
    """
    plan plans planning type types typed path paths check checks checked main command commands file files
    folder folders directory dir script scripts test tests testing error errors bug bugs fix fixes build
    builds run runs config configs setting settings option options value values list lists item items
    name names number numbers version versions update updates install installed package packages app apps
    page pages link links site website url web online data info information detail details note notes
    text message messages code function functions method class default example examples sample output
    input result results format step steps start started end stop issue issues problem problems question
    answer idea ideas thing stuff point part parts case cases line lines word words list task tasks todo
    project projects work job jobs change changes new old current next last first second user users
    week weeks weekend month months year years hour hours minute minutes morning evening night tonight
    server client api key keys tool tools system systems window windows screen button click open close
    doc docs document documents help guide tip tips support review summary report
    """.split()
)
URL_NOISE = frozenset("http https www com org net html htm php asp aspx io co uk de index".split())
GENERIC_WEIGHT = 0.5
PART_WEIGHT = 0.5  # a part of a URL or of a code identifier
_URL = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+|\b[\w-]+(?:\.[\w-]+)+/\S*", re.IGNORECASE)
_IDENTIFIER = re.compile(r"[\w$]+(?:(?:\.|::|/|->)[\w$]+)+|\w*[a-z][A-Z]\w*|\w+_\w+")
_SPECIFIC = re.compile(r"\d")  # a word holding a digit names one thing (a code, a room, a date)
UNSEEN_WEIGHT = 0.5  # a name in the message (:func:`named`) no logged line holds asks this much more of a line
UNIQUE_DOCS = 1  # a plain word in this few lines is evidence alone ("museum": the one line about it) …
UNIQUE_MIN_LINES = 200  # … in a session of this many lines (in a short one every word is in one line)


@dataclass(frozen=True)
class Evidence:
    """What a line must hold to be recalled: weighted words (see the module doc)."""

    words: float = 1.5  # weight of the message's words a line holds: two words, one of them plain
    imported: float = 2.5  # ... in the log of an imported agent session: three words
    single_word: bool = True  # one specific, very rare word alone (a code, a name)
    weighted: bool = True  # False: every word weighs 1 (the rule before issue 38)


EVIDENCE = Evidence()
BEFORE = Evidence(words=2.0, imported=2.0, single_word=True, weighted=False)


def word_weights(message: str) -> dict[str, float]:
    """What each word of ``message`` is worth as evidence: 1, or half for a generic word or a part of
    a URL or a code identifier, 0 for a URL's boilerplate (``www``, ``https``, ``com``)."""
    weights: dict[str, float] = {}

    def lower(words: list[str], weight: float) -> None:
        for word in words:
            weights[word] = min(weights.get(word, 1.0), weight)

    for url in _URL.findall(message):
        parts = parse_query(url, stop_words=False)[0]
        lower([w for w in parts if w in URL_NOISE], 0.0)
        lower([w for w in parts if w not in URL_NOISE], PART_WEIGHT)
    rest = _URL.sub(" ", message)
    for identifier in _IDENTIFIER.findall(rest):
        lower(parse_query(identifier, stop_words=False)[0] + [identifier.lower()], PART_WEIGHT)
    lower([w for w in parse_query(message)[0] if w in GENERIC_WORDS], GENERIC_WEIGHT)
    return weights


def _specific(word: str, message: str) -> bool:
    """A word that names one thing alone: a code or a number ("4729", "px-4410"). A name or a topic
    word ("Japan", "identity") in two lines or more alone recalled lines that did not answer."""
    return bool(_SPECIFIC.search(word))


_WORD_AFTER = re.compile(r"(?<=[^\s.!?:;\"'(\[])\s+[\"'(]?([A-Z][\w-]*)")


_QUOTED = re.compile(r"\"([^\"]{1,80})\"|“([^”]{1,80})”")


def named(message: str) -> set[str]:
    """The words ``message`` names things by (lower-cased): written capitalized inside a sentence
    ("Rust", "August", "Kyoto"; not a sentence's first word), or quoted (a title: "nothing is
    impossible")."""
    quoted = " ".join(a or b for a, b in _QUOTED.findall(message))
    return {w.lower() for w in _WORD_AFTER.findall(message)} | set(parse_query(quoted, stop_words=False)[0])


def stem(word: str) -> str:
    """What of ``word`` its other forms begin with, as the places of a word are found: the word less its
    last two letters, at least four kept ("tomato" of "tomatoes")."""
    return word[: max(4, len(word) - 2)]


def stands_as_written(text: str, word: str) -> bool:
    """Whether ``text`` (lower-case) holds ``word`` or a form of it (:func:`stem`) at the start of a word."""
    return re.search(r"(?<!\w)" + re.escape(stem(word)), text) is not None


def word_places(text: str, words: Iterable[str], most: int = MAX_PLACES) -> list[tuple[int, str]]:
    """Where each of ``words`` stands in ``text`` (lower-case), by its stem as the index matches it
    ("tomatoes" for "tomato": the word less its last two letters, at least four kept), at most ``most``
    places a word; (where, word), in order."""
    places: list[tuple[int, str]] = []
    for word in words:
        part, start = stem(word), 0
        for _ in range(most):
            if (found := text.find(part, start)) < 0:
                break
            places.append((found, word))
            start = found + len(part)
    places.sort()
    return places


def standing_together(text: str, worth: dict[str, float], width: int = CLUSTER_CHARS) -> set[str]:
    """The words of ``worth`` that stand within ``width`` characters of each other in ``text``
    (lower-case) at the place where they weigh the most: all of them in a short line."""
    if len(text) <= width:
        return set(worth)
    places = word_places(text, worth)
    best: set[str] = set()
    for i, (at, _word) in enumerate(places):
        near = {w for where, w in places[i:] if where - at <= width}
        if sum(worth[w] for w in near) > sum(worth[w] for w in best):
            best = near
    return best


def clustered(text: str, worth: dict[str, float], need: float, width: int = CLUSTER_CHARS) -> bool:
    """Whether words of ``worth`` weighing ``need`` stand within ``width`` characters of each other in
    ``text`` (lower-case): a short line always."""
    return len(text) <= width or sum(worth[w] for w in standing_together(text, worth, width)) >= need


@dataclass(frozen=True)
class RecallHit:
    source: str  # "effort" or "ambient"
    log: str  # the effort id, or "ambient"
    lines: tuple[int, int]  # 1-based, inclusive
    messages: tuple[tuple[int, str, str], ...]  # (line, role, content)
    terms: tuple[str, ...]  # the rare words it holds
    score: float
    num: int = 0  # the index's document number (to tell passages of one log apart)

    @property
    def first_index(self) -> int:
        return self.lines[0] - 1


def candidate_words(message: str) -> list[str]:
    """The words of a message that may be rare: no stop words or common ones, no short ones, none that
    steers the conversation (:mod:`~ccm_tui.core.text.words`: "done", "conclude", "thanks" …), longest first."""
    words, _ = parse_query(message)
    kept = [w for w in words if len(w) >= MIN_WORD_CHARS and w not in COMMON_WORDS and not is_control_word(w)]
    return sorted(kept, key=lambda w: (-len(w), w))[:MAX_TERMS]


class RareWordRecall:
    """The recall lookup over the index's message rows, and which logged lines a withdrawal took back."""

    def __init__(self, db: IndexDatabase) -> None:
        self.db = db

    @recovering
    def recall(
        self,
        message: str,
        *,
        skip: Callable[[str, str, int], bool] | None = None,
        limit: int = MAX_HITS,
        evidence: Evidence = EVIDENCE,
    ) -> list[RecallHit]:
        """The strongest passages for ``message`` (at most ``limit``, best first) among the logged lines
        ``skip(source, log, line)`` does not leave out (line 1-based); none when nothing answers it
        strongly enough (``evidence``; a ``skip`` with a ``words_needed(source, log)`` method says
        which logs need more, see :class:`Evidence`)."""
        weights = word_weights(message) if evidence.weighted else {}
        words = [w for w in candidate_words(message) if weights.get(w, 1.0) > 0]
        if not words:
            return []
        # one statement: each word's first RARE_DOCS + 1 lines (a capped lookup: no word is counted in full)
        part = "SELECT {i}, rowid FROM (SELECT rowid FROM msg_fts WHERE msg_fts MATCH ? LIMIT {n})"
        sql = " UNION ALL ".join(part.format(i=i, n=RARE_DOCS + 1) for i in range(len(words)))
        found: dict[int, set[int]] = defaultdict(set)
        for i, rowid in self.db.conn.execute(sql, [phrase(w) for w in words]):
            found[i].add(rowid)
        rare = {words[i]: rows for i, rows in found.items() if len(rows) <= RARE_DOCS}
        if not rare:
            return []
        worth = {w: weights.get(w, 1.0) for w in rare}
        # a name no logged line holds: the message asks about something this session never spoke of
        # ("learning Rust": lines about learning something else) — each asks more of a line; a plain
        # word is not enough ("what is my tax id? I need it for the forms": the forms are new, not the id)
        names = named(message)
        unseen = UNSEEN_WEIGHT * sum(1 for i, w in enumerate(words) if i not in found and w in names)
        unique = UNIQUE_DOCS if evidence.weighted and self._lines() >= UNIQUE_MIN_LINES else 0
        single = {
            w
            for w in rare
            if evidence.single_word and worth[w] >= 1.0 and (_specific(w, message) or len(rare[w]) <= unique)
        }
        needed = getattr(skip, "words_needed", None)

        def strong(source: str, log: str, rowid: int, words: set[str], user: bool) -> float | None:
            """The weight the words must reach together in one place of the line (0: no such need),
            or None: not evidence enough."""
            base = evidence.words if needed is None else max(evidence.words, needed(source, log, evidence))
            need = base + unseen if evidence.weighted else base
            if sum(worth[w] for w in words) >= need:
                return need if evidence.weighted else 0.0
            if len(words) > 1 or base > evidence.words or (evidence.weighted and not words <= single):
                return None
            return 0.0 if min(len(rare[w]) for w in words) <= (USER_RARE_DOCS if user else VERY_RARE_DOCS) else None

        def close(rowid: int, words: set[str], need: float) -> bool:
            """Whether the words count in the line: one word alone only where it stands as written (the
            index's stemmer joins "political leaning" and "people to lean on"); in a long line, words of
            ``need`` standing near each other (an agent's dump holds every word somewhere)."""
            if not evidence.weighted:
                return True
            text = self._content(rowid).lower()
            if need <= 0:
                return all(stands_as_written(text, w) for w in words)
            return clustered(text, {w: worth[w] for w in words}, need)

        plain = evidence.words + unseen if evidence.weighted else math.inf
        return self._best_passages(rare, skip, limit, strong, close, plain)

    def _best_passages(
        self,
        rare: dict[str, set[int]],
        skip: Callable[[str, str, int], bool] | None,
        limit: int,
        strong: Callable[[str, str, int, set[str], bool], float | None],
        close: Callable[[int, set[str], float], bool],
        plain: float,
    ) -> list[RecallHit]:
        """The lines holding the most (and rarest) of the rare words — a line the user wrote weighs
        more (facts are stated by the user; replies repeat words), except in a log that needs more than
        ``plain`` evidence (an imported agent session, where the user's lines are requests and the facts
        are in the agent's) — each with its neighbour. A second passage only when it is a strong hit too
        and nearly as good (a tie is not broken by chance)."""
        weight = {word: math.log(1 + RARE_DOCS / len(rows)) for word, rows in rare.items()}
        holding: dict[int, set[str]] = defaultdict(set)
        for word, rows in rare.items():
            for rowid in rows:
                holding[rowid].add(word)
        roles = self._roles(list(holding))
        logs = self._logs(list({rowid >> _LINE_BITS for rowid in holding}))
        taken_back = self._withdrawn(logs)
        scored = []
        for rowid, words in holding.items():
            source, log = logs.get(rowid >> _LINE_BITS, ("", ""))
            if not log or taken_back(rowid) or (skip is not None and skip(source, log, (rowid & _LINE_MASK) + 1)):
                continue
            user = roles.get(rowid) == "user"
            need = strong(source, log, rowid, words, user)
            if need is None:
                continue  # not evidence enough: one word many lines share, generic words, URL parts
            score = sum(weight[w] for w in words) * (USER_LINE_WEIGHT if user and need <= plain else 1.0)
            scored.append((score, -rowid, user, need))
        hits: list[RecallHit] = []
        for tried, (score, negative, user, need) in enumerate(sorted(scored, reverse=True)):
            rowid = -negative
            if len(hits) >= limit or (hits and score < NEAR_BEST * hits[0].score) or tried >= MAX_TRIED:
                break
            if not close(rowid, holding[rowid], need):
                continue  # the words are scattered over a long line (an agent's dump), or one is not as written
            num, line = rowid >> _LINE_BITS, rowid & _LINE_MASK
            first = line if user else max(0, line - 1)  # a user's line and the reply; a reply and its question
            if any(h.num == num and abs(h.first_index - first) < PASSAGE_LINES for h in hits):
                continue  # overlaps a passage already taken
            source, log = logs[num]
            hits.append(self._recall_hit(source, log, num, first, holding[rowid], score, taken_back))
        return hits

    def _withdrawn(self, logs: dict[int, tuple[str, str]]) -> Callable[[int], bool]:
        """Whether a message row of these documents was withdrawn."""
        key = {num: AMBIENT_LOG if source == "ambient" else num for num, (source, _) in logs.items()}
        ranges = withdrawn_ranges(self.db.conn, key.values())

        def taken_back(rowid: int) -> bool:
            num = rowid >> _LINE_BITS
            return num in key and in_ranges(ranges[key[num]], rowid & _LINE_MASK)

        return taken_back

    @recovering
    def withdrawn_lines(self, log: str, first: int, last: int) -> set[int]:
        """The lines of ``first..last`` (1-based) of ``log`` ("ambient" or an effort id) that a withdrawal
        took back, their markers included, as far as the index has read the log."""
        return self.withdrawals_read(log, first, last)[0]

    @recovering
    def withdrawals_read(self, log: str, first: int, last: int) -> tuple[set[int], int, int]:
        """What the index has read of ``log``: the withdrawn lines of ``first..last`` among them, and
        how far it read (bytes, lines); the markers after that are read from the log itself
        (:func:`..session.withdrawn.withdrawn_lines`)."""
        if log == "ambient":
            key = AMBIENT_LOG
            found = self.db.conn.execute("SELECT log_offset, log_lines FROM ambient_log").fetchone()
        else:
            found = self.db.conn.execute(
                "SELECT num, log_offset, log_lines FROM efforts WHERE effort_id = ?", (log,)
            ).fetchone()
            if found is None:
                return set(), 0, 0
            key, found = int(found[0]), found[1:]
        offset, lines = (int(found[0]), int(found[1])) if found else (0, 0)
        ranges = withdrawn_ranges(self.db.conn, [key])[key]
        return {n for a, b in ranges for n in range(max(a + 1, first), min(b + 1, last) + 1)}, offset, lines

    def _lines(self) -> int:
        """The logged lines the index holds (a sum over its documents' rows, not a count of lines)."""
        return int(self.db.conn.execute("SELECT coalesce(sum(indexed_lines), 0) FROM efforts").fetchone()[0])

    def _content(self, rowid: int) -> str:
        found = self.db.conn.execute("SELECT content FROM msg_fts WHERE rowid = ?", (rowid,)).fetchone()
        return str(found[0] or "") if found else ""

    def _roles(self, rowids: list[int]) -> dict[int, str]:
        marks = ",".join("?" * len(rowids))
        return dict(
            self.db.conn.execute(f"SELECT rowid, role FROM msg_fts WHERE rowid IN ({marks})", rowids).fetchall()
        )

    def _logs(self, nums: list[int]) -> dict[int, tuple[str, str]]:
        """(source, log) of each document number: an effort's id, or "ambient" for a block."""
        marks = ",".join("?" * len(nums))
        rows = self.db.conn.execute(f"SELECT num, effort_id, source FROM efforts WHERE num IN ({marks})", nums)
        return {num: (source, "ambient" if source == "ambient" else effort_id) for num, effort_id, source in rows}

    def _recall_hit(
        self,
        source: str,
        log: str,
        num: int,
        line: int,
        words: set[str],
        score: float,
        taken_back: Callable[[int], bool],
    ) -> RecallHit:
        base = num << _LINE_BITS
        rows = self.db.conn.execute(
            "SELECT rowid, role, content FROM msg_fts WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
            (base | line, base | (line + PASSAGE_LINES - 1)),
        ).fetchall()
        messages = tuple(
            ((rowid & _LINE_MASK) + 1, str(role or ""), str(content or ""))
            for rowid, role, content in rows
            if not taken_back(rowid)
        )
        first, last = messages[0][0], messages[-1][0]
        return RecallHit(source, log, (first, last), messages, tuple(sorted(words)), score, num)
