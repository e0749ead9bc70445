"""The offline TextTiling segmenter finds topic shifts and always covers every turn."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ccm_tui.core.text.topics import TurnText, depth_scores, segment
from ccm_tui.replay.boundaries import SLUG_RE, validate_spans

TOPICS = {
    "bread": ("sourdough", "starter", "dough", "loaf", "crust", "oven", "proof", "flour", "hydration", "banneton"),
    "brakes": ("bicycle", "brake", "pads", "rim", "cable", "lever", "squeal", "shimano", "caliper", "wheel"),
    "taxes": ("tax", "return", "deduction", "allowance", "receipt", "income", "employer", "filing", "euros", "elster"),
}


def topic_turn(topic: str, i: int) -> TurnText:
    vocab = TOPICS[topic]
    user = f"Question about the {vocab[i % 10]} and the {vocab[(i + 3) % 10]}: why does the {vocab[(i + 5) % 10]} fail?"
    agent = " ".join(f"The {vocab[(i + k) % 10]} affects the {vocab[(i + 2 * k + 1) % 10]}." for k in range(12))
    return TurnText(user, agent)


def synthetic(sizes: dict[str, int]) -> list[TurnText]:
    turns = []
    for topic, n in sizes.items():
        turns += [topic_turn(topic, i) for i in range(n)]
    return turns


def ranges(spans):
    return [(s.first_turn, s.last_turn) for s in spans]


def test_finds_the_two_topic_shifts():
    spans = segment(synthetic({"bread": 5, "brakes": 5, "taxes": 5}))
    assert ranges(spans) == [(1, 5), (6, 10), (11, 15)]


def test_names_come_from_each_segments_own_words():
    spans = segment(synthetic({"bread": 4, "taxes": 4}))
    assert len(spans) == 2
    bread, taxes = spans
    assert any(w in bread.id for w in TOPICS["bread"])
    assert any(w in taxes.id for w in TOPICS["taxes"])
    assert all(SLUG_RE.match(s.id) for s in spans)


def test_a_continuation_request_never_opens_a_topic():
    turns = synthetic({"bread": 4, "brakes": 4})
    turns.insert(4, TurnText("yes", " ".join(TOPICS["brakes"]) * 3))  # "yes" with a brakes-heavy reply
    spans = segment(turns)
    assert all(turns[s.first_turn - 1].user != "yes" for s in spans)


def test_one_topic_stays_one_effort():
    assert ranges(segment(synthetic({"bread": 8}))) == [(1, 8)]


def test_tiny_and_empty_conversations():
    assert segment([]) == []
    assert ranges(segment([TurnText("hello")])) == [(1, 1)]
    assert ranges(segment([TurnText("a b"), TurnText("")])) == [(1, 2)]


def test_depth_of_a_valley_climbs_to_the_peaks():
    depths = depth_scores([0.8, 0.6, 0.2, 0.5, 0.9])
    assert depths[2] == (0.8 - 0.2) + (0.9 - 0.2)
    assert depths[0] == 0 and depths[4] == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("abcdefgh éz ?.\n"), max_size=80), min_size=1, max_size=30))
def test_segments_are_contiguous_valid_and_cover_every_turn(users):
    turns = [TurnText(u, u[::-1]) for u in users]
    spans = segment(turns)
    assert spans[0].first_turn == 1 and spans[-1].last_turn == len(turns)
    for a, b in zip(spans, spans[1:]):
        assert b.first_turn == a.last_turn + 1
    assert len({s.id for s in spans}) == len(spans)
    validate_spans([{"id": s.id, "first_turn": s.first_turn, "last_turn": s.last_turn} for s in spans], len(turns))


def test_deterministic():
    turns = synthetic({"bread": 5, "brakes": 3, "taxes": 6})
    assert segment(turns) == segment(list(turns))
