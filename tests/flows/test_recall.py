"""Recall: a model that never calls a tool still gets the logged line that answers a question, forty
turns later, within its share of the budget; recall=off leaves it out."""

from __future__ import annotations

from tests.fakes.openai_server import text


def chat(ccm, message: str) -> dict:
    ccm.server.push(text("Noted."))
    return ccm.send(message)


def test_a_fact_that_left_the_window_is_recalled_into_the_request(ccm):
    chat(ccm, "My locker code at the climbing gym is 4729.")
    for i in range(40):
        chat(ccm, f"small talk {i}: the weather and the tea")
    assert "4729" not in ccm.last_context_text()
    out = chat(ccm, "What was my locker code at the climbing gym?")
    system = ccm.chat_requests()[-1]["messages"][0]["content"]
    assert "4729" in system and "Recalled for this message" in system
    assert any(b.startswith("Recalled: ambient chat line") for b in out["banners"])
    request = out["request"]
    assert 0 < request["layers"]["recall"] <= 0.06 * request["budget"]
    started = [e for e in ccm.events("turn_start") if e.get("recalled")]
    assert started[-1]["recalled"]["source"] == "ambient" and started[-1]["recalled"]["lines"][0] == 1


def test_a_detail_of_a_concluded_effort_is_recalled_and_open_ones_are_not(ccm):
    ccm.send("/open Japan trip")
    chat(ccm, "We stay at the Hanaya ryokan in Kyoto, room 204.")
    ccm.server.push(text("Japan trip: a ryokan in Kyoto."))
    ccm.send("/done")
    out = chat(ccm, "Which room number did we get at Hanaya?")
    assert "room 204" in ccm.chat_requests()[-1]["messages"][0]["content"]
    assert "Recalled: japan-trip lines" in " ".join(out["banners"])
    ccm.send("/reopen japan-trip")  # open again: its log is in the context, nothing to recall
    out = chat(ccm, "Which room number did we get at Hanaya?")
    assert not any(b.startswith("Recalled") for b in out["banners"])


def test_common_words_alone_recall_nothing(ccm):
    for i in range(45):
        chat(ccm, f"the weather is nice today {i}")
    out = chat(ccm, "how is the weather today?")
    assert not any(b.startswith("Recalled") for b in out["banners"])


def test_recall_off_leaves_it_out(ccm, monkeypatch, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('recall = "off"\n')
    monkeypatch.setenv("CCM_CONFIG", str(config))
    chat(ccm, "My locker code at the climbing gym is 4729.")
    for i in range(12):
        chat(ccm, f"small talk {i}")
    out = chat(ccm, "What was my locker code at the climbing gym?")
    assert "4729" not in ccm.chat_requests()[-1]["messages"][0]["content"]
    assert out["request"]["layers"]["recall"] == 0
