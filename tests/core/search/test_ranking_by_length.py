"""Ranking by the size of a log, not only its line count: a log of a few huge tool dumps is long."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ccm_tui.core.search import EffortIndex, Weights
from tests.helpers.listed_efforts import sync_listed


def write_log(directory: Path, effort_id: str, contents: list[str]) -> None:
    lines = [json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": c}) for i, c in enumerate(contents)]
    (directory / "efforts" / f"{effort_id}.jsonl").write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")


def words(n: int, start: int = 0) -> str:
    return " ".join(f"filler{k}" for k in range(start, start + n))


def test_a_log_of_huge_tool_dumps_weighs_as_long_as_it_is(tmp_path: Path) -> None:
    # same number of lines, one mention each: only the size of the lines tells them apart
    (tmp_path / "efforts").mkdir()
    write_log(tmp_path, "a-dumps", [words(800, k * 800) + (" kernel panic" if k == 2 else "") for k in range(4)])
    write_log(tmp_path, "b-chat", ["what broke?", "the kernel panic at boot", "fixed?", "yes"])
    for k in range(6):  # other efforts of short lines, so the index's mean line is a chat line
        write_log(tmp_path, f"c-other-{k}", ["hello", f"unrelated note {k}", "ok", "bye"])
    entries = [(p.stem, "concluded", None) for p in sorted((tmp_path / "efforts").iterdir())]
    with EffortIndex(tmp_path / "derived.sqlite") as index:
        sync_listed(index, tmp_path, entries)
        by_lines = index.search("kernel panic", weights=Weights(size=0.0))
        by_size = index.search("kernel panic")
    assert [h.id for h in by_lines][:2] == ["a-dumps", "b-chat"]  # a tie on line counts: the id decides
    assert [h.id for h in by_size][:2] == ["b-chat", "a-dumps"]
    assert by_size[0].lines is not None and by_size[0].lines[0] <= 2 <= by_size[0].lines[1]


def test_ambient_blocks_remember_their_size(tmp_path: Path) -> None:
    (tmp_path / "efforts").mkdir()
    raw = [json.dumps({"role": "user", "content": f"line {k} " + "x" * (10 * k)}) + "\n" for k in range(25)]
    (tmp_path / "raw.jsonl").write_text("".join(raw), encoding="utf-8")
    with EffortIndex(tmp_path / "derived.sqlite") as index:
        sync_listed(index, tmp_path, [])
        (tmp_path / "raw.jsonl").open("a", encoding="utf-8").write(raw[0])  # appended later: same block
        sync_listed(index, tmp_path, [])
    db = sqlite3.connect(tmp_path / "derived.sqlite")
    rows = db.execute("SELECT effort_id, log_offset, log_lines FROM efforts ORDER BY first_line").fetchall()
    db.close()
    assert rows == [
        ("ambient:0", sum(len(x.encode()) for x in raw[:20]), 20),
        ("ambient:1", sum(len(x.encode()) for x in raw[20:]) + len(raw[0].encode()), 6),
    ]
