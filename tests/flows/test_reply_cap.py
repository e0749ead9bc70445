"""A reply has a cap (issue 33, hole 7): ``reply_max_tokens`` is asked of the provider (max_tokens) and enforced
while the stream is read — a model that streams forever (a looping local model) is read up to the cap, not past
it — and the reply is marked cut in the log, in send's output and in the chat's history."""

from __future__ import annotations

import json

from ccm_tui.config import Settings
from ccm_tui.core.engine.opening import open_engine
from ccm_tui.core.models.capabilities import reply_cap
from ccm_tui.core.text.tokens import TokenCounter
from ccm_tui.core.views.scrollback import recent_lines
from tests.helpers.openai_server import endless, text


def capped(ccm, monkeypatch, tokens: int) -> None:
    """reply_max_tokens in this test's config file."""
    path = ccm.dir.parent / "config.toml"
    path.write_text(f"reply_max_tokens = {tokens}\n", encoding="utf-8")
    monkeypatch.setenv("CCM_CONFIG", str(path))


def test_an_endless_reply_is_read_up_to_the_cap_and_marked_cut(ccm, monkeypatch):
    capped(ccm, monkeypatch, 200)
    ccm.server.push(endless("la "))
    rc, out, err = ccm.run(*ccm.send_argv("sing", "--json"))
    assert rc == 0, err
    answer = json.loads(out)
    assert answer["cut"] is True
    assert any("The reply was cut at 200 tokens (reply_max_tokens)" in b for b in answer["banners"])
    tokens = TokenCounter().count_text(answer["reply"])
    assert 150 <= tokens <= 200  # read up to the cap, not past it
    assert ccm.server.endless_ended.wait(30)  # the stream was closed: the server stopped sending
    asked = ccm.chat_requests()[-1]
    assert asked["max_tokens"] == 200  # and the provider was asked for no more
    logged = ccm.lines("raw.jsonl")[-1]
    assert logged["role"] == "assistant" and logged["cut"] is True and logged["content"] == answer["reply"]
    engine = open_engine(ccm.dir, Settings(), probe_model_window=False)
    try:
        assert recent_lines(engine._session)[-1].cut
    finally:
        engine.close()

    ccm.server.push(text("Short and done."))  # an ordinary reply is not marked
    after = ccm.send("and now briefly")
    assert "cut" not in after and "cut" not in ccm.lines("raw.jsonl")[-1]


def test_send_prints_the_cut_banner(ccm, monkeypatch):
    capped(ccm, monkeypatch, 64)
    ccm.server.push(endless("na "))
    rc, out, err = ccm.run(*ccm.send_argv("loop"))
    assert rc == 0, err
    assert out.rstrip().endswith(
        "The reply was cut at 64 tokens (reply_max_tokens): ask the model to go on, or raise the setting"
    )


def test_the_cap_is_the_models_own_output_limit_when_lower():
    assert reply_cap(8192, "gpt-3.5-turbo") == 4096  # (litellm's map: max_output_tokens 4096)
    assert reply_cap(8192, "openai/no-such-model") == 8192
    assert reply_cap(100, "gpt-4o") == 100
