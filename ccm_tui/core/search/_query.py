"""Query processing: free text → the terms a search ranks (words, pairs of adjacent words), as FTS5 syntax.

Words are runs of letters and digits; everything else separates them, so FTS5
syntax in a query is inert. Unspaced scripts (CJK, Thai, …) are searched by
character pairs (:mod:`._unspaced`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from ..text.words import FUNCTION_WORDS as STOP_WORDS  # never searched alone
from . import _unspaced as unspaced

MAX_QUERY_TERMS = 16
MAX_BIGRAMS = 12


def parse_query(query: str, *, stop_words: bool = True) -> tuple[list[str], list[str]]:
    """(words, pairs): the distinct lower-case words of ``query`` (at most MAX_QUERY_TERMS) and the
    distinct pairs of adjacent words (``"support group"``, at most MAX_BIGRAMS). With ``stop_words``,
    STOP_WORDS are left out of the words (unless nothing else is left) but not out of the pairs. An
    unspaced run gives its character pairs as words and each two adjacent ones as a pair; no pair
    spans two scripts."""
    text = unicodedata.normalize("NFC", query).lower()
    words: list[str] = []
    stops: list[str] = []
    pairs: list[str] = []
    previous: str | None = None  # the last spaced word, while no unspaced run came after it
    for segment, is_run, _ in unspaced.segments(text):
        if is_run:
            run_words, run_pairs = unspaced.run_terms(segment)
            words.extend(run_words)
            pairs.extend(run_pairs)
            previous = None
            continue
        (stops if stop_words and segment in STOP_WORDS else words).append(segment)
        if previous is not None and previous != segment:
            pairs.append(f"{previous} {segment}")
        previous = segment
    return list(dict.fromkeys(words or stops))[:MAX_QUERY_TERMS], list(dict.fromkeys(pairs))[:MAX_BIGRAMS]


def query_terms(query: str, *, stop_words: bool = True) -> list[str]:
    """The distinct lower-case word terms of ``query`` (at most MAX_QUERY_TERMS); see :func:`parse_query`."""
    return parse_query(query, stop_words=stop_words)[0]


def phrase(term: str) -> str:
    """One term (a word, or two words: a phrase) as an FTS5 query (terms never contain quotes);
    an unspaced term queries the ``grams`` column."""
    if unspaced.is_unspaced(term):
        return unspaced.fts_phrase(term)
    return '"' + term.replace('"', '""') + '"'


def or_expression(terms: Sequence[str]) -> str:
    """An FTS5 expression matching any of ``terms``."""
    return " OR ".join(phrase(t) for t in terms)
