"""A process that runs turns forever on one session, for kill -9 fault injection.

    python -m tests.helpers.campaigns.turn_driver SESSION_DIR BASE_URL SEED [fold] [conclude] [fold-request]
                                                  [finish] [redo=ID,ID...]

Each finished turn prints ``ACK <message>`` (flushed) *after* ``run_turn``
returned, i.e. after the exchange was reported done. A recovery report, if
any, is printed as ``RECOVERY ...`` at start, and an orphaned turn is re-sent
first, as the TUI's Retry does (a re-send of a turn that was in fact logged
shows up as a duplicated turn). With ``fold`` the messages are chat about one topic after another
(for a model without tools: the app folds the ambient chat that left the window into efforts).

``conclude``: efforts are opened and concluded in a short cycle, by the model (``close_effort``) and by
the user (``/conclude``, the action the TUI and ``send`` run): ``CONCLUDING <id>`` is printed before a
``/conclude``, ``CONCLUDED <id>`` once it is done (``FAILED <id>: why`` if it failed); ``redo=`` names the efforts whose ``/conclude`` a kill
interrupted: the user concludes them again first, if they are still open.
``fold-request``: a fold's summary is extracted without a model, so nothing of it reaches the server; with
this the fold's summary step first asks the server (:data:`.slow_summary.FOLD_MARK`), so a slow
summary model holds the fold there, after it has read its lines and before it writes anything.
``FOLDING a-b`` and ``FOLDED a-b`` frame each fold. ``finish``: no new turns; the orphan and the
redos, one fold step, and exit 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import urllib.request
from pathlib import Path
from typing import Any

TOPICS = [
    ["Japan trip: Kyoto temples in April", "Kyoto or Osaka for the Japan food?", "Japan rail pass for Kyoto"],
    ["Sourdough starter smells of acetone", "Sourdough flour: rye for the starter?", "Sourdough loaf came out flat"],
    ["Tax return deductions for a home office", "Tax deadline for freelancers", "Tax receipts: keep how long?"],
    ["Garden tomatoes have yellow leaves", "Garden compost per raised bed", "Garden slugs eat the lettuce"],
]
TOPIC_TURNS = 8  # messages about one topic before the next
CONCLUDE = "/conclude"  # (in the conclude cycle: the user concludes the active effort)


def message_for(seed: int, n: int, rng: random.Random, fold: bool, conclude: bool = False) -> str:
    if fold:
        topic = TOPICS[(seed + n // TOPIC_TURNS) % len(TOPICS)]
        return f"m{seed}-{n} {rng.choice(topic)}"
    if conclude:  # open, chat, chat, then concluded: by the user and by the model in turn
        cycle = seed + n  # (each run starts elsewhere in the cycle)
        step = ["OPEN", "chat", "chat", CONCLUDE if cycle // 4 % 2 else "CLOSE"][cycle % 4]
        return CONCLUDE if step == CONCLUDE else f"m{seed}-{n} {step}"
    return f"m{seed}-{n} " + rng.choice(["OPEN", "CLOSE", "ASIDE", "chat", "chat", "chat", "EXPAND"])


def ask_the_server_from_folds(base_url: str) -> None:
    """Each fold's summary step first asks the server (and waits for its answer); FOLDING / FOLDED frame it."""
    from ccm_tui.core.turn import folding
    from tests.helpers.campaigns.slow_summary import FOLD_MARK

    extract, fold_step = folding.offline_summary, folding._fold
    lines: list[str] = []

    def summary_step(messages: list[dict[str, Any]], **options: Any) -> str:
        body = {
            "model": "fake-model",
            "messages": [
                {"role": "system", "content": f"{FOLD_MARK} (ambient lines {lines[-1]})"},
                {"role": "user", "content": "\n".join(str(m.get("content") or "") for m in messages)[:2000]},
            ],
        }
        request = urllib.request.Request(
            base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as answer:
            answer.read()
        return extract(messages, **options)

    def fold(session: Any, index: Any, proposal: Any, emit: Any) -> None:
        lines.append(f"{proposal.lines[0]}-{proposal.lines[1]}")
        print(f"FOLDING {lines[-1]}", flush=True)
        fold_step(session, index, proposal, emit)
        print(f"FOLDED {lines[-1]}", flush=True)

    folding.offline_summary, folding._fold = summary_step, fold  # type: ignore[assignment]


async def conclude(engine: Any, effort_id: str) -> None:
    """What ``/conclude ID`` does (the user's action); ``CONCLUDED`` once it is done."""
    from ccm_tui.core.efforts.states import Action

    print(f"CONCLUDING {effort_id}", flush=True)
    outcome = await engine.run_action(Action.CONCLUDE, effort_id)
    if outcome.ok:
        print(f"CONCLUDED {effort_id}", flush=True)
    else:
        print(f"FAILED {effort_id}: {outcome.reason}", flush=True)


async def main(session_dir: Path, base_url: str, seed: int, flags: list[str]) -> None:
    from ccm_tui.config import Settings
    from ccm_tui.core.engine.opening import start_engine

    fold, concluding, finish = "fold" in flags, "conclude" in flags, "finish" in flags
    redo = [x for flag in flags if flag.startswith("redo=") for x in flag[5:].split(",") if x]
    if "fold-request" in flags:
        ask_the_server_from_folds(base_url)
    settings = Settings(model="openai/fake-model", api_base=base_url, token_budget=6000, max_retries=0)
    engine = start_engine(session_dir, settings, retry_base=0)
    report = engine.recovery
    if report.changed:
        print("RECOVERY " + report.one_line(), flush=True)
    if report.orphan is not None:  # what the TUI's Retry does: re-send the orphaned message
        result = await engine.run_turn(report.orphan.text)
        if result.ok:
            print(f"ACK {report.orphan.text}", flush=True)
    for effort_id in redo:  # a /conclude a kill interrupted: the user runs it again
        effort = engine.effort(effort_id)
        if effort is not None and effort.status != "concluded":
            await conclude(engine, effort_id)
    if finish:
        if fold:
            await engine.assist()
            engine.settle()
        engine.close()
        return
    rng = random.Random(seed)
    n = 0
    while True:
        n += 1
        message = message_for(seed, n, rng, fold, concluding)
        if message == CONCLUDE:
            active = engine.active_effort()
            if active is not None:
                await conclude(engine, active.id)
            continue
        result = await engine.run_turn(message)
        if result.ok:
            print(f"ACK {message}", flush=True)
        if fold:
            await engine.assist()  # what the controller does after a turn: fold chat that left the window
            engine.settle()


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4:]))
