"""Snippets and passages cut between words."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ccm_tui.core.search import EffortIndex
from ccm_tui.core.search._results import format_snippet
from tests.helpers.listed_efforts import sync_listed

MARK_OPEN, MARK_CLOSE = "\x02", "\x03"


def write_log(directory: Path, effort_id: str, contents: list[str]) -> None:
    lines = [json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": c}) for i, c in enumerate(contents)]
    (directory / "efforts" / f"{effort_id}.jsonl").write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")


def words(n: int, start: int = 0) -> str:
    return " ".join(f"filler{k}" for k in range(start, start + n))


def test_a_snippet_never_starts_or_ends_inside_a_word() -> None:
    text = " ".join(f"word{k:03d}" for k in range(60)) + f" {MARK_OPEN}latency{MARK_CLOSE} " + words(60)
    for width in range(40, 200, 7):
        out = format_snippet(text, width)
        body = out.strip("…")
        assert "**latency**" in out
        token = r"(word\d{3}|filler\d+|\*\*latency\*\*)"
        assert re.fullmatch(f"{token}( {token})*", body), out
        assert len(body) <= width + 2


def test_a_snippet_cuts_a_run_without_spaces_where_it_must() -> None:
    long_token = "a" * 300
    out = format_snippet(f"{long_token} {MARK_OPEN}hit{MARK_CLOSE} {long_token}", 60)
    assert "**hit**" in out and out.startswith("…") and out.endswith("…")
    cjk = "日本語のテキスト" * 20 + f"{MARK_OPEN}検索{MARK_CLOSE}" + "日本語のテキスト" * 20
    out = format_snippet(cjk, 40)
    assert "**検索**" in out and len(out.strip("…")) <= 44


def test_passage_lines_start_at_a_word(tmp_path: Path) -> None:
    (tmp_path / "efforts").mkdir()
    for n in range(8):  # the match at different offsets, so a cut at a fixed distance before it falls anywhere
        long_line = (
            f"We measured {words(30)} {'z' * (n + 1)} and the p95 latency went from 80 ms to 35 ms {words(40, 100)}"
        )
        write_log(tmp_path, f"perf-{n}", ["how fast is it now?", long_line, "good"])
    with EffortIndex(tmp_path / "derived.sqlite") as index:
        sync_listed(index, tmp_path, [(f"perf-{n}", "concluded", None) for n in range(8)])
        hits = index.search("latency")
    assert len(hits) == 8
    for hit in hits:
        assert hit.passage is not None
        answer = next(part for part in hit.passage.splitlines() if "**latency**" in part)
        text = answer.split(": ", 1)[1].lstrip("…")
        assert re.match(r"(filler\d+|z+|and|the|p95|\*\*latency\*\*) ", text), answer
