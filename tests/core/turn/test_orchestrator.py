"""core/orchestrator.py: one turn's steps (log, context, model rounds, tools, routing) and the user's
actions, each ending in one Outcome. The model is the fake OpenAI-compatible server, reached through
litellm; the session is built on disk."""

from __future__ import annotations

import asyncio
import json

import pytest

from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.efforts.states import Action
from ccm_tui.core.session.chat_line import INTERRUPTED_END
from ccm_tui.core.session.session import Session
from ccm_tui.core.turn.events import (
    Banner,
    ContextFigures,
    EffortChanged,
    RoundReset,
    TextDelta,
    ToolCalled,
    TurnStarted,
)
from ccm_tui.core.turn.orchestrator import UserInputError
from ccm_tui.core.views.markdown_export import conversation_markdown
from ccm_tui.core.views.scrollback import recent_lines
from tests.helpers.openai_server import call, fault, hang, stream_cut, text, tool_calls
from tests.helpers.sessionkit import (
    Emitted,
    concluded_effort,
    events,
    exchange,
    is_summary_request,
    jsonl,
    open_effort,
    orchestrator_for,
    tool_results,
)


@pytest.fixture
def session(tmp_path):
    session = Session.open(tmp_path / "s")
    yield session
    session.close()


def chat_requests(server) -> list[dict]:
    return [b for b in server.chat_requests() if not is_summary_request(b)]


# ------------------------------------------------------------------ the order of a turn's steps
async def test_turn_start_is_logged_before_the_model_is_asked(session, llm_server):
    seen: list[list[dict]] = []
    llm_server.on_request = lambda _rec: seen.append(events(session.dir))
    llm_server.push(text("hello"))
    emitted = Emitted()

    outcome = await orchestrator_for(session, llm_server).run_turn("hi there", emitted)

    assert outcome.ok and outcome.reply == "hello"
    at_request = seen[0]
    assert at_request[-1]["event"] == "turn_start"
    assert at_request[-1]["user"] == "hi there" and at_request[-1]["next_turn"] == 1
    assert not [e for e in at_request if e["event"] == "message_logged"]
    assert isinstance(emitted[0], TurnStarted) and emitted[0].user == "hi there"
    kinds = [e["event"] for e in events(session.dir)]
    assert kinds.index("turn_start") < kinds.index("message_logged") < kinds.index("turn_done")


async def test_invalid_input_raises_before_anything_is_written(session, llm_server):
    orchestrator = orchestrator_for(session, llm_server)
    with pytest.raises(UserInputError, match="empty"):
        await orchestrator.run_turn(" \x00\x07 \n")
    assert events(session.dir) == [] and llm_server.chat_requests() == []


# ------------------------------------------------------------------ routing of the exchange
async def test_no_effort_the_exchange_goes_to_the_ambient_log(session, llm_server):
    llm_server.push(text("hello"))
    outcome = await orchestrator_for(session, llm_server).run_turn("hi")
    assert outcome.logged_to == "ambient"
    assert [(m["role"], m["content"]) for m in jsonl(session.raw_path)] == [("user", "hi"), ("assistant", "hello")]
    logged = events(session.dir, "message_logged")[-1]
    assert logged["to"] == "ambient" and logged["count"] == 2 and logged["next_turn"] == 1
    assert session.state.turn == 1


async def test_with_an_active_effort_the_exchange_goes_to_its_log(session, llm_server):
    open_effort(session, "trip", exchange("plan a trip", "sure"))
    llm_server.push(text("Kyoto in April"))
    outcome = await orchestrator_for(session, llm_server).run_turn("where to?")
    assert outcome.logged_to == "trip"
    assert [m["content"] for m in jsonl(session.effort_path("trip"))][-2:] == ["where to?", "Kyoto in April"]
    assert jsonl(session.raw_path) == []


async def test_an_effort_opened_this_turn_receives_the_exchange(session, llm_server):
    open_effort(session, "older")
    llm_server.push(tool_calls(call("open_effort", {"name": "trip"})), text("Opened."))
    emitted = Emitted()
    outcome = await orchestrator_for(session, llm_server).run_turn("let's plan a trip", emitted)
    assert outcome.logged_to == "trip"
    assert [m["content"] for m in jsonl(session.effort_path("trip"))] == ["let's plan a trip", "Opened."]
    assert jsonl(session.effort_path("older")) == []
    assert outcome.banners == ("--- Opened effort: trip ---",)
    assert [(e.effort_id, e.change) for e in emitted.of(EffortChanged)] == [("trip", "opened")]
    assert emitted.of(Banner)[0].text == "--- Opened effort: trip ---"
    assert jsonl(session.effort_path("trip"))[-1]["tools"] == ["open_effort"]


async def test_route_to_ambient_leaves_the_active_effort_untouched(session, llm_server):
    open_effort(session, "trip", exchange("plan a trip", "sure"))
    llm_server.push(tool_calls(call("route_to_ambient")), text("It is 4."))
    outcome = await orchestrator_for(session, llm_server).run_turn("quick: what is 2+2?")
    assert outcome.logged_to == "ambient"
    assert [m["content"] for m in jsonl(session.raw_path)] == ["quick: what is 2+2?", "It is 4."]
    assert len(jsonl(session.effort_path("trip"))) == 2
    assert session.efforts.active.id == "trip"


async def test_the_exchange_that_concludes_the_active_effort_is_logged_to_it(session, llm_server):
    open_effort(session, "trip", exchange("plan a trip", "sure"))
    llm_server.push(tool_calls(call("close_effort")), text("Trip to Kyoto, planned."), text("Done, concluded."))

    outcome = await orchestrator_for(session, llm_server).run_turn("we're done with the trip")

    assert outcome.ok and outcome.logged_to == "trip"
    trip = session.efforts.get("trip")
    assert trip.is_concluded and trip.summary == "Trip to Kyoto, planned."
    assert [m["content"] for m in jsonl(session.effort_path("trip"))][-2:] == [
        "we're done with the trip",
        "Done, concluded.",
    ]
    summary_request = next(b for b in llm_server.chat_requests() if is_summary_request(b))
    assert "we're done with the trip" in summary_request["messages"][1]["content"]  # the closing words count
    assert jsonl(session.raw_path) == []


async def test_a_switch_this_turn_routes_the_exchange_to_the_effort_switched_to(session, llm_server):
    open_effort(session, "alpha")
    open_effort(session, "beta")
    llm_server.push(tool_calls(call("switch_effort", {"id": "alpha"})), text("Back to alpha."))
    outcome = await orchestrator_for(session, llm_server).run_turn("back to alpha")
    assert outcome.logged_to == "alpha" and session.efforts.active.id == "alpha"
    assert jsonl(session.effort_path("beta")) == []


# ------------------------------------------------------------------ model rounds and tools
async def test_tool_rounds_are_bounded_and_the_last_round_offers_no_tools(session, llm_server):
    def responder(body):
        return tool_calls(call("effort_status")) if body.get("tools") else text("final answer")

    llm_server.responder = responder
    emitted = Emitted()
    outcome = await orchestrator_for(session, llm_server, max_tool_rounds=2).run_turn("loop", emitted)

    requests = llm_server.chat_requests()
    assert len(requests) == 3
    assert [bool(b.get("tools")) for b in requests] == [True, True, False]
    assert outcome.ok and outcome.reply == "final answer"
    assert [c["name"] for c in outcome.tool_calls] == ["effort_status", "effort_status"]
    assert len(emitted.of(ToolCalled)) == 2


async def test_tool_results_reach_the_model_in_the_next_round(session, llm_server):
    llm_server.push(tool_calls(call("effort_status", id="call_1")), text("No efforts."))
    await orchestrator_for(session, llm_server).run_turn("status?")
    second = llm_server.chat_requests()[1]["messages"]
    assistant = next(m for m in second if m.get("tool_calls"))
    assert assistant["tool_calls"][0]["function"]["name"] == "effort_status"
    tool_message = next(m for m in second if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_1"
    assert json.loads(tool_message["content"]) == {"open": [], "expanded": [], "concluded": [], "evicted_count": 0}


async def test_malformed_tool_arguments_return_a_json_error_and_the_turn_goes_on(session, llm_server):
    llm_server.push(tool_calls(call("open_effort", '{"name": "tri')), text("Sorry, answering directly."))
    emitted = Emitted()
    outcome = await orchestrator_for(session, llm_server).run_turn("open a trip", emitted)

    assert outcome.ok and outcome.reply == "Sorry, answering directly." and outcome.logged_to == "ambient"
    [result] = tool_results(llm_server.chat_requests()[1])
    assert "arguments are not valid JSON" in result["error"]
    assert outcome.tool_calls == ({"name": "open_effort", "arguments": {}, "ok": False},)
    assert emitted.of(ToolCalled)[0].ok is False
    assert list(session.efforts) == []
    logged = events(session.dir, "tool_called")[-1]
    assert logged["ok"] is False and "not valid JSON" in logged["error"]


async def test_a_tool_call_written_as_text_becomes_a_real_call(session, llm_server):
    written = '{"name": "open_effort", "arguments": {"name": "trip"}}'
    llm_server.push(text(written), text("Opened the trip."))
    emitted = Emitted()
    outcome = await orchestrator_for(session, llm_server).run_turn("plan a trip", emitted)

    assert outcome.ok and outcome.logged_to == "trip" and outcome.reply == "Opened the trip."
    assert session.efforts.get("trip") is not None
    second = llm_server.chat_requests()[1]["messages"]
    tool_message = next(m for m in second if m["role"] == "tool")
    assert tool_message["tool_call_id"].startswith("call_text_1_0_")
    assert json.loads(tool_message["content"])["status"] == "opened"
    streamed = "".join(e.text for e in emitted.of(TextDelta))
    assert "open_effort" not in streamed and streamed == "Opened the trip."


async def test_a_model_that_refuses_tools_is_asked_again_without_them_and_told_once(session, llm_server):
    llm_server.refuse_tools = True
    llm_server.push(text("plain answer"), text("second answer"))
    orchestrator = orchestrator_for(session, llm_server)
    emitted = Emitted()

    outcome = await orchestrator.run_turn("hello", emitted)

    assert outcome.ok and outcome.reply == "plain answer"
    requests = llm_server.chat_requests()
    assert [bool(b.get("tools")) for b in requests] == [True, False]
    notices = [b for b in emitted.of(Banner) if b.kind == "info"]
    assert len(notices) == 1 and "cannot use tools" in notices[0].text
    assert len(outcome.banners) == 1
    assert len(events(session.dir, "model_without_tools")) == 1

    again = Emitted()
    second = await orchestrator.run_turn("again", again)
    assert second.ok and second.banners == ()
    assert not again.of(Banner) and not llm_server.chat_requests()[-1].get("tools")
    assert len(llm_server.chat_requests()) == 3
    assert orchestrator.tools_enabled is False


# ------------------------------------------------------------------ how a turn fails
async def test_a_provider_error_before_any_tool_gives_the_message_back_and_logs_nothing(session, llm_server):
    llm_server.push(fault(401))
    outcome = await orchestrator_for(session, llm_server).run_turn("are you there?")

    assert outcome.failed and outcome.cause == "auth"
    assert outcome.given_back and outcome.retryable and outcome.logged_to is None
    assert outcome.text == "are you there?" and outcome.reason
    assert jsonl(session.raw_path) == [] and events(session.dir, "message_logged") == []
    failed = events(session.dir, "turn_failed")[-1]
    assert failed["kind"] == "auth" and failed["logged_to"] is None
    assert session.state.turn == 0


async def test_transient_faults_are_retried_then_the_turn_fails(session, llm_server):
    llm_server.push(fault(500), fault(500))
    emitted = Emitted()
    outcome = await orchestrator_for(session, llm_server, max_retries=1).run_turn("hi", emitted)
    assert outcome.failed and outcome.retryable and outcome.given_back
    assert len(llm_server.chat_requests()) == 2
    assert len([b for b in emitted.of(Banner) if "provider hiccup" in b.text]) == 1


async def test_a_failure_after_a_tool_changed_an_effort_is_logged_and_not_retryable(session, llm_server):
    llm_server.push(tool_calls(call("open_effort", {"name": "trip"})), fault(401))
    outcome = await orchestrator_for(session, llm_server).run_turn("plan a trip")

    assert outcome.failed and not outcome.retryable and not outcome.given_back
    assert outcome.logged_to == "trip"
    log = jsonl(session.effort_path("trip"))
    assert log[0]["content"] == "plan a trip" and log[1]["role"] == "assistant" and log[1]["failed"]
    assert events(session.dir, "turn_failed")[-1]["logged_to"] == "trip"
    assert session.state.turn == 1


async def test_an_empty_reply_fails_and_gives_the_message_back(session, llm_server):
    llm_server.push(text(""))
    outcome = await orchestrator_for(session, llm_server).run_turn("hello?")
    assert outcome.failed and outcome.cause == "empty_reply"
    assert outcome.given_back and outcome.retryable and outcome.logged_to is None
    assert jsonl(session.raw_path) == []
    assert events(session.dir, "turn_failed")[-1]["kind"] == "empty_reply"


async def test_a_message_over_the_budget_fails_with_cause_budget(session, llm_server):
    outcome = await orchestrator_for(session, llm_server, budget=2_000).run_turn("word " * 3_000)
    assert outcome.failed and outcome.cause == "budget" and outcome.given_back
    assert "budget" in outcome.reason
    assert llm_server.chat_requests() == []


async def test_a_reply_cut_mid_stream_fails_keeping_the_partial_and_gives_the_message_back(session, llm_server):
    llm_server.push(stream_cut("The answer is forty-two, because", 20))
    emitted = Emitted()
    outcome = await orchestrator_for(session, llm_server).run_turn("what is the answer?", emitted)

    assert outcome.failed and outcome.cause == "stream_cut" and outcome.partial == "The answer is forty-"
    assert outcome.given_back and outcome.retryable and outcome.logged_to is None
    assert len(llm_server.chat_requests()) == 1  # a cut that already showed text is not retried
    assert emitted.of(RoundReset)
    assert jsonl(session.raw_path) == []
    failed = events(session.dir, "turn_failed")[-1]
    assert failed["partial"] == "The answer is forty-" and failed["partial_chars"] == 20


# ------------------------------------------------------------------ cancel
async def test_cancel_mid_stream_keeps_the_partial_marked_interrupted(session, llm_server):
    llm_server.stream_delay = 0.02
    llm_server.push(text("word " * 400))
    streaming = asyncio.Event()
    emitted = Emitted()

    def emit(event):
        emitted(event)
        if isinstance(event, TextDelta) and sum(len(e.text) for e in emitted.of(TextDelta)) > 10:
            streaming.set()

    task = asyncio.ensure_future(orchestrator_for(session, llm_server).run_turn("tell me a story", emit))
    await asyncio.wait_for(streaming.wait(), 10)
    task.cancel()
    outcome = await asyncio.wait_for(task, 10)

    assert outcome.cancelled and not outcome.given_back
    assert 10 < len(outcome.partial) < len("word " * 400) and ("word " * 400).startswith(outcome.partial)
    raw = jsonl(session.raw_path)
    assert raw[-2]["content"] == "tell me a story"
    assert raw[-1]["interrupted"] is True and raw[-1]["content"] == outcome.partial
    cancelled = events(session.dir, "turn_cancelled")[-1]
    assert cancelled["logged_to"] == "ambient" and cancelled["partial_chars"] == len(outcome.partial)
    # its end is marked too: for the model (it knows the reply is incomplete), the history and exports
    llm_server.push(text("Shall I go on?"))
    await orchestrator_for(session, llm_server).run_turn("what happened?")
    shown = [m["content"] for m in llm_server.chat_requests()[-1]["messages"] if m["role"] == "assistant"]
    assert shown[-1] == outcome.partial.rstrip() + "\n\n" + INTERRUPTED_END
    (line,) = [ln for ln in recent_lines(session, 10) if ln.interrupted]
    assert line.content == outcome.partial and line.shown.endswith(INTERRUPTED_END)
    markdown = conversation_markdown("s", {"ambient": jsonl(session.raw_path)})
    assert "(interrupted)" in markdown and f"{outcome.partial.rstrip()}\n\n{INTERRUPTED_END}" in markdown


async def test_cancel_before_any_text_either_logs_nothing_or_does_not_give_the_message_back(session, llm_server):
    llm_server.push(hang(30))
    requested = asyncio.Event()
    loop = asyncio.get_running_loop()
    llm_server.on_request = lambda _rec: loop.call_soon_threadsafe(requested.set)
    task = asyncio.ensure_future(orchestrator_for(session, llm_server).run_turn("are you there?"))
    await asyncio.wait_for(requested.wait(), 10)
    task.cancel()
    outcome = await asyncio.wait_for(task, 10)

    assert outcome.cancelled and outcome.partial == ""
    logged = [m["content"] for m in jsonl(session.raw_path)]
    if outcome.given_back:  # the message goes back to the input: it must not also be in the log
        assert outcome.logged_to is None and "are you there?" not in logged
    else:
        assert outcome.logged_to == "ambient" and "are you there?" in logged


async def test_cancel_after_a_tool_changed_an_effort_never_gives_the_message_back(session, llm_server):
    llm_server.push(tool_calls(call("open_effort", {"name": "trip"})), hang(30))
    second_request = asyncio.Event()
    loop = asyncio.get_running_loop()
    llm_server.on_request = lambda _rec: (
        len(llm_server.chat_requests()) == 2 and loop.call_soon_threadsafe(second_request.set)
    )
    task = asyncio.ensure_future(orchestrator_for(session, llm_server).run_turn("plan a trip"))
    await asyncio.wait_for(second_request.wait(), 10)
    task.cancel()
    outcome = await asyncio.wait_for(task, 10)

    assert outcome.cancelled and outcome.logged_to == "trip" and session.efforts.get("trip") is not None
    assert [m["content"] for m in jsonl(session.effort_path("trip"))][0] == "plan a trip"
    assert not outcome.given_back


# ------------------------------------------------------------------ the outcome's fields
async def test_a_done_outcome_carries_reply_banners_figures_and_usage(session, llm_server):
    llm_server.push(
        tool_calls(call("open_effort", {"name": "trip"}), usage={"prompt_tokens": 100, "completion_tokens": 5}),
        text("Opened.", usage={"prompt_tokens": 120, "completion_tokens": 3}),
    )
    emitted = Emitted()
    outcome = await orchestrator_for(session, llm_server, budget=9_000).run_turn("a trip", emitted)

    assert outcome.ok and outcome.work == "turn" and outcome.turn == 1 and outcome.text == "a trip"
    assert outcome.reply == "Opened." and outcome.logged_to == "trip"
    assert outcome.banners == ("--- Opened effort: trip ---",)
    # the second request repeats the first's system prompt (stable across the effort change: the state is
    # in the context note): the provider said nothing of its cache, so the repeated prefix is estimated
    estimate = outcome.usage.pop("cached_estimate")
    assert outcome.usage == {"prompt_tokens": 220, "completion_tokens": 8, "total_tokens": 228, "requests": 2}
    assert estimate > 0 and outcome.turn_usage.pop("cached_estimate") == session.state.usage.pop("cached_estimate")
    assert outcome.turn_usage == {"prompt_tokens": 220, "completion_tokens": 8, "requests": 2}
    assert session.state.usage == {"prompt_tokens": 220, "completion_tokens": 8, "requests": 2}
    assert isinstance(outcome.context, ContextFigures) and outcome.context.budget == 9_000
    assert outcome.context.turn == 1 and outcome.context.efforts.get("trip", 0) > 0
    assert outcome.request is not None and outcome.request.layers["turn"] > 0
    assert emitted.of(ContextFigures)[-1] == outcome.context
    assert session.state.history[-1] == {"turn": 1, "ccm": outcome.context.total, "naive": outcome.context.naive}
    assert events(session.dir, "turn_done")[-1]["logged_to"] == "trip"


# ------------------------------------------------------------------ the user's actions
def _prepare(session: Session) -> None:
    """active 'live', backgrounded 'side', concluded 'done', expanded 'wide', evicted 'gone'."""
    open_effort(session, "side", exchange("side question", "side answer"))
    open_effort(session, "live", exchange("live question", "live answer"))
    concluded_effort(session, "done", exchange("done q", "done a"), summary="Done summary.")
    wide = concluded_effort(session, "wide", exchange("wide q", "wide a"), summary="Wide summary.")
    lifecycle.expand(session, wide, turn=0)
    concluded_effort(session, "gone", exchange("gone q", "gone a"), summary="Gone summary.")
    lifecycle.evict_summary(session, "gone")
    open_effort(session, "live2")
    lifecycle.switch_to(session, session.efforts.get("live"))


ACTIONS = [
    # (action, target, ok, what the refusal says)
    (Action.SWITCH, "side", True, None),
    (Action.SWITCH, "live", True, None),  # already active: answered, not refused
    (Action.SWITCH, "done", False, "is concluded; use reopen_effort"),
    (Action.EXPAND, "done", True, None),
    (Action.EXPAND, "gone", True, None),
    (Action.EXPAND, "wide", True, None),  # already expanded: answered, not refused
    (Action.EXPAND, "live", False, "is open, its log is already in context"),
    (Action.COLLAPSE, "wide", True, None),
    (Action.COLLAPSE, "done", False, "is not expanded"),
    (Action.COLLAPSE, "side", False, "is not expanded"),
    (Action.REOPEN, "done", True, None),
    (Action.REOPEN, "wide", True, None),
    (Action.REOPEN, "gone", True, None),
    (Action.REOPEN, "side", False, "is not concluded"),
    (Action.CONCLUDE, "done", False, "is already concluded"),
    (Action.OPEN, "a new thing", True, None),
    (Action.OPEN, "  ", False, "an effort needs a name"),
    (Action.SWITCH, "nope", False, "no effort with id 'nope'"),
]


@pytest.mark.parametrize(("action", "target", "ok", "refusal"), ACTIONS, ids=lambda v: getattr(v, "value", v))
async def test_run_action_follows_the_state_table(session, llm_server, action, target, ok, refusal):
    _prepare(session)
    emitted = Emitted()
    outcome = await orchestrator_for(session, llm_server).run_action(action, target, emitted)

    assert outcome.work == "action" and outcome.text == f"{action.value} {target}".strip()
    logged = events(session.dir, "tool_called")[-1]
    assert logged["tool"] == action.tool_name and logged["source"] == "user" and logged["ok"] is ok
    if ok:
        assert outcome.ok and outcome.result is not None and outcome.context is not None
        assert emitted.of(ContextFigures)
    else:
        expected = "not_found" if "no effort with id" in refusal else "refused"
        assert outcome.failed and outcome.cause == expected and refusal in outcome.reason
        assert refusal in logged["error"]
        assert not emitted.of(EffortChanged)
    assert llm_server.chat_requests() == []


async def test_run_action_conclude_asks_the_model_for_the_summary(session, llm_server):
    _prepare(session)
    llm_server.push(text("The live effort, summed up."))
    emitted = Emitted()
    outcome = await orchestrator_for(session, llm_server).run_action(Action.CONCLUDE, "live", emitted)

    assert outcome.ok and outcome.result["summary"] == "The live effort, summed up."
    assert outcome.banners == ("--- Concluded effort: live ---",)
    assert [(e.effort_id, e.change) for e in emitted.of(EffortChanged)] == [("live", "concluded")]
    assert session.efforts.get("live").is_concluded
    assert is_summary_request(llm_server.chat_requests()[0])
    assert session.view.last_referenced["live"] == session.state.turn


async def test_run_action_conclude_without_a_target_concludes_the_active_effort(session, llm_server):
    _prepare(session)
    llm_server.push(text("Summed up."))
    outcome = await orchestrator_for(session, llm_server).run_action(Action.CONCLUDE, "")
    assert outcome.ok and outcome.result["effort_id"] == "live" and outcome.text == "conclude"


async def test_run_action_conclude_when_the_summary_model_fails_extracts_a_summary(session, llm_server):
    """The user's conclusion never fails for want of a model: an extracted summary, said in a banner."""
    _prepare(session)
    llm_server.push(fault(401))
    outcome = await orchestrator_for(session, llm_server).run_action(Action.CONCLUDE, "live")
    assert outcome.ok and any("extracted from the log" in b for b in outcome.banners)
    live = session.efforts.get("live")
    assert live.is_concluded and live.summary
    assert events(session.dir, "tool_called")[-1]["ok"] is True


async def test_run_action_cancelled_while_the_summary_is_written_changes_nothing(session, llm_server):
    _prepare(session)
    llm_server.push(hang(30))
    requested = asyncio.Event()
    loop = asyncio.get_running_loop()
    llm_server.on_request = lambda _rec: loop.call_soon_threadsafe(requested.set)
    task = asyncio.ensure_future(orchestrator_for(session, llm_server).run_action(Action.CONCLUDE, "live"))
    await asyncio.wait_for(requested.wait(), 10)
    task.cancel()
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.cancelled and outcome.work == "action" and outcome.text == "conclude live"
    assert session.efforts.get("live").is_open
    assert all(e["effort_id"] != "live" for e in events(session.dir, "effort_concluded"))
