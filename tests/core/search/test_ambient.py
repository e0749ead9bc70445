"""Ambient chat (``raw.jsonl``) is searchable: found after it left the ambient window, with its line numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccm_tui.core.manifest.effort import CONCLUDED, Effort, ManifestError
from ccm_tui.core.search import EffortIndex
from ccm_tui.core.search import _ambient as ambient_mod
from ccm_tui.core.search import _records as records_mod
from ccm_tui.core.session.session import Session
from tests.helpers.listed_efforts import sync_listed

B = ambient_mod.AMBIENT_BLOCK_LINES


def line(content: str, role: str = "user") -> str:
    return json.dumps({"role": role, "content": content, "ts": "2025-01-01T00:00:00Z"}) + "\n"


def chatter(start: int, count: int) -> str:
    return "".join(line(f"small talk number {i} about the weather", "user" if i % 2 else "assistant") for i in
                   range(start, start + count))  # fmt: skip


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "s" / "efforts").mkdir(parents=True)
    (tmp_path / "s" / "efforts" / "db-pool.jsonl").write_text(line("the connection pool times out under load"))
    return tmp_path / "s"


ENTRIES = [("db-pool", "concluded", "Database connection pool timeouts fixed")]


def ambient_rows(index: EffortIndex) -> tuple[int, int]:
    """(ambient blocks, ambient message rows) in the index."""
    db = index._database.conn
    blocks = db.execute("SELECT count(*), coalesce(sum(indexed_lines), 0) FROM efforts WHERE source = 'ambient'")
    nums = [n for (n,) in db.execute("SELECT num FROM efforts WHERE source = 'ambient'")]
    ranges = ((n << 32, (n << 32) | 0xFFFFFFFF) for n in nums)
    rows = sum(db.execute("SELECT count(*) FROM msg_fts WHERE rowid BETWEEN ? AND ?", r).fetchone()[0] for r in ranges)
    return blocks.fetchone()[0], rows


def test_an_old_ambient_exchange_is_found_with_its_raw_jsonl_lines(root: Path) -> None:
    raw = root / "raw.jsonl"
    raw.write_text(
        chatter(0, 500)
        + line("what is the capital of Mongolia?")
        + line("Ulaanbaatar is the capital of Mongolia.", "assistant")
        + chatter(502, 300)
    )
    with EffortIndex(root / "derived.sqlite") as index:
        assert sync_listed(index, root, ENTRIES) == 1 + 802
        hits = index.search("Mongolia capital")
        hit = hits[0]
        assert (hit.source, hit.id, hit.status, hit.summary) == ("ambient", "ambient", "ambient", None)
        assert hit.lines is not None and hit.lines[0] <= 501 and hit.lines[1] >= 502
        assert hit.passage is not None and "user: what is the **capital** of **Mongolia**?" in hit.passage
        assert "**Mongolia**" in hit.snippet
        assert [h.source for h in index.search("connection pool")] == ["effort"]
        assert index.search("mongolia", status="concluded") == []
        assert [h.id for h in index.search("mongolia", status="ambient")] == ["ambient"]


def test_passage_lines_are_raw_jsonl_lines_and_stay_inside_the_block(root: Path) -> None:
    raw = root / "raw.jsonl"
    raw.write_text(chatter(0, B) + line("zebra crossing near the station") + chatter(B + 1, B))
    with EffortIndex(root / "derived.sqlite") as index:
        sync_listed(index, root, ENTRIES)
        hit = index.search("zebra")[0]
        assert hit.lines == (B + 1, B + 3)  # line B+1 opens the second block: the passage does not start before it
        assert hit.passage is not None and hit.passage.splitlines()[0] == "user: **zebra** crossing near the station"


def test_ambient_and_effort_hits_are_ranked_together(root: Path) -> None:
    (root / "raw.jsonl").write_text(chatter(0, 40) + line("the connection pool was mentioned in passing"))
    with EffortIndex(root / "derived.sqlite") as index:
        sync_listed(index, root, ENTRIES)
        assert [h.source for h in index.search("connection pool timeouts")] == ["effort", "ambient"]


def test_a_torn_tail_is_indexed_once_completed(root: Path) -> None:
    raw = root / "raw.jsonl"
    raw.write_text(chatter(0, 30) + line("a platypus walked in")[:20])
    with EffortIndex(root / "derived.sqlite") as index:
        assert sync_listed(index, root, ENTRIES) == 1 + 30
        assert index.search("platypus") == []
        with raw.open("a") as fh:
            fh.write(line("a platypus walked in")[20:])
        assert sync_listed(index, root, ENTRIES) == 1
        hit = index.search("platypus")[0]
        assert hit.lines is not None and hit.lines[1] >= 31 >= hit.lines[0]
        assert index.read_ambient_lines(raw, 31, 40) == [(31, json.loads(line("a platypus walked in")))]


def test_a_rewritten_or_removed_ambient_log_is_indexed_again(root: Path) -> None:
    raw = root / "raw.jsonl"
    raw.write_text(chatter(0, 50) + line("the okapi is shy"))
    with EffortIndex(root / "derived.sqlite") as index:
        sync_listed(index, root, ENTRIES)
        assert index.search("okapi")
        raw.write_text(line("only a narwhal now"))  # shorter: rewritten
        sync_listed(index, root, ENTRIES)
        assert index.search("okapi") == []
        assert index.search("narwhal")[0].lines == (1, 1)
        assert ambient_rows(index) == (1, 1)
        raw.unlink()
        sync_listed(index, root, ENTRIES)
        assert index.search("narwhal") == []
        assert ambient_rows(index) == (0, 0)


def test_a_100k_line_ambient_log_is_synced_incrementally(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = root / "raw.jsonl"
    total = 100_000
    with raw.open("w") as fh:
        for start in range(0, total, 10_000):
            fh.write(chatter(start, 10_000))
    monkeypatch.setattr(ambient_mod, "READ_CHUNK_BYTES", 1 << 20)  # several chunks
    monkeypatch.setattr(ambient_mod, "COMMIT_LINES", 30_000)  # and several commits
    read: list[int] = []

    class CountingFile:
        def __init__(self, fh: Any) -> None:
            self.fh = fh

        def read(self, n: int = -1) -> bytes:
            data = self.fh.read(n)
            read.append(len(data))
            return data

        def __iter__(self) -> Any:
            for raw in self.fh:
                read.append(len(raw))
                yield raw

        def __getattr__(self, name: str) -> Any:
            return getattr(self.fh, name)

        def __enter__(self) -> CountingFile:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

    real_open = records_mod.open_log
    monkeypatch.setattr(records_mod, "open_log", lambda path: CountingFile(real_open(path)))
    with EffortIndex(root / "derived.sqlite") as index:
        assert sync_listed(index, root, ENTRIES) == 1 + total
        assert ambient_rows(index) == (total // B, total)
        read.clear()
        before = raw.stat().st_size
        with raw.open("a") as fh:
            fh.write(line("the last thing said was about a quokka") + chatter(total + 1, 9))
        assert sync_listed(index, root, ENTRIES) == 10
        assert sum(read) < 2_000  # the 64-byte tail check and the ten new lines, not the 100,000 before
        assert ambient_rows(index) == (total // B + 1, total + 10)
        hit = index.search("quokka")[0]
        assert hit.source == "ambient" and hit.lines is not None and hit.lines[0] == total + 1
        read.clear()
        assert sync_listed(index, root, ENTRIES) == 0
        assert read == []  # unchanged: not even opened
        assert [n for n, _ in index.read_ambient_lines(raw, total - 1, total + 1)] == [total - 1, total, total + 1]
        assert index.ambient_block_start(total + 1) == (total + 1, before)
        assert sum(read) < 4_000  # the read seeked to the block, it did not scan 100,000 lines


def test_read_ambient_lines_falls_back_to_a_scan_when_the_file_is_not_the_indexed_one(root: Path) -> None:
    raw = root / "raw.jsonl"
    raw.write_text(chatter(0, 60))
    with EffortIndex(root / "derived.sqlite") as index:
        sync_listed(index, root, ENTRIES)
        raw.unlink()
        raw.write_text(chatter(100, 60))  # a new file (maybe the same inode): the stored offsets do not apply
        found = index.read_ambient_lines(raw, 45, 46)
        assert [(n, r["content"]) for n, r in found] == [
            (45, "small talk number 144 about the weather"),
            (46, "small talk number 145 about the weather"),
        ]


def test_effort_ids_never_collide_with_ambient_blocks(root: Path) -> None:
    (root / "raw.jsonl").write_text(chatter(0, 5))
    with EffortIndex(root / "derived.sqlite") as index:
        # an effort cannot be called 'ambient' (issue 42: a hand-edited manifest is refused, see repair)
        with pytest.raises(ManifestError, match="reserved id 'ambient'"):
            sync_listed(index, root, [*ENTRIES, ("ambient", "concluded", "An effort really called ambient")])
        sync_listed(index, root, ENTRIES)  # the ambient blocks stay
        assert ambient_rows(index) == (1, 5)


def test_search_command_prints_ambient_hits_readably(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ccm_tui.cli import main

    session = Session.open(tmp_path / "s")
    effort = Effort(id="q3", status=CONCLUDED, summary="Quarterly numbers agreed with finance.")
    session.efforts.add(effort)
    session.append_effort(effort, [{"role": "user", "content": "the quarterly spreadsheet"}])
    session.save_manifest()
    session.append_ambient([{"role": "user", "content": f"aside {i}"} for i in range(30)])
    session.append_ambient([{"role": "user", "content": "how tall is the quarterly Eiffel tower?"}])
    session.close()

    assert main(["search", "--session-dir", str(tmp_path / "s"), "eiffel tower"]) == 0
    out = capsys.readouterr().out
    assert "ambient chat  lines 29-31:" in out  # the match is the last line: the passage ends with it
    assert "user: how tall is the quarterly Eiffel tower?" in out  # (piped: plain; a terminal gets bold)

    assert main(["search", "--session-dir", str(tmp_path / "s"), "--json", "quarterly"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [(r["id"], r["source"]) for r in results] == [("q3", "effort"), ("ambient", "ambient")]
    assert results[1]["status"] == "ambient" and results[1]["summary"] is None and results[1]["lines"] == [29, 31]
    assert {"id", "status", "summary", "score", "snippet", "passage", "lines"} <= results[0].keys()


def marker(count: int) -> str:
    return (
        json.dumps({"role": "system", "content": "--- The exchange above was withdrawn ---", "retracts": count}) + "\n"
    )


def test_the_index_remembers_what_withdrawal_markers_took_back_in_both_logs(root: Path) -> None:
    """A marker is not searchable text; the lines it withdraws (and itself) are remembered per log, never
    recalled, and forgotten with the log when it is indexed again."""
    raw = root / "raw.jsonl"
    taken = line("my locker code at the climbing gym is 4729") + line("Noted: 4729.", "assistant") + marker(2)
    raw.write_text(chatter(0, 30) + taken + chatter(33, 30))
    effort_log = root / "efforts" / "db-pool.jsonl"
    with effort_log.open("a") as fh:
        fh.write(line("the pool size is 37 connections") + line("37, noted.", "assistant") + marker(2))
    with EffortIndex(root / "derived.sqlite") as index:
        sync_listed(index, root, ENTRIES)
        assert index.withdrawn_lines("ambient", 1, 100) == {31, 32, 33}
        assert index.withdrawn_lines("db-pool", 1, 10) == {2, 3, 4}
        assert index.withdrawn_lines("ambient", 1, 31) == {31} and index.withdrawn_lines("nobody", 1, 9) == set()
        assert not index.search("exchange above withdrawn")  # the marker's words are not in the index
        found = index.search("locker 4729")  # search still finds what was said (the raw log keeps it) ...
        assert found and "user (withdrawn): my **locker** code" in (found[0].passage or "")  # ... and says so
        assert not index.recall("what was my locker code at the climbing gym, 4729?")
        hits = index.recall("how many connections is the pool size, 37?")  # line 1 holds two of the words
        assert [m[0] for h in hits for m in h.messages] == [1]  # without its withdrawn neighbour
        raw.write_text(chatter(0, 30) + taken[: taken.rindex(marker(2))])  # rewritten without the marker
        sync_listed(index, root, ENTRIES)
        assert index.withdrawn_lines("ambient", 1, 100) == set()
        assert index.recall("what was my locker code at the climbing gym, 4729?")


def test_a_passage_shows_what_still_stands_when_a_withdrawn_copy_matches_too(root: Path) -> None:
    """A regenerated reply says what the withdrawn one said: the passage is placed on the one that stands."""
    raw = root / "raw.jsonl"
    said = line("what is the capital of Mongolia?") + line("Ulaanbaatar is the capital of Mongolia.", "assistant")
    raw.write_text(chatter(0, 30) + said + marker(2) + said + chatter(35, 30))
    with EffortIndex(root / "derived.sqlite") as index:
        sync_listed(index, root, ENTRIES)
        hit = index.search("capital of Mongolia")[0]
        assert hit.lines is not None and hit.lines[0] == 34  # the question asked again, not line 31
        assert "(withdrawn)" not in (hit.passage or "")


def test_a_note_is_found_and_recalled_as_an_agents_note_never_as_the_users_words(root: Path) -> None:
    """Issue 33, hole 6: a search passage and the model's recall layer said "user:" for a line an agent
    left with remember, passing its words off as the user's."""
    note = {"role": "user", "content": "the staging password rotates every Zanzibar Tuesday", "note": True}
    older = {"role": "user", "content": "deploys freeze on Zanzibar holidays", "source": "mcp"}  # an older note
    (root / "raw.jsonl").write_text(
        chatter(0, 40) + json.dumps(note | {"agent": "claude-code"}) + "\n" + json.dumps(older) + "\n"
    )
    with EffortIndex(root / "search.sqlite") as index:
        sync_listed(index, root, ENTRIES)
        passage = index.search("Zanzibar Tuesday")[0].passage or ""
        recalled = index.recall("when does the Zanzibar password rotate?")
    assert 'note from agent "claude-code": the staging password' in passage and "user: the staging" not in passage
    assert {role for hit in recalled for _line, role, _content in hit.messages} <= {
        'note from agent "claude-code"',
        "note from an agent",
    }
    assert recalled
