"""Every reader judges the same lines withdrawn (issue 32): the context, recall's skip, folding, search,
the export, the chat history, the counts and the reads of lines (the model's, the MCP server's), in the
ambient chat and in an effort's log, with lines of the log that are no chat message around the
exchange taken back (a hand edit, another tool's line, a blank line).

The expected lines are read from the file alone: the marker at file line *m* with ``retracts: N``
withdraws lines *m − N … m*."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccm_tui.core.engine.opening import open_engine
from ccm_tui.core.engine.reader import SessionReader
from ccm_tui.core.service.controller import SessionController
from ccm_tui.core.service.run_state import SendMessage, SlashCommand, Withdraw
from ccm_tui.core.session import withdrawn
from ccm_tui.core.storage.durable import is_message
from ccm_tui.core.turn.folding import _ambient_records
from ccm_tui.core.turn.recall import skip_rule
from tests.helpers.openai_server import text
from tests.helpers.sessionkit import settings_for, withdrawn_by_markers

SECRET = "Zanzibar"  # said only in the exchange taken back
ODD_LINES = {
    "a line of the wrong shape": json.dumps({"role": "user", "content": 12345, "ts": "2026-01-01T00:00:00Z"}) + "\n",
    "a blank line": "\n",
    "a line that is not JSON": "this is no json\n",
}


def file_lines(path: Path) -> list[str]:
    return path.read_text().split("\n")[:-1]


async def say(c: SessionController, server, message: str, reply: str) -> None:
    server.push(text(reply))
    await c.run(SendMessage(message))


async def make_session(directory: Path, server, where: str, odd: str) -> Path:
    """A session where an exchange naming :data:`SECRET` was taken back, in ``where`` ("ambient" or an
    effort), after ``odd`` was written to that log by hand; returns the log's path."""
    settings = settings_for(server, token_budget=16_000, ambient_window=2)
    c = SessionController(directory, settings)
    await c.open()
    try:
        if where != "ambient":
            await c.command(SlashCommand("open", where))
        await say(c, server, "Let us plan the spice trip.", "Gladly, where to?")
    finally:
        await c.close()
    log = directory / ("raw.jsonl" if where == "ambient" else f"efforts/{where}.jsonl")
    with log.open("a") as fh:
        fh.write(ODD_LINES[odd])
    c = SessionController(directory, settings)
    await c.open()
    try:
        await say(c, server, f"Is {SECRET} the spice island?", f"Yes, {SECRET} is the spice island.")
        assert (await c.run(Withdraw("edit"))).ok
        for i in range(4):  # later chat: the exchange taken back leaves the ambient window
            await say(c, server, f"Next question {i} about cloves and pepper.", f"Answer {i} about cloves.")
    finally:
        await c.close()
    return log


@pytest.mark.parametrize("odd", sorted(ODD_LINES))
@pytest.mark.parametrize("where", ["ambient", "trip"])
async def test_every_reader_leaves_out_the_same_withdrawn_lines(tmp_path, llm_server, where, odd):
    directory = tmp_path / "s"
    log = await make_session(directory, llm_server, where, odd)
    expected = withdrawn_by_markers(log)
    total = len(file_lines(log))
    assert len(expected) == 3 and max(expected) <= total
    live_lines = set(range(1, total + 1)) - expected
    said = [n for n, line in enumerate(file_lines(log), 1) if SECRET in line]
    assert said and set(said) <= expected

    # context: the requests after the withdrawal never held it
    after = llm_server.chat_requests()[-4:]
    assert all(SECRET not in json.dumps(body["messages"]) for body in after)

    readable = {n for n in expected if _is_message_line(log, n)}  # (reads show chat messages only)
    engine = open_engine(directory, settings_for(llm_server, token_budget=16_000, ambient_window=2))
    try:
        session = engine._session
        judged: dict[str, set[int]] = {}
        # the module every reader asks
        judged["withdrawn_lines"] = withdrawn.withdrawn_lines(session, where, 1, total)
        # recall's skip: every withdrawn line is skipped; a live line outside the context is not
        skip = skip_rule(session)
        judged["recall skip"] = {n for n in expected if skip(where, where, n)}
        if where == "ambient":
            assert 1 not in withdrawn.window_lines(session) and not skip(where, where, 1)
            # folding reads ambient lines without the withdrawn ones
            kept = {n for n, _ in _ambient_records(engine._index, session, 1, total)}
            judged["folding"] = set(range(1, total + 1)) - kept - _unread(log)
            assert kept == live_lines - _unread(log)
        # reads of lines (the model's read_lines, the TUI's lines viewer): withdrawn lines say so
        read = engine.read_lines(where, 1, total)
        judged["engine read"] = {m["line"] for m in read.messages if m.get("withdrawn")}
        # search: the passage holding the secret marks it withdrawn
        hits = [h for h in engine.search(SECRET) if h.passage and SECRET in h.passage]
        assert hits and all("(withdrawn)" in h.passage for h in hits)
        # the chat history
        assert all(SECRET not in line.content for line in engine.recent_lines(limit=100))
        # the export
        exported = engine.export_conversation(tmp_path / "out.md").read_text()
        assert SECRET not in exported and "Answer 3 about cloves." in exported
        # counts: lines are file lines, tokens leave the withdrawn exchange out
        if where == "ambient":
            assert session.state.ambient_lines == total
            assert session.state.ambient_tokens == _live_tokens(session, log, expected)
        else:
            assert session.efforts.get(where).messages == total
    finally:
        engine.close()
    # an MCP server's or a `ccm-tui` command's reads: a reader without the engine
    with SessionReader(directory, settings_for(llm_server)) as reader:
        shown = reader.read_lines(where, 1, total)
        judged["standalone read"] = {m["line"] for m in shown.messages if m.get("withdrawn")}
    wanted = {"withdrawn_lines": expected, "recall skip": expected, "folding": expected}
    for name, lines in judged.items():
        want = wanted.get(name, readable)
        assert lines == want, f"{name} judged {sorted(lines)} withdrawn; the markers say {sorted(want)}"


def _unread(log: Path) -> set[int]:
    """Lines folding never reads as records (blank or not JSON)."""
    out = set()
    for n, line in enumerate(file_lines(log), 1):
        try:
            if isinstance(json.loads(line), dict):
                continue
        except ValueError:
            pass
        out.add(n)
    return out


def _is_message_line(log: Path, number: int) -> bool:
    try:
        record = json.loads(file_lines(log)[number - 1])
    except ValueError:
        return False
    return isinstance(record, dict) and is_message(record)


def _live_tokens(session, log: Path, gone: set[int]) -> int:
    total = 0
    for n, line in enumerate(file_lines(log), 1):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if n not in gone and isinstance(record, dict) and is_message(record):
            total += session.counter.count_message(record)
    return total
