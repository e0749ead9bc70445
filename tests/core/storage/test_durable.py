"""The durable write layer: appends of complete lines that recover after a torn tail, tail reads, atomic
replacements that leave no temporary file."""

from __future__ import annotations

import json
import os

from ccm_tui.core.storage.durable import append_jsonl, atomic_write_text, read_jsonl, read_jsonl_tail


def test_append_is_complete_lines_and_recovers_after_a_torn_tail(tmp_path):
    path = tmp_path / "log.jsonl"
    append_jsonl(path, [{"role": "user", "content": "a\nb"}])
    with open(path, "ab") as fh:
        fh.write(b'{"role": "assistant", "cont')  # a crash mid-append
    result = read_jsonl(path)
    assert [r["content"] for r in result.records] == ["a\nb"]
    assert result.torn_tail and result.bad_lines == []
    append_jsonl(path, [{"role": "user", "content": "c"}])
    result = read_jsonl(path)
    assert [r["content"] for r in result.records] == ["a\nb", "c"]
    assert result.bad_lines == [2] and not result.torn_tail


def test_read_tail_reads_only_the_end(tmp_path):
    path = tmp_path / "raw.jsonl"
    append_jsonl(path, [{"i": i, "pad": "x" * 200} for i in range(5000)])
    tail = read_jsonl_tail(path, 7, chunk=4096)
    assert [r["i"] for r in tail] == list(range(4993, 5000))
    assert read_jsonl_tail(tmp_path / "missing.jsonl", 3) == []


def test_atomic_write_leaves_no_temp_files(tmp_path):
    target = tmp_path / "state.json"
    atomic_write_text(target, json.dumps({"a": 1}))
    atomic_write_text(target, json.dumps({"a": 2}))
    assert json.loads(target.read_text()) == {"a": 2}
    assert os.listdir(tmp_path) == ["state.json"]
