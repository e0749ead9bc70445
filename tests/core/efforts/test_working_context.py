"""Context assembly: order, layers, naive figure, message caps; salience units."""

from __future__ import annotations

from ccm_tui.core.efforts.salience import IdIndex, end_of_turn, referenced_efforts, salient_keywords
from ccm_tui.core.efforts.working_context import assemble, fit_message
from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.session.session import Session
from ccm_tui.core.text.tokens import TokenCounter


def make_session(tmp_path) -> Session:
    session = Session.open(tmp_path / "s")
    session.append_ambient([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    done = Effort(id="db-pool", status=CONCLUDED, summary="Database pool raised to 25 connections.")
    session.efforts.add(done)
    session.append_effort(
        done, [{"role": "user", "content": "pool exhausted"}, {"role": "assistant", "content": "raise it"}]
    )
    session.view.summaries["db-pool"] = 0
    session.view.expanded["db-pool"] = 0
    for eid, active in (("alpha", False), ("beta", True)):
        e = Effort(id=eid, active=active)
        session.efforts.add(e)
        session.append_effort(e, [{"role": "user", "content": f"{eid} question"}])
    return session


def test_sections_come_in_the_specified_order_with_layer_totals(tmp_path):
    session = make_session(tmp_path)
    wc = assemble(session, "SYSTEM", [{"role": "user", "content": "new message"}], tools=[{"x": 1}])
    assert [s.layer for s in wc.sections] == ["system", "ambient", "expanded", "open", "open", "turn"]
    assert [s.title for s in wc.sections][3:5] == ["Open: alpha", "Active: beta"]
    contents = [m["content"] for m in wc.messages]
    assert contents[0].startswith("SYSTEM") and "db-pool: Database pool raised" in contents[0]
    assert contents.index("hi") < contents.index("pool exhausted") < contents.index("alpha question")
    assert contents.index("alpha question") < contents.index("beta question") < contents.index("new message")
    assert wc.layers["summaries"] > 0 and wc.layers["tools"] > 0
    assert wc.total == sum(wc.layers.values())
    assert wc.naive >= wc.total
    session.close()


def test_naive_counts_every_raw_log_even_when_concluded(tmp_path):
    session = make_session(tmp_path)
    session.view.expanded.clear()
    wc = assemble(session, "SYSTEM", [])
    assert wc.layers["expanded"] == 0
    assert wc.naive - wc.total >= session.efforts.get("db-pool").raw_tokens - wc.layers["summaries"]
    session.close()


def test_fit_message_keeps_head_and_tail_of_a_giant_message():
    counter = TokenCounter()
    text = "START " + "middle " * 3000 + " END"
    fitted = fit_message({"role": "user", "content": text}, 300, counter)["content"]
    assert fitted.startswith("START") and fitted.endswith("END")
    assert "left out of the working context" in fitted
    assert counter.count_text(fitted) <= 340
    small = {"role": "user", "content": "short"}
    assert fit_message(small, 300, counter) is small


def test_id_mentions_with_hyphen_or_space_and_keywords():
    index = IdIndex.build(["auth-bug", "japan-trip", "x"])
    assert index.mentioned("the Auth bug is back") == {"auth-bug"}
    assert index.mentioned("see auth-bug and japan trip") == {"auth-bug", "japan-trip"}
    assert "connections" in salient_keywords("Database pool raised to 25 connections.")
    assert "the" not in salient_keywords("the pool")


def test_decay_and_eviction_counters(tmp_path):
    session = make_session(tmp_path)
    ids = IdIndex(session.efforts.existing)
    for turn in (1, 2):
        report = end_of_turn(session, turn, set(), decay_threshold=3, eviction_threshold=5)
        assert report.collapsed == []
    refs = referenced_efforts(session, ids, ["more about the database pool connections"], set())
    assert refs == {"db-pool"}  # two salient summary keywords
    end_of_turn(session, 3, refs, decay_threshold=3, eviction_threshold=5)
    assert session.view.expanded["db-pool"] == 0
    for turn in (4, 5):
        end_of_turn(session, turn, set(), decay_threshold=3, eviction_threshold=5)
    report = end_of_turn(session, 6, set(), decay_threshold=3, eviction_threshold=5)
    assert report.collapsed == ["db-pool"] and "db-pool" not in session.view.expanded
    for turn in (7,):
        end_of_turn(session, turn, set(), decay_threshold=3, eviction_threshold=5)
    report = end_of_turn(session, 8, set(), decay_threshold=3, eviction_threshold=5)
    assert report.evicted == ["db-pool"] and session.is_evicted(session.efforts.get("db-pool"))
    session.close()


def test_one_counter_the_expansion_figure_is_the_expanded_layer_and_sections_add_up(tmp_path):
    """Issue 14 (figures that disagree): what the expansion banner says it loaded is what the meter's
    expanded layer shows, even when a giant message is capped; the inspector's sections plus the tool
    definitions are the meter's total."""
    from ccm_tui.core.efforts import lifecycle

    session = make_session(tmp_path)
    session.view.expanded.clear()
    big = Effort(id="big-log", status=CONCLUDED, summary="A giant pasted log.")
    session.efforts.add(big)
    session.append_effort(big, [{"role": "user", "content": "paste: " + "line of output\n" * 3000}])
    cap = 500

    expansion = lifecycle.expand(session, big, turn=1, message_cap=cap)
    wc = assemble(session, "SYSTEM", [], tools=[{"x": 1}], message_cap=cap)

    assert expansion.tokens == wc.layers["expanded"]
    assert expansion.tokens < big.raw_tokens  # the cap is in the figure, as in the context
    assert sum(s.tokens for s in wc.sections) + wc.tools_tokens == wc.total
    session.close()
