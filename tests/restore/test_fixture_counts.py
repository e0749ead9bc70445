"""Every real transcript kept in the repository parses to its hand count (±10%) and raises no sanity warning.

The same check as ``benchmarks/bench_parse.py``, so CI guards it; the shared
corpus is checked too when it is beside the clone (no false alarms there either).
The hand counts follow the written rules of ``COUNTING.md``; each file is either
used while developing the parsers (``dev``) or held out (only counted), as its
``split`` column says.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ccm_tui.restore.parse import parse_transcript
from tests.helpers.transcripts import FIXTURES, corpus_dir

TOLERANCE = 0.10


def _rows(table: Path) -> list[tuple[Path, int]]:
    with table.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [
        (table.parent / row["file"], int(row.get("human_turns") or row.get("user_turns") or 0))
        for row in rows
        if row.get("file")
    ]


NOT_TRANSCRIPTS = {"SOURCES.tsv", "COUNTING.md"}
FIXTURE_ROWS = _rows(FIXTURES / "SOURCES.tsv")
CORPUS = corpus_dir()
CORPUS_FILES = sorted(path for path in CORPUS.glob("*/*") if path.is_file()) if CORPUS else []


@pytest.mark.parametrize(("path", "hand"), FIXTURE_ROWS, ids=lambda value: getattr(value, "name", str(value)))
def test_fixture_parses_within_ten_percent_of_its_hand_count(path: Path, hand: int) -> None:
    parsed = parse_transcript(path)
    assert abs(len(parsed.turns) - hand) <= TOLERANCE * hand, (parsed.format, len(parsed.turns), hand)


def test_fixture_table_lists_real_transcripts_of_several_formats() -> None:
    with (FIXTURES / "SOURCES.tsv").open(encoding="utf-8", newline="") as handle:
        synthetic = {row["file"] for row in csv.DictReader(handle, delimiter="\t") if row["repo"] == "(synthetic)"}
    listed = {path.name for path, _ in FIXTURE_ROWS}
    on_disk = {path.name for path in FIXTURES.iterdir() if path.is_file() and path.name not in NOT_TRANSCRIPTS}
    assert on_disk <= listed, f"fixtures without a row in SOURCES.tsv: {sorted(on_disk - listed)}"
    formats = set()
    for path, _ in FIXTURE_ROWS:
        assert path.is_file(), path
        assert path.stat().st_size < 64 * 1024, f"{path.name} is over the fixture size limit"
        if path.name not in synthetic:
            formats.add(parse_transcript(path).format)
    assert len(FIXTURE_ROWS) - len(synthetic) >= 25 and len(formats) >= 8


def test_every_fixture_is_in_the_development_or_the_held_out_group() -> None:
    with (FIXTURES / "SOURCES.tsv").open(encoding="utf-8", newline="") as handle:
        splits = [row["split"] for row in csv.DictReader(handle, delimiter="\t")]
    assert set(splits) == {"dev", "heldout"}
    assert splits.count("heldout") >= 25
    assert "## Per format" in (FIXTURES / "COUNTING.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "path", sorted(p for p in FIXTURES.iterdir() if p.is_file() and p.name not in NOT_TRANSCRIPTS), ids=lambda p: p.name
)
def test_no_sanity_warning_on_a_fixture(path: Path) -> None:
    assert parse_transcript(path).warnings == []


@pytest.mark.skipif(CORPUS is None, reason="shared transcript corpus not available")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_no_sanity_warning_on_the_corpus(path: Path) -> None:
    assert parse_transcript(path).warnings == []
