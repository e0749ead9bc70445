"""What a recalled line shows: whole when it is short, the part holding the words asked for when the
context would cut it."""

from __future__ import annotations

from ccm_tui.core.text.tokens import TokenCounter
from ccm_tui.core.turn.recall import excerpt

COUNTER = TokenCounter()


def test_a_short_line_is_shown_whole():
    assert excerpt("My  locker code\nis 4729.", ("locker",), 50, COUNTER) == "My locker code is 4729."


def test_a_long_line_shows_the_part_that_holds_most_of_the_words_asked_for():
    line = "the allotment paths need weeding. " * 200 + "The gate code of the tool shed is 8861. " + "hedge. " * 200
    shown = excerpt(line, ("allotment", "gate", "shed", "code"), 60, COUNTER)
    assert "The gate code of the tool shed is 8861." in shown
    assert shown.startswith("…") and shown.endswith("…")
    assert COUNTER.count_text(shown) <= 60


def test_words_found_by_their_stem_and_a_line_without_them_shows_its_head():
    line = "filler words here. " * 100 + "Water the tomatoes twice a week. " + "more filler. " * 100
    assert "Water the tomatoes twice a week." in excerpt(line, ("tomato",), 40, COUNTER)
    head = excerpt(line, ("cucumber",), 40, COUNTER)
    assert head.startswith("filler words here.") and COUNTER.count_text(head) <= 40
