"""Accepting a switch (the talk moved on inside an open effort): the two actions it becomes, with the
topic's lines — what the new effort starts with when the offer went stale or its conclusion failed."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.core.efforts.states import Action
from ccm_tui.core.service.controller import SessionController
from ccm_tui.core.service.run_state import EffortAction, SendMessage, SlashCommand
from tests.helpers.openai_server import text
from tests.helpers.sessionkit import jsonl, settings_for


async def trip_with_a_new_topic(server, directory: Path) -> SessionController:
    """An open effort 'trip' of three exchanges: lines 1-2 the trip, 3-6 taxes (the last one said after
    the offer, which named lines 3-4)."""
    c = SessionController(directory, settings_for(server, token_budget=16_000))
    await c.open()
    await c.command(SlashCommand("open", "Trip"))
    for said, reply in (
        ("Kyoto in April, three nights", "Noted: Kyoto."),
        ("Which tax forms does a freelancer file?", "Form A and form B."),
        ("And the tax deadline?", "The end of April."),
    ):
        server.push(text(reply))
        await c.run(SendMessage(said))
    return c


async def test_a_stale_offer_still_moves_everything_from_the_topics_first_line(tmp_path, llm_server):
    c = await trip_with_a_new_topic(llm_server, tmp_path / "s")
    try:
        llm_server.push(text("Trip: Kyoto in April, three nights."))  # the summary
        assert (await c.run(EffortAction(Action.CONCLUDE, "trip", ("trip", 3, 4)))).ok
        assert (await c.run(EffortAction(Action.OPEN, "taxes", ("trip", 3, 4)))).ok
    finally:
        await c.close()
    summarised = str(llm_server.chat_requests()[-1]["messages"])
    assert "Kyoto in April" in summarised and "tax" not in summarised
    moved = [r["content"] for r in jsonl(tmp_path / "s" / "efforts" / "taxes.jsonl")]
    assert moved == ["Which tax forms does a freelancer file?", "Form A and form B.", "And the tax deadline?",
                     "The end of April."]  # fmt: skip


async def test_nothing_is_moved_out_of_an_effort_that_stayed_open(tmp_path, llm_server):
    """The conclusion failed or was cancelled: the lines stay where they are, never in two open efforts."""
    c = await trip_with_a_new_topic(llm_server, tmp_path / "s")
    try:
        assert (await c.run(EffortAction(Action.OPEN, "taxes", ("trip", 3, 4)))).ok
    finally:
        await c.close()
    assert jsonl(tmp_path / "s" / "efforts" / "taxes.jsonl") == []


async def test_a_withdrawn_exchange_is_not_moved_even_once_the_session_state_forgot_it(tmp_path, llm_server):
    """The lines moved are read with their withdrawal markers: what the user took back stays behind, whatever
    the session state still remembers (it keeps the newest withdrawals only, and can be rebuilt)."""
    import json

    from ccm_tui.core.service.run_state import Withdraw

    directory = tmp_path / "s"
    c = await trip_with_a_new_topic(llm_server, directory)
    try:
        assert (await c.run(Withdraw("edit"))).ok  # "And the tax deadline?" taken back
    finally:
        await c.close()
    state_file = directory / "session_state.json"
    assert "withdrawn" not in json.loads(state_file.read_text())  # (the marker is the record)
    state_file.write_text("{not json")  # set aside and rebuilt from the logs at the next start
    c = SessionController(directory, settings_for(llm_server, token_budget=16_000))
    await c.open()
    try:
        llm_server.push(text("Trip: Kyoto in April, three nights."))
        assert (await c.run(EffortAction(Action.CONCLUDE, "trip", ("trip", 3, 4)))).ok
        assert (await c.run(EffortAction(Action.OPEN, "taxes", ("trip", 3, 4)))).ok
    finally:
        await c.close()
    moved = [r["content"] for r in jsonl(directory / "efforts" / "taxes.jsonl")]
    assert moved == ["Which tax forms does a freelancer file?", "Form A and form B."]
