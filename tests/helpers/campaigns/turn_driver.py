"""A process that runs turns forever on one session, for kill -9 fault injection.

    python -m tests.helpers.campaigns.turn_driver SESSION_DIR BASE_URL SEED [fold]

Each finished turn prints ``ACK <message>`` (flushed) *after* ``run_turn``
returned, i.e. after the exchange was reported done. A recovery report, if
any, is printed as ``RECOVERY ...`` at start, and an orphaned turn is re-sent
first, as the TUI's Retry does (a re-send of a turn that was in fact logged
shows up as a duplicated turn). With ``fold`` the messages are chat about one topic after another
(for a model without tools: the app folds the ambient chat that left the window into efforts).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from pathlib import Path

TOPICS = [
    ["Japan trip: Kyoto temples in April", "Kyoto or Osaka for the Japan food?", "Japan rail pass for Kyoto"],
    ["Sourdough starter smells of acetone", "Sourdough flour: rye for the starter?", "Sourdough loaf came out flat"],
    ["Tax return deductions for a home office", "Tax deadline for freelancers", "Tax receipts: keep how long?"],
    ["Garden tomatoes have yellow leaves", "Garden compost per raised bed", "Garden slugs eat the lettuce"],
]
TOPIC_TURNS = 8  # messages about one topic before the next


def message_for(seed: int, n: int, rng: random.Random, fold: bool) -> str:
    if fold:
        topic = TOPICS[(seed + n // TOPIC_TURNS) % len(TOPICS)]
        return f"m{seed}-{n} {rng.choice(topic)}"
    return f"m{seed}-{n} " + rng.choice(["OPEN", "CLOSE", "ASIDE", "chat", "chat", "chat", "EXPAND"])


async def main(session_dir: Path, base_url: str, seed: int, fold: bool = False) -> None:
    from ccm_tui.config import Settings
    from ccm_tui.core.engine.opening import start_engine

    settings = Settings(model="openai/fake-model", api_base=base_url, token_budget=6000, max_retries=0)
    engine = start_engine(session_dir, settings, retry_base=0)
    report = engine.recovery
    if report.changed:
        print("RECOVERY " + report.one_line(), flush=True)
    if report.orphan is not None:  # what the TUI's Retry does: re-send the orphaned message
        result = await engine.run_turn(report.orphan.text)
        if result.ok:
            print(f"ACK {report.orphan.text}", flush=True)
    rng = random.Random(seed)
    n = 0
    while True:
        n += 1
        message = message_for(seed, n, rng, fold)
        result = await engine.run_turn(message)
        if result.ok:
            print(f"ACK {message}", flush=True)
        if fold:
            await engine.assist()  # what the controller does after a turn: fold chat that left the window
            engine.settle()


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4:] == ["fold"]))
