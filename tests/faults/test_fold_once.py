"""A fold lands once, whatever a kill leaves (issue 32, inconsistency B).

A fold is one record: the concluded effort it lands, journaled in ``events.jsonl`` with its
``source: {folded_from: ambient, lines: [a, b]}``. Which ambient lines are folded is derived from
those sources, so no second record (a state field saved after the effort) can lag behind it: a kill
right after the effort's journal entry leaves the session state as it was before the fold, and the
next turns must not fold the same lines again."""

from __future__ import annotations

import json

from tests.helpers.cli_session import _fast_retries, ccm  # noqa: F401  (fixtures)
from tests.helpers.openai_server import text
from tests.helpers.topic_chat import TOPICS

MESSAGES = TOPICS["japan"] + TOPICS["sourdough"] + TOPICS["taxes"] + TOPICS["garden"]


def talk(cli, messages: list[str]) -> None:
    for message in messages:
        cli.server.push(text("Sure, here is some help about that."))
        cli.send(message)


def folds(cli) -> list[tuple[str, tuple[int, int]]]:
    efforts = cli.status()["efforts"]
    return [
        (e["id"], tuple(e["source"]["lines"]))
        for e in efforts
        if (e.get("source") or {}).get("folded_from") == "ambient"
    ]


def test_a_fold_lands_once_after_a_kill_between_its_effort_and_the_session_state(ccm):  # noqa: F811
    ccm.server.refuse_tools = True  # a model without tools: the app folds ambient chat itself
    state_path = ccm.dir / "session_state.json"
    before, at = None, 0
    for at, message in enumerate(MESSAGES):  # noqa: B007  (at: where the first fold happened)
        before = state_path.read_text() if state_path.exists() else None
        talk(ccm, [message])
        if folds(ccm):
            break
    first = folds(ccm)
    assert first and before is not None
    state_path.write_text(before)  # what a kill right after the fold's journal entry leaves
    talk(ccm, MESSAGES[at + 1 :])
    spans = sorted(span for _, span in folds(ccm))
    assert len(spans) > len(first), "the later chat was folded too"
    overlapping = [(a, b) for a, b in zip(spans, spans[1:]) if b[0] <= a[1]]
    assert not overlapping, f"ambient lines folded twice: {overlapping}"
    state = json.loads(state_path.read_text())
    assert "ambient_folded_upto" not in state  # the efforts' sources are the one record of a fold
