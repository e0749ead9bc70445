"""Recall's evidence (issue 38: 7 of 22 recalls in a day were unrelated, found by ``www``, ``plan``,
``type``, ``path``, ``check``, ``main``, ``command``): a URL's parts, a generic word, a part of a code
identifier are no evidence alone; an imported agent session needs more; a genuine recall still fires.
Each false trigger is shown to fire under the rule as it was (``RECALL_BEFORE``), so the test can fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccm_tui.core.search import RECALL_BEFORE, EffortIndex, Evidence
from ccm_tui.core.search._rare_words import word_weights
from ccm_tui.core.turn.recall import COOLDOWN_TURNS, MAX_REPEATS, RecallMemory, SkipRule, is_imported
from tests.helpers.listed_efforts import sync_listed


def log(path: Path, *lines: str) -> None:
    roles = ("user", "assistant") * len(lines)
    path.write_text("".join(json.dumps({"role": r, "content": c}) + "\n" for r, c in zip(roles, lines)))


@pytest.fixture
def index(tmp_path: Path):
    root = tmp_path / "s"
    (root / "efforts").mkdir(parents=True)
    log(
        root / "efforts" / "trip.jsonl",
        "Bookmark for later: https://www.ryokan-hanaya.jp/rooms has the room photos",
        "Saved.",
        "The plan for Saturday is the hike up Mount Takao",
        "Sounds good.",
        "main is where the release branch of the blog gets merged",
        "Noted.",
        "My locker code at the climbing gym is 4729",
        "Got it.",
        "We stay at the Hanaya ryokan near Gion, room 204",
        "Lovely.",
        "The sourdough starter needs rye flour twice a day",
        "OK.",
    )
    for i in range(30):  # lines enough that the fixture's words are rare in it
        (root / "efforts" / f"chat-{i}.jsonl").write_text(json.dumps({"role": "user", "content": f"weather {i}"}))
    with EffortIndex(root / "derived.sqlite") as idx:
        sync_listed(idx, root, [("trip", "concluded", "a trip"), *((f"chat-{i}", "concluded", "w") for i in range(30))])
        yield idx


@pytest.mark.parametrize(
    "message",
    [
        "can you open https://www.python.org/downloads for me?",  # www, https: a URL's boilerplate
        "what's the plan for the deploy?",  # plan: a word any chat uses
        "why does main.py crash with a KeyError?",  # main: a part of an identifier
    ],
)
def test_a_url_part_a_generic_word_or_an_identifiers_part_recalls_nothing(index: EffortIndex, message: str) -> None:
    assert index.recall(message, evidence=RECALL_BEFORE)  # the rule as it was: a false recall
    assert index.recall(message) == []


def test_a_genuine_recall_still_fires(index: EffortIndex) -> None:
    locker = index.recall("What was my locker code at the gym?")
    assert locker and "4729" in locker[0].messages[0][2]
    room = index.recall("Which room did we get at Hanaya?")
    assert any("room 204" in content for hit in room for _line, _role, content in hit.messages)
    assert index.recall("the Takao hike, when was it?")  # one word, a name as written, in one line
    assert index.recall("how often should I feed the sourdough starter?")  # two plain words


def test_a_word_is_weighed_by_where_it_stands_in_the_message() -> None:
    weights = word_weights("see https://www.example.com/plan and src/main.py, the plan and getUserName")
    assert weights["www"] == 0 and weights["com"] == 0 and weights["https"] == 0
    assert weights["example"] == 0.5 and weights["main"] == 0.5 and weights["plan"] == 0.5
    assert "sourdough" not in word_weights("sourdough bread")  # a plain word weighs 1 (not listed)


def test_an_imported_agent_session_needs_more_evidence(index: EffortIndex) -> None:
    """Two plain words answer from the user's chat, not from an agent session's log."""
    message = "which flour for the sourdough?"
    plain = SkipRule(lambda *_: False, lambda source, log, e: e.words)
    imported = SkipRule(lambda *_: False, lambda source, log, e: e.imported)
    assert index.recall(message, skip=plain)
    assert index.recall(message, skip=imported) == []
    assert index.recall("sourdough starter rye flour", skip=imported)  # three words: strong enough
    assert is_imported({"file": "/x/session.jsonl", "format": "claude-code", "turns": 4})
    assert not is_imported({"folded_from": "ambient", "lines": [1, 8]}) and not is_imported(None)
    assert Evidence().imported > Evidence().words


def test_a_passage_is_not_recalled_again_on_the_next_turns_nor_over_and_over() -> None:
    memory = RecallMemory()
    hit = type("Hit", (), {"source": "effort", "log": "trip", "lines": (7, 8)})()
    memory.note((hit,), 5, "what was my locker code?")  # type: ignore[arg-type]
    assert memory.spent("trip", 7, 6, "and the gym's opening hours?")  # the next turn, another message
    assert not memory.spent("trip", 7, 6, "what was my locker code?")  # the same message (after a compaction)
    assert not memory.spent("trip", 9, 6, "another line")  # outside the passage
    assert not memory.spent("trip", 7, 5 + COOLDOWN_TURNS + 1, "later, asked again")
    for turn in range(MAX_REPEATS - 1):
        memory.note((hit,), 20 + 10 * turn, f"message {turn}")  # type: ignore[arg-type]
    assert memory.spent("trip", 7, 100, "once more")  # recalled for MAX_REPEATS messages: spent


def test_words_scattered_over_a_long_line_are_no_passage() -> None:
    """An imported agent's dump holds every word somewhere; the words must stand together."""
    from ccm_tui.core.search._rare_words import clustered

    dump = "router " + "lorem ipsum " * 100 + "kernel " + "dolor sit " * 100 + "version"
    assert not clustered(dump, {"router": 1.0, "kernel": 1.0, "version": 1.0}, 2.5)
    assert clustered("the router reported kernel version 5.4 " + dump, {"router": 1, "kernel": 1, "version": 1}, 2.5)
    assert clustered("router kernel", {"router": 1.0, "kernel": 1.0, "version": 1.0}, 2.5)  # a short line: whole


def test_a_name_no_line_holds_asks_more_of_the_line(index: EffortIndex) -> None:
    """A plan for a hike in Patagonia: the session never named Patagonia, so the Takao hike's line (hike,
    and the generic plan) does not answer it; asked about that hike, it still does, and a plain word the
    session never used is no such sign (the boots are new, the hike is not)."""
    from ccm_tui.core.search._rare_words import named

    assert index.recall("what's the plan for a hike in Patagonia?", evidence=Evidence(words=1.5)) == []
    assert index.recall("what's the plan for the hike on Saturday?")
    assert index.recall("what's the plan for the hike? I need boots")
    assert named('Plans. Learning Rust in "Nothing Is Impossible" with KMC') == {
        "rust",
        "nothing",
        "is",
        "impossible",
        "kmc",
    }
    assert index.recall("what was my locker code at the gym in Lisbon?")  # three words: strong enough still


def test_a_word_alone_recalls_only_as_written(tmp_path: Path) -> None:
    """The index's stemmer joins "leaning" and "lean": one word alone is evidence only as written."""
    root = tmp_path / "s"
    (root / "efforts").mkdir(parents=True)
    log(
        root / "efforts" / "friends.jsonl",
        "Glad you have people to lean on.",
        "Thanks.",
        "Yesterday: the museum!",
        "Nice.",
    )
    filler = "".join(json.dumps({"role": "user", "content": f"weather {i}"}) + "\n" for i in range(200))
    (root / "efforts" / "chat.jsonl").write_text(filler)  # a long session: a word in one line is rare
    with EffortIndex(root / "derived.sqlite") as idx:
        sync_listed(idx, root, [("friends", "concluded", "f"), ("chat", "concluded", "c")])
        assert idx.recall("What would her leaning be?", evidence=RECALL_BEFORE)  # the stem: a false recall
        assert idx.recall("What would her leaning be?") == []
        museum = idx.recall("When did she go to the museum?")
        assert museum and "museum" in museum[0].messages[0][2]
