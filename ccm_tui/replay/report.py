"""The replay's output: the JSON document (contract) and the readable table."""

from __future__ import annotations

from typing import Any

from .runner import ReplayResult

SUMMARIZER_WORDS = {"offline": "offline extractive", "model": "model"}
SEGMENTER_WORDS = {"file": "boundaries file", "model": "model", "offline": "offline TextTiling"}


def to_json(result: ReplayResult) -> dict[str, Any]:
    """``{"segmenter", "summarizer", "turns": [...], "end": {...}}`` plus extra detail keys."""
    return {
        "segmenter": result.segmenter,
        "summarizer": result.summarizer,
        "turns": [t.as_dict() for t in result.turns],
        "end": {
            "naive": int(result.end_naive),
            "ccm": int(result.end_ccm),
            "savings": round(result.savings, 4),
            "max_ccm": int(result.max_ccm),
            "budget": int(result.budget),
            "naive_logged": int(result.end_naive_logged),
            "savings_logged": round(result.savings_logged, 4),
            "layers": dict(result.end_layers),
            "over_budget_turns": result.over_budget,
        },
        "transcript": result.transcript,
        "format": result.format,
        "encoding": result.encoding,
        "efforts": result.efforts,
        "caps": result.cap_stats.as_dict(result.caps),
        "compactions": result.compactions,
        "checkpoints": result.checkpoints,
        "notes": list(result.notes),
        "billing": billing_json(result),
    }


def billing_json(result: ReplayResult) -> dict[str, Any]:
    """The billed comparison: each side's cost per rule (input-price units), ccm/naive per rule, and the
    share of ccm's input that was the previous request's prefix on turns with and without an effort change."""
    from .billing import RULES

    stable, stable_turns = result.prefix_share(False)
    change, change_turns = result.prefix_share(True)
    kept, _ = result.prefix_share(False, of="carried")
    kept_change, _ = result.prefix_share(True, of="carried")
    held, _ = result.prefix_share(False, of="held")
    naive, _ = result.prefix_share(False, side="naive")
    return {
        "units": "input-price units (1 = one uncached input token)",
        "ccm": {rule: round(result.billed.get("ccm", {}).get(rule, 0.0), 1) for rule in RULES},
        "naive": {rule: round(result.billed.get("naive", {}).get(rule, 0.0), 1) for rule in RULES},
        "ratio": {rule: round(result.billed_ratio(rule), 4) for rule in RULES},
        "anthropic_floor_ratio": round(result.floor_ratio, 4),
        "prefix_share": {
            "stable": round(stable, 4),
            "stable_turns": stable_turns,
            "state_change": round(change, 4),
            "state_change_turns": change_turns,
            "stable_of_carried": round(kept, 4),
            "stable_of_previous_request": round(held, 4),
            "state_change_of_carried": round(kept_change, 4),
            "naive_stable": round(naive, 4),
        },
        "timestamps": result.timed,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def summary_lines(result: ReplayResult) -> list[str]:
    n = len(result.turns)
    efforts = len({s.id for s in result.spans})
    stats = result.cap_stats
    lines = [
        f"transcript: {result.transcript} ({result.format}, {n} turns)",
        f"efforts: {efforts} from the {SEGMENTER_WORDS.get(result.segmenter, result.segmenter)}; "
        f"summaries: {SUMMARIZER_WORDS.get(result.summarizer, result.summarizer)}; "
        f"tokens: tiktoken {result.encoding}",
        f"end: naive {result.end_naive:,} tokens → ccm working context {result.end_ccm:,} tokens "
        f"(savings {_pct(result.savings)})",
        f"max ccm {result.max_ccm:,} tokens of the {result.budget:,}-token budget"
        + (" (never over)" if not result.over_budget else f" — OVER at turns {result.over_budget}"),
    ]
    if stats.replies_capped or stats.user_capped:
        lines.append(
            f"message caps: {stats.replies_capped} agent response(s) capped at {result.caps.reply:,} tokens "
            f"and {stats.user_capped} user message(s) at {result.caps.user:,} "
            f"({stats.tokens_cut:,} tokens left out of the replayed log; naive counts them). "
            f"Against the capped log's naive {result.end_naive_logged:,}: savings {_pct(result.savings_logged)}"
        )
    if result.billed:
        ratio = {rule: result.billed_ratio(rule) for rule in ("none", "openai", "anthropic")}
        stable, n_stable = result.prefix_share(False)
        change, n_change = result.prefix_share(True)
        lines.append(
            f"billed (input-price units, ccm/naive): no cache {ratio['none']:.2f}×, "
            f"OpenAI automatic cache {ratio['openai']:.2f}×, Anthropic 5-minute cache {ratio['anthropic']:.2f}×"
            + ("" if result.timed else " (no timestamps: the cache never expires)")
        )
        held, _ = result.prefix_share(False, of="held")
        naive, _ = result.prefix_share(False, side="naive")
        lines.append(
            f"prefix shared with the previous request: {_pct(stable)} of ccm's input on {n_stable} turns without "
            f"an effort change ({_pct(held)} of that previous request; naive: {_pct(naive)} of its input), "
            f"{_pct(change)} on {n_change} turns with one"
        )
    if result.compactions:
        lines.append(f"auto-compactions: {result.compactions} ({result.checkpoints} checkpoint summaries)")
    lines.extend(result.notes)
    return lines


def table(result: ReplayResult) -> str:
    head = f"{'turn':>4}  {'naive':>9}  {'ccm':>7}  {'after':>7}  {'open':>4}  {'concl':>5}  {'evict':>5}  effort"
    rows = [head, "-" * len(head)]
    for t in result.turns:
        mark = ""
        if t.compactions:
            mark = f"  [compacted ×{t.compactions}]" if t.compactions > 1 else "  [compacted]"
        rows.append(
            f"{t.turn:>4}  {t.naive:>9,}  {t.ccm:>7,}  {t.after:>7,}  {t.open:>4}  {t.concluded:>5}  {t.evicted:>5}  "
            f"{t.effort or '(ambient)'}{mark}"
        )
    return "\n".join(rows)


def render_text(result: ReplayResult) -> str:
    legend = (
        "naive: tokens a naive chat would send this turn (system prompt + tools + the whole conversation so far);\n"
        "ccm: tokens of the request ccm-tui sent this turn; after: working context once the turn is done."
    )
    return "\n".join([table(result), "", legend, "", *summary_lines(result)])
