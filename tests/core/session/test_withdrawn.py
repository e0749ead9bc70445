"""Taking back the last exchange (regenerate, edit): the raw log only grows — a marker line withdraws
the exchange — and the context, the chat history and the exports leave it out; a turn that changed
efforts, or nothing to take back, is refused in plain words."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.core.engine.opening import open_engine
from ccm_tui.core.service.controller import SessionController
from ccm_tui.core.service.run_state import SendMessage, SlashCommand, Withdraw
from ccm_tui.core.turn.events import ExchangeWithdrawn
from tests.helpers.openai_server import call, text, tool_calls
from tests.helpers.sessionkit import jsonl, settings_for


def request_text(body: dict) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


async def controller(server, directory: Path) -> SessionController:
    c = SessionController(directory, settings_for(server, token_budget=16_000))
    await c.open()
    return c


async def say(c: SessionController, server, *exchanges: tuple[str, str]) -> None:
    """Send each message, the fake model answering with its reply."""
    for message, reply in exchanges:
        server.push(text(reply))
        await c.run(SendMessage(message))


async def test_regenerate_asks_again_without_the_withdrawn_reply_and_the_raw_log_keeps_it(tmp_path, llm_server):
    c = await controller(llm_server, tmp_path / "s")
    seen: list = []
    c.subscribe(seen.append)
    try:
        llm_server.push(text("Paris."))
        await c.run(SendMessage("Capital of France?"))
        llm_server.push(text("Lyon, sorry."))
        await c.run(SendMessage("And its second city?"))
        llm_server.push(text("Marseille."))
        outcome = await c.run(Withdraw("regenerate"))
        assert outcome.ok and outcome.work == "turn" and outcome.reply == "Marseille."
        again = request_text(llm_server.chat_requests()[-1])
        assert again.count("And its second city?") == 1 and "Lyon, sorry." not in again and "Paris." in again
        assert [e for e in seen if isinstance(e, ExchangeWithdrawn)][0].reply == "Lyon, sorry."
        llm_server.push(text("Yes."))
        await c.run(SendMessage("Sure?"))
        later = request_text(llm_server.chat_requests()[-1])
        assert "Lyon, sorry." not in later and "Marseille." in later
    finally:
        await c.close()
    raw = jsonl(tmp_path / "s" / "raw.jsonl")
    assert [r["content"] for r in raw if r["role"] == "assistant"] == ["Paris.", "Lyon, sorry.", "Marseille.", "Yes."]
    markers = [r for r in raw if r.get("retracts")]
    assert len(markers) == 1 and markers[0]["retracts"] == 2 and markers[0]["role"] == "system"
    engine = open_engine(tmp_path / "s", settings_for(llm_server))
    try:
        shown = [line.content for line in engine.recent_lines(limit=50)]
        assert "Lyon, sorry." not in shown and shown.count("And its second city?") == 1
    finally:
        engine.close()


async def test_edit_gives_the_message_back_and_a_new_one_replaces_it_in_an_effort(tmp_path, llm_server):
    c = await controller(llm_server, tmp_path / "s")
    try:
        await c.command(SlashCommand("open", "Trip"))
        llm_server.push(text("Kyoto then."))
        await c.run(SendMessage("We go to Kyoto in Aprl"))
        before = c.snapshot.status.active.raw_tokens if c.snapshot and c.snapshot.status.active else 0
        outcome = await c.run(Withdraw("edit"))
        assert outcome.ok and outcome.given_back and outcome.text == "We go to Kyoto in Aprl"
        llm_server.push(text("April it is."))
        await c.run(SendMessage("We go to Kyoto in April"))
        context = request_text(llm_server.chat_requests()[-1])
        assert "Aprl" not in context and "Kyoto then." not in context
        assert before > 0
    finally:
        await c.close()
    log = jsonl(tmp_path / "s" / "efforts" / "trip.jsonl")
    assert "We go to Kyoto in Aprl" in [r["content"] for r in log]  # the raw log only grows


async def test_a_turn_that_opened_an_effort_or_nothing_at_all_is_not_taken_back(tmp_path, llm_server):
    c = await controller(llm_server, tmp_path / "s")
    try:
        nothing = await c.run(Withdraw("regenerate"))
        assert nothing.failed and "no exchange" in nothing.reason
        llm_server.push(tool_calls(call("open_effort", {"name": "Garden"})))
        llm_server.push(text("Opened."))
        await c.run(SendMessage("Start an effort for the garden"))
        refused = await c.run(Withdraw("edit"))
        assert refused.failed and "changed efforts (opened)" in refused.reason and not refused.given_back
    finally:
        await c.close()
    assert not [r for r in jsonl(tmp_path / "s" / "efforts" / "garden.jsonl") if r.get("retracts")]


async def test_counts_read_again_from_the_logs_agree_with_the_counts_a_withdrawal_kept(tmp_path, llm_server):
    """After a withdrawal the session is read again (the next `send`, a restart, a recount after a crash):
    an effort's line count still includes the withdrawn lines (a second withdrawal marks the right ones),
    and the token counts leave the withdrawn exchange and its marker out, as the withdrawal did."""
    import json

    from ccm_tui.core.session import withdrawn
    from ccm_tui.core.session.session import Session

    directory = tmp_path / "s"
    c = await controller(llm_server, directory)
    try:
        await say(c, llm_server, ("Capital of France?", "Noted, Paris."), ("And its second city?", "Lyon, sorry."))
        assert (await c.run(Withdraw("edit"))).ok
        await c.command(SlashCommand("open", "Trip"))
        await say(c, llm_server, ("We go to Kyoto in Aprl", "Kyoto then."))
        assert (await c.run(Withdraw("edit"))).ok
        active = c.snapshot.status.active if c.snapshot else None
        assert active is not None and active.id == "trip"
        trip_tokens = active.raw_tokens  # as the withdrawal left it
    finally:
        await c.close()
    reread = Session.open(directory, readonly=True)  # an open effort's log is counted again on load
    ambient_tokens = reread.state.ambient_tokens  # (as saved: a reader does not recount it)
    assert reread.efforts.get("trip").raw_tokens == trip_tokens
    reread.close()

    state_file = directory / "session_state.json"
    state = json.loads(state_file.read_text())
    state["ambient_bytes"] = 0  # as after a crash: the ambient chat is counted again from raw.jsonl
    state_file.write_text(json.dumps(state))
    c = await controller(llm_server, directory)
    try:
        await say(
            c,
            llm_server,
            ("We go to Kyoto in April", "Kyoto in April, then."),
            ("How long in Osaka, a week?", "Two nights."),
        )
        assert (await c.run(Withdraw("edit"))).ok
    finally:
        await c.close()
    session = Session.open(directory, readonly=True)
    try:
        lines = jsonl(directory / "efforts" / "trip.jsonl")
        trip = session.efforts.get("trip")
        assert trip.messages == len(lines)
        gone = withdrawn.withdrawn_lines(session, "trip", 1, len(lines))
        assert lines[-3]["content"] == "How long in Osaka, a week?" and lines[-1].get("retracts") == 2
        assert {len(lines) - 2, len(lines) - 1, len(lines)} <= gone and len(lines) - 3 not in gone
        assert session.state.ambient_tokens == ambient_tokens
    finally:
        session.close()


async def test_a_withdrawn_exchange_is_never_recalled_even_once_the_session_state_is_rebuilt(tmp_path, llm_server):
    """The marker in the log is the one record of a withdrawal (the session state keeps none, and a
    state file can be rebuilt): an exchange taken back long ago is not put back into a request."""
    import json

    directory = tmp_path / "s"
    c = await controller(llm_server, directory)
    try:
        await say(c, llm_server, ("My locker code at the climbing gym is 4729.", "Noted, 4729."))
        assert (await c.run(Withdraw("edit"))).ok
        await say(c, llm_server, *((f"small talk {i}: the weather and the tea", "Indeed.") for i in range(12)))
    finally:
        await c.close()
    state_file = directory / "session_state.json"
    assert "withdrawn" not in json.loads(state_file.read_text())
    state_file.write_text("{not json")  # set aside and rebuilt from the logs at the next start
    c = await controller(llm_server, directory)
    try:
        await say(c, llm_server, ("What was my locker code at the climbing gym?", "I do not know."))
    finally:
        await c.close()
    assert "4729" not in request_text(llm_server.chat_requests()[-1])


async def test_a_withdrawal_is_in_the_search_index_as_soon_as_it_is_made(tmp_path, llm_server):
    """The marker is indexed by the withdrawal itself (the index is marked in step after it): a session
    closed right after an edit still leaves the exchange out of recall when the state forgets it."""
    from ccm_tui.core.search import EffortIndex

    directory = tmp_path / "s"
    c = await controller(llm_server, directory)
    try:
        await say(c, llm_server, ("My locker code at the climbing gym is 4729.", "Noted, 4729."))
        assert (await c.run(Withdraw("edit"))).ok
    finally:
        await c.close()
    with EffortIndex(directory / "derived.sqlite") as index:
        assert index.withdrawn_lines("ambient", 1, 10) == {1, 2, 3}


async def test_lines_are_file_lines(tmp_path, llm_server):
    """A line of ``raw.jsonl`` that is no chat message (a hand edit, another tool's) still has a number:
    the withdrawal, the session's count and the index all say which file lines were taken back, and
    they agree (before issue 32 the state's range was one line early, on the line before the exchange)."""
    import json

    from ccm_tui.core.search import EffortIndex
    from ccm_tui.core.session import withdrawn

    directory = tmp_path / "s"
    c = await controller(llm_server, directory)
    try:
        await say(c, llm_server, ("Capital of France?", "Paris."))
    finally:
        await c.close()
    with (directory / "raw.jsonl").open("a") as fh:  # a line that is not a chat message
        fh.write(json.dumps({"role": "user", "content": 12345, "ts": "2026-01-01T00:00:00Z"}) + "\n")
    c = await controller(llm_server, directory)
    try:
        await say(c, llm_server, ("And its second city?", "Lyon, sorry."))
        assert (await c.run(Withdraw("edit"))).ok
    finally:
        await c.close()
    lines = (directory / "raw.jsonl").read_text().splitlines()
    marker = next(n for n, line in enumerate(lines, 1) if '"retracts"' in line)
    assert marker == 6
    state = json.loads((directory / "session_state.json").read_text())
    assert state["ambient_lines"] == len(lines) and "withdrawn" not in state
    engine = open_engine(directory, settings_for(llm_server))
    try:
        by_module = withdrawn.withdrawn_lines(engine._session, "ambient", 1, len(lines))
    finally:
        engine.close()
    with EffortIndex(directory / "derived.sqlite") as index:
        by_index = index.withdrawn_lines("ambient", 1, len(lines))
    assert by_module == by_index == {4, 5, 6}
