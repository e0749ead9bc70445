"""Query processing: free text → the terms a search ranks (words, pairs of adjacent words), as FTS5 syntax."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

MAX_QUERY_TERMS = 16
MAX_BIGRAMS = 12

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


def phrase(term: str) -> str:
    """One term (a word, or two words: a phrase) as an FTS5 string literal (terms never contain quotes)."""
    return '"' + term.replace('"', '""') + '"'


def or_expression(terms: Sequence[str]) -> str:
    """An FTS5 expression matching any of ``terms``."""
    return " OR ".join(phrase(t) for t in terms)
