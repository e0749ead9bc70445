"""Per-turn core overhead (everything but the model call) as history grows.

Builds sessions with 0, 100, 1,000 and 10,000 concluded efforts of 100 messages
each (10,000 × 100 = 1,000,000 logged messages), then runs turns through the
real orchestrator with an in-process model that answers instantly, and prints
the median turn time, the ratio to the empty session, start-up time, and the
latency of ``search_efforts`` at each size.

    python benchmarks/bench_turn.py [--sizes 0,100,1000,10000] [--turns 60] [--messages 100]
    python benchmarks/bench_turn.py --sizes 10,100000 --messages 10   # the 100,000-effort targets
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ccm_tui.config import Settings
from ccm_tui.core.efforts.states import Action
from ccm_tui.core.engine.opening import open_engine
from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.manifest.effort_list import save_manifest
from ccm_tui.core.models.interface import Completion, InProcessChatModel

WORDS = (
    "auth token refresh cache database pool index query latency queue kafka consumer partition deploy "
    "docker kubernetes helm chart terraform module bucket lambda trace metric alert budget invoice tax "
    "travel kyoto osaka hotel flight recipe bread flour oven garden tomato soil water python rust golang "
    "test fixture mock server client router middleware session cookie header cors proxy tls certificate"
).split()


class InstantModel(InProcessChatModel):
    """Answers at once, so the timing is the core's own work."""

    model = "bench/instant"

    async def stream_chat(self, messages, tools, on_delta=None):
        if on_delta:
            on_delta("ok")
        return Completion(content="ok", finish_reason="stop")

    async def complete(self, messages, max_tokens=None, summary=True):
        return Completion(content="summary", finish_reason="stop")


def sentence(rng: random.Random, n: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build_session(directory: Path, efforts: int, messages: int) -> None:
    rng = random.Random(efforts)
    (directory / "efforts").mkdir(parents=True)
    entries = []
    for i in range(efforts):
        eid = f"effort-{i:05d}"
        lines = [
            json.dumps(
                {"role": "user" if j % 2 == 0 else "assistant", "content": sentence(rng), "ts": "2026-01-01T00:00:00Z"}
            )
            for j in range(messages)
        ]
        # one planted fact per effort: what recall finds when the message asks about it
        fact = {
            "role": "assistant",
            "content": f"The locker code of number {i:05d} is {rng.randint(1000, 9999)}.",
            "ts": "",
        }
        lines.insert(messages // 2, json.dumps(fact))
        (directory / "efforts" / f"{eid}.jsonl").write_text("\n".join(lines) + "\n")
        entries.append(
            Effort(
                id=eid,
                status=CONCLUDED,
                summary=sentence(rng, 20),
                raw_tokens=messages * 20,
                summary_tokens=25,
                messages=messages,
            )
        )
    save_manifest(directory / "manifest.yaml", entries)


def plain_message(i: int) -> str:
    return f"message {i}: what about the {WORDS[i % len(WORDS)]} thing?"


def fact_question(i: int) -> str:
    """A message that asks about a planted fact: recall finds it in a session that has it."""
    return f"message {i}: what about the {WORDS[i % len(WORDS)]} thing, and the locker code of number {i:05d}?"


async def run_turns(engine, turns: int, first: int = 0, message=plain_message) -> list[float]:
    """Turn times, each with the manifest flush that follows it (the controller's ``settle``)."""
    timings = []
    for i in range(first, first + turns):
        start = time.perf_counter()
        await engine.run_turn(message(i))
        engine.settle()
        timings.append(time.perf_counter() - start)
    return timings


async def conclude_times(engine, rounds: int) -> list[tuple[float, float]]:
    """Concluding an effort the user opened (its summary from the instant model), ``rounds`` times:
    the time until the outcome is reported, and the manifest write that follows it."""
    timings = []
    for i in range(rounds):
        opened = await engine.run_action(Action.OPEN, f"bench topic {i}")
        engine.settle()
        effort = engine.active_effort()
        if not opened.ok or effort is None:
            raise SystemExit(f"could not open an effort: {opened.reason}")
        start = time.perf_counter()
        outcome = await engine.run_action(Action.CONCLUDE, effort.id)
        reported = time.perf_counter()
        engine.settle()
        timings.append((reported - start, time.perf_counter() - reported))
        if not outcome.ok:
            raise SystemExit(f"could not conclude {effort.id}: {outcome.reason}")
    return timings


def recall_cost(directory: Path, settings: Settings, turns: int) -> tuple[float, float]:
    """Median turn time with recall on and off, measured in alternating blocks on one session
    (ABBA order, so that the session's growth weighs on both alike)."""
    on: list[float] = []
    off: list[float] = []
    for block in range(max(2, turns // 10)):
        order = (("auto", on), ("off", off)) if block % 2 == 0 else (("off", off), ("auto", on))
        for recall, into in order:
            engine = open_engine(directory, replace(settings, recall=recall), llm=InstantModel())
            try:
                into.extend(asyncio.run(run_turns(engine, 10, first=block * 20, message=fact_question))[2:])
            finally:
                engine.close()
    return statistics.median(on) * 1000, statistics.median(off) * 1000


def bench(size: int, messages: int, turns: int, root: Path) -> dict:
    directory = root / f"s{size}"
    t0 = time.perf_counter()
    build_session(directory, size, messages)
    build = time.perf_counter() - t0
    settings = Settings(model="bench/instant", token_budget=16_000)
    t0 = time.perf_counter()
    engine = open_engine(directory, settings, llm=InstantModel())
    startup = time.perf_counter() - t0
    try:
        timings = asyncio.run(run_turns(engine, turns))[5:]  # drop warm-up turns
        concludes = asyncio.run(conclude_times(engine, 12))[2:]
        searches = []
        for i in range(100):
            q = f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]}"
            s0 = time.perf_counter()
            engine.search(q, 8)
            searches.append(time.perf_counter() - s0)
    finally:
        engine.close()
    t0 = time.perf_counter()
    engine = open_engine(directory, settings, llm=InstantModel())
    warm = time.perf_counter() - t0
    engine.close()
    recall_on, recall_off = recall_cost(directory, settings, turns)
    return {
        "recall_on_ms": recall_on,
        "recall_off_ms": recall_off,
        "warm_ms": warm * 1000,
        "efforts": size,
        "messages": size * messages,
        "build_s": build,
        "startup_ms": startup * 1000,
        "turn_ms": statistics.median(timings) * 1000,
        "turn_p95_ms": sorted(timings)[int(len(timings) * 0.95) - 1] * 1000,
        "search_ms": statistics.median(searches) * 1000,
        "reported_ms": statistics.median(a for a, _ in concludes) * 1000,
        "rewrite_ms": statistics.median(b for _, b in concludes) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,100,1000,10000")
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    rows = []
    with tempfile.TemporaryDirectory(prefix="ccm-bench-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(bench(size, args.messages, args.turns, Path(tmp)))
            print(f"  measured {size} efforts", file=sys.stderr)
    base, reported_base, rewrite_base = rows[0]["turn_ms"], rows[0]["reported_ms"], rows[0]["rewrite_ms"]
    print("start-up: first open (builds the search index) / later opens")
    print(
        f"{'efforts':>8} {'messages':>10} {'first open ms':>14} {'open ms':>9} {'turn ms (p50)':>14} {'p95':>7} "
        f"{'× empty':>8} {'search ms':>10} {'recall on/off':>14} {'concluded ms':>13} {'× first':>8} {'rewrite ms':>11} {'× first':>8}"
    )
    for r in rows:
        print(
            f"{r['efforts']:>8,} {r['messages']:>10,} {r['startup_ms']:>14.1f} {r['warm_ms']:>9.1f} {r['turn_ms']:>14.2f} "
            f"{r['turn_p95_ms']:>7.2f} {r['turn_ms'] / base:>8.2f} {r['search_ms']:>10.2f} "
            f"{r['recall_on_ms'] / r['recall_off_ms']:>13.2f}× {r['reported_ms']:>13.1f} "
            f"{r['reported_ms'] / reported_base:>8.2f} {r['rewrite_ms']:>11.1f} {r['rewrite_ms'] / rewrite_base:>8.2f}"
        )
    print("recall on/off: a turn's core time with recall against without it (same session, alternated blocks)")
    print("turn times include the manifest rewrite that follows them; 'concluded': until a conclusion's outcome")
    print("is reported (it is durable then: the journal holds it); 'rewrite': manifest.yaml rewritten after it,")
    print("which the app does once its queue is empty. Targets at 100,000 efforts: turn ≤ 1.25× empty,")
    print("concluded ≤ 2× the smallest size")


if __name__ == "__main__":
    main()
