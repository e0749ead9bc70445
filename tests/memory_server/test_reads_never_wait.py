"""Reads never take the session's writer lock and never wait for it: a search answers while ``ccm-tui send``
is mid-turn (or another process holds the lock, or SQLite's write lock on the index), and sees what was
written once it is on disk."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time

from ccm_tui.core.session.lock import SessionLock
from tests.helpers.mcp_session import MODEL, ROOT, mcp_server
from tests.helpers.openai_server import FakeLLMServer, hang, text
from tests.helpers.sessionkit import hold_writer_lock


def wait_until(condition, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


async def test_a_search_answers_while_send_is_mid_turn_and_finds_its_exchange_once_on_disk(session_dir):
    async with mcp_server() as client:
        assert not (await client.call("search", query="axolotl")).error  # started, index open
        with FakeLLMServer() as llm:
            llm.push(hang(10, then=text("The capybara ledger is in the attic, second shelf.")))
            send = subprocess.Popen(
                [sys.executable, "-m", "ccm_tui.cli", "send", "--session-dir", str(session_dir), "--model", MODEL,
                 "--api-base", llm.base_url, "where did I put the capybara ledger?"],
                cwd=ROOT, env={**os.environ, "CCM_RETRY_BASE_SECONDS": "0"},
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            lock = SessionLock(session_dir)
            wait_until(lambda: lock.holder_pid() == send.pid and llm.chat_requests())  # mid-turn, lock held
            started = time.monotonic()
            during = await client.call("search", query="axolotl middleware")
            elapsed = time.monotonic() - started
            assert lock.holder_pid() == send.pid and send.poll() is None  # still mid-turn
            assert not during.error and "auth-bug" in during.text
            assert elapsed < 3.0
            assert "Nothing found" in (await client.call("search", query="capybara ledger")).text  # not on disk yet
            out, err = send.communicate(timeout=120)
            assert send.returncode == 0, err
        after = await client.call("search", query="capybara ledger")
    assert after.text.splitlines()[1].startswith("1. ambient chat")
    assert "**capybara** **ledger**" in after.text


async def test_a_search_never_waits_for_the_writer_lock_nor_for_the_index_write_lock(session_dir):
    holder = hold_writer_lock(session_dir)
    index = sqlite3.connect(session_dir / "derived.sqlite", isolation_level=None)
    try:
        index.execute("BEGIN IMMEDIATE")  # as the TUI indexing the exchange it just logged
        with open(session_dir / "raw.jsonl", "a", encoding="utf-8") as raw:  # ... which is on disk already
            for role, content in (("user", "the walrus recipe needs saffron"), ("assistant", "Noted: saffron.")):
                raw.write(json.dumps({"role": role, "content": content, "ts": "2026-01-01T00:00:00Z"}) + "\n")
        with open(session_dir / "events.jsonl", "a", encoding="utf-8") as events:
            events.write(json.dumps({"event": "message_logged", "turn": 99, "ts": "2026-01-01T00:00:00Z"}) + "\n")
        async with mcp_server() as client:
            started = time.monotonic()
            stale = await client.call("search", query="walrus saffron")
            old = await client.call("search", query="axolotl")
            elapsed = time.monotonic() - started
            assert elapsed < 3.0
            assert not stale.error and "Nothing found" in stale.text
            assert "ccm-tui was writing the search index" in stale.text  # says it may be stale
            assert "auth-bug" in old.text  # the index as it is still answers
            index.execute("COMMIT")
            fresh = await client.call("search", query="walrus saffron")
            read = await client.call("read", id="ambient", offset=1, limit=60)
        assert "**walrus**" in fresh.text and "writing the search index" not in fresh.text
        assert "the walrus recipe needs saffron" in read.text
        assert holder.poll() is None  # the writer lock was held all along
    finally:
        index.close()
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
