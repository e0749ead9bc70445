"""The effort model: one entry of the effort list (``manifest.yaml``), and reading one from a file.

An effort is a topic with a natural end. The list keeps one entry per effort; its raw log lives in
``efforts/<id>.jsonl``. Ids are slugs that can never name a path outside ``efforts/``, whatever the
model called the effort (how a name becomes an id: :mod:`ccm_tui.core.efforts.names`).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, fields
from typing import Any

from ..storage.durable import StoreError

OPEN = "open"
CONCLUDED = "concluded"
STATUSES = (OPEN, CONCLUDED)

SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # always fullmatch: "$" would let "abc\n" through
# Ids that name something else wherever an effort id is read (a read, a log's name, a search hit): no
# effort the user or a model names takes them; an import named so takes the next id ("ambient-2").
RESERVED_IDS = {
    "ambient": "the chat between efforts",
    "notes": "the effort agents' notes go to (ccm-tui mcp's remember)",
}
NEVER_AN_EFFORT = frozenset({"ambient"})  # reserved ids no entry may have ("notes" is the notes effort's)


class ManifestError(StoreError):
    """manifest.yaml cannot be understood; the message names the file and the problem."""


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
    pinned: bool = False  # its summary stays in working memory (never evicted by salience)
    summary_by: str | None = None  # "user": the summary is the user's edit (the model's is in the event log)
    merged_into: str | None = None  # its lines were merged into that effort: it is kept only as a pointer

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
        for optional in ("pinned", "summary_by", "merged_into"):  # written only when set
            if not data[optional]:
                del data[optional]
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
    if eid in NEVER_AN_EFFORT:
        raise ManifestError(
            f"{where}: entry {index + 1} has the reserved id {eid!r} (it names {RESERVED_IDS[eid]});"
            " run `ccm-tui repair` to set the file right"
        )
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
    effort.pinned = effort.pinned is True
    effort.summary_by = _text(effort.summary_by)
    merged = _text(effort.merged_into)
    effort.merged_into = merged if merged and SLUG_RE.fullmatch(merged) else None
    for key in ("raw_tokens", "summary_tokens", "messages", "reopen_count", "checkpoint_upto"):
        value = getattr(effort, key)
        if not isinstance(value, int) or value < 0:
            setattr(effort, key, 0)
    return effort
