"""The effort list at scale: the standard dump written one block at a time (equal to PyYAML's dump of
the whole list), the journal that makes a save durable before the file is rewritten, a hand edit taken
in by reading only the blocks that changed, and the rows in ``derived.sqlite`` (rebuilt when missing,
broken or foreign, never trusted over the record they reflect)."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
import yaml

from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.manifest import effort_list, yaml_file
from ccm_tui.core.manifest.effort import Effort, ManifestError
from ccm_tui.core.manifest.effort_list import load_manifest, save_manifest
from ccm_tui.core.session.session import Session
from ccm_tui.core.storage.derived import APPLICATION_ID, SCHEMA_VERSION
from ccm_tui.core.storage.durable import StoreError
from ccm_tui.core.views.reports import status_text
from ccm_tui.core.views.status import session_status
from tests.helpers.sessionkit import concluded_effort, open_effort

TRICKY = [
    "quotes \"double\" and 'single': colon, # hash",
    "two\nlines\n\n  indented",
    "unicode: 日本語 — émoji 🎉 and a tab\t",
    "yes",
    "null",
    "0x1F",
    "- a list item?",
    "",
]


def _effort(i: int, summary: str) -> Effort:
    return Effort(
        id=f"e-{i}",
        name=f"Effort {i}: {summary[:10]}",
        status="concluded" if i % 2 else "open",
        summary=summary,
        raw_tokens=i * 1000 + 7,
        source={"format": "claude-code", "path": f"/home/u/{summary[:5]}.jsonl", "sha256": "ab" * 32},
    )


def _standard(entries: list[dict]) -> str:
    return yaml.dump({"efforts": entries}, sort_keys=False, allow_unicode=True, width=2**20)


def test_the_file_is_the_standard_dump_of_its_entries(tmp_path):
    path = tmp_path / "manifest.yaml"
    efforts = [_effort(i, s) for i, s in enumerate(TRICKY)]
    save_manifest(path, efforts)
    text = path.read_text(encoding="utf-8")

    assert text.startswith("# ccm-tui journal: events.jsonl@0\n")
    assert text[text.index("\n") + 1 :] == _standard([e.to_dict() for e in efforts])
    assert [e.summary for e in load_manifest(path)] == TRICKY


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text.replace("raw_tokens: 7", "raw_tokens: 7.5e3"),  # a float
        lambda text: yaml.safe_dump(yaml.safe_load(text), sort_keys=False, indent=4),  # another tool's layout
        lambda text: text.replace("name: ", "name:   ", 1),  # spacing
        lambda text: "# my notes\n" + text,  # a comment before the list: read whole
    ],
    ids=["exponent", "other-layout", "spacing", "comment"],
)
def test_a_hand_edited_manifest_reads_as_yaml_says(tmp_path, edit):
    path = tmp_path / "manifest.yaml"
    save_manifest(path, [_effort(i, s) for i, s in enumerate(TRICKY[:3])])
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")

    wanted = yaml.safe_load(path.read_text(encoding="utf-8"))["efforts"]

    assert [e.to_dict() for e in load_manifest(path)] == [
        Effort(**{**w, "raw_tokens": w["raw_tokens"] if isinstance(w["raw_tokens"], int) else 0}).to_dict()
        for w in wanted
    ]


def test_a_huge_number_is_a_manifest_error_not_a_crash(tmp_path):
    path = tmp_path / "manifest.yaml"
    save_manifest(path, [_effort(1, "s")])
    path.write_text(path.read_text().replace("raw_tokens: 1007", "raw_tokens: " + "9" * 6000))
    with pytest.raises(ManifestError, match="manifest.yaml"):
        load_manifest(path)


def _writer(directory) -> Session:
    return Session.open(directory)


def test_a_save_is_journaled_and_read_back_before_the_manifest_is_rewritten(tmp_path):
    session = _writer(tmp_path / "s")
    concluded_effort(session, "first topic")
    session.flush_manifest()
    before = (session.dir / "manifest.yaml").read_bytes()

    effort = open_effort(session, "second topic")  # saved, not flushed: as if killed now
    assert (session.dir / "manifest.yaml").read_bytes() == before
    lines = (session.dir / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert any(json.loads(line).get("event") == "efforts_saved" for line in lines)

    assert [e.id for e in load_manifest(session.dir / "manifest.yaml")] == ["first-topic", effort.id]
    reader = Session.open(session.dir, readonly=True)
    assert reader.efforts.get(effort.id) is not None and reader.efforts.get(effort.id).status == "open"
    session.lock.release()


def test_the_rewrite_copies_unchanged_entries_and_equals_a_full_dump(tmp_path):
    session = _writer(tmp_path / "s")
    for i in range(12):
        concluded_effort(session, f"topic {i}", summary=f"summary {i}: " + TRICKY[i % len(TRICKY)])
    session.flush_manifest()
    middle = session.efforts.get("topic-5")
    lifecycle.reopen(session, middle, turn=session.state.turn)
    session.save_manifest()
    session.flush_manifest()

    path = session.dir / "manifest.yaml"
    on_disk = yaml.safe_load(path.read_text(encoding="utf-8"))["efforts"]
    every = [e.to_dict() for e in session.efforts]
    assert on_disk == every
    text = path.read_text(encoding="utf-8")
    assert text[text.index("efforts:") :] == _standard(every)
    assert next(e for e in on_disk if e["id"] == "topic-5")["status"] == "open"
    session.lock.release()


def test_a_hand_edit_made_while_saves_wait_for_the_rewrite_is_kept(tmp_path):
    session = _writer(tmp_path / "s")
    concluded_effort(session, "edited by hand")
    session.flush_manifest()
    open_effort(session, "saved meanwhile")  # journaled, the manifest not yet rewritten

    path = session.dir / "manifest.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("A summary.", "Fixed by hand."), encoding="utf-8")
    session.flush_manifest()

    efforts = {e.id: e for e in load_manifest(path)}
    assert efforts["edited-by-hand"].summary == "Fixed by hand."
    assert efforts["saved-meanwhile"].status == "open"
    session.lock.release()


@pytest.mark.parametrize("damage", ["delete", "garbage", "foreign", "older"])
def test_a_missing_broken_or_foreign_derived_database_is_rebuilt_from_the_record(tmp_path, damage):
    session = _writer(tmp_path / "s")
    concluded_effort(session, "kept")
    open_effort(session, "still open")  # journaled only: the file does not have it yet
    session.lock.release()
    derived = session.dir / "derived.sqlite"
    session.derived.close()
    for leftover in session.dir.glob("derived.sqlite*"):
        leftover.unlink()
    if damage == "garbage":
        derived.write_bytes(b"not a database at all" * 100)
    elif damage in ("foreign", "older"):
        db = sqlite3.connect(derived)
        db.execute("CREATE TABLE entries (x)")
        db.execute(f"PRAGMA application_id = {APPLICATION_ID if damage == 'older' else 1}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1 if damage == 'older' else 7}")
        db.commit()
        db.close()

    again = Session.open(session.dir)

    assert [e.id for e in again.efforts] == ["kept", "still-open"]
    assert again.efforts.get("still-open").active
    again.close()


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_derived_database_that_is_not_a_regular_file_is_refused_in_one_line(tmp_path, kind):
    session = _writer(tmp_path / "s")
    concluded_effort(session, "kept")
    session.close()
    for leftover in session.dir.glob("derived.sqlite*"):
        leftover.unlink()
    victim = tmp_path / "elsewhere.sqlite"
    victim.write_bytes(b"")
    if kind == "symlink":
        os.symlink(victim, session.dir / "derived.sqlite")
    else:
        os.mkfifo(session.dir / "derived.sqlite")

    with pytest.raises(StoreError, match="derived.sqlite"):
        Session.open(session.dir, readonly=True)
    assert victim.read_bytes() == b""


def test_a_session_directory_holds_one_derived_database(tmp_path):
    session = _writer(tmp_path / "s")
    concluded_effort(session, "kept")
    session.close()
    for old in ("search.sqlite", "search.sqlite-wal", ".manifest.sqlite", ".manifest.sqlite-shm"):
        (session.dir / old).write_bytes(b"an old derived file")

    reader = Session.open(session.dir, readonly=True)
    assert [e.id for e in reader.efforts] == ["kept"]
    reader.close()

    databases = {p.name for p in session.dir.iterdir() if ".sqlite" in p.name}
    assert databases <= {"derived.sqlite", "derived.sqlite-wal", "derived.sqlite-shm"}
    assert "derived.sqlite" in databases


def test_a_reader_of_a_directory_it_cannot_write_keeps_the_rows_in_memory(tmp_path):
    session = _writer(tmp_path / "s")
    concluded_effort(session, "kept")
    open_effort(session, "journaled")
    session.close()
    for leftover in session.dir.glob("derived.sqlite*"):
        leftover.unlink()
    session.dir.chmod(0o555)
    try:
        if os.access(session.dir, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        reader = Session.open(session.dir, readonly=True)
        assert [e.id for e in reader.efforts] == ["kept", "journaled"]
        reader.close()
        assert not (session.dir / "derived.sqlite").exists()
    finally:
        session.dir.chmod(0o755)


def test_a_hand_edit_of_one_entry_reads_only_its_block(tmp_path, monkeypatch):
    session = _writer(tmp_path / "s")
    for i in range(30):
        concluded_effort(session, f"topic {i}", summary=f"summary {i}")
    session.flush_manifest()
    session.lock.release()
    path = session.dir / "manifest.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("summary 17\n", "fixed by hand\n"), encoding="utf-8")
    parsed = []
    real = yaml_file.parse_block
    monkeypatch.setattr(effort_list, "parse_block", lambda block, where: parsed.append(block) or real(block, where))

    assert session.refresh_if_changed() is False  # (no event: the stamp tells)
    session.load()

    assert session.efforts.get("topic-17").summary == "fixed by hand"
    assert len(parsed) == 1 and b"topic-17" in parsed[0]
    assert [e.id for e in session.efforts] == [f"topic-{i}" for i in range(30)]


def test_an_old_shape_manifest_is_read_and_rewritten_once_in_the_standard_dump(tmp_path):
    directory = tmp_path / "s"
    directory.mkdir()
    entries = [{**_effort(i, s).to_dict(), "status": "concluded"} for i, s in enumerate(TRICKY[:4])]
    old = "# ccm-tui journal: events.jsonl@0\nefforts:\n" + "".join(
        "".join(
            f"{'  - ' if k == 0 else '    '}{key}: {json.dumps(v, ensure_ascii=False)}\n"
            for k, (key, v) in enumerate(e.items())
        )
        for e in entries
    )
    (directory / "manifest.yaml").write_text(old, encoding="utf-8")

    session = _writer(directory)
    assert [e.to_dict() for e in session.efforts] == entries
    assert session.flush_manifest() is True
    text = (directory / "manifest.yaml").read_text(encoding="utf-8")
    assert text[text.index("efforts:") :] == _standard(entries)
    assert session.flush_manifest() is False  # once
    session.close()


def test_another_process_s_save_is_seen_without_rereading_every_entry(tmp_path):
    session = _writer(tmp_path / "s")
    concluded_effort(session, "old one")
    session.close()
    reader = Session.open(session.dir, readonly=True)

    writer = _writer(session.dir)
    open_effort(writer, "new one")  # journaled only
    writer.lock.release()

    assert reader.refresh_if_changed()
    assert reader.efforts.get("new-one") is not None


def test_status_lists_the_newest_concluded_and_counts_the_rest(tmp_path):
    session = _writer(tmp_path / "s")
    for i in range(40):
        concluded_effort(session, f"topic {i}")
        if i < 35:  # out of working memory: only the newest summaries stay in use
            lifecycle.evict_summary(session, f"topic-{i}")
    open_effort(session, "current")

    status = session_status(session)

    assert status.effort_count == 41 and status.concluded_count == 40
    listed = [e.id for e in status.efforts if not e.state.is_open]
    # the five summaries in working memory, then the 30 latest conclusions among the rest
    assert listed == [f"topic-{i}" for i in range(35, 40)] + [f"topic-{i}" for i in range(34, 4, -1)]
    assert status.unlisted == 5
    context = {"layers": {}, "total": 0, "budget": 1, "naive": 0, "savings": 0.0}
    assert "5 older concluded" in status_text(status, {"context": context, "session_dir": str(session.dir)})
    session.lock.release()


def test_the_index_skips_a_sync_it_does_not_need_and_sees_a_hand_written_log(tmp_path):
    from ccm_tui.core.search import EffortIndex
    from ccm_tui.core.search.sync import sync_index

    session = _writer(tmp_path / "s")
    concluded_effort(session, "billing", [{"role": "user", "content": "migrate the billing database"}])
    with EffortIndex(session.derived) as index:
        sync_index(index, session)
        assert index.synced_marker() == session.index_marker()
        assert [h.id for h in index.search("billing")] == ["billing"]

        # a log written by hand (saved through a new file, as editors do): the marker moves
        log = session.effort_path("billing")
        replacement = log.with_suffix(".new")
        replacement.write_text(log.read_text() + json.dumps({"role": "user", "content": "zeppelin"}) + "\n")
        replacement.replace(log)
        assert index.synced_marker() != session.index_marker()
        sync_index(index, session)
        assert [h.id for h in index.search("zeppelin")] == ["billing"]
    session.lock.release()


def test_manifest_round_trip_and_clear_errors(tmp_path):
    path = tmp_path / "manifest.yaml"
    save_manifest(path, [Effort(id="a", status="concluded", summary="s"), Effort(id="b", active=True)])
    efforts = load_manifest(path)
    assert [(e.id, e.status, e.active, e.raw_file) for e in efforts] == [
        ("a", "concluded", False, "efforts/a.jsonl"),
        ("b", "open", True, "efforts/b.jsonl"),
    ]
    path.write_text("efforts:\n  - id: a\n   status: [\n")  # (an old shape, broken)
    with pytest.raises(ManifestError, match=r"manifest.yaml line \d+"):
        load_manifest(path)
    path.write_text("efforts:\n  - id: ../evil\n")
    with pytest.raises(ManifestError, match="invalid id"):
        load_manifest(path)
    path.write_text("efforts:\n  - id: a\n    raw_file: /etc/passwd\n")
    assert load_manifest(path)[0].raw_file == "efforts/a.jsonl"


def test_a_hand_edit_of_the_manifest_is_read(tmp_path):
    path = tmp_path / "manifest.yaml"
    save_manifest(path, [Effort(id="a", status="concluded", summary='first: "quoted"\nsecond line')])
    assert load_manifest(path)[0].summary == 'first: "quoted"\nsecond line'
    import yaml

    assert yaml.safe_load(path.read_text())["efforts"][0]["summary"] == 'first: "quoted"\nsecond line'
    path.write_text(path.read_text().replace("first", "edited"))  # a hand edit
    assert load_manifest(path)[0].summary.startswith("edited")


def test_a_save_that_cannot_be_journaled_leaves_memory_saying_what_disk_says(tmp_path):
    session = _writer(tmp_path / "s")
    kept = open_effort(session, "kept open")
    session.flush_manifest()
    kept.summary = "changed in memory only"
    session.efforts.set_status(kept, "concluded")
    added = Effort(id="never-saved", name="never saved")
    session.efforts.add(added)

    def full_disk(entries):
        raise StoreError("No space left on device")

    with pytest.raises(StoreError):
        session.efforts.save(full_disk)

    assert session.efforts.get("kept-open") is kept  # the same object, as the record has it again
    assert kept.status == "open" and kept.summary is None and kept in session.efforts.open_efforts()
    assert session.efforts.get("never-saved") is None and len(session.efforts) == 1
    session.save_manifest()  # nothing is left to journal later: the failed change is not written behind the user's back
    assert [e.to_dict() for e in load_manifest(session.dir / "manifest.yaml")] == [kept.to_dict()]
    session.lock.release()


def test_how_far_the_file_lags_the_journal_is_known_and_cleared_by_a_flush(tmp_path):
    session = _writer(tmp_path / "s")
    concluded_effort(session, "first topic")
    session.flush_manifest()
    assert session.efforts.unflushed_bytes() == 0

    size = (session.dir / "events.jsonl").stat().st_size
    open_effort(session, "second topic")
    grown = (session.dir / "events.jsonl").stat().st_size - size
    assert grown > 0 and session.efforts.unflushed_bytes() == grown
    session.flush_manifest()
    assert session.efforts.unflushed_bytes() == 0
    session.lock.release()


def test_a_reader_that_cannot_wait_for_the_rows_still_sees_every_journaled_save(tmp_path, monkeypatch):
    session = _writer(tmp_path / "s")
    concluded_effort(session, "first topic")
    session.flush_manifest()
    session.lock.release()
    entry = Effort(id="journaled-only", name="journaled only", status="open", active=True, raw_tokens=40)
    with open(session.dir / "events.jsonl", "a", encoding="utf-8") as fh:  # another writer's save, rows not yet
        fh.write(json.dumps({"event": "efforts_saved", "entries": [entry.to_dict()]}, separators=(",", ":")) + "\n")

    holder = sqlite3.connect(session.dir / "derived.sqlite")
    holder.execute("BEGIN IMMEDIATE")  # a long write by another process: the rows cannot catch up now
    monkeypatch.setattr("ccm_tui.core.session.session.READER_WAIT", 0.05)
    try:
        reader = Session.open(session.dir, readonly=True)
        assert reader.efforts.get("journaled-only") is not None
        assert reader.efforts.active is not None and reader.efforts.active.id == "journaled-only"
        assert len(reader.efforts) == 2 and reader.efforts.concluded_count == 1
        assert [e.id for e in reader.efforts] == ["first-topic", "journaled-only"]
    finally:
        holder.rollback()
        holder.close()


def test_a_row_is_marked_for_the_search_index_only_when_its_summary_or_name_changed(tmp_path):
    session = _writer(tmp_path / "s")
    effort = concluded_effort(session, "marked", summary="First words.")
    other = open_effort(session, "other")
    conn = session.derived.conn

    def stale():
        return [i for (i,) in conn.execute("SELECT id FROM entries WHERE fts_stale = 1 ORDER BY ord")]

    assert stale() == ["marked", "other"]  # new rows
    conn.execute("UPDATE entries SET fts_stale = 0")  # (what the index's sync does once it wrote them)
    lifecycle.reopen(session, effort, turn=1)  # the status, the active effort, counts: not the summary
    assert stale() == []
    lifecycle.conclude(session, effort, "Second words.", turn=2)
    assert stale() == ["marked"]
    conn.execute("UPDATE entries SET fts_stale = 0")
    other.name = "Renamed"
    session.save_manifest()
    assert stale() == ["other"]
    session.lock.release()


def test_a_database_rebuilt_under_a_live_list_is_caught_up_from_the_record(tmp_path):
    """A corrupt file found by any part is deleted and built again while the list is held: its next
    query takes the record in once (it recursed until the stack ran out)."""
    session = _writer(tmp_path / "s")
    concluded_effort(session, "kept")
    session.flush_manifest()
    open_effort(session, "journaled only")
    session.derived._reconnect(discard=True)  # what DerivedDB.run does on a corrupt file

    assert [e.id for e in session.efforts.concluded_page(0, 5)] == ["kept"]
    assert "journaled-only" in session.efforts and len(session.efforts) == 2
    session.lock.release()
