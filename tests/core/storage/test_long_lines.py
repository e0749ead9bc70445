"""A huge log line costs what is shown of it (issue 33, hole 2): work counted, not timed.

Each test counts what the readers do with a log holding one line of a few megabytes — the bytes
they parse, the bytes they read, the characters they encode into tokens — and checks that it is
bounded by what they return (and a scan for newlines), never the line's size, let alone its square.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccm_tui.config import Settings
from ccm_tui.core.api import SessionReader
from ccm_tui.core.efforts.working_context import fit_message
from ccm_tui.core.engine.opening import open_engine, search_session
from ccm_tui.core.session.numbered_lines import file_lines
from ccm_tui.core.storage import long_lines
from ccm_tui.core.storage.durable import encode_line, read_jsonl_tail
from ccm_tui.core.storage.long_lines import LINE_BYTES, READ_BYTES, SHOW_BYTES, head_record
from ccm_tui.core.text.tokens import MAX_TOKEN_CHARS, TokenCounter
from ccm_tui.core.views.scrollback import recent_lines
from ccm_tui.restore.landing import land
from ccm_tui.restore.turns import ParsedTranscript, TurnRound

HUGE = 6_000_000  # bytes of the huge line (CI-sized; the benchmark uses 60 MB)
TS = "2026-01-02T03:04:05Z"


class Work:
    """What the line readers parsed: the bytes given to the JSON parser whole, and to the head parser."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parsed: list[int] = []
        self.heads: list[int] = []
        parse, head = long_lines.parse, long_lines.head_record

        def counted_parse(raw: bytes) -> Any:
            self.parsed.append(len(raw))
            return parse(raw)

        def counted_head(first: bytes, tail: bytes, size: int) -> Any:
            self.heads.append(len(first) + len(tail))
            return head(first, tail, size)

        monkeypatch.setattr(long_lines, "parse", counted_parse)
        monkeypatch.setattr(long_lines, "head_record", counted_head)

    @property
    def most(self) -> int:
        return max(self.parsed + self.heads, default=0)


def huge_record(size: int = HUGE) -> dict[str, Any]:
    return {"role": "assistant", "content": ("the zebrafish swims é " * (size // 22 + 1))[:size], "ts": TS, "turn": 1}


def write_log(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(encode_line(r) for r in records), encoding="utf-8")


def small(i: int) -> dict[str, Any]:
    return {"role": "user" if i % 2 == 0 else "assistant", "content": f"line {i}", "ts": f"2026-01-01T00:00:{i:02d}Z"}


def test_the_tail_reader_scans_each_byte_once_and_parses_what_it_returns(tmp_path, monkeypatch):
    path = tmp_path / "log.jsonl"
    write_log(path, [small(i) for i in range(5)] + [huge_record()] + [small(i) for i in range(5, 10)])
    size = path.stat().st_size
    read_sizes: list[int] = []
    real_fdopen = os.fdopen

    def counting_fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        fh = real_fdopen(fd, *args, **kwargs)
        read = fh.read

        def counted(n: int = -1) -> bytes:
            data = read(n)
            read_sizes.append(len(data))
            return data

        fh.read = counted
        return fh

    monkeypatch.setattr("ccm_tui.core.storage.durable.os.fdopen", counting_fdopen)
    work = Work(monkeypatch)
    tail = read_jsonl_tail(path, 40, line_cap=SHOW_BYTES)
    assert [r["content"] for r in tail[:5]] == [f"line {i}" for i in range(5)]
    cut = tail[5]
    assert cut[LINE_BYTES] > HUGE and cut["ts"] == TS and cut["turn"] == 1  # the keys after the content too
    assert huge_record()["content"].startswith(cut["content"]) and len(cut["content"]) > SHOW_BYTES // 4
    assert sum(read_sizes) <= size + 1  # every byte read once at most (and the last one looked at) …
    assert len(read_sizes) < 20  # … in chunks that grow (not 64 KB at a time: ~100 reads)
    assert work.most <= SHOW_BYTES + long_lines.TAIL_BYTES  # … and parsed only as far as shown

    whole = read_jsonl_tail(path, 40)  # a reader that needs the record whole gets it whole
    assert whole[5] == huge_record()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(min_size=1, max_size=400),
    st.dictionaries(st.sampled_from(["ts", "turn", "interrupted", "source"]), st.text(max_size=12), max_size=3),
    st.integers(min_value=1, max_value=2_000),
)
def test_a_head_record_holds_a_prefix_of_the_content_and_the_keys_around_it(content, after, cap):
    record = {"role": "assistant", "content": content, **after}
    line = encode_line(record).rstrip("\n").encode("utf-8")
    if cap >= len(line):
        return
    head = head_record(line[:cap], line[-long_lines.TAIL_BYTES :][-(len(line) - cap) :], len(line))
    assert head is not None and head[LINE_BYTES] == len(line)
    assert content.startswith(head.get("content", ""))  # the content's start, or none of it
    for key, value in head.items():  # any other key is found whole or not at all
        assert key in ("content", LINE_BYTES) or value == record[key]


def test_a_read_of_a_few_lines_costs_those_lines(tmp_path, monkeypatch):
    from ccm_tui.memory_server import render

    path = tmp_path / "effort.jsonl"
    write_log(path, [small(0), huge_record()] + [small(i) for i in range(2, 40)])
    preads: list[int] = []
    real = os.pread

    def counted(fd: int, n: int, offset: int) -> bytes:
        preads.append(n)
        return real(fd, n, offset)

    first = file_lines(path, 1, 30)  # scans the log once for its lines
    assert first.total == 40 and len(first.messages) == 30
    cut = first.messages[1]
    assert cut["line_bytes"] > HUGE and len(cut["content"]) <= 4_000
    assert "the message goes on" in render.message_text(cut)
    monkeypatch.setattr("ccm_tui.core.storage.long_lines.os.pread", counted)
    again = file_lines(path, 2, 4)  # a log read before is not scanned again
    assert [m["line"] for m in again.messages] == [2, 3, 4]
    assert sum(preads) <= READ_BYTES + long_lines.TAIL_BYTES + 1_000


def test_fitting_a_huge_message_encodes_its_ends_only(monkeypatch):
    counter = TokenCounter()
    encoded: list[int] = []
    real = counter.encoding

    class Counting:
        def encode(self, text: str, **kwargs: Any) -> list[int]:
            encoded.append(len(text))
            return real.encode(text, **kwargs)

        def decode(self, tokens: list[int]) -> str:
            return real.decode(tokens)

    monkeypatch.setattr(TokenCounter, "encoding", property(lambda self: Counting()))
    message = {"role": "assistant", "content": huge_record()["content"]}
    fitted = fit_message(message, 2_000, counter)
    assert "left out of the working context" in fitted["content"]
    assert counter.count_text(fitted["content"]) <= 2_000
    assert sum(encoded) <= 6 * 2_000 * MAX_TOKEN_CHARS  # never the 6 MB message whole
    assert counter.within(message["content"], 2_000) is False


@pytest.fixture
def huge_session(tmp_path: Path) -> Path:
    """A session whose imported effort holds a message of HUGE bytes."""
    directory = tmp_path / "s"
    turns = [
        TurnRound(
            turn=1,
            user_messages=["tell me about the zebrafish"],
            agent_responses=[huge_record()["content"]],
            start_line=1,
            end_line=2,
        ),  # fmt: skip
        TurnRound(turn=2, user_messages=["thanks"], agent_responses=["welcome"], start_line=3, end_line=4),
    ]
    land(
        directory,
        ParsedTranscript(format="aider", turns=turns, title="imported"),
        tmp_path / "t.md",
        "Fish.",
        Settings(),
    )
    # the effort talked about in this chat (the chat shows what the conversation logged, never an import):
    # the same huge reply once more, logged by a turn
    exchange = [{"role": "user", "content": "tell me about the zebrafish again", "ts": TS}, huge_record()]
    with (directory / "efforts" / "imported.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("".join(encode_line(r) for r in exchange))
    with (directory / "events.jsonl").open("a", encoding="utf-8") as fh:
        event = {"event": "message_logged", "turn": 1, "ts": "2099-01-01T00:00:00.000Z", "to": "imported", "count": 2}
        fh.write(json.dumps(event) + "\n")
    return directory


def test_opening_searching_and_reading_a_session_with_a_huge_message_parse_what_they_show(huge_session, monkeypatch):
    from ccm_tui.memory_server import render

    work = Work(monkeypatch)
    engine = open_engine(huge_session, Settings(), probe_model_window=False)
    try:
        lines = recent_lines(engine._session)
    finally:
        engine.close()
    shown = next(line for line in lines if "zebrafish swims" in line.content)
    assert len(shown.content) < SHOW_BYTES + 200 and "the message goes on: about 6.3 MB in all" in shown.content
    assert work.most <= SHOW_BYTES + long_lines.TAIL_BYTES

    hits = search_session(huge_session, "zebrafish")
    assert hits and hits[0].id == "imported" and len(hits[0].passage or "") < 1_000

    reader = SessionReader(huge_session, Settings())
    try:
        page = reader.read_lines("imported", 1, 30)
    finally:
        reader.close()
    assert [m["line"] for m in page.messages] == [1, 2, 3, 4, 5, 6]
    assert len(render.read_text(["imported"], page.messages, 1, 6, page.total)) < 9_000
    assert work.most <= SHOW_BYTES + long_lines.TAIL_BYTES


def test_a_reader_does_not_load_an_open_efforts_log(huge_session, monkeypatch):
    engine = open_engine(huge_session, Settings(), probe_model_window=False)
    try:
        engine._session.efforts.get("imported")  # (it exists)
    finally:
        engine.close()
    from ccm_tui.cli import main

    assert main(["send", "--session-dir", str(huge_session), "/reopen imported"]) == 0
    read_whole: list[str] = []
    real = __import__("ccm_tui.core.session.session", fromlist=["read_jsonl"]).read_jsonl

    def recorded(path: Path, **kwargs: Any) -> Any:
        read_whole.append(Path(path).name)
        return real(path, **kwargs)

    monkeypatch.setattr("ccm_tui.core.session.session.read_jsonl", recorded)
    assert search_session(huge_session, "zebrafish")[0].id == "imported"
    reader = SessionReader(huge_session, Settings())
    try:
        assert [e.view.id for e in reader.efforts()] == ["imported"]
    finally:
        reader.close()
    assert read_whole == []  # neither loaded the open effort's log to answer
    assert json.loads((huge_session / "efforts" / "imported.jsonl").read_text().splitlines()[-1])["role"] == "system"


async def test_scrolling_back_past_a_huge_line_parses_what_it_shows(tmp_path, monkeypatch):
    from ccm_tui.demo import DemoModel
    from tests.helpers.demo_chat import BASE, played, shown

    await played(tmp_path / "s", rounds=2)
    raw = tmp_path / "s" / "raw.jsonl"
    records = [json.loads(line) for line in raw.read_text(encoding="utf-8").splitlines()]
    at = next(i for i, r in enumerate(records) if r.get("role") == "assistant")
    records[at]["content"] = huge_record()["content"]  # an early reply, 6 MB
    write_log(raw, records)
    engine = open_engine(tmp_path / "s", BASE, llm=DemoModel(delay=0))  # (its context holds the window whole)
    try:
        everything = engine.recent_lines(limit=100_000)
        lines = engine.recent_lines(limit=3)
        work = Work(monkeypatch)
        while (older := engine.older_lines(lines[0], 4)).lines:
            lines = list(older.lines) + lines
    finally:
        engine.close()
    assert shown(lines) == shown(everything)
    cut = [line for line in lines if "the message goes on" in line.content]
    assert len(cut) == 1 and len(cut[0].content) < SHOW_BYTES + 200
    assert work.heads and work.most <= SHOW_BYTES + long_lines.TAIL_BYTES
