"""What a person calls an effort: ids made from names (slugs), the reserved ids, and telling whether two
names mean the same effort. The lifecycle and the effort operations use it; the effort list does not."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container, Iterator

from anyascii import anyascii

from ..manifest.effort import RESERVED_IDS  # noqa: F401  (re-exported: the ids no effort a person names takes)

MAX_NAME_CHARS = 200


def _ascii(name: str) -> str:
    """``name`` in ASCII: accents folded, other scripts transliterated ("Отпуск" → "Otpusk").

    Each CJK ideograph is one word, so it is kept apart from its neighbours
    ("東京旅行" → "dong jing lu xing", not one run of letters)."""
    parts = []
    for ch in unicodedata.normalize("NFC", name):
        if ch.isascii():
            parts.append(ch)
        elif unicodedata.name(ch, "").startswith("CJK"):
            parts.append(f" {anyascii(ch)} ")
        else:
            parts.append(anyascii(ch))
    return "".join(parts)


def slugify(name: str) -> str:
    """Turn whatever name the model gave into ``[a-z0-9][a-z0-9-]{0,63}``.

    Accents are folded ("Café" → "cafe") and other scripts transliterated
    ("Отпуск в Японии" → "otpusk-v-yaponii"); everything that is not a letter or
    a digit becomes a single hyphen, so ``../../etc/passwd`` becomes
    ``etc-passwd``. An empty result becomes ``effort``. The human name is kept
    beside the id and is what the UI shows.
    """
    slug = re.sub(r"[^a-z0-9]+", "-", _ascii(name or "").lower()).strip("-")
    slug = slug[:64].rstrip("-")
    return slug or "effort"


def slug_sequence(name: str) -> Iterator[str]:
    """The ids a name may take, in the order they are tried: ``trip``, ``trip-2``, ``trip-3`` …"""
    base = slugify(name)
    yield base
    n = 2
    while True:
        suffix = f"-{n}"
        yield base[: 64 - len(suffix)].rstrip("-") + suffix
        n += 1


def unique_slug(name: str, taken: Container[str]) -> str:
    """The first id of :func:`slug_sequence` not in ``taken`` (a set, or the effort table)."""
    return next(candidate for candidate in slug_sequence(name) if candidate not in taken)


_LEADING_WORDS = ("the-", "a-", "an-", "my-", "our-")
_TRAILING_WORDS = ("-effort", "-topic")
SAME_NAME_COPIES = 20  # "trip", "trip-2" … "trip-20": the ids a lookup by name looks at


def _singular(word: str) -> str:
    """A trivial English plural read as its singular ("gardens" → "garden", "bugs" → "bug",
    "boxes" → "box", "queries" → "query"); anything short or ending in "ss" kept."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def name_key(name: str) -> str:
    """What a person means by an effort's name, for telling whether two names are the same effort:
    the slug (so case, spaces, ``-`` and ``_`` do not count), without a leading article or a trailing
    "effort", its last word singular. "Vegetable garden", "vegetable_gardens" and "the
    vegetable-garden effort" are one name."""
    slug = slugify(name)
    for word in _LEADING_WORDS:
        if slug.startswith(word) and len(slug) > len(word):
            slug = slug[len(word) :]
    for word in _TRAILING_WORDS:
        if slug.endswith(word) and len(slug) > len(word):
            slug = slug[: -len(word)]
    head, _, last = slug.rpartition("-")
    return f"{head}-{_singular(last)}" if head else _singular(last)


def same_name_ids(name: str) -> list[str]:
    """The ids an effort that ``name`` means could have (its slug, the singular and plural of its last
    word, and their ``-2``… copies), for a lookup by id; the caller compares :func:`name_key`."""
    key = name_key(name)
    bases = dict.fromkeys((slugify(name), key, f"{key}s", f"{key}es"))
    if key.endswith("y"):
        bases[key[:-1] + "ies"] = None
    ids: list[str] = []
    for base in bases:
        sequence = slug_sequence(base)
        ids += [next(sequence) for _ in range(SAME_NAME_COPIES)]
    return ids
