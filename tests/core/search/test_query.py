"""Query processing: stop words, pairs, and the weights a search can be given."""

from __future__ import annotations

import json
from pathlib import Path

from ccm_tui.core.search import EffortIndex, Weights
from ccm_tui.core.search._query import STOP_WORDS, parse_query, query_terms
from tests.helpers.listed_efforts import sync_listed


def test_question_and_function_words_are_not_searched_alone() -> None:
    words, pairs = parse_query("When did Caroline go to the LGBTQ support group?")
    assert words == ["did", "caroline", "go", "lgbtq", "support", "group"]
    assert "support group" in pairs and "the lgbtq" in pairs  # pairs keep them: a phrase is still a phrase
    assert {"what", "when", "how", "the", "a", "of"} <= STOP_WORDS


def test_a_query_of_stop_words_only_searches_them() -> None:
    assert query_terms("the who") == ["the", "who"]
    assert query_terms("what is it") == ["what", "is", "it"]


def test_stop_words_can_be_kept() -> None:
    assert query_terms("what is the cache", stop_words=False) == ["what", "is", "the", "cache"]
    assert query_terms("what is the cache") == ["cache"]


def test_a_search_can_be_given_other_weights(tmp_path: Path) -> None:
    (tmp_path / "efforts").mkdir()
    for effort_id, text in (("a", "the cache of the server"), ("b", "a cache")):
        (tmp_path / "efforts" / f"{effort_id}.jsonl").write_text(json.dumps({"role": "user", "content": text}) + "\n")
    with EffortIndex(tmp_path / "derived.sqlite") as index:
        sync_listed(index, tmp_path, [("a", "concluded", None), ("b", "concluded", None)])
        default = index.search("the cache")
        kept = index.search("the cache", weights=Weights(stop_words=False))
        assert {h.id for h in default} == {h.id for h in kept} == {"a", "b"}
        assert kept[0].id == "a"  # 'the' counts when stop words are searched
        assert default[0].score != kept[0].score


def test_a_passage_is_placed_by_the_rarity_of_its_words_among_lines() -> None:
    from ccm_tui.core.search._results import best_window, place_passage
    from ccm_tui.core.search._scoring import Plan, Postings

    def postings(docs: float) -> Postings:
        return Postings(docs, {}, 0)

    # 'router' is in 90 of 100 lines, 'kernel' in 2: both in every effort (the same idf over efforts)
    plan = Plan(["router", "kernel"], 2, [], [postings(90), postings(2)], [0.1, 0.1], 10.0, lines=100.0)
    line_terms = {0: {0}, 1: {1}, 5: {1}, 6: {1}}
    assert best_window(plan.weight, line_terms)[0] == 0  # the ranking's coverage: the first run with both words
    assert place_passage(plan, line_terms) == 5  # shown: the run whose lines hold the word rare among lines
