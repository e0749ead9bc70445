"""Credentials are redacted by value, not only by pattern: a key with no known prefix that a
provider echoes back never reaches stderr, ``--json`` stdout or ``events.jsonl``."""

from __future__ import annotations

import json

from ccm_tui.core.storage.eventlog import EventLog, redact

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


def test_credentials_in_an_api_base_url_and_echoed_auth_headers_are_redacted(monkeypatch):
    from ccm_tui.config import note_url_secrets

    note_url_secrets("http://alice:PaSsW0rd9@host.example/v1?key=QK77zz&api_key=ak-42")
    out = redact(
        "cannot reach http://alice:PaSsW0rd9@host.example/v1?key=QK77zz&api_key=ak-42 (refused); "
        "the server said: bad password PaSsW0rd9, key QK77zz; "
        "echo: Authorization: Basic YWxpY2U6cHc= and Bearer abc123xyz; basic questions stay"
    )
    for secret in ("PaSsW0rd9", "QK77zz", "ak-42", "YWxpY2U6cHc=", "abc123xyz", "alice"):
        assert secret not in out, (secret, out)
    assert "http://[redacted]@host.example/v1?key=[redacted]&api_key=[redacted]" in out
    assert "basic questions stay" in out


def test_short_keys_are_redacted_as_whole_words(monkeypatch):
    monkeypatch.setenv("SHORT_API_KEY", "k9x2")
    monkeypatch.setenv("FLAG_TOKEN", "true")
    out = redact("key k9x2 leaked; k9x2abc is another word; true stays")
    assert out == "key [redacted] leaked; k9x2abc is another word; true stays"
