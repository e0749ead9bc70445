"""What an import reports: the status of each file, its line in the table, its cost, its errors.

A status is an :class:`ImportStatus`; its display text (``skipped: already imported
as <id>``, ``failed: <cause>`` …) is made here, in one place, from the row's facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccm_tui.restore.turns import ParsedTranscript, to_parse_only_json

from ..errors import CcmError

if TYPE_CHECKING:
    from ccm_tui.restore.landing import Landed
    from ccm_tui.restore.pipeline import RestoreOutcome


class RestoreFailed(CcmError):
    """One transcript could not be imported; nothing of it was written. The message is one line."""


class NotATranscript(RestoreFailed):
    """No known format recognises the file (in a directory scan: a settings file, a todo list …)."""


class ProviderRefused(RestoreFailed):
    """The provider refuses every request (bad key, unknown model): a bulk import stops there."""


NOT_TRIED_TEXT = "not tried: the provider refuses this key or model (see the failed file)"


class ImportStatus(Enum):
    """How the import of one file ended."""

    IMPORTED = "imported"
    SKIPPED_ALREADY = "skipped-already"
    SKIPPED_NOT_A_TRANSCRIPT = "skipped-not-a-transcript"
    SKIPPED_NO_TURNS = "skipped-no-turns"
    FAILED = "failed"
    NOT_TRIED = "not-tried"

    @property
    def kind(self) -> str:
        """The column of the run's tally: ``imported``, ``skipped``, ``failed`` or ``not tried``."""
        return _KINDS[self]

    def text(self, *, effort_id: str | None = None, error: str = "", not_summarized: int = 0) -> str:
        """The status as the table and ``--json`` show it."""
        if self is ImportStatus.IMPORTED:
            return "imported" + (f" ({not_summarized} turn(s) not summarized)" if not_summarized else "")
        if self is ImportStatus.SKIPPED_ALREADY:
            return f"skipped: already imported as {effort_id}"
        if self is ImportStatus.FAILED:
            return f"failed: {error}"
        return _FIXED_TEXTS[self]


_KINDS = {
    ImportStatus.IMPORTED: "imported",
    ImportStatus.SKIPPED_ALREADY: "skipped",
    ImportStatus.SKIPPED_NOT_A_TRANSCRIPT: "skipped",
    ImportStatus.SKIPPED_NO_TURNS: "skipped",
    ImportStatus.FAILED: "failed",
    ImportStatus.NOT_TRIED: "not tried",
}
STATUS_KINDS = ("imported", "skipped", "failed", "not tried")
_FIXED_TEXTS = {
    ImportStatus.SKIPPED_NOT_A_TRANSCRIPT: "skipped: not a transcript (no known format)",
    ImportStatus.SKIPPED_NO_TURNS: "skipped: no human turns",
    ImportStatus.NOT_TRIED: NOT_TRIED_TEXT,
}


@dataclass
class ImportRow:
    """One file of an import and how it ended: a line of the table that ends a bulk import."""

    file: Path
    status: ImportStatus
    format: str | None = None
    turns: int | None = None
    effort_id: str | None = None
    error: str = ""  # FAILED: the one-line cause
    not_summarized: int = 0  # IMPORTED: turns whose summary failed (the rest landed)

    @property
    def status_text(self) -> str:
        return self.status.text(effort_id=self.effort_id, error=self.error, not_summarized=self.not_summarized)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": str(self.file),
            "format": self.format or "-",
            "turns": self.turns,
            "effort_id": self.effort_id,
            "status": self.status_text,
        }


@dataclass
class ImportResult:
    """One transcript's import: its row, and for an import what landed and what the model work made."""

    row: ImportRow
    landed: Landed | None = None
    outcome: RestoreOutcome | None = None
    stops_the_run: bool = False  # FAILED because the provider refuses the key or model
    # What the parse found questionable about the transcript (sanity.check_parse), for the user:
    # filled in Importer.import_parsed, through which every import of a parsed transcript goes.
    warnings: list[str] = field(default_factory=list)

    @property
    def status(self) -> ImportStatus:
        return self.row.status

    @property
    def effort_id(self) -> str | None:
        return self.row.effort_id


@dataclass
class ParsedFile:
    """One file of a ``--parse-only`` run over several: what was parsed, or why nothing was."""

    file: Path
    parsed: ParsedTranscript | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The single-file ``--parse-only`` document with its ``file`` first, or ``{"file", "error"}``."""
        if self.parsed is None:
            return {"file": str(self.file), "error": self.error}
        return {"file": str(self.file), **to_parse_only_json(self.parsed)}


def tally(rows: list[ImportRow]) -> dict[str, int]:
    """How many rows of each kind (:data:`STATUS_KINDS`, in that order)."""
    return {kind: sum(row.status.kind == kind for row in rows) for kind in STATUS_KINDS}


def any_failed(rows: list[ImportRow]) -> bool:
    return any(row.status is ImportStatus.FAILED for row in rows)


@dataclass
class RestoreCost:
    """What an import cost: model calls, tokens sent, wall time — in total and per turn."""

    calls: int
    tokens_sent: int
    turns: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        per_turn = max(self.turns, 1)
        return {
            "model_calls": self.calls,
            "tokens_sent": self.tokens_sent,
            "seconds": round(self.seconds, 1),
            "turns": self.turns,
            "calls_per_turn": round(self.calls / per_turn, 2),
            "tokens_sent_per_turn": round(self.tokens_sent / per_turn),
        }

    def render(self) -> str:
        data = self.to_dict()
        return (
            f"Cost: {self.calls} model call(s), {self.tokens_sent:,} tokens sent, {data['seconds']} s "
            f"for {self.turns} turn(s) — per turn {data['calls_per_turn']} call(s), "
            f"{data['tokens_sent_per_turn']:,} tokens sent"
        )
