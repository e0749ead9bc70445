"""Topic proposals against small talk: precision before and after the sustained-topic rule (issue 30).

The app proposes an effort ("New topic? Ctrl+Y opens effort 'japan-trip'") for a model that does
not manage efforts, and a switch when the active effort's talk moves on. A run of jokes and
one-off questions proposed "capital-joke-peru". This replays the labelled conversations of
``tests/helpers/labelled_chats.py`` — small talk (no proposal wanted at any point) and topics (a
proposal wanted by the end) — exchange by exchange, through the proposer as it was (the
segmenter's latest topic, long enough and fitting its last turn) and as it is (that topic must
also be *sustained*: turns linked by content words or follow-ups, :func:`ccm_tui.core.text.topics.sustained`).

A conversation counts as proposed when any of its prefixes gets a proposal. Precision: proposed
topics over all proposed conversations; recall: proposed topics over all topics. Switches are
replayed after a topic conversation (another topic, or small talk, follows it in the effort).
The held-out set was written after the rule and is reported apart. Names (issue 38): how many of
the proposed names hold a filler word ("sourdough-bake-long"), without and with the filler rule of
:func:`ccm_tui.core.text.topics.name_segments` (an identifier's parts, "created-at", count too).

Usage::

    python benchmarks/bench_topics.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccm_tui.core.efforts import proposals as effort_assist  # noqa: E402
from ccm_tui.core.efforts.proposals import Exchange, Proposal  # noqa: E402
from ccm_tui.core.text import topics as topic_module  # noqa: E402
from ccm_tui.core.text.topics import NAME_FILLER_WORDS, last_turn_fits  # noqa: E402
from ccm_tui.core.text.words import COMMON_WORDS  # noqa: E402
from tests.helpers.labelled_chats import (  # noqa: E402
    HELD_OUT_SMALL_TALK,
    HELD_OUT_TOPICS,
    SMALL_TALK,
    TOPICS,
    Chat,
)

Propose = Callable[[Sequence[Exchange]], Proposal | None]


def exchanges(chat: Chat) -> list[Exchange]:
    return [Exchange(2 * i + 1, 2 * i + 2, user, reply) for i, (user, reply) in enumerate(chat)]


def open_before(recent: Sequence[Exchange]) -> Proposal | None:
    """The proposer before the rule: the latest topic, long enough, its last turn fitting."""
    spans = effort_assist._segments(recent[-effort_assist.RECENT :], keep_tail=True)
    if spans and spans[-1].turns >= effort_assist.MIN_TOPIC and last_turn_fits([x.text() for x in recent], spans[-1]):
        return Proposal("open", spans[-1].id)
    return None


def switch_before(tail: Sequence[Exchange]) -> Proposal | None:
    spans = effort_assist._segments(tail[-effort_assist.RECENT :], keep_tail=True)
    if len(spans) >= 2 and spans[-1].turns >= effort_assist.MIN_TOPIC - 1:
        return Proposal("switch", spans[-1].id, conclude="active")
    return None


def switch_after(tail: Sequence[Exchange]) -> Proposal | None:
    return effort_assist.propose_switch("active", tail)


def proposed(propose: Propose, before: Chat, chat: Chat) -> bool:
    """Whether any prefix of ``chat`` (after ``before``) gets a proposal."""
    return any(propose(exchanges(before + chat[:n])) is not None for n in range(1, len(chat) + 1))


def scores(propose: Propose, small: dict[str, Chat], topics: dict[str, Chat], lead: Callable[[int], Chat]) -> str:
    false = sum(proposed(propose, lead(i), chat) for i, chat in enumerate(small.values()))
    true = sum(proposed(propose, lead(i + 1), chat) for i, chat in enumerate(topics.values()))
    precision = true / (true + false) if true + false else 0.0
    return (
        f"precision {precision:5.3f}  recall {true / len(topics):5.3f}  "
        f"(small talk proposed {false}/{len(small)}, topics proposed {true}/{len(topics)})"
    )


FILLER = set(COMMON_WORDS) | set(NAME_FILLER_WORDS.split())


def filler_names(small: dict[str, Chat], topics: dict[str, Chat]) -> str:
    """The names of the topics' last proposals that hold a filler word ("sourdough-bake-long")."""
    names = []
    for chat in (*small.values(), *topics.values()):
        found = [p for n in range(1, len(chat) + 1) if (p := effort_assist.propose_open(exchanges(chat[:n])))]
        names += [found[-1].name] if found else []
    bad = [name for name in names if FILLER & set(name.split("-"))]
    return f"{len(bad)} of {len(names)} names hold a filler word {bad[:3]}"


def main() -> int:
    topic_chats = list(TOPICS.values())

    def nothing(_: int) -> Chat:
        return []

    def another_topic(i: int) -> Chat:
        return topic_chats[i % len(topic_chats)]

    for label, small, topics in (
        ("labelled set", SMALL_TALK, TOPICS),
        ("held out", HELD_OUT_SMALL_TALK, HELD_OUT_TOPICS),
    ):
        print(f"{label}: {len(small)} small-talk conversations, {len(topics)} topics")
        print(f"  open,   before: {scores(open_before, small, topics, nothing)}")
        print(f"  open,   now:    {scores(effort_assist.propose_open, small, topics, nothing)}")
        print(f"  switch, before: {scores(switch_before, small, topics, another_topic)}")
        print(f"  switch, now:    {scores(switch_after, small, topics, another_topic)}")
        plain = topic_module._name_filler
        topic_module._name_filler = frozenset  # type: ignore[assignment]  # names before issue 38: no filler rule
        try:
            print(f"  names,  before: {filler_names(small, topics)}")
        finally:
            topic_module._name_filler = plain  # type: ignore[method-assign]
        print(f"  names,  now:    {filler_names(small, topics)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
