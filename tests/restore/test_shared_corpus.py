"""Real transcripts from /work/shared/corpus: hand-counted turns, artifacts and speed.

Skipped when the corpus is not beside the clone and ``$CCM_CORPUS_DIR`` is unset.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

from ccm_tui.restore.parse import detect_format, parse_transcript
from tests.helpers.transcripts import corpus_dir

CORPUS = corpus_dir()
TOLERANCE = 0.15
MAX_SECONDS = 1.0
# SOURCES.tsv names formats by corpus folder; these are the parser names.
FORMAT_NAMES = {"claude-code-jsonl": "claude-code", "opencode": "opencode-export"}
# The two Claude Code sessions only ran Bash (their single Read failed), so they
# record no file artifacts; every other corpus file edits or reads files.
NO_FILE_TOOLS = {"claude-code-jsonl/m-claude_f551142a.jsonl", "claude-code-jsonl/m-claude_ff59cfd2.jsonl"}


def _rows() -> list[dict[str, str]]:
    if CORPUS is None:
        return []
    with (CORPUS / "SOURCES.tsv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.mark.skipif(CORPUS is None, reason="shared transcript corpus not available")
@pytest.mark.parametrize("row", _rows(), ids=lambda row: row["file"])
def test_corpus_file_parses_to_its_hand_counted_turns(row: dict[str, str]) -> None:
    assert CORPUS is not None
    path: Path = CORPUS / row["file"]
    expected_format = FORMAT_NAMES.get(row["format"], row["format"])
    hand_count = int(row["user_turns"])

    started = time.perf_counter()
    parsed = parse_transcript(path)
    elapsed = time.perf_counter() - started

    assert detect_format(path) == expected_format
    assert parsed.format == expected_format
    assert abs(len(parsed.turns) - hand_count) <= TOLERANCE * hand_count, (len(parsed.turns), hand_count)
    artifacts = sum(len(turn.artifacts) for turn in parsed.turns)
    if row["file"] in NO_FILE_TOOLS:
        assert artifacts == 0
    else:
        assert artifacts > 0
    assert elapsed < MAX_SECONDS


def test_corpus_is_listed_when_present() -> None:
    if CORPUS is None:
        pytest.skip("shared transcript corpus not available")
    assert len(_rows()) >= 8
