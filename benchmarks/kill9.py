"""kill -9 fault injection at scale: 200 kills (CI runs 20 in tests/faults/test_kill9.py).

    python benchmarks/kill9.py [--kills 200] [--seed 1]

Prints kills survived / corrupt lines / lost acknowledged turns (want N / 0 / 0).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.faults.kill9 import run_campaign


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ccm-kill9-") as tmp:
        result = run_campaign(Path(tmp), args.kills, args.seed, log=lambda m: print(m, file=sys.stderr))
    print(f"kills survived      {result.kills - len(result.violations)}/{result.kills}")
    print(f"acknowledged turns  {result.acked}")
    print(f"recovery reports    {result.recoveries}")
    print(f"corrupt lines       {len(result.corrupt_files)}")
    print(f"lost turns          {len(result.lost_turns)}")
    print(f"violations          {len(result.violations)}")
    for v in result.violations[:10]:
        print(f"  - {v}")
    print(f"elapsed             {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
