"""What an import reports: statuses and their display text, rows, the tally, the cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccm_tui.restore.results import (
    STATUS_KINDS,
    ImportRow,
    ImportStatus,
    ParsedFile,
    RestoreCost,
    any_failed,
    tally,
)
from ccm_tui.restore.turns import ParsedTranscript, TurnRound

S = ImportStatus


@pytest.mark.parametrize(
    "row, text, kind",
    [
        (ImportRow(Path("a"), S.IMPORTED, effort_id="e"), "imported", "imported"),
        (ImportRow(Path("a"), S.IMPORTED, not_summarized=2), "imported (2 turn(s) not summarized)", "imported"),
        (ImportRow(Path("a"), S.SKIPPED_ALREADY, effort_id="fix-2"), "skipped: already imported as fix-2", "skipped"),
        (
            ImportRow(Path("a"), S.SKIPPED_NOT_A_TRANSCRIPT),
            "skipped: not a transcript (no known format)",
            "skipped",
        ),
        (ImportRow(Path("a"), S.SKIPPED_NO_TURNS), "skipped: no human turns", "skipped"),
        (ImportRow(Path("a"), S.FAILED, error="disk full"), "failed: disk full", "failed"),
        (
            ImportRow(Path("a"), S.NOT_TRIED),
            "not tried: the provider refuses this key or model (see the failed file)",
            "not tried",
        ),
    ],
)
def test_every_status_has_its_text_and_its_kind(row: ImportRow, text: str, kind: str) -> None:
    assert row.status_text == text
    assert row.status.kind == kind and kind in STATUS_KINDS


def test_every_status_is_covered() -> None:
    assert {status.value for status in ImportStatus} == {
        "imported",
        "skipped-already",
        "skipped-not-a-transcript",
        "skipped-no-turns",
        "failed",
        "not-tried",
    }


def test_a_row_as_json_keeps_the_bulk_shape() -> None:
    unknown = ImportRow(Path("/x/notes.txt"), S.SKIPPED_NOT_A_TRANSCRIPT)
    assert unknown.to_dict() == {
        "file": "/x/notes.txt",
        "format": "-",
        "turns": None,
        "effort_id": None,
        "status": "skipped: not a transcript (no known format)",
    }
    done = ImportRow(Path("/x/one.jsonl"), S.IMPORTED, "claude-code", 3, "fix-calc")
    assert done.to_dict() == {
        "file": "/x/one.jsonl",
        "format": "claude-code",
        "turns": 3,
        "effort_id": "fix-calc",
        "status": "imported",
    }


def test_the_tally_counts_kinds_in_order() -> None:
    rows = [
        ImportRow(Path("a"), S.IMPORTED),
        ImportRow(Path("b"), S.SKIPPED_NO_TURNS),
        ImportRow(Path("c"), S.SKIPPED_ALREADY, effort_id="x"),
        ImportRow(Path("d"), S.FAILED, error="e"),
        ImportRow(Path("e"), S.NOT_TRIED),
    ]
    assert list(tally(rows).items()) == [("imported", 1), ("skipped", 2), ("failed", 1), ("not tried", 1)]
    assert any_failed(rows) and not any_failed(rows[:3])


def test_a_parsed_file_is_the_single_file_document_with_its_name_first() -> None:
    parsed = ParsedTranscript("aider", [TurnRound(1, ["hi"], ["hello"], 1, 2)], title="t")
    document = ParsedFile(Path("/x/h.md"), parsed).to_json()
    assert list(document) == ["file", "format", "turns", "skipped", "cwd", "title"]
    assert document["turns"] == [{"turn": 1, "user": "hi", "artifacts": []}]
    assert ParsedFile(Path("/x/n.txt"), error="cannot detect").to_json() == {
        "file": "/x/n.txt",
        "error": "cannot detect",
    }


def test_cost_per_turn_and_its_line() -> None:
    cost = RestoreCost(calls=7, tokens_sent=12_345, turns=3, seconds=4.26)
    assert cost.to_dict() == {
        "model_calls": 7,
        "tokens_sent": 12_345,
        "seconds": 4.3,
        "turns": 3,
        "calls_per_turn": 2.33,
        "tokens_sent_per_turn": 4115,
    }
    assert cost.render() == (
        "Cost: 7 model call(s), 12,345 tokens sent, 4.3 s for 3 turn(s) — per turn 2.33 call(s), 4,115 tokens sent"
    )
    assert RestoreCost(2, 10, 0, 0.0).to_dict()["calls_per_turn"] == 2.0  # no turn imported: per one
