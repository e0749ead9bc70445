"""kill -9 fault injection at scale against turns (``send``), ``repair`` and ``restore``.

    python benchmarks/kill9.py [--target send|repair|restore|all] [--kills 200] [--seed 1]
                               [--events-mb 28]

CI runs small versions (tests/faults/test_kill9*.py). Prints, per target, kills / corrupt
lines / lost or duplicated turns or efforts (want N / 0 / 0 / 0); repair also counts kills
after which no manifest.yaml existed. Durations are printed against the duration of one
unkilled run measured in the same campaign.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.faults.campaigns import run_repair_campaign, run_restore_campaign
from tests.faults.kill9 import run_campaign


def progress(message: str) -> None:
    print(message, file=sys.stderr)


def send_campaign(tmp: Path, kills: int, seed: int) -> None:
    result = run_campaign(tmp, kills, seed, log=progress)
    print("send (turns)")
    print(f"  kills survived      {result.kills - len(result.violations)}/{result.kills}")
    print(f"  acknowledged turns  {result.acked}")
    print(f"  recovery reports    {result.recoveries}")
    print(f"  corrupt lines       {len(result.corrupt_files)}")
    print(f"  lost turns          {len(result.lost_turns)}")
    print(f"  duplicated turns    {len(result.duplicated_turns)}")
    print(f"  violations          {len(result.violations)}")
    for v in result.violations[:10]:
        print(f"    - {v}")


def repair_campaign(tmp: Path, kills: int, seed: int, events_mb: float) -> None:
    report = run_repair_campaign(tmp, kills, seed, events_mb=events_mb, log=progress)
    print(f"repair ({events_mb:g} MB event log; kill moments spread over 0–1.1 × an unkilled run)")
    print(f"  kills               {report.kills} ({report.finished_first} ended before their kill moment)")
    print(f"  manifest missing    {report.missing_manifest}")
    print(f"  efforts lost        {len(report.lost)}")
    print(f"  corrupt lines       {len(report.corrupt_files)}")
    print(f"  violations          {len(report.violations)}")
    for v in report.violations[:10]:
        print(f"    - {v}")


def restore_campaign(tmp: Path, kills: int, seed: int) -> None:
    report = run_restore_campaign(tmp, kills, seed, log=progress)
    print("restore (kill at 0–1.1 × an unkilled run, then import the same transcript again)")
    print(f"  kills               {report.kills} ({report.finished_first} ended before their kill moment)")
    print(f"  duplicated imports  {report.duplicated}")
    print(f"  lost imports        {len(report.lost)}")
    print(f"  corrupt lines       {len(report.corrupt_files)}")
    print(f"  violations          {len(report.violations)}")
    for v in report.violations[:10]:
        print(f"    - {v}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=["send", "repair", "restore", "all"], default="send")
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--events-mb", type=float, default=28.0, help="size of the event log repair reads")
    args = parser.parse_args()
    targets = ["send", "repair", "restore"] if args.target == "all" else [args.target]
    start = time.monotonic()
    for target in targets:
        with tempfile.TemporaryDirectory(prefix=f"ccm-kill9-{target}-") as tmp:
            if target == "send":
                send_campaign(Path(tmp), args.kills, args.seed)
            elif target == "repair":
                repair_campaign(Path(tmp), args.kills, args.seed, args.events_mb)
            else:
                restore_campaign(Path(tmp), args.kills, args.seed)
    print(f"elapsed             {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
