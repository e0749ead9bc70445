"""Context assembly: order, layers, naive figure, message caps."""

from __future__ import annotations

from ccm_tui.core.efforts.working_context import NOTE_HEAD, NOTE_TITLE, assemble, fit_message
from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.text.tokens import TokenCounter
from tests.helpers.sessionkit import make_session


def test_sections_come_in_the_specified_order_with_layer_totals(tmp_path):
    session = make_session(tmp_path)
    wc = assemble(session, "SYSTEM", [{"role": "user", "content": "new message"}], tools=[{"x": 1}])
    assert [s.layer for s in wc.sections] == ["system", "ambient", "expanded", "open", "open", "system", "turn"]
    assert wc.sections[-2].title == NOTE_TITLE and wc.messages[-2]["content"].startswith(NOTE_HEAD)
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
