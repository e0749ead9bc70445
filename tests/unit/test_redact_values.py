"""Credentials are redacted by value, not only by pattern: a key with no known prefix that a
provider echoes back never reaches stderr, ``--json`` stdout or ``events.jsonl``."""

from __future__ import annotations

import json

from ccm_tui.core.eventlog import EventLog, redact

KEY = "zq7Unprefixed0Secret4Value9"


def test_redact_replaces_the_values_of_credential_variables(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdefgh")
    monkeypatch.setenv("SHORT_TOKEN", "1")  # too short to redact safely
    monkeypatch.setenv("HOME_DIR_PLAIN", "zq7Unprefixed")
    out = redact(f"bad key {KEY}; also tok-abcdefgh and 1 and zq7Unprefixed here")
    assert KEY not in out and "tok-abcdefgh" not in out
    assert out.count("[redacted]") == 2 and " 1 and " in out


def test_event_fields_from_providers_are_redacted(monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    log = EventLog(tmp_path / "events.jsonl")
    log.log("turn_failed", 1, error=f"401: {KEY}", partial=f"echo {KEY}", user="my words")
    record = json.loads((tmp_path / "events.jsonl").read_text())
    assert KEY not in json.dumps(record) and record["user"] == "my words"
