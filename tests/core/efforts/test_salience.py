"""Salience: efforts named in the talk (by id, hyphen or space), their keywords, and the counters that
collapse an expansion and evict a summary nobody refers to."""

from __future__ import annotations

from ccm_tui.core.efforts.salience import IdIndex, end_of_turn, referenced_efforts, salient_keywords
from tests.helpers.sessionkit import make_session


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
