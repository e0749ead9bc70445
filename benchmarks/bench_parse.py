"""Parse accuracy as a number: human requests found vs hand counts, for every real transcript.

Reads ``SOURCES.tsv`` of the shared corpus (beside the clone, or ``$CCM_CORPUS_DIR``)
and of ``tests/fixtures/transcripts/`` (the small real examples kept in the repository),
parses each file with format auto-detection and prints one row per file: its group,
detected format, turns found, hand count, relative error, parse time, and whether the file
is real or synthetic (``repo`` given as ``(synthetic)``).

The fixtures are split (``split`` column of their ``SOURCES.tsv``) into the files used
while developing the parsers (``dev``) and files only counted by hand and never used to
tune them (``heldout``); the shared corpus is its own group. A summary follows, per group
and per format: files within tolerance out of files, and requests found against requests
counted. The hand counts follow ``tests/fixtures/transcripts/COUNTING.md``. Exits 1 when
a file is off by more than the tolerance (±10%) or fails to parse.

Usage::

    python benchmarks/bench_parse.py [--corpus DIR] [--tolerance 0.10] [--split dev|heldout|corpus]
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccm_tui.restore.parse import parse_transcript  # noqa: E402
from ccm_tui.restore.turns import TranscriptError  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
COUNT_COLUMNS = ("user_turns", "human_turns")
SYNTHETIC = "(synthetic)"
CORPUS_GROUP = "corpus"
GROUPS = ("dev", "heldout", CORPUS_GROUP)


@dataclass(frozen=True)
class Entry:
    """One transcript with its hand count."""

    path: Path
    hand: int
    synthetic: bool
    group: str


@dataclass
class Tally:
    """Files within tolerance and requests found/counted, for a group or a format."""

    files: int = 0
    within: int = 0
    found: int = 0
    counted: int = 0
    formats: dict[str, Tally] = field(default_factory=dict)

    def add(self, ok: bool, found: int, hand: int) -> None:
        self.files += 1
        self.within += ok
        self.found += found
        self.counted += hand

    def line(self) -> str:
        return f"{self.within}/{self.files} files within, {self.found} found / {self.counted} counted"


def default_corpus() -> Path | None:
    beside = ROOT.parent / "shared" / "corpus"
    if (beside / "SOURCES.tsv").is_file():
        return beside
    configured = os.environ.get("CCM_CORPUS_DIR")
    return Path(configured) if configured and (Path(configured) / "SOURCES.tsv").is_file() else None


def rows_of(table: Path, group: str | None) -> list[Entry]:
    """Every row of a SOURCES.tsv with a hand count; ``group`` None takes the row's ``split`` (dev by default)."""
    with table.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    found = []
    for row in rows:
        column = next((c for c in COUNT_COLUMNS if row.get(c)), None)
        if column is None or not row.get("file"):
            continue
        row_group = group or (row.get("split") or "dev").strip()
        found.append(Entry(table.parent / row["file"], int(row[column]), row.get("repo") == SYNTHETIC, row_group))
    return found


def entries(corpus: Path | None) -> list[Entry]:
    found: list[Entry] = []
    if corpus is not None and (corpus / "SOURCES.tsv").is_file():
        found.extend(rows_of(corpus / "SOURCES.tsv", CORPUS_GROUP))
    if (FIXTURES / "SOURCES.tsv").is_file():
        found.extend(rows_of(FIXTURES / "SOURCES.tsv", None))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--tolerance", type=float, default=0.10)
    parser.add_argument("--split", choices=GROUPS, help="only this group of files")
    args = parser.parse_args()
    chosen = [entry for entry in entries(args.corpus) if args.split in (None, entry.group)]
    if not chosen:
        print("no SOURCES.tsv found (corpus beside the clone, $CCM_CORPUS_DIR or --corpus)", file=sys.stderr)
        return 1
    width = max(len(str(entry.path.relative_to(entry.path.parent.parent))) for entry in chosen)
    print(f"{'file':<{width}}  {'group':<7} {'format':<20} {'found':>5} {'hand':>5} {'error':>7} {'ms':>7}  verdict")
    tallies: dict[str, Tally] = {}
    failures = 0
    real_formats: set[str] = set()
    for entry in chosen:
        name = str(entry.path.relative_to(entry.path.parent.parent))
        tally = tallies.setdefault(entry.group, Tally())
        started = time.perf_counter()
        try:
            parsed = parse_transcript(entry.path)
        except TranscriptError as error:
            failures += 1
            tally.add(False, 0, entry.hand)
            print(
                f"{name:<{width}}  {entry.group:<7} {'-':<20} {'-':>5} {entry.hand:>5} {'-':>7} {'-':>7}  FAIL {error}"
            )
            continue
        elapsed = (time.perf_counter() - started) * 1000
        found = len(parsed.turns)
        error = (found - entry.hand) / entry.hand if entry.hand else float(found)
        ok = abs(error) <= args.tolerance
        failures += not ok
        if not entry.synthetic:
            real_formats.add(parsed.format)
            tally.add(ok, found, entry.hand)
            tally.formats.setdefault(parsed.format, Tally()).add(ok, found, entry.hand)
        verdict = ("ok" if ok else f"OFF by more than ±{args.tolerance:.0%}") + (
            " (synthetic)" if entry.synthetic else ""
        )
        print(
            f"{name:<{width}}  {entry.group:<7} {parsed.format:<20} {found:>5} {entry.hand:>5} {error:>+7.1%} "
            f"{elapsed:>7.1f}  {verdict}"
        )
    print()
    for group in GROUPS:
        if group not in tallies:
            continue
        tally = tallies[group]
        print(f"{group}: {tally.line()}")
        for fmt, per_format in sorted(tally.formats.items()):
            print(f"  {fmt:<20} {per_format.line()}")
    real = sum(tally.files for tally in tallies.values())
    print(
        f"{len(chosen)} file(s): {len(chosen) - failures} within ±{args.tolerance:.0%}, {failures} not; "
        f"{real} real transcripts of {len(real_formats)} formats"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
