"""Proof runs of the prototype's slices 2–5 plus the hard budget, with a scripted model.

Each proof drives the real CLI (``send --json`` / ``status --json`` / ``search --json``)
against the loopback server and checks files, banners and what each request carried.
"""

from __future__ import annotations

import json
import re

from tests.helpers.openai_server import call, text, tool_calls


def make_effort(ccm, name: str, facts: list[str], summary: str) -> str:
    ccm.server.push(tool_calls(call("open_effort", {"name": name})), text("Opened."))
    out = ccm.send(f"Let's work on {name}")
    effort_id = out["active_effort"]
    for fact in facts:
        ccm.server.push(text("Noted."))
        ccm.send(fact)
    ccm.server.push(tool_calls(call("close_effort", {})), text(summary), text("Concluded."))
    ccm.send(f"{name} is done")
    return effort_id


def chat(ccm, message: str, reply: str = "Sure.") -> dict:
    ccm.server.push(text(reply))
    return ccm.send(message)


def effort_row(ccm, effort_id: str) -> dict:
    return next(e for e in ccm.status()["efforts"] if e["id"] == effort_id)


# ---------------------------------------------------------------- slice 2: expansion
def test_compact_expand_answer_collapse(ccm):
    make_effort(
        ccm,
        "db pool",
        ["The pool size was 5 and we hit exhaustion at 40 rps", "We raised the pool to 25 connections"],
        "DB pool: connection exhaustion fixed by raising pool size.",
    )
    before = ccm.status()["context"]
    assert "We raised the pool to 25" not in ccm.last_context_text()
    ccm.server.push(tool_calls(call("expand_effort", {"id": "db-pool"})), text("It was raised from 5 to 25."))
    out = ccm.send("What exact pool size did we pick for the db pool?")
    assert any(re.fullmatch(r"--- Expanded effort: db-pool \(\d+ tokens loaded\) ---", b) for b in out["banners"])
    # the answering request (second of the turn) carried the raw log
    assert "We raised the pool to 25 connections" in ccm.last_context_text()
    assert effort_row(ccm, "db-pool")["expanded"] is True
    assert out["context"]["layers"]["expanded"] > 0
    assert out["context"]["total"] > before["total"]
    ccm.server.push(tool_calls(call("collapse_effort", {"id": "db-pool"})), text("Put it away."))
    out = ccm.send("ok, collapse it")
    assert "--- Collapsed effort: db-pool ---" in out["banners"]
    assert out["context"]["layers"]["expanded"] == 0
    assert effort_row(ccm, "db-pool")["expanded"] is False


def test_multiple_open_efforts_and_switching(ccm):
    ccm.server.push(tool_calls(call("open_effort", {"name": "alpha"})), text("ok"))
    ccm.send("work on alpha")
    ccm.server.push(tool_calls(call("open_effort", {"name": "beta"})), text("ok"))
    out = ccm.send("also beta")
    assert out["active_effort"] == "beta"
    rows = {e["id"]: e for e in ccm.status()["efforts"]}
    assert rows["alpha"]["status"] == rows["beta"]["status"] == "open"
    assert [e["id"] for e in rows.values() if e["active"]] == ["beta"]
    ccm.server.push(tool_calls(call("switch_effort", {"id": "alpha"})), text("Back on alpha."))
    out = ccm.send("back to alpha please")
    assert "--- Switched to effort: alpha ---" in out["banners"]
    assert out["logged_to"] == "alpha" and out["active_effort"] == "alpha"
    messages = ccm.chat_requests()[-1]["messages"]
    heads = [m["content"] for m in messages if m["role"] == "user" and "effort '" in m["content"][:40]]
    assert heads[-1].startswith("[Active effort 'alpha'") and any("Backgrounded open effort 'beta'" in h for h in heads)


# ---------------------------------------------------------------- slice 3: decay
def test_decay_at_exactly_the_threshold_reset_by_reference_and_reexpand(ccm):
    make_effort(ccm, "auth bug", ["401 after one hour"], "Auth: 401s fixed by token refresh interceptor.")
    ccm.server.push(tool_calls(call("expand_effort", {"id": "auth-bug"})), text("Loaded."))
    ccm.send("show me the auth details")
    chat(ccm, "what's for lunch?")
    chat(ccm, "and dinner?")
    assert effort_row(ccm, "auth-bug")["turns_since_reference"] == 2
    out = chat(ccm, "remind me about the auth bug again")  # a reference by id resets the counter
    assert effort_row(ccm, "auth-bug")["turns_since_reference"] == 0 and out["banners"] == []
    chat(ccm, "weather?")
    out = chat(ccm, "music?")
    assert out["banners"] == [] and effort_row(ccm, "auth-bug")["expanded"] is True
    out = chat(ccm, "films?")
    assert out["banners"] == ["--- Auto-collapsed effort: auth-bug (inactive for 3 turns) ---"]
    assert effort_row(ccm, "auth-bug")["expanded"] is False
    assert ccm.events("effort_collapsed")[-1]["reason"] == "inactive for 3 turns"
    ccm.server.push(tool_calls(call("expand_effort", {"id": "auth-bug"})), text("Loaded again."))
    out = ccm.send("expand the auth bug once more")
    assert effort_row(ccm, "auth-bug")["expanded"] is True
    assert any(b.startswith("--- Expanded effort: auth-bug") for b in out["banners"])


def test_each_expansion_decays_independently_and_keywords_count_as_reference(ccm):
    make_effort(ccm, "kafka lag", ["consumer lag grows"], "Kafka consumer lag fixed by partition rebalancing.")
    make_effort(ccm, "css grid", ["layout breaks"], "Responsive grid layout fixed with minmax columns.")
    ccm.server.push(
        tool_calls(call("expand_effort", {"id": "kafka-lag"}), call("expand_effort", {"id": "css-grid"})),
        text("Both loaded."),
    )
    ccm.send("load both")
    chat(ccm, "tell me about partition rebalancing for a consumer")  # 2 keywords of kafka's summary
    chat(ccm, "ok")
    out = chat(ccm, "fine")
    assert out["banners"] == ["--- Auto-collapsed effort: css-grid (inactive for 3 turns) ---"]
    assert effort_row(ccm, "kafka-lag")["expanded"] is True
    out = chat(ccm, "bye")
    assert out["banners"] == ["--- Auto-collapsed effort: kafka-lag (inactive for 3 turns) ---"]


# ---------------------------------------------------------------- slice 4: bounded memory
def test_thirty_concluded_efforts_and_long_ambient_stay_bounded_and_searchable(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "6000")
    topics = [f"topic{i:02d}" for i in range(30)]
    for i, topic in enumerate(topics):
        make_effort(
            ccm,
            topic,
            [f"detail about {topic} number {i}"],
            f"{topic.capitalize()} summary: decided option {i} for the {topic} subsystem.",
        )
    for i in range(15):
        chat(ccm, f"ambient chatter {i} about nothing in particular", "Mm-hm.")
    status = ccm.status()
    ctx = status["context"]
    assert ctx["total"] <= 6000
    evicted = [e["id"] for e in status["efforts"] if e["evicted"]]
    in_memory = [e["id"] for e in status["efforts"] if e["status"] == "concluded" and not e["evicted"]]
    assert "topic00" in evicted and in_memory  # old summaries left, recent ones stayed
    assert ctx["layers"]["ambient"] < 40 * 10 * 2  # the ambient window, not 15 exchanges
    seen = ccm.last_context_text()
    assert "ambient chatter 14" in seen and "ambient chatter 3 " not in seen
    assert "Topic00 summary" not in seen and "find them with search_efforts" in seen
    # search finds the evicted effort (CLI, and the model's tool)
    hits = ccm.search("topic00 subsystem")["results"]
    assert hits[0]["id"] == "topic00" and hits[0]["status"] == "concluded"
    ccm.server.push(
        tool_calls(call("search_efforts", {"query": "topic00 subsystem"})),
        tool_calls(call("expand_effort", {"id": "topic00"})),
        text("It was option 0."),
    )
    out = ccm.send("what did we decide for that old subsystem thing, topic zero?")
    tool_msgs = [m for m in ccm.chat_requests()[-2]["messages"] if m["role"] == "tool"]
    assert '"id": "topic00"' in tool_msgs[0]["content"]
    assert "detail about topic00 number 0" in ccm.last_context_text()
    assert effort_row(ccm, "topic00")["expanded"] is True and effort_row(ccm, "topic00")["evicted"] is False
    assert out["context"]["total"] <= 6000
    for i in range(3):
        out = chat(ccm, f"more chatter {i}", "Mm.")
    assert "--- Auto-collapsed effort: topic00 (inactive for 3 turns) ---" in out["banners"]


def test_summary_eviction_after_twenty_unreferenced_turns(ccm):
    make_effort(ccm, "tax return", ["deductions"], "Tax return filed with home office deduction.")
    for i in range(19):
        chat(ccm, f"chatter {i}")
    assert effort_row(ccm, "tax-return")["evicted"] is False
    chat(ccm, "chatter 19")
    row = effort_row(ccm, "tax-return")
    assert row["evicted"] is True and row["summary"]  # nothing deleted
    assert ccm.events("summary_evicted")[-1]["effort_id"] == "tax-return"
    chat(ccm, "back to the tax return: was the office deduction accepted?")
    assert effort_row(ccm, "tax-return")["evicted"] is False  # a reference by id brings it back


# ---------------------------------------------------------------- slice 5: reopen
def test_open_conclude_reopen_work_reconclude(ccm):
    make_effort(ccm, "auth bug", ["401 after an hour"], "Auth: 401s fixed by refresh interceptor.")
    ccm.server.push(tool_calls(call("reopen_effort", {"id": "auth-bug"})), text("Reopened, what's the edge case?"))
    out = ccm.send("Let's reopen auth-bug, I found another edge case")
    assert "--- Reopened effort: auth-bug ---" in out["banners"]
    assert out["active_effort"] == "auth-bug" and out["logged_to"] == "auth-bug"
    tool_msg = [m for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool"][0]["content"]
    assert (
        '"status": "reopened"' in tool_msg and '"prior_summary": "Auth: 401s fixed by refresh interceptor."' in tool_msg
    )
    log = ccm.lines("efforts/auth-bug.jsonl")
    separator = [m for m in log if m["role"] == "system"]
    assert separator[0]["content"] == "--- Effort reopened ---" and "ts" in separator[0]
    assert log[0]["content"] == "Let's work on auth bug"  # original history preserved
    assert "401 after an hour" in ccm.last_context_text()  # the whole log is back in context
    chat(ccm, "Concurrent requests race on refresh", "Queue them behind one refresh promise.")
    ccm.server.push(tool_calls(call("close_effort", {})), text("Auth: 401s and refresh races fixed."), text("Done."))
    out = ccm.send("fixed, close it again")
    entry = ccm.effort("auth-bug")
    assert entry["status"] == "concluded" and entry["summary"] == "Auth: 401s and refresh races fixed."
    assert entry["reopen_count"] == 1
    body = "\n".join(m["content"] for m in ccm.summary_requests()[-1]["messages"])
    assert "401 after an hour" in body and "Concurrent requests race on refresh" in body


def test_reopen_unexpands_and_deactivates_others(ccm):
    make_effort(ccm, "auth bug", ["x"], "Auth fixed.")
    ccm.server.push(tool_calls(call("open_effort", {"name": "other"})), text("ok"))
    ccm.send("work on other")
    ccm.server.push(tool_calls(call("expand_effort", {"id": "auth-bug"})), text("ok"))
    ccm.send("expand auth")
    ccm.server.push(tool_calls(call("reopen_effort", {"id": "auth-bug"})), text("ok"))
    ccm.send("reopen auth-bug")
    rows = {e["id"]: e for e in ccm.status()["efforts"]}
    assert rows["auth-bug"]["expanded"] is False and rows["auth-bug"]["active"] is True
    assert rows["other"]["active"] is False and rows["other"]["status"] == "open"


# ---------------------------------------------------------------- hard budget
def test_budget_compaction_order_and_notice(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "3200")
    make_effort(ccm, "big one", ["word " * 600], "Big one summary about things.")
    ccm.server.push(tool_calls(call("expand_effort", {"id": "big-one"})), text("Loaded."))
    out = ccm.send("expand the big one")
    assert any(b.startswith("--- Expanded effort: big-one") for b in out["banners"])  # it fits for now
    for i in range(8):  # the chat grows (about the big one: the expansion does not decay) until it passes
        out = chat(ccm, f"chatter {i} about the big one " + "blah " * 200, "Mm.")
        notices = [b for b in out["banners"] if b.startswith("AUTO-COMPACTION #1: ")]
        if notices:
            break
    assert notices, out["banners"]
    before, after = (int(x.replace(",", "")) for x in re.findall(r"[\d,]+", notices[0].split(":", 1)[1]))
    assert after <= 3200 < before
    assert ccm.events("compaction_start")[-1]["compaction_number"] == 1
    complete = ccm.events("compaction_complete")[-1]
    assert complete["steps"][0] == "collapsed big-one" and complete["full_reload"] is False
    assert out["request"]["total"] <= 3200


def test_an_expansion_the_budget_cannot_hold_is_refused_with_a_passage_instead(ccm, monkeypatch):
    """Issue 30: auth-bug (36,636 tokens) was expanded into a 16,000 budget (meter 275%) and collapsed
    again by the next auto-compaction. Now it is refused, and the model gets the passage around the
    line that answers the user's message."""
    facts = [f"step {i}: " + "trace line " * 150 for i in range(6)]
    facts.insert(3, "The token refresh race was fixed by a mutex around refreshToken.")
    make_effort(ccm, "auth bug", facts, "Auth bug: a refresh race, fixed with a mutex.")  # (the default budget)
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "3200")
    ccm.server.push(tool_calls(call("expand_effort", {"id": "auth-bug"})), text("Here is what the log says."))
    out = ccm.send("how exactly was the token refresh race fixed in auth-bug?")
    assert not any("Expanded effort" in b or "AUTO-COMPACTION" in b for b in out["banners"])
    result = json.loads(next(m for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool")["content"])
    assert result["status"] == "too_large" and result["effort_id"] == "auth-bug"
    assert result["tokens"] > result["room"] > 0
    assert f"auth-bug is {result['tokens']:,} tokens; the budget leaves {result['room']:,}" in result["note"]
    assert "around_line" in result["note"]
    assert any("mutex around refreshToken" in m["content"] for m in result["passage"]["messages"])
    assert ccm.status()["efforts"][0]["expanded"] is False and out["request"]["total"] <= 3200
    refused = ccm.send("/expand auth-bug", expect=1)  # the user's action: the same refusal, in words
    assert f"auth-bug is {result['tokens']:,} tokens; the budget leaves" in refused["error"]
    assert "search it or read a passage of its log instead" in refused["error"]


def test_a_message_larger_than_the_budget_is_refused_clearly(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "1800")
    out = ccm.send("lorem ipsum " * 400, expect=1)
    assert "over the 1,800-token budget" in out["error"]
    assert ccm.server.chat_requests() == []
    assert ccm.events("turn_failed")[-1]["kind"] == "budget"


def test_open_efforts_are_checkpointed_when_nothing_else_is_left(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "2400")

    def responder(body):
        if not body.get("tools"):
            return text("Checkpoint: goal X, facts Y.")
        last = body["messages"][-1]["content"]
        return text(f"{last.split(':')[0]} drafted: " + "prose " * 40)

    ccm.server.push(tool_calls(call("open_effort", {"name": "novel"})), text("ok"))
    ccm.send("let's write a novel")
    ccm.server.responder = responder
    total = 0
    for i in range(12):
        out = ccm.send(f"Draft chapter {i}: " + "idea " * 30)
        assert out["request"]["total"] <= 2400
        total = out["context"]["total"]
    entry = ccm.effort("novel")
    assert entry.get("checkpoint") and entry["checkpoint_upto"] > 0
    assert total <= 2400
    assert len(ccm.lines("efforts/novel.jsonl")) == 26  # raw log untouched: every message is there
    assert any(e["steps"] and "checkpointed novel" in " ".join(e["steps"]) for e in ccm.events("compaction_complete"))
    fulls = [e["full_reload"] for e in ccm.events("compaction_complete")]
    assert fulls[:2] == [False, True]


def test_a_giant_pasted_message_does_not_lock_the_effort_out_of_the_budget(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "8000")
    ccm.server.push(tool_calls(call("open_effort", {"name": "log dive"})), text("ok"))
    ccm.send("let's look at this log")
    giant = "ERROR connection reset by peer" + " reset" * 5000
    ccm.server.push(text("That is a lot of resets."))
    out = ccm.send(giant)  # fits the budget as a new message, but would crowd out everything once logged
    for i in range(3):
        ccm.server.push(text(f"answer {i}"))
        out = ccm.send(f"follow-up {i}")
        assert out["request"]["total"] <= 8000
    seen = ccm.last_context_text()
    assert "tokens of this message are left out of the working context" in seen
    assert ccm.lines("efforts/log-dive.jsonl")[2]["content"] == giant  # the raw log keeps it all


def test_text_said_alongside_close_effort_is_summarized(ccm):
    ccm.server.push(tool_calls(call("open_effort", {"name": "alpha"})), text("ok"))
    ccm.send("work on alpha")
    ccm.server.push(
        tool_calls(call("close_effort", {}), content="Final fix: bumped the timeout to 30 s."),
        text("Alpha: timeout bumped to 30 s."),
        text("Closed."),
    )
    ccm.send("alpha is done")
    body = "\n".join(m["content"] for m in ccm.summary_requests()[-1]["messages"])
    assert "bumped the timeout to 30 s" in body
