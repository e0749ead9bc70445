"""The provider fault matrix through the loopback server: none crash, none lose the user's message."""

from __future__ import annotations

import json

from tests.helpers.openai_server import fault, hang, stream_cut, text

RATE_LIMIT_BODY = {"error": {"message": "Rate limit reached for requests", "type": "rate_limit_error"}}


def test_429_twice_pauses_then_resumes_and_answers(ccm):
    ccm.server.push(
        fault(429, RATE_LIMIT_BODY, {"Retry-After": "0"}),
        fault(429, RATE_LIMIT_BODY, {"Retry-After": "0"}),
        text("Finally here."),
    )
    rc, out, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "hello",
    )
    assert rc == 0 and "Finally here." in out
    assert err.count("SESSION PAUSED — rate limited by the provider") == 2
    assert "SESSION RESUMED" in err
    pauses = ccm.events("session_pause")
    assert [p["attempt"] for p in pauses] == [1, 2] and len(ccm.events("session_resume")) == 2
    assert ccm.lines("raw.jsonl")[-1]["content"] == "Finally here."


def test_rate_limit_gives_up_after_the_configured_wait(ccm, tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text("max_rate_limit_wait = 1\n")
    monkeypatch.setenv("CCM_CONFIG", str(config))
    ccm.server.push(*[fault(429, RATE_LIMIT_BODY, {"Retry-After": "1"})] * 3)
    out = ccm.send("hello", expect=1)
    assert "gave up after waiting" in out["error"]
    assert ccm.lines("raw.jsonl") == []
    assert ccm.events("turn_failed")[-1]["kind"] == "rate_limit"


def test_transient_500_is_retried(ccm):
    ccm.server.push(fault(500), fault(502), text("Recovered."))
    out = ccm.send("hello")
    assert out["reply"] == "Recovered."
    assert len(ccm.server.chat_requests()) == 3


def test_persistent_500_fails_cleanly_and_the_message_can_be_retried(ccm):
    ccm.server.push(*[fault(500)] * 4)
    rc, out, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "my precious question",
    )
    assert rc == 1
    assert err.startswith("ccm-tui: provider error 500") and err.count("\n") == 1
    assert "--retry-orphan" in err and "Traceback" not in err
    assert ccm.lines("raw.jsonl") == []
    assert ccm.events("turn_start")[-1]["user"] == "my precious question"
    ccm.server.push(text("Here is the answer."))
    out = ccm.send("", "--retry-orphan")
    assert out["reply"] == "Here is the answer."
    assert [m["content"] for m in ccm.lines("raw.jsonl")] == ["my precious question", "Here is the answer."]
    rc, _, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "--retry-orphan",
    )
    assert rc == 1 and "no unanswered message" in err


def test_timeout_is_retried(ccm, tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text("request_timeout = 1\n")
    monkeypatch.setenv("CCM_CONFIG", str(config))
    ccm.server.push(hang(5), text("After the timeout."))
    out = ccm.send("hello")
    assert out["reply"] == "After the timeout."


def test_stream_cut_keeps_the_partial_reply_and_the_turn_can_be_retried(ccm):
    ccm.server.push(stream_cut("The answer is forty-two, because", after_chars=20))
    out = ccm.send("what is the answer?", expect=1)
    assert "cut off" in out["error"]
    failed = ccm.events("turn_failed")[-1]
    assert failed["kind"] == "stream_cut" and failed["partial"].startswith("The answer is")
    assert ccm.lines("raw.jsonl") == []
    ccm.server.push(text("The answer is 42."))
    out = ccm.send("", "--retry-orphan")
    assert out["reply"] == "The answer is 42."


def test_auth_and_unknown_model_errors_say_what_to_fix(ccm, monkeypatch):
    secret = "sk-live-THISISASECRETKEY1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    ccm.server.push(
        fault(401, {"error": {"message": f"Incorrect API key provided: {secret}", "type": "invalid_request_error"}})
    )
    rc, out, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "hello",
    )
    assert rc == 1 and "refused the API key" in err and "OPENAI_API_KEY" in err
    ccm.server.push(
        fault(404, {"error": {"message": "The model `nope` does not exist", "type": "invalid_request_error"}})
    )
    rc, out, err2 = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "hello",
    )
    assert rc == 1 and "was not found" in err2 and "--model" in err2
    on_disk = "".join(
        p.read_text(errors="replace") for p in ccm.dir.rglob("*") if p.is_file() and p.suffix != ".sqlite"
    )
    assert secret not in err + err2 + on_disk
    assert "THISISASECRETKEY" not in on_disk


def test_empty_reply_is_an_error_not_an_empty_log_line(ccm):
    ccm.server.push(text(""))
    out = ccm.send("hello", expect=1)
    assert "empty reply" in out["error"]
    assert ccm.lines("raw.jsonl") == []


def test_unreachable_provider(ccm, tmp_path):
    rc, out, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        "http://127.0.0.1:9/v1",
        "--json",
        "hello",
    )
    assert rc == 1
    data = json.loads(out)
    assert data["error"] and data["turn"] == 1
    assert ccm.events("turn_start")[-1]["user"] == "hello"


def test_a_failure_after_tools_changed_efforts_logs_the_exchange_and_is_not_retried(ccm):
    from tests.helpers.openai_server import call, tool_calls

    ccm.server.push(tool_calls(call("open_effort", {"name": "auth bug"})), *[fault(500)] * 4)
    rc, out, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "--json",
        "let's fix the auth bug",
    )
    assert rc == 1 and err.startswith("ccm-tui: provider error 500") and "--retry-orphan" not in err
    data = json.loads(out)
    assert data["logged_to"] == "auth-bug" and data["context"]["total"] > 0
    log = ccm.lines("efforts/auth-bug.jsonl")
    assert log[0]["content"] == "let's fix the auth bug" and "provider error 500" in log[1]["failed"]
    assert ccm.events("turn_failed")[-1]["logged_to"] == "auth-bug"
    rc, _, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "--retry-orphan",
    )
    assert rc == 1 and "no unanswered message" in err  # re-sending would open a second effort


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_is_reported_in_plain_words_not_as_a_server_fault(ccm):
    base = f"http://127.0.0.1:{closed_port()}/v1"
    rc, out, err = ccm.run(
        "send", "--session-dir", str(ccm.dir), "--model", "openai/fake-model", "--api-base", base, "hello"
    )
    expected = f"cannot reach {base} (connection refused)"
    assert rc == 1
    assert err.startswith(f"ccm-tui: {expected}") and err.count("\n") == 1
    for noise in ("provider error", "hiccup", "Exception", "litellm", "Traceback"):
        assert noise not in err + out
    # tried again at most once, and said so in the same plain words
    assert out.count("trying again") <= 1
    failed = ccm.events("turn_failed")[-1]
    assert failed["error"] == expected and failed["kind"] == "connection"
    assert ccm.events("turn_start")[-1]["user"] == "hello"
