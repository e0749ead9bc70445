"""The app's proposals for a model that does not manage efforts, on plain exchanges."""

from __future__ import annotations

from ccm_tui.core.effort_assist import Exchange, exchanges_of, propose_folds, propose_open, propose_switch

JAPAN = [
    "Let's plan a trip to Japan in April",
    "Which cities in Japan should we visit, Kyoto or Osaka?",
    "How many days in Kyoto for the temples?",
    "Book a ryokan in Kyoto near Gion",
    "Japan rail pass price for Kyoto and Osaka?",
]
BREAD = [
    "My sourdough starter smells like acetone",
    "How often should I feed the sourdough starter?",
    "What flour is best for a sourdough starter, rye?",
    "The sourdough loaf came out flat, why?",
    "Sourdough bulk fermentation time?",
]


def exchanges(messages: list[str], first_line: int = 1) -> list[Exchange]:
    return [Exchange(first_line + 2 * i, first_line + 2 * i + 1, m, "Sure.") for i, m in enumerate(messages)]


def test_exchanges_pair_each_message_with_the_replies_after_it():
    numbered = [
        (1, {"role": "user", "content": "hi"}),
        (2, {"role": "assistant", "content": "hello"}),
        (3, {"role": "system", "content": "--- Effort reopened ---"}),
        (4, {"role": "assistant", "content": "again"}),
        (5, {"role": "user", "content": "bye"}),
    ]
    got = exchanges_of(numbered)
    assert got == [Exchange(1, 4, "hi", "hello\n\nagain"), Exchange(5, 5, "bye", "")]


def test_a_settled_topic_is_proposed_and_a_new_one_only_once_it_settles():
    proposal = propose_open(exchanges(JAPAN))
    assert proposal is not None and proposal.kind == "open"
    assert "japan" in proposal.name or "kyoto" in proposal.name
    assert propose_open(exchanges(JAPAN[:2])) is None  # too short to be a topic yet
    assert propose_open(exchanges(JAPAN + BREAD[:1])) is None  # a new topic is just starting
    later = propose_open(exchanges(JAPAN + BREAD))
    assert later is not None and "sourdough" in later.name


def test_a_topic_change_inside_the_active_effort_proposes_a_switch():
    switch = propose_switch("japan-trip", exchanges(JAPAN + BREAD))
    assert switch is not None and switch.conclude == "japan-trip" and "sourdough" in switch.name
    assert switch.lines == (11, 20)  # the new topic's lines in japan-trip's log: its effort starts with them
    assert propose_switch("japan-trip", exchanges(JAPAN)) is None


def test_only_topics_that_ended_before_the_window_are_folded():
    chat = exchanges(JAPAN + BREAD)
    bread_starts = chat[len(JAPAN)].first_line
    folds = propose_folds(chat, window_starts=bread_starts)
    assert len(folds) == 1 and folds[0].lines == (1, chat[len(JAPAN) - 1].last_line)
    assert propose_folds(chat, window_starts=3) == []  # japan is still in the window
    assert propose_folds(exchanges(JAPAN + BREAD[:2]), window_starts=100) == []  # bread has not settled
