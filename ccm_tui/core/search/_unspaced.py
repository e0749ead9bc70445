"""Scripts written without spaces between words: CJK (Han, Hiragana, Katakana, Hangul), Thai, Lao,
Khmer, Myanmar.

FTS5's ``unicode61`` tokenizer makes a whole run of such letters between two
punctuation marks one token (``日本語のテキスト``), so a word inside it could never
be found, and it splits Thai or Khmer at every vowel or tone mark. The index
therefore keeps, beside each text, a ``grams`` column: every unspaced run as
overlapping pairs of characters plus its last character alone (``日本 本語 語の
のテ テキ キス スト ト``). A *character* here is a letter with the combining marks
that follow it, and those marks are spelled as private-use code points in the
column (``Co``: token characters to ``unicode61``), so they stay inside the token.

A query run becomes its character pairs (the words of the query) and pairs of
adjacent pairs (its phrases): ``日本語`` is ``日本``, ``本語`` and ``"日本 本語"``. A
single character is a prefix query (``日*``), which the trailing lone character
of each run makes complete. Latin letters glued to a run (``Python3の``, one
``unicode61`` token) are repeated in ``grams`` on their own, so ``python3`` finds
them. Text without unspaced letters has an empty ``grams`` column, so the
ranking of everything else is unchanged.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence

#: Whole blocks of letters (no punctuation inside): CJK ideographs and Hangul syllables.
_LETTER_BLOCKS = (
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3),
    (0xF900, 0xFAFF),
    (0x20000, 0x323AF),
)
#: Blocks mixing letters, marks and punctuation: their letters and digits are taken by category.
_MIXED_BLOCKS = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x3000, 0x303F),  # CJK symbols: iteration marks 々 〻, ideographic numbers 〇 〡
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x31FF),  # Bopomofo, Hangul compatibility Jamo, Katakana extensions
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xA9E0, 0xA9FF),  # Myanmar extended B
    (0xAA60, 0xAA7F),  # Myanmar extended A
    (0xD7B0, 0xD7FF),  # Hangul Jamo extended B
    (0xFF66, 0xFFDC),  # half-width Katakana and Hangul
)
_MARK_PLANE = 0xF0000  # a combining mark m is stored in `grams` as chr(_MARK_PLANE + ord(m))
_OPEN, _CLOSE = "\x02", "\x03"  # the match markers of results.py


def _class(points: Sequence[int]) -> str:
    """A regex character class body for sorted code points (consecutive ones as ranges)."""
    parts, start, prev = [], -2, -2
    for cp in [*points, -1]:
        if cp == prev + 1:
            prev = cp
            continue
        if start >= 0:
            parts.append(re.escape(chr(start)) + ("-" + re.escape(chr(prev)) if prev > start else ""))
        start = prev = cp
    return "".join(parts)


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(run, segment, has-a-letter) patterns, built on first use (about 2,000 code points looked at)."""
    letters: list[int] = []
    marks: list[int] = []
    for lo, hi in _MIXED_BLOCKS:
        for cp in range(lo, hi + 1):
            category = unicodedata.category(chr(cp))
            if category[0] in "LN":
                letters.append(cp)
            elif category[0] == "M":
                marks.append(cp)
    letter = _class(letters) + "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in _LETTER_BLOCKS)
    run = f"(?:[{letter}][{_class(marks)}]*)+"
    segment = re.compile(f"(?P<run>{run})|[^\\W_{letter}]+")
    return re.compile(run), segment, re.compile(f"[{letter}]")


def is_unspaced(term: str) -> bool:
    """True for a query term made of unspaced-script characters (a pair, a lone character, or a phrase)."""
    return bool(term) and _patterns()[2].match(term) is not None


def characters(run: str) -> list[str]:
    """A run split into characters: each letter with the combining marks that follow it."""
    out: list[str] = []
    for ch in run:
        if out and unicodedata.category(ch)[0] == "M":
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _grams(run: str) -> list[str]:
    """Overlapping pairs of characters, then the last character alone (``日本語`` → 日本 本語 語)."""
    chars = characters(run)
    return [a + b for a, b in zip(chars, chars[1:])] + chars[-1:]


def _spelled(gram: str) -> str:
    """A gram as stored in the ``grams`` column: combining marks moved to private-use code points."""
    return "".join(chr(_MARK_PLANE + ord(ch)) if unicodedata.category(ch)[0] == "M" else ch for ch in gram)


def segments(text: str) -> Iterator[tuple[str, bool, bool]]:
    """(segment, is an unspaced run, touches a run) for the word segments of ``text``, in order."""
    found = [(m.group(), m.start(), m.end(), m.group("run") is not None) for m in _patterns()[1].finditer(text)]
    for k, (segment, start, end, unspaced) in enumerate(found):
        touches = (k > 0 and found[k - 1][3] and found[k - 1][2] == start) or (
            k + 1 < len(found) and found[k + 1][3] and found[k + 1][1] == end
        )
        yield segment, unspaced, touches


def index_grams(text: str) -> str | None:
    """The ``grams`` column of a text: its unspaced runs as grams, plus the Latin words glued to a run;
    None when the text has no unspaced letter (then the index holds what it always did)."""
    if text.isascii() or _patterns()[2].search(text) is None:
        return None
    tokens: list[str] = []
    for segment, unspaced, touches in segments(text):
        if unspaced:
            tokens.extend(_spelled(g) for g in _grams(segment))
        elif touches:
            tokens.append(segment)
    return " ".join(tokens)


def run_terms(run: str) -> tuple[list[str], list[str]]:
    """A query run as (words, phrases): its character pairs, and each two adjacent pairs as a phrase;
    a single character is one word (searched as a prefix)."""
    chars = characters(run)
    if len(chars) == 1:
        return chars, []
    pairs = [a + b for a, b in zip(chars, chars[1:])]
    return pairs, [f"{a} {b}" for a, b in zip(pairs, pairs[1:])]


def fts_phrase(term: str) -> str:
    """An unspaced term as an FTS5 query on the ``grams`` column (a lone character as a prefix)."""
    body = " ".join(_spelled(gram) for gram in term.split())
    prefix = " *" if len(characters(term)) == 1 else ""
    return f'grams : "{body}"{prefix}'


def mark(text: str, terms: Sequence[str]) -> str:
    """``text`` with every occurrence of the unspaced words among ``terms`` wrapped in the match markers
    (a lone character with its combining marks; overlapping occurrences merged into one)."""
    wanted = [t for t in terms if t and " " not in t]
    if not wanted or text.isascii():
        return text
    marked = [False] * len(text)
    for term in wanted:
        start = text.find(term)
        while start >= 0:
            end = start + len(term)
            while end < len(text) and unicodedata.category(text[end])[0] == "M":
                end += 1
            marked[start:end] = [True] * (end - start)
            start = text.find(term, start + 1)
    out, inside = [], False
    for ch, on in zip(text, marked):
        if on != inside:
            out.append(_OPEN if on else _CLOSE)
            inside = on
        out.append(ch)
    if inside:
        out.append(_CLOSE)
    return "".join(out)
