"""Ctrl+Y on a topic proposal, for a model that never calls a tool: the effort it opens starts with the
exchanges the proposal was built from, and they leave the ambient context (issue 38: the effort opened
empty, the exchanges stayed ambient, its name held "long" from "how long")."""

from __future__ import annotations

import json

from ccm_tui.core.models.litellm_client import import_litellm
from ccm_tui.core.session.session import Session
from ccm_tui.core.text.topics import NAME_FILLER_WORDS
from ccm_tui.core.text.words import COMMON_WORDS
from ccm_tui.ui.widgets.effort_list import EffortItem
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, idle, ready, send, server_app, wait_until

SOURDOUGH = [
    "My sourdough starter smells like acetone, is it dead?",
    "How long should I bake a sourdough loaf?",
    "What temperature should the oven be for a sourdough bake?",
    "How long should the dough proof before the bake?",
]


async def test_accepting_a_proposal_moves_the_topics_exchanges_into_its_effort(tmp_path, llm_server):
    import_litellm()  # (imported cold, on a loaded machine, it alone can pass the first turn's wait)
    llm_server.refuse_tools = True  # the model cannot manage efforts: the app proposes them
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        for i, message in enumerate(SOURDOUGH):
            llm_server.push(text(f"Answer {i + 1} about your sourdough."))
            await send(pilot, message)
        await wait_until(pilot, lambda: screen.suggestion is not None, what="a proposal")
        name = screen.suggestion.name
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: any(i.effort_id == name for i in screen.query(EffortItem)))
        await idle(pilot)
    filler = set(COMMON_WORDS) | set(NAME_FILLER_WORDS.split())
    assert not filler & set(name.split("-")), name  # "sourdough-bake-long" had "long"
    session = Session.open(tmp_path / "s")
    try:
        effort = session.efforts.get(name)
        assert effort is not None and effort.is_open
        ambient = [m["content"] for m in session.ambient_messages()]
    finally:
        session.close()
    lines = [json.loads(x) for x in (tmp_path / "s" / "efforts" / f"{name}.jsonl").read_text().splitlines()]
    logged = [r.get("content") for r in lines if r.get("role") in ("user", "assistant")]
    assert logged[:8:2] == SOURDOUGH and logged[1] == "Answer 1 about your sourdough."
    assert not set(SOURDOUGH) & set(ambient)  # in the effort's context, not ambient context twice
