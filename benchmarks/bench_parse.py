"""Parse accuracy as a number: human turns found vs hand counts, for every real transcript.

Reads ``SOURCES.tsv`` of the shared corpus (beside the clone, or ``$CCM_CORPUS_DIR``)
and of ``tests/fixtures/transcripts/`` (the small real examples kept in the repository),
parses each file with format auto-detection and prints one row per file: detected
format, turns found, hand count, relative error, parse time, and whether the file is
real or synthetic (``repo`` given as ``(synthetic)``). The last line says how many
files are within tolerance, the turns found against the hand counts, and how many
real transcripts of how many formats there are. Exits 1 when a file is off by more
than the tolerance (±10%) or fails to parse.

Usage::

    python benchmarks/bench_parse.py [--corpus DIR] [--tolerance 0.10]
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccm_tui.restore.parse import parse_transcript  # noqa: E402
from ccm_tui.restore.turns import TranscriptError  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
COUNT_COLUMNS = ("user_turns", "human_turns")
SYNTHETIC = "(synthetic)"


def default_corpus() -> Path | None:
    beside = ROOT.parent / "shared" / "corpus"
    if (beside / "SOURCES.tsv").is_file():
        return beside
    configured = os.environ.get("CCM_CORPUS_DIR")
    return Path(configured) if configured and (Path(configured) / "SOURCES.tsv").is_file() else None


def rows_of(table: Path) -> list[tuple[Path, int, bool]]:
    """(transcript path, hand count, synthetic) for every row of a SOURCES.tsv."""
    with table.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    found = []
    for row in rows:
        column = next((c for c in COUNT_COLUMNS if row.get(c)), None)
        if column is None or not row.get("file"):
            continue
        found.append((table.parent / row["file"], int(row[column]), row.get("repo") == SYNTHETIC))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--tolerance", type=float, default=0.10)
    args = parser.parse_args()
    tables = [t for t in (args.corpus and args.corpus / "SOURCES.tsv", FIXTURES / "SOURCES.tsv") if t and t.is_file()]
    entries = [entry for table in tables for entry in rows_of(table)]
    if not entries:
        print("no SOURCES.tsv found (corpus beside the clone, $CCM_CORPUS_DIR or --corpus)", file=sys.stderr)
        return 1
    width = max(len(str(path.relative_to(path.parent.parent))) for path, _, _ in entries)
    print(f"{'file':<{width}}  {'format':<20} {'found':>5} {'hand':>5} {'error':>7} {'ms':>7}  verdict")
    failures = 0
    total_found = total_hand = 0
    real_formats: dict[str, int] = {}
    for path, hand, synthetic in entries:
        name = str(path.relative_to(path.parent.parent))
        started = time.perf_counter()
        try:
            parsed = parse_transcript(path)
        except TranscriptError as error:
            failures += 1
            print(f"{name:<{width}}  {'-':<20} {'-':>5} {hand:>5} {'-':>7} {'-':>7}  FAIL {error}")
            continue
        elapsed = (time.perf_counter() - started) * 1000
        found = len(parsed.turns)
        error = (found - hand) / hand if hand else float(found)
        ok = abs(error) <= args.tolerance
        failures += not ok
        total_found += found
        total_hand += hand
        if not synthetic:
            real_formats[parsed.format] = real_formats.get(parsed.format, 0) + 1
        verdict = ("ok" if ok else f"OFF by more than ±{args.tolerance:.0%}") + (" (synthetic)" if synthetic else "")
        print(f"{name:<{width}}  {parsed.format:<20} {found:>5} {hand:>5} {error:>+7.1%} {elapsed:>7.1f}  {verdict}")
    print(
        f"{len(entries)} file(s): {len(entries) - failures} within ±{args.tolerance:.0%}, {failures} not; "
        f"turns found {total_found} vs hand-counted {total_hand}; "
        f"{sum(real_formats.values())} real transcripts of {len(real_formats)} formats"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
