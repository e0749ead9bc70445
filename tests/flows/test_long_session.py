"""A 200-turn session with many efforts never sends a request over the budget."""

from __future__ import annotations

import random

from ccm_tui.config import Settings
from ccm_tui.core.engine.opening import open_engine
from tests.helpers.openai_server import call, text, tool_calls

BUDGET = 4000


def scripted(body: dict):
    """The model: acts on commands in the user's message, answers with filler otherwise."""
    messages = body["messages"]
    if not body.get("tools"):
        if "You write the summary" in messages[0]["content"]:
            return text("Summary of the effort: decisions and outcome in brief.")
        if "You compress the oldest part" in messages[0]["content"]:
            return text("Checkpoint: earlier work in brief.")
        return text("Final answer.")
    last = messages[-1]
    if last["role"] == "tool":
        return text("Done. " + "detail " * 30)
    command = last["content"]
    if command.startswith("OPEN "):
        return tool_calls(call("open_effort", {"name": command[5:]}))
    if command.startswith("CLOSE"):
        return tool_calls(call("close_effort", {}))
    if command.startswith("EXPAND "):
        return tool_calls(call("expand_effort", {"id": command[7:]}))
    if command.startswith("SEARCH "):
        return tool_calls(call("search_efforts", {"query": command[7:]}))
    return text("Reply: " + "words " * random.Random(command).randint(20, 120))


async def test_two_hundred_turns_never_exceed_the_budget(llm_server, tmp_path):
    llm_server.responder = scripted
    settings = Settings(model="openai/fake-model", api_base=llm_server.base_url, token_budget=BUDGET)
    engine = open_engine(tmp_path / "s", settings, retry_base=0)
    rng = random.Random(7)
    concluded: list[str] = []
    opened = 0
    try:
        for turn in range(200):
            open_now = engine.active_effort()
            roll = rng.random()
            if open_now is None and roll < 0.5:
                opened += 1
                message = f"OPEN project {opened}"
            elif open_now is not None and roll < 0.15:
                message = "CLOSE"
            elif concluded and roll < 0.22:
                message = f"EXPAND {rng.choice(concluded)}"
            elif roll < 0.26:
                message = "SEARCH project"
            else:
                message = f"chat {turn}: " + "lorem " * rng.randint(10, 150)
            result = await engine.run_turn(message)
            assert result.ok, result.reason
            assert result.request.total <= BUDGET, (turn, result.request)
            assert result.context.total <= BUDGET
            if message == "CLOSE":
                concluded.append(open_now.id)
        assert engine.turn == 200
        assert len(concluded) >= 10
        requests = [b for b in llm_server.chat_requests() if b.get("tools")]
        counter = engine.counter
        # what was actually sent, recounted independently of the layer figures
        for body in requests:
            sent = counter.count_messages(body["messages"]) + counter.count_json(body["tools"])
            assert sent <= BUDGET + 50
        assert engine.compactions >= 1
    finally:
        engine.close()
