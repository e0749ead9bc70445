from __future__ import annotations

import json
import os

import pytest

from ccm_tui.core.manifest.effort import Effort, ManifestError, slugify, unique_slug
from ccm_tui.core.manifest.store import load_manifest, save_manifest
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


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Auth Bug", "auth-bug"),
        ("../../etc/passwd", "etc-passwd"),
        ("Café crème", "cafe-creme"),
        ("", "effort"),
        ("!!!", "effort"),
        ("x" * 100, "x" * 64),
        # Other scripts are transliterated, never collapsed to "effort" (issue 14: names).
        ("日本旅行", "ri-ben-lu-xing"),
        ("Отпуск в Японии", "otpusk-v-yaponii"),
        ("Ελληνικά μαθήματα", "ellinika-mathimata"),
        ("🎉 party", "tada-party"),
    ],
)
def test_slugify(name, slug):
    assert slugify(name) == slug


def test_unique_slug_adds_a_suffix_within_64_chars():
    assert unique_slug("auth bug", {"auth-bug"}) == "auth-bug-2"
    assert unique_slug("auth bug", {"auth-bug", "auth-bug-2"}) == "auth-bug-3"
    long = "y" * 64
    assert unique_slug(long, {long}) == "y" * 62 + "-2"


def test_manifest_round_trip_and_clear_errors(tmp_path):
    path = tmp_path / "manifest.yaml"
    save_manifest(path, [Effort(id="a", status="concluded", summary="s"), Effort(id="b", active=True)])
    efforts = load_manifest(path)
    assert [(e.id, e.status, e.active, e.raw_file) for e in efforts] == [
        ("a", "concluded", False, "efforts/a.jsonl"),
        ("b", "open", True, "efforts/b.jsonl"),
    ]
    path.write_text("efforts:\n  - id: a\n   status: [\n")
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
