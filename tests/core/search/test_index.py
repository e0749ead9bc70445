"""EffortIndex: ranking, incremental log sync, robustness of queries and of the db file."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccm_tui.core.search import DerivedError, EffortIndex, SearchHit, query_terms
from ccm_tui.core.search import _query as search_query
from ccm_tui.core.search import _ranking as search_mod
from ccm_tui.core.search import _records as search_records
from ccm_tui.core.search._ingest import Ingest
from ccm_tui.core.search._ranking import Ranking
from ccm_tui.core.storage import derived as derived_database
from tests.helpers.listed_efforts import list_efforts, sync_listed

FILLER = [
    ("weekly-notes", "concluded", "Weekly planning notes and calendar review"),
    ("css-layout", "concluded", "Adjusted the sidebar layout and colours"),
    ("release-1-2", "concluded", "Tagged release 1.2 and wrote the changelog"),
    ("docs-typos", "concluded", "Fixed typos in the installation guide"),
]


def record(content: Any, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": content, "ts": "2025-01-01T00:00:00Z"}


def line(content: Any, role: str = "user") -> str:
    return json.dumps(record(content, role)) + "\n"


class Session:
    """A session directory with efforts/<id>.jsonl logs and an effort list (id → status, summary, name)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "efforts").mkdir(parents=True)
        self.manifest: dict[str, tuple[str, str | None, str]] = {}

    def log(self, effort_id: str) -> Path:
        return self.root / "efforts" / f"{effort_id}.jsonl"

    def add(
        self, effort_id: str, status: str, summary: str | None, messages: list[str] | None = None, name: str = ""
    ) -> None:
        self.manifest[effort_id] = (status, summary, name)
        self.append(effort_id, *(messages or []))

    def append(self, effort_id: str, *messages: str) -> None:
        with self.log(effort_id).open("a", encoding="utf-8") as fh:
            fh.write("".join(line(m) for m in messages))

    def entries(self) -> list[tuple[str, str, str | None, str]]:
        return [(eid, *fields) for eid, fields in self.manifest.items()]

    def listed(self, index: EffortIndex) -> None:
        """The effort list as ``manifest`` says, in the index's database (as a session's load leaves it)."""
        list_efforts(index, self.root, self.entries())

    def sync(self, index: EffortIndex) -> int:
        return sync_listed(index, self.root, self.entries())


@pytest.fixture
def session(tmp_path: Path) -> Session:
    s = Session(tmp_path / "session")
    for effort_id, status, summary in FILLER:
        s.add(effort_id, status, summary, ["nothing relevant here", "just some chatter about plans"])
    return s


@pytest.fixture
def index(session: Session) -> Iterator[EffortIndex]:
    with EffortIndex(session.root / "derived.sqlite") as idx:
        yield idx


def ids(hits: list[SearchHit]) -> list[str]:
    return [h.id for h in hits]


# --------------------------------------------------------------------------- ranking


def test_summary_match_beats_a_passing_mention_in_a_long_log(session: Session, index: EffortIndex) -> None:
    session.add("oauth-fix", "concluded", "Fixed the OAuth token refresh race")
    chatter = ["long discussion about unrelated things"] * 80
    session.add("big-log", "open", None, chatter + ["by the way, oauth"])
    session.sync(index)
    hits = index.search("oauth")
    assert ids(hits) == ["oauth-fix", "big-log"]
    assert hits[0].score > hits[1].score > 0


def test_summary_match_wins_even_in_a_tiny_session(tmp_path: Path) -> None:
    s = Session(tmp_path / "s")
    s.add("a", "concluded", "Migrated the billing database")
    s.add("b", "open", None, ["we should look at billing later"])
    with EffortIndex(s.root / "derived.sqlite") as idx:
        s.sync(idx)
        assert ids(idx.search("billing")) == ["a", "b"]


def test_more_matched_terms_rank_higher(session: Session, index: EffortIndex) -> None:
    session.add("one-term", "concluded", "Investigated websocket behaviour")
    session.add("two-terms", "concluded", "Investigated websocket reconnect storms")
    session.add("log-one", "open", None, ["the reconnect logic needs work"])
    session.add("log-two", "open", None, ["reconnect of the websocket fails"])
    session.sync(index)
    hits = ids(index.search("websocket reconnect"))
    assert hits.index("two-terms") < hits.index("one-term")
    assert hits.index("log-two") < hits.index("log-one")
    assert hits.index("one-term") < hits.index("log-one")  # a word in the summary beats the other word in a log
    # (a log message holding both words, "log-two", may rank above a summary holding one of them)


def test_stemming_matches_inflections(session: Session, index: EffortIndex) -> None:
    session.add("pool", "concluded", "Tuned the database connection pool")
    session.sync(index)
    assert ids(index.search("connections")) == ["pool"]
    assert ids(index.search("pooling")) == ["pool"]


def test_diacritics_are_ignored(session: Session, index: EffortIndex) -> None:
    session.add("menu", "concluded", "Designed the café menu")
    session.add("resume", "open", None, ["update the resume template"])
    session.sync(index)
    assert ids(index.search("cafe")) == ["menu"]
    assert ids(index.search("CAFÉ")) == ["menu"]
    assert ids(index.search("résumé")) == ["resume"]


def test_hyphenated_id_is_found_by_its_words(session: Session, index: EffortIndex) -> None:
    session.add("fix-auth-bug", "concluded", "Repaired the sign-in flow")
    session.sync(index)
    assert ids(index.search("auth bug"))[0] == "fix-auth-bug"
    assert ids(index.search("fix-auth-bug"))[0] == "fix-auth-bug"


def test_name_is_searchable_and_follows_the_list(session: Session, index: EffortIndex) -> None:
    session.add("e1", "open", None, name="Quarterly budget")
    session.sync(index)
    assert ids(index.search("budget")) == ["e1"]
    session.manifest["e1"] = ("concluded", "Done", "Quarterly budget")
    session.sync(index)
    assert ids(index.search("budget")) == ["e1"]
    session.manifest["e1"] = ("concluded", "Done", "Yearly plan")
    session.sync(index)
    assert index.search("budget") == []
    assert ids(index.search("yearly")) == ["e1"]


def test_ties_are_broken_by_id(tmp_path: Path) -> None:
    with EffortIndex(tmp_path / "i.sqlite") as idx:
        sync_listed(
            idx, tmp_path, [(i, "concluded", "Same words exactly") for i in ("c-effort", "a-effort", "b-effort")]
        )
        hits = idx.search("words")
        assert ids(hits) == ["a-effort", "b-effort", "c-effort"]
        assert len({h.score for h in hits}) == 1


def test_limit_and_order(session: Session, index: EffortIndex) -> None:
    for i in range(15):
        session.add(f"e{i:02}", "concluded", "parser work " + "parser " * (i % 3))
    session.sync(index)
    hits = index.search("parser", limit=5)
    assert len(hits) == 5
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert index.search("parser", limit=0) == []


# --------------------------------------------------------------------------- status, snippets


def test_concluded_efforts_are_found_and_status_filters(session: Session, index: EffortIndex) -> None:
    session.add("old", "concluded", "Archived kafka consumer tuning")  # long evicted from working memory
    session.add("new", "open", None, ["kafka consumer lag again"])
    session.sync(index)
    assert ids(index.search("kafka")) == ["old", "new"]
    assert ids(index.search("kafka", status="open")) == ["new"]
    assert ids(index.search("kafka", status="concluded")) == ["old"]
    assert index.search("kafka", status="nonexistent") == []
    hit = index.search("kafka")[0]
    assert (hit.status, hit.summary) == ("concluded", "Archived kafka consumer tuning")


def test_a_status_change_is_read_from_the_list_and_a_summary_change_rewrites_one_document(
    session: Session, index: EffortIndex
) -> None:
    session.add("e", "open", None, ["draft of the rollout"])
    session.sync(index)
    session.manifest["e"] = ("concluded", "Rolled out the feature flags", "")
    session.listed(index)
    assert index.search("rollout")[0].status == "concluded"  # before any sync: the status is the list's
    assert index.search("flags") == []  # ... the summary's words wait for its meta document
    assert index.sync_efforts() == 1  # that one, not the others
    assert index.search("flags")[0].status == "concluded"
    session.manifest["e"] = ("open", None, "")  # reopened
    session.sync(index)
    assert index.search("flags") == []
    assert index.search("rollout")[0].status == "open"
    session.manifest["e"] = ("concluded", "Rolled out feature toggles", "")  # re-concluded
    session.sync(index)
    assert ids(index.search("toggles")) == ["e"]
    session.manifest["e"] = ("open", "Rolled out feature toggles", "")  # the status alone
    session.listed(index)
    assert index.sync_efforts() == 0  # no meta document depends on it
    assert [(h.id, h.status) for h in index.search("toggles")] == [("e", "open")]


def test_snippet_marks_terms_in_summary_or_best_message(session: Session, index: EffortIndex) -> None:
    session.add("s", "concluded", "Benchmarked the **bold** tokenizer against the old one")
    session.add("m", "open", None, ["intro " * 60, "the tokenizer crashed on emoji input", "outro " * 60])
    session.sync(index)
    by_id = {h.id: h for h in index.search("tokenizer")}
    assert "**tokenizer**" in by_id["s"].snippet
    assert by_id["m"].snippet.startswith("…") or "**tokenizer**" in by_id["m"].snippet
    assert "the **tokenizer** crashed" in by_id["m"].snippet
    assert len(by_id["m"].snippet) <= 200
    long = "word " * 100 + "needle " + "word " * 100
    session.add("long", "concluded", long)
    session.sync(index)
    snippet = index.search("needle")[0].snippet
    assert "**needle**" in snippet and len(snippet) <= 200


def test_stemmed_match_is_marked(session: Session, index: EffortIndex) -> None:
    session.add("e", "concluded", "Handled dropped connections gracefully")
    session.sync(index)
    assert "**connections**" in index.search("connection")[0].snippet


# --------------------------------------------------------------------------- queries never raise


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unbalanced',
        "auth*",
        "*",
        "NEAR(",
        "NEAR(a b",
        "-auth",
        "auth:bug",
        "summary:auth",
        "^auth",
        "(auth",
        "auth)",
        "a AND",
        "OR",
        "NOT auth",
        "{summary}: x",
        "auth + bug",
        "'; DROP TABLE efforts; --",
        "\x00",
        "é",
        "🙂 auth 🙂",
        "a" * 5000,
        " ".join(f"w{i}" for i in range(200)),
    ],
)
def test_fts_syntax_in_queries_never_raises(session: Session, index: EffortIndex, query: str) -> None:
    session.add("fix-auth-bug", "concluded", "Auth bug fixed")
    session.sync(index)
    hits = index.search(query)
    assert isinstance(hits, list)
    if "auth" in query.lower().replace("-auth", " auth"):
        assert "fix-auth-bug" in ids(hits)


@pytest.mark.parametrize("query", ["", "   ", "!!!", "-- ** ()", "_", '""'])
def test_queries_without_words_return_nothing(index: EffortIndex, query: str) -> None:
    assert index.search(query) == []


def test_query_terms() -> None:
    assert query_terms('Fix "auth"-bug* NEAR(x)') == ["fix", "auth", "bug", "near", "x"]
    assert query_terms("snake_case Café café") == ["snake", "case", "café"]
    assert len(query_terms(" ".join(f"t{i}" for i in range(100)))) == search_query.MAX_QUERY_TERMS


# --------------------------------------------------------------------------- incremental logs


def test_torn_last_line_is_indexed_once_completed(tmp_path: Path) -> None:
    log = tmp_path / "e.jsonl"
    full = line("zeppelin arrives")
    log.write_text(line("first line") + full[:15], encoding="utf-8")
    with EffortIndex(tmp_path / "i.sqlite") as idx:
        list_efforts(idx, tmp_path, [("e", "open", None)])
        assert idx.sync_effort_log("e", log) == 1
        assert idx.search("zeppelin") == []
        with log.open("a", encoding="utf-8") as fh:
            fh.write(full[15:])
        assert idx.sync_effort_log("e", log) == 1
        assert ids(idx.search("zeppelin")) == ["e"]
        assert idx.sync_effort_log("e", log) == 0


def test_invalid_lines_are_skipped_but_counted(tmp_path: Path) -> None:
    log = tmp_path / "e.jsonl"
    log.write_text(line("alpha") + "{not json\n" + "\n" + '"a string"\n' + line("omega"), encoding="utf-8")
    with EffortIndex(tmp_path / "i.sqlite") as idx:
        list_efforts(idx, tmp_path, [("e", "open", None)])
        assert idx.sync_effort_log("e", log) == 2
        assert ids(idx.search("omega")) == ["e"]
        idx.add_messages("e", [record("psi")], start_line=5)  # numbering continues after the 5 lines
        with log.open("a", encoding="utf-8") as fh:
            fh.write(line("psi"))
        assert idx.sync_effort_log("e", log) == 0  # already indexed by add_messages


def test_multipart_content_is_indexed(tmp_path: Path) -> None:
    with EffortIndex(tmp_path / "i.sqlite") as idx:
        list_efforts(idx, tmp_path, [("e", "open", None)])
        idx.add_messages("e", [record([{"type": "text", "text": "quasar"}, "pulsar"]), {"role": "user"}], 0)
        assert ids(idx.search("quasar")) == ["e"]
        assert ids(idx.search("pulsar")) == ["e"]


def test_add_messages_then_sync_does_not_duplicate(tmp_path: Path) -> None:
    log = tmp_path / "e.jsonl"
    with EffortIndex(tmp_path / "i.sqlite") as idx:
        list_efforts(idx, tmp_path, [("e", "open", None)])
        for n, text in enumerate(["kiwi one", "kiwi two", "kiwi three"]):
            log.open("a", encoding="utf-8").write(line(text))
            assert idx.add_messages("e", [record(text)], start_line=n) == 1
        assert idx.sync_effort_log("e", log) == 0
        rows = idx._database.conn.execute("SELECT count(*) FROM msg_fts").fetchone()[0]
        assert rows == 3


def test_an_effort_the_list_does_not_hold_is_not_indexed(tmp_path: Path) -> None:
    log = tmp_path / "efforts" / "e.jsonl"
    log.parent.mkdir()
    log.write_text(line("quetzal sighting"), encoding="utf-8")
    with EffortIndex(tmp_path / "i.sqlite") as idx:
        assert idx.sync_effort_log("e", log) == 0  # not saved yet (or deleted): nothing of it is indexed
        assert idx.add_messages("e", [record("quetzal again")], start_line=1) == 0
        assert idx.search("quetzal") == []
        assert sync_listed(idx, tmp_path, [("e", "open", None)]) == 1  # once saved, its log is read
        assert ids(idx.search("quetzal")) == ["e"]


def test_truncated_log_is_reindexed(tmp_path: Path) -> None:
    log = tmp_path / "e.jsonl"
    log.write_text(line("mango") + line("papaya"), encoding="utf-8")
    with EffortIndex(tmp_path / "i.sqlite") as idx:
        list_efforts(idx, tmp_path, [("e", "open", None)])
        assert idx.sync_effort_log("e", log) == 2
        with log.open("r+b") as fh:
            fh.truncate(0)
        log.write_text(line("guava"), encoding="utf-8")
        assert idx.sync_effort_log("e", log) == 1
        assert idx.search("mango papaya") == []
        assert ids(idx.search("guava")) == ["e"]


def test_replaced_log_is_reindexed(tmp_path: Path) -> None:
    log = tmp_path / "e.jsonl"
    log.write_text(line("mango") + line("papaya"), encoding="utf-8")
    with EffortIndex(tmp_path / "i.sqlite") as idx:
        list_efforts(idx, tmp_path, [("e", "open", None)])
        idx.sync_effort_log("e", log)
        tmp = tmp_path / "new.jsonl"
        tmp.write_text(line("lychee") + line("papaya") + line("durian"), encoding="utf-8")
        os.replace(tmp, log)  # new inode, longer file
        assert idx.sync_effort_log("e", log) == 3
        assert idx.search("mango") == []
        assert ids(idx.search("lychee durian")) == ["e"]


def test_log_rewritten_in_place_is_reindexed(tmp_path: Path) -> None:
    log = tmp_path / "e.jsonl"
    log.write_text(line("mango"), encoding="utf-8")
    with EffortIndex(tmp_path / "i.sqlite") as idx:
        list_efforts(idx, tmp_path, [("e", "open", None)])
        idx.sync_effort_log("e", log)
        with log.open("r+", encoding="utf-8") as fh:  # same inode, same prefix length, new bytes
            fh.write(line("melon") + line("fig"))
        assert idx.sync_effort_log("e", log) == 2
        assert idx.search("mango") == []
        assert ids(idx.search("melon")) == ["e"]


def test_deleted_log_drops_its_messages(session: Session, index: EffortIndex) -> None:
    session.add("e", "open", None, ["ephemeral content"])
    session.sync(index)
    session.log("e").unlink()
    session.sync(index)
    assert index.search("ephemeral") == []


def test_sync_session_skips_unchanged_logs(
    session: Session, index: EffortIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    real_open = search_records.open_log

    def counting_open(path: Any) -> Any:
        opened.append(Path(path).stem)
        return real_open(path)

    monkeypatch.setattr(search_records, "open_log", counting_open)
    session.add("a", "open", None, ["apricot"])
    assert session.sync(index) == 2 * len(FILLER) + 1
    assert len(opened) == len(FILLER) + 1
    opened.clear()
    assert session.sync(index) == 0
    assert opened == []
    session.append("a", "blueberry")
    assert session.sync(index) == 1
    assert opened == ["a"]
    assert ids(index.search("blueberry")) == ["a"]
    opened.clear()
    session.manifest["a"] = ("concluded", "Apricot harvest summary", "")  # summary change: no log read
    assert session.sync(index) == 0
    assert opened == []
    assert index.search("harvest")[0].status == "concluded"


def test_an_effort_deleted_from_the_list_leaves_the_index(session: Session, index: EffortIndex) -> None:
    session.add("gone", "concluded", "Obsolete walrus effort", ["walrus"])
    session.sync(index)
    assert ids(index.search("walrus")) == ["gone"]
    del session.manifest["gone"]
    session.listed(index)
    assert index.search("walrus") == []  # at once: a document the list does not hold is no result
    assert index.sync_efforts() == 0  # ... and its documents go with the next sync, no log read
    db = index.database.conn
    assert db.execute("SELECT count(*) FROM msg_fts").fetchone()[0] == 2 * len(FILLER)
    assert db.execute("SELECT count(*) FROM efforts").fetchone()[0] == len(FILLER)
    assert db.execute("SELECT count(*) FROM entries_gone").fetchone()[0] == 0
    session.add("gone", "concluded", "Obsolete walrus effort")  # listed again: its log is read again
    session.sync(index)
    assert ids(index.search("walrus")) == ["gone"]


def test_index_persists_across_reopen(session: Session) -> None:
    session.add("p", "concluded", "Persistent platypus")
    db = session.root / "derived.sqlite"
    with EffortIndex(db) as idx:
        session.sync(idx)
        assert idx.recreated
    with EffortIndex(db) as idx:
        assert not idx.recreated
        assert ids(idx.search("platypus")) == ["p"]
        assert session.sync(idx) == 0


def test_small_postings_windows_give_exact_scores(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    """Frequent terms are read through capped windows; short-listed efforts get exact evidence."""
    for i in range(30):
        words = ["common"] * (1 + i % 4) + (["rare"] if i % 7 == 0 else [])
        status = "concluded" if i % 2 else "open"
        session.add(f"e{i:02}", status, "summary " + " ".join(words[:2]), [" ".join(words)] * 3)
    with EffortIndex(session.root / "derived.sqlite") as idx:
        session.sync(idx)
        exact = {h.id: h.score for h in idx.search("common rare summary", limit=50)}
        for name in ("MESSAGE_WINDOW", "META_WINDOW", "MIN_WINDOW"):
            monkeypatch.setattr(search_mod, name, 4)
        windowed = idx.search("common rare summary", limit=50)
        assert windowed
        for hit in windowed:
            assert hit.score == pytest.approx(exact[hit.id], rel=0.25)  # IDFs are estimated, evidence exact


# --------------------------------------------------------------------------- the database file


def test_corrupt_db_file_is_rebuilt(session: Session) -> None:
    db = session.root / "derived.sqlite"
    db.write_bytes(b"this is not a database at all" * 200)
    with EffortIndex(db) as idx:
        assert idx.recreated
        session.sync(idx)
        assert ids(idx.search("changelog")) == ["release-1-2"]


def test_foreign_sqlite_db_is_replaced(session: Session) -> None:
    db = session.root / "derived.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE precious (x)")
    conn.commit()
    conn.close()
    with EffortIndex(db) as idx:
        session.sync(idx)
        assert ids(idx.search("typos")) == ["docs-typos"]


def test_corruption_found_later_is_recovered(session: Session) -> None:
    db = session.root / "derived.sqlite"
    with EffortIndex(db) as idx:
        session.sync(idx)
    data = bytearray(db.read_bytes())
    page = 4096
    for offset in range(page, len(data), 7):  # keep the header page, smash the rest
        data[offset] = 0xA5
    db.write_bytes(bytes(data))
    with EffortIndex(db) as idx:
        assert isinstance(idx.search("changelog"), list)  # no exception, whatever was left
        session.sync(idx)
        assert ids(idx.search("changelog")) == ["release-1-2"]


def test_unwritable_location_raises_search_index_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(DerivedError):
        EffortIndex(blocker / "sub" / "derived.sqlite")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores permissions")
def test_read_only_directory_raises_search_index_error(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(DerivedError, match="not writable"):
            EffortIndex(ro / "derived.sqlite")
    finally:
        ro.chmod(0o700)


def test_closed_index_raises(tmp_path: Path) -> None:
    idx = EffortIndex(tmp_path / "i.sqlite")
    idx.close()
    idx.close()
    with pytest.raises(DerivedError):
        idx.search("x")


def test_missing_fts5_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived_database, "_has_fts5", lambda conn: False)
    with pytest.raises(DerivedError, match="FTS5"):
        EffortIndex(tmp_path / "i.sqlite")


def test_wal_mode(index: EffortIndex) -> None:
    assert index._database.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_corruption_during_an_operation_rebuilds_and_retries(
    session: Session, index: EffortIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    session.sync(index)
    real = Ingest._sync_entry
    calls = {"n": 0}

    def flaky(self: Ingest, *args: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.DatabaseError("database disk image is malformed")
        return real(self, *args)

    monkeypatch.setattr(Ingest, "_sync_entry", flaky)
    session.add("late", "concluded", "Added after the corruption")
    session.listed(index)
    assert index.sync_session(session.root) == 0  # retried on a new file, which lost the effort rows too
    assert index.recreated and index.search("changelog") == []
    assert session.sync(index) == 2 * len(FILLER)  # the rows catch up from the record (search.sync does this)
    assert ids(index.search("corruption")) == ["late"]
    assert ids(index.search("changelog")) == ["release-1-2"]


def test_other_sqlite_errors_surface_as_search_index_error(index: EffortIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    def locked(self: Ranking, *args: Any) -> Any:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(Ranking, "_search", locked)
    with pytest.raises(DerivedError, match="locked"):
        index.search("anything")
