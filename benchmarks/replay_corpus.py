"""Replay every corpus transcript through the engine and print one table per boundary source.

    python benchmarks/replay_corpus.py [--corpus DIR] [--out docs/replay] [--json FILE]

For each transcript in the corpus (``<corpus>/<format dir>/<file>``):

* a replay with the hand-placed boundaries in ``benchmarks/boundaries/<stem>.yaml``
  when that file exists, plotted to ``<out>/<stem>.svg``;
* a replay with the offline TextTiling segmenter, plotted to
  ``<out>/<stem>.offline.svg`` (or ``<stem>.svg`` when there is no hand file).

Both use the offline extractive summarizer (no model, no network, deterministic)
and the default budget (16,000 tokens unless CCM_TOKEN_BUDGET says otherwise).
The tables are printed as markdown and written to ``<out>/results.md``.

Done-when check (issue 7): on every transcript over 100K naive tokens, the
working context once the last effort is concluded is ≤ 5,000 tokens and
savings ≥ 95%; no turn ever exceeds the budget. Exit status 1 if not.

Billed comparison (issue 39, a second table per boundary source, ``ccm_tui/replay/billing.py``):
what ccm and a naive chat would pay in input-price units with no prompt cache, OpenAI's automatic
cache and Anthropic's 5-minute cache (ccm/naive, below 1× ccm is cheaper), and the share of ccm's
input that is the previous request's prefix on turns without / with an effort change. Targets,
published either way: prefix share ≥ 95% on turns without a change; ccm ≤ 0.5× naive under the
Anthropic rule on transcripts over 50,000 naive tokens (the exit status does not depend on them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ccm_tui.config import Settings  # noqa: E402
from ccm_tui.replay import BoundaryError, replay_file  # noqa: E402
from ccm_tui.replay.plot import write_plot  # noqa: E402
from ccm_tui.replay.report import to_json  # noqa: E402

DEFAULT_CORPUS = Path(os.environ.get("CCM_CORPUS", "/work/shared/corpus"))
BOUNDARIES = ROOT / "benchmarks" / "boundaries"
BIG = 100_000
BILLED_BIG = 50_000
BILLED_TARGET = 0.5
BILLED_HEADER = (
    "file",
    "turns",
    "naive end",
    "ccm/naive, no cache",
    "OpenAI cache",
    "Anthropic cache",
    "Anthropic floor",
    "prefix kept, stable turns: of input (of previous request)",
    "naive prefix kept",
    "prefix kept, effort changes",
    "timestamps",
    "target",
)
TARGET_CCM = 5_000
TARGET_SAVINGS = 0.95

HEADER = (
    "file",
    "format",
    "turns",
    "naive end",
    "ccm end",
    "savings",
    "max ccm",
    "budget",
    "efforts",
    "capped msgs (tokens cut)",
    "savings vs capped log",
    "target",
)


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.glob("*/*") if p.is_file())


def row(path: Path, result) -> tuple[str, ...]:
    big = result.end_naive > BIG
    ok_budget = not result.over_budget
    if big:
        ok = ok_budget and result.end_ccm <= TARGET_CCM and result.savings >= TARGET_SAVINGS
        target = "✓" if ok else "✗"
    else:
        target = "✓ (budget)" if ok_budget else "✗ budget"
    stats = result.cap_stats
    return (
        f"{path.parent.name}/{path.name}",
        result.format,
        str(len(result.turns)),
        f"{result.end_naive:,}",
        f"{result.end_ccm:,}",
        f"{100 * result.savings:.1f}%",
        f"{result.max_ccm:,}",
        f"{result.budget:,}",
        str(len({s.id for s in result.spans})),
        f"{stats.replies_capped + stats.user_capped} ({stats.tokens_cut:,})",
        f"{100 * result.savings_logged:.1f}%",
        target,
    )


def billed_row(path: Path, result) -> tuple[str, ...]:
    stable, n_stable = result.prefix_share(False)
    held, _ = result.prefix_share(False, of="held")
    naive, _ = result.prefix_share(False, side="naive")
    change, n_change = result.prefix_share(True)
    ratio = result.billed_ratio("anthropic")
    if result.end_naive > BILLED_BIG:
        target = "✓" if ratio <= BILLED_TARGET else "✗"
    else:
        target = "(short)"
    return (
        f"{path.parent.name}/{path.name}",
        str(len(result.turns)),
        f"{result.end_naive:,}",
        f"{result.billed_ratio('none'):.2f}×",
        f"{result.billed_ratio('openai'):.2f}×",
        f"{ratio:.2f}×",
        f"{result.floor_ratio:.2f}×",
        f"{100 * stable:.1f}% ({100 * held:.1f}%) on {n_stable}",
        f"{100 * naive:.1f}%",
        f"{100 * change:.1f}% on {n_change}",
        "yes" if result.timed else "no",
        target,
    )


def markdown(rows: list[tuple[str, ...]], header: tuple[str, ...] = HEADER) -> str:
    right = {2, 3, 4, 5, 6, 7, 8, 10} if header is HEADER else {1, 2, 3, 4, 5, 6}
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def passes(result) -> bool:
    if result.over_budget:
        return False
    if result.end_naive > BIG:
        return result.end_ccm <= TARGET_CCM and result.savings >= TARGET_SAVINGS
    return True


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "replay")
    ap.add_argument("--json", type=Path, help="also write every replay's JSON document here")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus} (set --corpus or CCM_CORPUS)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    settings = Settings()
    hand_rows: list[tuple[str, ...]] = []
    offline_rows: list[tuple[str, ...]] = []
    hand_billed: list[tuple[str, ...]] = []
    offline_billed: list[tuple[str, ...]] = []
    dump: dict[str, dict] = {}
    ok = True
    started = time.monotonic()
    for path in corpus_files(args.corpus):
        stem = path.stem
        hand = BOUNDARIES / f"{stem}.yaml"
        t0 = time.monotonic()
        if hand.is_file():
            try:
                result = await replay_file(path, efforts=hand, settings=settings)
            except BoundaryError as exc:  # e.g. the parser's turn numbering changed under the file
                print(f"SKIPPED hand boundaries: {exc}", file=sys.stderr)
                ok = False
            else:
                write_plot(result, args.out / f"{stem}.svg")
                hand_rows.append(row(path, result))
                hand_billed.append(billed_row(path, result))
                dump[f"{stem}:file"] = to_json(result)
                ok &= passes(result)
        result = await replay_file(path, settings=settings)
        write_plot(result, args.out / (f"{stem}.offline.svg" if hand.is_file() else f"{stem}.svg"))
        offline_rows.append(row(path, result))
        offline_billed.append(billed_row(path, result))
        dump[f"{stem}:offline"] = to_json(result)
        ok &= passes(result)
        print(f"replayed {path.name} in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    tables = (
        "### Hand-placed effort boundaries (`benchmarks/boundaries/`)\n\n" + markdown(hand_rows) + "\n\n"
        "### Offline segmenter (TextTiling, no model)\n\n" + markdown(offline_rows) + "\n\n"
        "### Billed, hand-placed boundaries (input-price units, ccm/naive; `replay/billing.py`)\n\n"
        + markdown(hand_billed, BILLED_HEADER)
        + "\n\n### Billed, offline segmenter\n\n"
        + markdown(offline_billed, BILLED_HEADER)
        + "\n"
    )
    print(tables)
    results_md = (
        "# Replay results on the corpus\n\n"
        "Generated by `python benchmarks/replay_corpus.py` (offline extractive summaries, default budget, "
        "tokens counted with tiktoken cl100k_base). *naive end*: the whole conversation with the system "
        "prompt and tools, as in the transcript: every human request and every agent response with what "
        "the agent saw — its tool calls and their results as text (images as a size placeholder; thinking "
        "blocks left out, as providers do not resend them), i.e. what a naive chat really resends; *ccm end*: the working context once the last effort is "
        "concluded; *max ccm*: the largest request sent during the replay (open efforts included); "
        "*capped msgs*: messages cut to the per-message cap (tokens left out in brackets; the naive "
        "figure still counts them); *savings vs capped log*: the same end figure against a naive chat of the "
        "capped messages, i.e. with the caps' share of the savings taken out. *target*: over 100K naive tokens, ccm end ≤ 5,000 and savings ≥ 95%; "
        "every transcript: no request over the budget. *Billed* tables: ccm's cost over the naive chat's in "
        "input-price units under each caching rule (`ccm_tui/replay/billing.py`); *Anthropic floor*: ccm's "
        "requests at best under that rule (every block sent before read at 0.1×, every new one once at 1×, "
        "summaries at 1×) over the naive chat's Anthropic bill; *prefix kept*: on turns where no effort changes "
        "state, the share of ccm's input that repeats the previous request's start (in brackets: the share "
        "of that previous request repeated), the naive chat's share, and the share on turns with an effort "
        "change.\n\n" + tables
    )
    (args.out / "results.md").write_text(results_md, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(dump, ensure_ascii=False, indent=1), encoding="utf-8")
    print(
        f"{'all targets met' if ok else 'TARGET MISSED'} · {time.monotonic() - started:.1f} s · plots in {args.out}",
        file=sys.stderr,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
