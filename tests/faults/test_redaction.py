"""A credential with no known prefix that a provider echoes back never reaches stderr, ``--json``
stdout or any session file."""

from __future__ import annotations

import json

from tests.helpers.openai_server import fault, text

KEY = "zq7Unprefixed0Secret4Value9"


def test_an_echoed_key_reaches_no_output_and_no_file(ccm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}}
    ccm.server.push(fault(401, echo))
    rc, out, err = ccm.run(
        "send", "--session-dir", str(ccm.dir), "--model", "openai/fake-model", "--api-base", ccm.server.base_url, "hi"
    )
    assert rc == 1 and KEY not in out + err
    ccm.server.push(fault(401, echo))
    rc, out, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "--json",
        "hi again",
    )
    assert rc == 1 and KEY not in out + err and json.loads(out)["error"]
    ccm.server.push(fault(429, echo, {"Retry-After": "0"}), text("fine"))
    rc, out, err = ccm.run(
        "send", "--session-dir", str(ccm.dir), "--model", "openai/fake-model", "--api-base", ccm.server.base_url, "x"
    )
    assert rc == 0 and KEY not in out + err
    assert ccm.events("session_pause") and ccm.events("turn_failed")
    for path in ccm.dir.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_credentials_in_the_api_base_reach_no_output_no_session_file_and_no_models_json(ccm):
    from ccm_tui.config import model_facts_file
    from ccm_tui.core.models.capabilities import learned_without_tools, remember_without_tools

    host = ccm.server.base_url.split("://", 1)[1]
    base = f"http://alice:Pw0rd7x@{host}?key=QK77zz"
    echo = {"error": {"message": "denied for alice:Pw0rd7x with key QK77zz; Basic YWxpY2U6UHcw", "type": "auth"}}
    ccm.server.push(fault(401, echo))
    rc, out, err = ccm.run(
        "send", "--session-dir", str(ccm.dir), "--model", "openai/fake-model", "--api-base", base, "hi"
    )
    assert rc == 1
    for secret in ("Pw0rd7x", "QK77zz", "YWxpY2U6UHcw"):
        assert secret not in out + err
        for path in ccm.dir.rglob("*"):
            if path.is_file() and not path.name.endswith((".sqlite", "-wal", "-shm")):
                assert secret not in path.read_text(errors="replace"), path
    remember_without_tools("openai/fake-model", f"no tools at {base}", api_base=base)
    stored = model_facts_file().read_text()
    assert "Pw0rd7x" not in stored and "QK77zz" not in stored
    assert learned_without_tools("openai/fake-model", base)
