"""Context assembly: order, layers, naive figure, message caps."""

from __future__ import annotations

from ccm_tui.core.efforts.working_context import (
    AMBIENT_HEAD,
    NOTE_HEAD,
    NOTE_TITLE,
    assemble,
    cache_breakpoints,
    fit_message,
    stepped_ambient,
)
from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.text.tokens import TokenCounter
from tests.helpers.sessionkit import make_session


def test_sections_come_in_the_specified_order_with_layer_totals(tmp_path):
    session = make_session(tmp_path)
    wc = assemble(session, "SYSTEM", [{"role": "user", "content": "new message"}], tools=[{"x": 1}])
    # laid out for prefix caches: what changes least first, the active effort and the turn last, the note after
    layers = [s.layer for s in wc.sections]
    assert layers == ["system", "open", "summaries", "expanded", "ambient", "open", "system", "turn"]
    assert wc.sections[-2].title == NOTE_TITLE and wc.messages[-2]["content"].startswith(NOTE_HEAD)
    assert [s.title for s in wc.sections if s.layer == "open"] == ["Open: alpha", "Active: beta"]
    contents = [m["content"] for m in wc.messages]
    assert contents[0] == "SYSTEM" and [m["role"] for m in wc.messages].count("system") == 1
    assert "db-pool: Database pool raised" in wc.sections[2].messages[0]["content"]
    assert contents.index("alpha question") < contents.index("pool exhausted") < contents.index("hi")
    assert contents.index("hi") < contents.index("beta question") < contents.index("new message")
    # the effort state is in the note, with the budget line
    assert "- open: beta (ACTIVE: new messages go here)" in contents[-2]
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


def test_a_turn_without_a_state_change_resends_the_previous_request_up_to_its_note(tmp_path):
    """What changes every turn comes late: the next request is the previous one up to its note, then
    the previous exchange, a new note and the new message (the prefix a provider's cache serves)."""
    session = make_session(tmp_path)
    first = assemble(session, "SYSTEM", [{"role": "user", "content": "q1"}], budget=16_000).messages
    session.append_effort(
        session.efforts.active, [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"}]
    )
    second = assemble(session, "SYSTEM", [{"role": "user", "content": "q2"}], budget=16_000).messages
    assert second[: len(first) - 2] == first[:-2] and first[-2]["content"].startswith(NOTE_HEAD)
    assert [m["content"] for m in second[len(first) - 2 :]] == ["q1", "a1", second[-2]["content"], "q2"]
    session.close()


def test_the_ambient_window_slides_in_steps_never_past_its_size():
    def window(n: int, size: int = 9) -> list[int]:
        numbered = []
        for k in range(1, n + 1):
            numbered += [
                (2 * k - 1, {"role": "user", "content": f"q{k}"}),
                (2 * k, {"role": "assistant", "content": "a"}),
            ]
        last = numbered[-2 * size :]  # the session's window: its last exchanges
        return [line for line, m in stepped_ambient(last, size) if m["role"] == "user"]

    starts = [window(n)[0] for n in range(9, 21)]
    assert all(len(window(n)) <= 9 for n in range(1, 30)) and min(len(window(n)) for n in range(9, 30)) >= 7
    assert len(set(starts)) <= 5  # the start moved 4 times in 12 turns, not 12
    assert starts == sorted(starts)


def test_cache_breakpoints_mark_the_ends_of_the_layers_a_change_rewrites_first(tmp_path):
    session = make_session(tmp_path)
    wc = assemble(session, "SYSTEM", [{"role": "user", "content": "new message"}], budget=16_000)
    messages = wc.messages
    marks = cache_breakpoints(messages)
    assert len(marks) == 4 and marks[0] == 0 and marks[-1] == len(messages) - 3  # the history, before the note
    ambient = next(i for i, m in enumerate(messages) if m["content"] == AMBIENT_HEAD)
    active = next(i for i, m in enumerate(messages) if str(m["content"]).startswith("[Active effort 'beta'"))
    assert ambient - 1 in marks and active - 1 in marks
    session.close()
