"""Every reader of on-disk data takes arbitrary bytes without crashing: it reads what it can
or raises its own one-line error type."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccm_tui.config import ConfigError, read_config_file
from ccm_tui.core.manifest.effort import ManifestError
from ccm_tui.core.manifest.effort_list import load_manifest
from ccm_tui.core.session.session import Session
from ccm_tui.core.storage.durable import read_jsonl, read_jsonl_tail

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
jsonl_bytes = st.lists(
    st.one_of(json_value.map(lambda v: json.dumps(v).encode()), st.binary(max_size=40)), max_size=12
).map(lambda parts: b"\n".join(parts))


def _write(data: bytes) -> Path:
    path = Path(tempfile.mkdtemp()) / "f"
    path.write_bytes(data)
    return path


@FAST
@given(jsonl_bytes, st.integers(min_value=1, max_value=20))
def test_jsonl_readers_never_crash(data, n):
    path = _write(data)
    result = read_jsonl(path)
    assert all(isinstance(r, dict) for r in result.records)
    tail = read_jsonl_tail(path, n, chunk=16)
    assert tail == result.records[-n:] or len(tail) <= n


manifest_text = st.one_of(
    st.text(max_size=300),
    st.builds(
        lambda efforts: __import__("yaml").safe_dump({"efforts": efforts}),
        st.lists(
            st.dictionaries(
                st.sampled_from(["id", "status", "active", "summary", "raw_file", "messages"]), json_value, max_size=6
            ),
            max_size=4,
        ),
    ),
)


@FAST
@given(manifest_text)
def test_manifest_reader_raises_only_manifest_errors(text):
    path = _write(text.encode("utf-8", "surrogatepass"))
    try:
        efforts = load_manifest(path)
    except ManifestError as exc:
        assert "\n" not in str(exc).strip()
        return
    assert sum(e.active for e in efforts) <= 1
    assert all(e.raw_file == f"efforts/{e.id}.jsonl" for e in efforts)


@FAST
@given(st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_config_reader_raises_only_config_errors(data):
    path = _write(data)
    try:
        read_config_file(path)
    except ConfigError:
        pass


@FAST
@given(st.binary(max_size=200), st.binary(max_size=200), jsonl_bytes, jsonl_bytes)
def test_a_session_with_garbage_snapshots_still_opens(state, view, raw, effort_log):
    directory = Path(tempfile.mkdtemp()) / "s"
    (directory / "efforts").mkdir(parents=True)
    (directory / "session_state.json").write_bytes(state)
    (directory / "expanded.json").write_bytes(view)
    (directory / "raw.jsonl").write_bytes(raw)
    (directory / "efforts" / "x.jsonl").write_bytes(effort_log)
    (directory / "manifest.yaml").write_text("efforts:\n  - id: x\n    status: open\n    active: true\n")
    session = Session.open(directory)
    try:
        assert session.efforts.active is not None
        assert all(isinstance(m["content"], str) for m in session.effort_log("x"))
        session.ambient_messages()
    finally:
        session.close()
