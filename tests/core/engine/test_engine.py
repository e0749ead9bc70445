"""The engine's settle: manifest.yaml is rewritten when the queue empties, and while work is still queued
only once the file lags the journal by more than FLUSH_JOURNAL_BYTES (a queue that never empties must not
leave the file behind for good)."""

from __future__ import annotations

import yaml

from ccm_tui.config import Settings
from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.engine import engine as engine_module
from ccm_tui.core.engine.opening import open_engine


def _on_disk(directory) -> dict[str, str]:
    path = directory / "manifest.yaml"
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))["efforts"] or [] if path.exists() else []
    return {e["id"]: e["status"] for e in entries}


def test_settle_waits_for_an_empty_queue_unless_the_file_lags_too_far(tmp_path, monkeypatch):
    engine = open_engine(tmp_path / "s", Settings(), probe_model_window=False)
    try:
        session = engine._session
        lifecycle.open_effort(session, "first topic", turn=1)
        engine.settle(busy=True)  # work is queued and the lag is small: the file waits
        assert "first-topic" not in _on_disk(session.dir)

        engine.settle()  # the queue is empty: written
        assert _on_disk(session.dir) == {"first-topic": "open"}

        lifecycle.open_effort(session, "second topic", turn=2)
        monkeypatch.setattr(engine_module, "FLUSH_JOURNAL_BYTES", 0)
        engine.settle(busy=True)  # still busy, but the file lags more than the bound: written
        assert _on_disk(session.dir) == {"first-topic": "open", "second-topic": "open"}
    finally:
        engine.close()
