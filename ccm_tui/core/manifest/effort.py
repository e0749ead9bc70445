"""The effort model and the manifest that indexes efforts (``manifest.yaml``).

An effort is a topic with a natural end. The manifest keeps one entry per
effort; its raw log lives in ``efforts/<id>.jsonl``. Ids are slugs that can
never name a path outside ``efforts/``, whatever the model called the effort.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Container, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from anyascii import anyascii

from ..storage.durable import StoreError

OPEN = "open"
CONCLUDED = "concluded"
STATUSES = (OPEN, CONCLUDED)

SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # always fullmatch: "$" would let "abc\n" through
MAX_NAME_CHARS = 200
# Ids that name something else wherever an effort id is read (a read, a log's name, a search hit): no
# effort the user or a model names takes them; an import named so takes the next id ("ambient-2").
RESERVED_IDS = {
    "ambient": "the chat between efforts",
    "notes": "the effort agents' notes go to (ccm-tui mcp's remember)",
}


class ManifestError(StoreError):
    """manifest.yaml cannot be understood; the message names the file and the problem."""


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


@dataclass
class Effort:
    """One manifest entry. The first six fields are the contract; the rest are ours."""

    id: str
    status: str = OPEN
    active: bool = False
    summary: str | None = None
    raw_file: str = ""
    name: str = ""
    created: str = ""
    concluded_at: str | None = None
    reopen_count: int = 0
    raw_tokens: int = 0  # tokens of the whole raw log (for the naive figure)
    summary_tokens: int = 0
    messages: int = 0  # lines in the raw log
    source: dict[str, Any] | None = None  # provenance of imported efforts
    checkpoint: str | None = None  # compaction summary of the oldest part of an open effort
    checkpoint_upto: int = 0  # ... covering its first N log lines

    def __post_init__(self) -> None:
        if not self.raw_file:
            self.raw_file = f"efforts/{self.id}.jsonl"

    @property
    def is_open(self) -> bool:
        return self.status == OPEN

    @property
    def is_concluded(self) -> bool:
        return self.status == CONCLUDED

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in _FIELD_ORDER}
        for optional in ("source", "checkpoint"):
            if data[optional] is None:
                del data[optional]
        if not data["checkpoint_upto"]:
            del data["checkpoint_upto"]
        return data


_FIELD_ORDER = tuple(f.name for f in fields(Effort))
_FIELD_NAMES = set(_FIELD_ORDER)


def _text(value: Any) -> str | None:
    """A text field as read from YAML: strings as they are, dates and numbers as text, None for
    anything else (lists, mappings)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def effort_from_dict(raw: Any, where: str, index: int) -> Effort:
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: entry {index + 1} is not a mapping")
    eid = raw.get("id")
    if not isinstance(eid, str) or not SLUG_RE.fullmatch(eid):
        raise ManifestError(f"{where}: entry {index + 1} has an invalid id {eid!r}")
    status = raw.get("status", OPEN)
    if status not in STATUSES:
        raise ManifestError(f"{where}: effort {eid!r} has unknown status {status!r}")
    known = {k: v for k, v in raw.items() if k in _FIELD_NAMES}
    known["raw_file"] = f"efforts/{eid}.jsonl"  # never trust a path from disk
    effort = Effort(**known)
    effort.active = effort.active is True and effort.is_open
    # a hand edit (or another tool) may leave any YAML type in a field: keep text as text
    effort.summary = _text(effort.summary)
    effort.checkpoint = _text(effort.checkpoint)
    effort.concluded_at = _text(effort.concluded_at)
    effort.created = _text(effort.created) or ""
    effort.name = _text(effort.name) or eid
    if effort.source is not None and not isinstance(effort.source, dict):
        effort.source = None
    for key in ("raw_tokens", "summary_tokens", "messages", "reopen_count", "checkpoint_upto"):
        value = getattr(effort, key)
        if not isinstance(value, int) or value < 0:
            setattr(effort, key, 0)
    return effort


def validated(entries: list[Any], path: Path) -> list[Effort]:
    efforts = [effort_from_dict(e, str(path), i) for i, e in enumerate(entries)]
    seen: set[str] = set()
    for e in efforts:
        if e.id in seen:
            raise ManifestError(f"{path}: effort id {e.id!r} appears twice")
        seen.add(e.id)
    # at most one active effort, whatever the file says
    active = [e for e in efforts if e.active]
    for e in active[:-1]:
        e.active = False
    return efforts
