"""Search in scripts written without spaces (CJK, Thai, Lao, Khmer, Myanmar): words inside a run are found."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ccm_tui.core.search import EffortIndex, SearchHit
from ccm_tui.core.search._query import parse_query, query_terms
from ccm_tui.core.search._unspaced import index_grams, is_unspaced, mark
from ccm_tui.core.storage import derived as derived_database
from tests.helpers.listed_efforts import sync_listed

LOGS = {
    "ja-notes": ["日本語のテキストです。", "東京都に住んでいます"],
    "zh-db": ["我们讨论了数据库迁移方案", "北京的天气很好"],
    "ko-class": ["한국어를 배우고 있어요", "서울에서 만나요"],
    "th-trip": ["ภาษาไทยที่นี่", "กรุงเทพมหานคร"],
    "lo-note": ["ພາສາລາວງາມຫຼາຍ"],
    "km-note": ["ភាសាខ្មែរ"],
    "my-note": ["မြန်မာဘာသာစကား"],
    "mixed": ["Python3の使い方を説明します", "the café is nice, see src/app.py"],
    "english": ["plain english text about database migrations", "nothing else"],
}


def write_session(root: Path, logs: dict[str, list[str]]) -> list[tuple[str, str, str | None]]:
    (root / "efforts").mkdir(parents=True)
    for effort_id, messages in logs.items():
        lines = "".join(
            json.dumps({"role": "user", "content": m, "ts": "2025-01-01T00:00:00Z"}) + "\n" for m in messages
        )
        (root / "efforts" / f"{effort_id}.jsonl").write_text(lines, encoding="utf-8")
    return [(effort_id, "concluded", None) for effort_id in logs]


@pytest.fixture
def index(tmp_path: Path):
    entries = write_session(tmp_path / "s", LOGS)
    with EffortIndex(tmp_path / "s" / "derived.sqlite") as idx:
        sync_listed(idx, tmp_path / "s", entries)
        yield idx


def top(hits: list[SearchHit]) -> str | None:
    return hits[0].id if hits else None


@pytest.mark.parametrize(
    ("query", "effort", "marked"),
    [
        ("日本", "ja-notes", "**日本**"),  # the reported case: two characters inside a longer run
        ("テキスト", "ja-notes", "**テキスト**"),
        ("日本語のテキスト", "ja-notes", "**日本語のテキスト**"),
        ("京都", "ja-notes", "東**京都**"),  # bigrams also match inside other words (as any bigram index does)
        ("数据库", "zh-db", "**数据库**"),
        ("迁移", "zh-db", "**迁移**"),
        ("北京", "zh-db", "**北京**"),
        ("한국어", "ko-class", "**한국어**"),  # a Korean word with a particle glued on (한국어를)
        ("서울", "ko-class", "**서울**"),
        ("ไทย", "th-trip", "**ไทย**"),
        ("ที่", "th-trip", "**ที่**"),  # one letter with its vowel and tone marks
        ("กรุงเทพ", "th-trip", "**กรุงเทพ**"),
        ("ລາວ", "lo-note", "**ລາວ**"),
        ("ខ្មែរ", "km-note", "**ខ្មែរ**"),
        ("မြန်မာ", "my-note", "**မြန်မာ**"),
        ("使い方", "mixed", "**使い方**"),
    ],
)
def test_a_word_inside_an_unspaced_run_is_found_and_marked(
    index: EffortIndex, query: str, effort: str, marked: str
) -> None:
    hits = index.search(query)
    assert top(hits) == effort
    assert hits[0].passage is not None and marked in hits[0].passage
    assert marked in hits[0].snippet
    assert hits[0].lines is not None


@pytest.mark.parametrize(
    ("query", "effort"), [("日", "ja-notes"), ("語", "ja-notes"), ("ト", "ja-notes"), ("移", "zh-db")]
)
def test_single_characters_are_found_wherever_they_stand_in_a_run(index: EffortIndex, query: str, effort: str) -> None:
    hits = index.search(query)
    assert effort in [h.id for h in hits]
    assert f"**{query}**" in next(h for h in hits if h.id == effort).passage  # type: ignore[operator]


def test_latin_glued_to_a_run_is_found(index: EffortIndex) -> None:
    assert top(index.search("python3")) == "mixed"
    assert top(index.search("Python3の使い方")) == "mixed"


def test_mixed_script_query_ranks_the_effort_with_both(index: EffortIndex) -> None:
    hits = index.search("database 数据库")
    assert {h.id for h in hits[:2]} == {"zh-db", "english"}
    assert top(index.search("café 使い方")) == "mixed"


def test_unrelated_runs_do_not_match(index: EffortIndex) -> None:
    assert index.search("中文") == []
    assert index.search("ญี่ปุ่น") == []


def test_summaries_and_names_in_unspaced_scripts_are_searched(tmp_path: Path) -> None:
    entries = write_session(tmp_path / "s", {"trip": ["nothing here"], "other": ["nor here"]})
    with EffortIndex(tmp_path / "s" / "derived.sqlite") as idx:
        sync_listed(idx, tmp_path / "s", [("trip", "concluded", "去年在上海开会"), (*entries[1], "ソウル旅行の計画")])
        assert top(idx.search("上海")) == "trip"
        assert idx.search("上海")[0].snippet == "去年在**上海**开会"
        assert top(idx.search("旅行")) == "other"


def test_latin_queries_are_unchanged() -> None:
    assert query_terms("When did Caroline go to the LGBTQ support group?", stop_words=False) == [
        "when", "did", "caroline", "go", "to", "the", "lgbtq", "support", "group",
    ]  # fmt: skip
    assert parse_query("support group support")[1] == ["support group", "group support"]
    assert parse_query("naïve café")[0] == ["naïve", "café"]
    assert index_grams("plain text, even with accents: café") is None


def test_query_processing_of_unspaced_runs() -> None:
    assert parse_query("日本語") == (["日本", "本語"], ["日本 本語"])
    assert parse_query("日") == (["日"], [])
    assert parse_query("東京 tower") == (["東京", "tower"], [])  # no pair across scripts
    assert parse_query("ที่นี่") == (["ที่นี่"], [])  # two letters, each with its marks
    assert is_unspaced("日本") and is_unspaced("ที่") and not is_unspaced("cafe")
    assert index_grams("日本語") == "日本 本語 語"
    assert index_grams("a 日 b") == "日"
    assert mark("日本語の本", ["本"]) == "日\x02本\x03語の\x02本\x03"


def test_an_index_of_the_previous_schema_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = write_session(tmp_path / "s", {"ja-notes": LOGS["ja-notes"]})
    db = tmp_path / "s" / "derived.sqlite"
    with EffortIndex(db) as idx:
        sync_listed(idx, tmp_path / "s", entries)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {derived_database.SCHEMA_VERSION - 1}")  # an older schema
    conn.close()
    with EffortIndex(db) as idx:
        assert idx.recreated
        assert idx.search("日本") == []
        sync_listed(idx, tmp_path / "s", entries)
        assert top(idx.search("日本")) == "ja-notes"
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == derived_database.SCHEMA_VERSION
