"""The core's reads under the MCP server, in-process: the reader that never waits (SessionReader), the index's
busy wait, paging through a log."""

from __future__ import annotations

import ast
import json
import sqlite3
from pathlib import Path

import pytest

import ccm_tui.core.engine.engine as engine_module
import ccm_tui.core.engine.reader as reader_module
import ccm_tui.core.service.controller as controller_module
from ccm_tui.config import Settings
from ccm_tui.core.api import SessionReader, StoreError
from ccm_tui.core.engine.engine import Engine
from ccm_tui.core.search import DerivedBusy, EffortIndex
from ccm_tui.core.session.lock import SessionLock
from ccm_tui.core.session.numbered_lines import LineRangeError, page
from ccm_tui.errors import EffortNotFound
from tests.helpers.mcp_session import DETAIL

SETTINGS = Settings()


def append_ambient(session_dir, content: str) -> None:
    """Another process's write, as it lands on disk: the log line, then its event."""
    with open(session_dir / "raw.jsonl", "a", encoding="utf-8") as raw:
        raw.write(json.dumps({"role": "user", "content": content, "ts": "2026-01-01T00:00:00Z"}) + "\n")
    with open(session_dir / "events.jsonl", "a", encoding="utf-8") as events:
        events.write(json.dumps({"event": "message_logged", "turn": 99, "ts": "2026-01-01T00:00:00Z"}) + "\n")


def test_page_is_limit_lines_from_offset_at_most_sixty():
    assert page(1, 30) == (1, 30)
    assert page(100, 1000) == (100, 159)
    with pytest.raises(LineRangeError, match="offset must be 1 or more"):
        page(0, 5)
    with pytest.raises(LineRangeError, match="limit must be a line number"):
        page(1, "many")


def test_a_sync_that_would_wait_for_another_writer_raises_busy_at_once(session_dir):
    holder = sqlite3.connect(session_dir / "derived.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with EffortIndex(session_dir / "derived.sqlite") as index:
            append_ambient(session_dir, "a brand new exchange")
            with pytest.raises(DerivedBusy), index.waiting_at_most(0):
                index.sync_ambient_log(session_dir / "raw.jsonl")
            assert index.search("axolotl")  # reading waits for nobody
    finally:
        holder.execute("COMMIT")
        holder.close()


def test_the_reader_answers_from_the_index_as_it_is_while_another_process_writes_it(session_dir):
    reader = SessionReader(session_dir, SETTINGS)
    try:
        assert not reader.search("axolotl").stale
        holder = sqlite3.connect(session_dir / "derived.sqlite", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        append_ambient(session_dir, "the narwhal schedule moved to Tuesday")
        answer = reader.search("narwhal schedule")
        assert answer.stale and answer.hits == []
        holder.execute("COMMIT")
        holder.close()
        answer = reader.search("narwhal schedule")
        assert not answer.stale and answer.hits[0].source == "ambient"
        first, last = answer.hits[0].lines
        read = reader.read_lines("ambient", first, last)
        assert read.messages[-1]["content"] == "the narwhal schedule moved to Tuesday"
        assert read.messages[-1]["line"] == last == read.total
    finally:
        reader.close()


def test_the_reader_reads_lines_and_lists_efforts_without_the_writer_lock(session_dir):
    lock = SessionLock(session_dir)
    assert lock.try_acquire()  # held by "another writer" all along
    reader = SessionReader(session_dir, SETTINGS)
    try:
        lines = reader.read_lines("auth-bug", 1, 60)
        assert lines.total == 8 and any(m["content"] == DETAIL for m in lines.messages)
        with pytest.raises(EffortNotFound, match="there is no effort 'nope'"):
            reader.read_lines("nope", 1, 5)
        with pytest.raises(LineRangeError, match="line 9 does not exist"):
            reader.read_lines("auth-bug", 9, 12)
        [entry] = reader.efforts()
        assert entry.view.id == "auth-bug" and entry.last_turn == 5
        assert reader.search("axolotl").hits[0].id == "auth-bug"
    finally:
        reader.close()
        lock.release()


def test_the_reader_never_follows_a_log_planted_as_a_link_out_of_the_session(session_dir, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(json.dumps({"role": "user", "content": "the vault combination is quagga"}) + "\n")
    reader = SessionReader(session_dir, SETTINGS)
    try:
        assert reader.search("axolotl").hits  # opened and synced before the link appears
        manifest = session_dir / "manifest.yaml"
        manifest.write_text(
            manifest.read_text() + manifest.read_text().split("efforts:\n", 1)[1].replace("auth-bug", "evil")
        )
        (session_dir / "efforts" / "evil.jsonl").symlink_to(secret)
        append_ambient(session_dir, "a write that makes the reader look again")
        with pytest.raises(StoreError, match="is a symbolic link"):
            reader.search("quagga")
        with pytest.raises(StoreError, match="is a symbolic link"):
            reader.read_lines("evil", 1, 5)
    finally:
        reader.close()
    with EffortIndex(session_dir / "derived.sqlite") as index:
        assert index.search("quagga") == []


def declared(module, cls: str) -> set[str]:
    """The methods a class of ``module`` writes out (``def``), not those it takes from a table."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    [node] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    return {f.name for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}


# on an open session these answer with what only the engine knows (the model's message cap, its index in step)
ANSWERED_BY_THE_ENGINE = {"status", "search", "effort", "turn"}


def test_a_read_is_declared_once_the_engine_and_the_controller_forward_it():
    reader = declared(reader_module, "SessionReader")
    engine = declared(engine_module, "Engine")
    controller = declared(controller_module, "SessionController")
    assert reader & engine - {"__init__", "close"} == ANSWERED_BY_THE_ENGINE
    assert controller & (reader | engine) == {"__init__", "close", "preload_model"}  # (work, not reads)
    for name in ("effort_log", "read_lines"):
        assert getattr(Engine, name).__wrapped__ is getattr(SessionReader, name)
