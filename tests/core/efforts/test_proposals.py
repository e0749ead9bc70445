"""The app's proposals for a model that does not manage efforts, on plain exchanges."""

from __future__ import annotations

import pytest

from ccm_tui.core.efforts.proposals import Exchange, exchanges_of, propose_folds, propose_open, propose_switch
from ccm_tui.core.text.topics import TurnText, sustained
from tests.helpers import labelled_chats
from tests.helpers.topic_chat import TOPICS

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


ASIDE = ["Quick one: what is the capital of Australia?", "And its population?"]


def test_a_short_aside_goes_with_the_topic_after_it_and_blocks_no_fold():
    chat = exchanges(ASIDE + JAPAN + BREAD)
    bread_starts = chat[len(ASIDE) + len(JAPAN)].first_line
    folds = propose_folds(chat, window_starts=bread_starts)
    assert [f.lines for f in folds] == [(1, chat[len(ASIDE) + len(JAPAN) - 1].last_line)]  # the aside's lines too
    assert "japan" in folds[0].name or "kyoto" in folds[0].name


def test_a_topic_followed_by_an_aside_folds_once_a_topic_settles_after_the_aside():
    chat = exchanges(JAPAN + ASIDE + BREAD)
    bread_starts = chat[len(JAPAN) + len(ASIDE)].first_line
    folds = propose_folds(chat, window_starts=bread_starts)
    assert folds and folds[0].lines == (1, chat[len(JAPAN) - 1].last_line)
    assert propose_folds(exchanges(JAPAN + ASIDE), window_starts=100) == []  # only an aside after it so far


# ------------------------------------------------------------------ small talk is not a topic (issue 30)
def chat_exchanges(chat: list[tuple[str, str]]) -> list[Exchange]:
    return [Exchange(2 * i + 1, 2 * i + 2, user, reply) for i, (user, reply) in enumerate(chat)]


def proposals_while_talking(chat, before=()) -> list[str]:
    """The proposals made after each exchange of ``chat`` (``before``: the active effort's talk so far)."""
    if before:
        found = [propose_switch("active", chat_exchanges([*before, *chat[:n]])) for n in range(1, len(chat) + 1)]
    else:
        found = [propose_open(chat_exchanges(chat[:n])) for n in range(1, len(chat) + 1)]
    return [p.name for p in found if p is not None]


def test_jokes_and_one_off_questions_are_proposed_as_no_topic():
    """The issue's case: "New topic? Ctrl+Y opens effort 'capital-joke-peru'" after a few jokes and a
    question about Peru with its follow-up."""
    assert proposals_while_talking(labelled_chats.SMALL_TALK["jokes-and-peru"]) == []


@pytest.mark.parametrize("name", [*labelled_chats.SMALL_TALK, *labelled_chats.HELD_OUT_SMALL_TALK])
def test_small_talk_never_gets_a_proposal_nor_makes_an_effort_switch(name):
    chat = {**labelled_chats.SMALL_TALK, **labelled_chats.HELD_OUT_SMALL_TALK}[name]
    assert proposals_while_talking(chat) == []
    assert proposals_while_talking(chat, before=labelled_chats.TOPICS["japan-trip"]) == []


def test_topics_are_still_proposed_and_switched_to():
    topics = {**labelled_chats.TOPICS, **labelled_chats.HELD_OUT_TOPICS}
    opened = [name for name, chat in topics.items() if proposals_while_talking(chat)]
    others = {name: chat for name, chat in topics.items() if name != "wifi-network"}
    after = labelled_chats.TOPICS["wifi-network"]  # the effort the talk moves on from
    switched = [name for name, chat in others.items() if proposals_while_talking(chat, before=after)]
    assert len(opened) >= 0.95 * len(topics) and len(switched) >= 0.95 * len(others)
    assert "japan-trip" in opened and "paint-bedroom" in opened  # (its turns are linked by follow-ups: "it", "them")


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        ([("tell me a joke", "An atom joke."), ("another one", "A noodle joke."), ("good one", "Thanks!")], False),
        ([("capital of Peru?", "Lima."), ("people in Lima?", "10 million."), ("a pun", "A bad pun.")], False),
        (
            [
                ("fix my bike brakes", "Check the pads."),
                ("the pads look worn", "Replace the pads."),
                ("which pads?", "Resin pads."),
            ],
            True,
        ),
        (
            [
                ("paint my bedroom", "Pick a colour."),
                ("which colour?", "Pale grey."),
                ("how many coats for it?", "Two."),
            ],
            True,
        ),
    ],
)
def test_sustained_needs_turns_linked_by_content_words_or_follow_ups(turns, expected):
    assert sustained([TurnText(user, agent) for user, agent in turns], 3) is expected


def chat_turns(chat: list[tuple[str, str]], first_line: int = 1) -> list[Exchange]:
    return [Exchange(first_line + 2 * i, first_line + 2 * i + 1, u, a) for i, (u, a) in enumerate(chat)]


def test_small_talk_that_left_the_window_is_never_folded_into_a_named_effort():
    """Issue 38: a greeting, a unit conversion, a cat joke folded into a concluded effort with a name."""
    small = [turn for chat in labelled_chats.SMALL_TALK.values() for turn in chat]
    assert propose_folds(chat_turns(small), window_starts=10_000) == []


def test_small_talk_before_a_topic_goes_with_it_and_the_topic_is_still_folded():
    small = [turn for name in ("greetings", "conversions") for turn in labelled_chats.SMALL_TALK[name]]
    topic = labelled_chats.TOPICS["sourdough"]
    after = labelled_chats.TOPICS["python-bug"]
    folds = propose_folds(chat_turns([*small, *topic, *after]), window_starts=10_000)
    assert folds and folds[0].lines is not None and folds[0].lines[0] == 1  # (the greetings went with it)
    assert not {"hello", "celsius", "ounces"} & set(folds[0].name.split("-"))


def test_an_open_proposal_names_the_ambient_lines_of_its_topic_without_filler_words():
    """Accepting it opens an effort that starts with those lines (not an empty one); "how long" gives
    no "long" to its name (it was 'sourdough-bake-long')."""
    said = [
        "My sourdough starter smells like acetone, is it dead?",
        "How long should I bake a sourdough loaf?",
        "What temperature should the oven be for a sourdough bake?",
        "How long should the dough proof before the bake?",
    ]
    proposal = propose_open(exchanges(["Hi there!", *said], first_line=1))
    assert proposal is not None and proposal.kind == "open"
    assert "long" not in proposal.name.split("-") and "sourdough" in proposal.name
    assert proposal.lines is not None and proposal.lines[1] == 10 and proposal.lines[0] <= 3


def test_the_same_topics_next_part_is_no_switch():
    """The effort now starts with the topic's first exchanges: TextTiling may cut "sourdough starter"
    from "sourdough bake"; every request says sourdough — one topic, no switch."""
    assert propose_switch("sourdough", exchanges(TOPIC_SOURDOUGH)) is None
    assert propose_switch("sourdough", exchanges([*TOPIC_SOURDOUGH, *TAXES])) is not None


TOPIC_SOURDOUGH = TOPICS["sourdough"]
TAXES = TOPICS["taxes"][:4]
