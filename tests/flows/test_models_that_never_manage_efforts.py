"""A model that never manages efforts: the app proposes efforts at topic changes, folds ambient chat that
left the window into concluded efforts, and with auto_efforts opens and concludes them itself."""

from __future__ import annotations

from tests.helpers.openai_server import text
from tests.helpers.topic_chat import TOPICS


def talk(ccm, messages: list[str]) -> list[dict]:
    outs = []
    for message in messages:
        ccm.server.push(text("Sure, here is some help about that."))
        outs.append(ccm.send(message))
    return outs


def test_topics_are_proposed_and_folded_for_a_model_that_calls_no_tool(ccm):
    ccm.server.refuse_tools = True  # a model served without tools: it can manage nothing itself
    outs = talk(ccm, TOPICS["japan"] + TOPICS["sourdough"] + TOPICS["taxes"])
    proposals = [s for out in outs for s in out.get("suggestions", [])]
    assert proposals and all(p["kind"] == "open" for p in proposals)
    assert any("japan" in p["name"] or "kyoto" in p["name"] for p in proposals)
    assert any("sourdough" in p["name"] for p in proposals) and any("tax" in p["name"] for p in proposals)
    assert all(p["hint"].startswith("a new topic: /open ") for p in proposals)
    efforts = {e["id"]: e for e in ccm.status()["efforts"]}
    folded = [e for e in efforts.values() if (e.get("source") or {}).get("folded_from") == "ambient"]
    assert folded and all(e["status"] == "concluded" and e["summary"] for e in folded)
    first = min(folded, key=lambda e: e["source"]["lines"][0])
    assert first["source"]["lines"][0] == 1 and ("japan" in first["id"] or "kyoto" in first["id"])
    hits = ccm.search("ryokan locker code 5518")["results"]
    assert hits[0]["id"] == first["id"]  # the folded effort, not a second copy from the ambient chat
    assert not [h for h in hits if h["source"] == "ambient" and h["lines"][1] <= first["source"]["lines"][1]]


def test_with_auto_efforts_the_app_opens_and_concludes_them_itself(ccm, monkeypatch, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("auto_efforts = true\n")
    monkeypatch.setenv("CCM_CONFIG", str(config))
    ccm.server.refuse_tools = True
    outs = talk(ccm, TOPICS["sourdough"] + TOPICS["taxes"])
    taken = [s for out in outs for s in out.get("suggestions", [])]
    assert taken and all(s["taken"] for s in taken)
    assert [s["kind"] for s in taken] == ["open", "switch"]
    efforts = ccm.status()["efforts"]
    concluded = [e for e in efforts if e["status"] == "concluded"]
    assert any(e["id"].startswith("sourdough") for e in concluded)  # the topic moved on: concluded by itself
    assert any(e["status"] == "open" and "tax" in e["id"] for e in efforts)


def test_a_model_that_manages_efforts_gets_no_proposals(ccm):
    from tests.helpers.openai_server import call, tool_calls

    ccm.server.push(tool_calls(call("open_effort", {"name": "japan trip"})), text("Opened."))
    ccm.send(TOPICS["japan"][0])
    outs = talk(ccm, TOPICS["japan"][1:])
    ccm.server.push(tool_calls(call("close_effort", {}), call("open_effort", {"name": "sourdough"})))
    ccm.server.push(text("Japan trip: April, Kyoto and Osaka."), text("Let's fix the starter."))
    outs.append(ccm.send(TOPICS["sourdough"][0]))  # the model follows the change of topic itself
    outs += talk(ccm, TOPICS["sourdough"][1:5])
    assert not [s for out in outs for s in out.get("suggestions", [])]


def test_a_withdrawn_exchange_is_not_folded_into_an_effort(ccm):
    """Regenerate or edit withdraws an exchange from the chat; folding the ambient chat that left the
    window must not bring it back inside the concluded effort it lands."""
    from ccm_tui.core.engine._withdraw import last_exchange, withdraw_exchange
    from ccm_tui.core.session.session import Session

    ccm.server.refuse_tools = True
    talk(ccm, TOPICS["japan"][:3])
    ccm.server.push(text("The locker code is 1234, a reply the user took back."))
    ccm.send(TOPICS["japan"][3])
    session = Session.open(ccm.dir)
    try:
        withdraw_exchange(session, last_exchange(session), "edit")
    finally:
        session.close()
    talk(ccm, TOPICS["japan"][3:] + TOPICS["sourdough"] + TOPICS["taxes"])
    folded = [e for e in ccm.status()["efforts"] if (e.get("source") or {}).get("folded_from") == "ambient"]
    first = min(folded, key=lambda e: e["source"]["lines"][0])
    assert first["source"]["lines"][0] == 1
    logged = [r["content"] for r in ccm.lines(f"efforts/{first['id']}.jsonl")]
    assert "Book a ryokan in Kyoto near Gion, the locker code there is 5518" in logged  # sent again: kept
    assert logged.count("Book a ryokan in Kyoto near Gion, the locker code there is 5518") == 1
    assert not [c for c in logged if "1234" in c or "withdrawn" in c]


def test_a_switch_moves_the_new_topics_first_exchanges_into_its_effort(ccm, monkeypatch, tmp_path):
    """The topic moved on inside an open effort: the effort concluded is summarised without the new
    topic, and the new effort starts with the exchanges that began it (the old raw log keeps them)."""
    config = tmp_path / "config.toml"
    config.write_text("auto_efforts = true\n")
    monkeypatch.setenv("CCM_CONFIG", str(config))
    ccm.server.refuse_tools = True
    outs = talk(ccm, TOPICS["sourdough"] + TOPICS["taxes"])
    switch = next(s for out in outs for s in out.get("suggestions", []) if s["kind"] == "switch")
    efforts = {e["id"]: e for e in ccm.status()["efforts"]}
    old = next(e for e in efforts.values() if e["id"].startswith("sourdough"))
    new = next(e for e in efforts.values() if e["status"] == "open" and "tax" in e["id"])
    assert old["status"] == "concluded" and new["source"]["moved_from"] == old["id"]
    first, last = new["source"]["lines"]
    old_log = ccm.lines(f"efforts/{old['id']}.jsonl")
    moved = [r["content"] for r in old_log[first - 1 : last]]
    new_log = [r["content"] for r in ccm.lines(f"efforts/{new['id']}.jsonl")]
    assert moved and new_log[: len(moved)] == moved  # the new effort starts with them, in order
    assert moved[0] in TOPICS["taxes"] and switch["name"] in new["id"]
    summarised = str(ccm.summary_requests()[-1]["messages"])
    assert TOPICS["sourdough"][-1] in summarised and not [m for m in moved if m in TOPICS["taxes"] and m in summarised]
    hits = ccm.search(moved[0])["results"]
    assert hits[0]["id"] == new["id"]
