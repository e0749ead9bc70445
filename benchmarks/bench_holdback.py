"""The text-tool-call holdback on long streamed replies: time and characters examined per size.

    python benchmarks/bench_holdback.py [--chunk 8]

Linear means the time per 100K characters stays flat as the reply grows (issue 25, item 9: before,
25K chars took 1.1 s, 100K 14.3 s, 200K 58.7 s).
"""

from __future__ import annotations

import argparse
import time

from ccm_tui.core.turn._text_tool_calls import CallHoldback

PROSE = "A line of prose with a { brace, a [list] and a `tick`.\n  {not a call, a brace in text}\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunk", type=int, default=8, help="characters per streamed delta")
    args = parser.parse_args()
    for size in (25_000, 100_000, 200_000, 1_000_000):
        content = (PROSE * (size // len(PROSE) + 1))[:size]
        holdback = CallHoldback()
        started = time.perf_counter()
        for i in range(0, size, args.chunk):
            holdback.feed(content[i : i + args.chunk])
        holdback.flush()
        took = time.perf_counter() - started
        print(f"{size:>9,} chars: {took:6.3f} s, {holdback.examined / size:.2f} characters examined per character")


if __name__ == "__main__":
    main()
