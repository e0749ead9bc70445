"""core/tools.py: the model's tools — definitions, argument validation, each handler's result, partial
reads of a log, and the tool_called event every call leaves. Sessions are built on disk; only
close_effort asks the fake model server (for the summary)."""

from __future__ import annotations

import json

import pytest

from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.efforts import operations as effort_ops
from ccm_tui.core.efforts.operations import ActionContext
from ccm_tui.core.efforts.states import Action
from ccm_tui.core.search import EffortIndex
from ccm_tui.core.session import numbered_lines as log_lines
from ccm_tui.core.session.session import Session
from ccm_tui.core.turn import tools as toolbox
from tests.helpers.openai_server import fault, text
from tests.helpers.sessionkit import (
    TS,
    concluded_effort,
    events,
    exchange,
    is_summary_request,
    llm_for,
    open_effort,
    write_jsonl,
)

DESIGN_TOOLS = {
    "open_effort": ["name"],
    "close_effort": [],
    "effort_status": [],
    "expand_effort": ["id"],
    "collapse_effort": ["id"],
    "switch_effort": ["id"],
    "search_efforts": ["query"],
    "route_to_ambient": [],
    "reopen_effort": ["id"],
}


@pytest.fixture
def session(tmp_path):
    session = Session.open(tmp_path / "s")
    yield session
    session.close()


def context(session: Session, *, llm=None, search=None, source: str = "model") -> ActionContext:
    return ActionContext(session=session, llm=llm, turn=session.state.turn + 1, search=search, source=source)


def numbered_log(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 else "assistant", "content": f"message {i}", "ts": TS} for i in range(1, n + 1)]


# ------------------------------------------------------------------ definitions
def test_definitions_are_the_design_tools_as_openai_functions_with_string_arguments():
    defs = toolbox.definitions()
    assert {d["function"]["name"] for d in defs} == set(DESIGN_TOOLS)
    for d in defs:
        assert d["type"] == "function" and d["function"]["description"]
        params = d["function"]["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert params["required"] == DESIGN_TOOLS[d["function"]["name"]]
        assert all(p["type"] == "string" and p["description"] for p in params["properties"].values())
    expand = next(d for d in defs if d["function"]["name"] == "expand_effort")["function"]["parameters"]
    assert set(expand["properties"]) == {"id", "lines", "around_line"} and expand["required"] == ["id"]


def test_definitions_can_be_limited_to_named_tools():
    assert [d["function"]["name"] for d in toolbox.definitions(["effort_status", "nope"])] == ["effort_status"]


# ------------------------------------------------------------------ arguments
REQUIRED = [(name, args[0]) for name, args in DESIGN_TOOLS.items() if args]


@pytest.mark.parametrize(("name", "argument"), REQUIRED)
@pytest.mark.parametrize("value", ["absent", "", None])
async def test_a_missing_required_argument_is_an_error_for_the_model(session, name, argument, value):
    args = {} if value == "absent" else {argument: value}  # an empty string or null counts as missing
    outcome = await toolbox.execute(context(session), name, args)
    assert not outcome.ok and outcome.result == {"error": f"{name}: missing required argument '{argument}'"}


@pytest.mark.parametrize("name", sorted(DESIGN_TOOLS))
async def test_an_unknown_argument_is_an_error_that_lists_the_expected_ones(session, name):
    args = {a: "x" for a in DESIGN_TOOLS[name]} | {"colour": "red"}
    outcome = await toolbox.execute(context(session), name, args)
    assert not outcome.ok and "unknown argument 'colour'" in outcome.result["error"]
    expected = ", ".join(toolbox.REGISTRY[name].parameters["properties"]) or "none"
    assert outcome.result["error"].endswith(f"(expected: {expected})")


@pytest.mark.parametrize("value", [42, 1.5, True, ["a"], {"a": 1}])
@pytest.mark.parametrize("name", ["open_effort", "expand_effort", "search_efforts"])
async def test_a_non_string_argument_is_an_error(session, name, value):
    argument = DESIGN_TOOLS[name][0]
    outcome = await toolbox.execute(context(session), name, {argument: value})
    assert not outcome.ok
    assert outcome.result["error"] == f"{name}: argument '{argument}' must be a string, got {type(value).__name__}"
    assert list(session.efforts) == []


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('{"name": "tri', "arguments are not valid JSON"),
        ("[1, 2]", "arguments must be a JSON object"),
        ('"trip"', "arguments must be a JSON object"),
    ],
)
async def test_arguments_that_are_not_a_json_object_are_an_error(session, raw, problem):
    outcome = await toolbox.execute(context(session), "open_effort", raw)
    assert not outcome.ok and outcome.arguments == {} and problem in outcome.result["error"]
    assert outcome.result["error"].startswith("open_effort: ")


@pytest.mark.parametrize("raw", ["", None, "  ", "{}"])
async def test_empty_arguments_are_no_arguments(session, raw):
    outcome = await toolbox.execute(context(session), "effort_status", raw)
    assert outcome.ok and outcome.arguments == {}


async def test_json_string_arguments_are_parsed(session):
    outcome = await toolbox.execute(context(session), "open_effort", '{"name": "Japan trip"}')
    assert outcome.ok and outcome.arguments == {"name": "Japan trip"}
    assert outcome.result == {"status": "opened", "effort_id": "japan-trip", "active": True}


async def test_an_unknown_tool_is_an_error_listing_the_tools(session):
    outcome = await toolbox.execute(context(session), "launch_rockets", '{"now": "yes"}')
    assert not outcome.ok and outcome.name == "launch_rockets"
    assert outcome.result == {"error": "unknown tool 'launch_rockets'", "available": sorted(DESIGN_TOOLS)}
    assert json.loads(outcome.content) == outcome.result
    logged = events(session.dir, "tool_called")[-1]
    assert logged["tool"] == "launch_rockets" and logged["arguments"] == {"now": "yes"} and logged["ok"] is False


# ------------------------------------------------------------------ each handler
async def test_open_effort_opens_an_active_effort_and_routes_the_exchange_to_it(session):
    existing = open_effort(session, "older")
    ctx = context(session)
    outcome = await toolbox.execute(ctx, "open_effort", {"name": "Auth bug"})
    assert outcome.result == {"status": "opened", "effort_id": "auth-bug", "active": True}
    assert session.efforts.active.id == "auth-bug" and session.efforts.get(existing.id).is_open
    assert ctx.route == "auth-bug" and ctx.banners == ["--- Opened effort: auth-bug ---"]
    assert ctx.changes == [("auth-bug", "opened")] and "auth-bug" in ctx.touched
    again = await toolbox.execute(context(session), "open_effort", {"name": "Auth bug"})
    assert again.result["effort_id"] == "auth-bug" and again.result["status"] == "already_active"
    assert "auth-bug-2" not in session.efforts


async def test_close_effort_summarizes_with_the_model_and_concludes_the_active_effort(session, llm_server):
    open_effort(session, "trip", exchange("plan a trip", "Kyoto"))
    llm_server.push(text("Trip planned: Kyoto."))
    ctx = context(session, llm=llm_for(llm_server))
    outcome = await toolbox.execute(ctx, "close_effort", {})
    assert outcome.ok and outcome.result == {
        "status": "concluded",
        "effort_id": "trip",
        "summary": "Trip planned: Kyoto.",
    }
    assert session.efforts.get("trip").is_concluded and ctx.route == "trip"
    [request] = llm_server.chat_requests()
    assert is_summary_request(request) and "plan a trip" in request["messages"][1]["content"]


async def test_close_effort_refusals(session, llm_server):
    no_active = await toolbox.execute(context(session, llm=llm_for(llm_server)), "close_effort", {})
    assert no_active.result["error"] == "close_effort: no effort id given and no effort is active"
    open_effort(session, "trip", exchange("plan a trip", "Kyoto"))
    no_model = await toolbox.execute(context(session), "close_effort", {"id": "trip"})
    assert no_model.result["error"] == "close_effort: no model is configured to write the summary"
    llm_server.push(fault(401))
    failed = await toolbox.execute(context(session, llm=llm_for(llm_server)), "close_effort", {"id": "trip"})
    assert failed.result["error"].startswith("close_effort: the summary model failed: ")
    assert session.efforts.get("trip").is_open
    concluded_effort(session, "done")
    twice = await toolbox.execute(context(session, llm=llm_for(llm_server)), "close_effort", {"id": "done"})
    assert twice.result["error"] == "close_effort: effort 'done' is already concluded"
    assert len(llm_server.chat_requests()) == 1  # refused before any summary is asked for


async def test_effort_status_lists_open_expanded_concluded_and_the_evicted_count(session):
    open_effort(session, "side", exchange("s", "t"))
    open_effort(session, "main")
    wide = concluded_effort(session, "wide", exchange("w", "x"), summary="Wide.")
    lifecycle.expand(session, wide, turn=0)
    concluded_effort(session, "done", summary="Done.")
    concluded_effort(session, "gone", summary="Gone.")
    lifecycle.evict_summary(session, "gone")
    lifecycle.switch_to(session, session.efforts.get("main"))

    result = (await toolbox.execute(context(session), "effort_status", {})).result

    assert result["open"] == [
        {"id": "side", "active": False, "tokens": session.efforts.get("side").raw_tokens},
        {"id": "main", "active": True, "tokens": 0},
    ]
    assert result["open"][0]["tokens"] > 0
    assert result["expanded"] == [{"id": "wide", "tokens": wide.raw_tokens, "turns_since_reference": 0}]
    assert [c["id"] for c in result["concluded"]] == ["wide", "done"]
    assert set(result["concluded"][1]) == {"id", "summary", "summary_tokens", "raw_tokens"}
    assert result["concluded"][1]["summary"] == "Done." and result["concluded"][1]["summary_tokens"] > 0
    assert result["evicted_count"] == 1


async def test_route_to_ambient_names_the_untouched_effort(session):
    ctx = context(session)
    outcome = await toolbox.execute(ctx, "route_to_ambient", {})
    assert outcome.result == {"status": "routed", "logged_to": "ambient", "active_effort_untouched": None}
    open_effort(session, "trip")
    ctx = context(session)
    outcome = await toolbox.execute(ctx, "route_to_ambient", None)
    assert outcome.result["active_effort_untouched"] == "trip" and ctx.route == "ambient"
    assert ctx.changes == [] and session.efforts.active.id == "trip"


async def test_expand_and_collapse_effort(session):
    concluded_effort(session, "done", exchange("q", "a"), summary="Done.")
    ctx = context(session)
    expanded = await toolbox.execute(ctx, "expand_effort", {"id": "done"})
    assert expanded.result["status"] == "expanded" and expanded.result["effort_id"] == "done"
    assert expanded.result["tokens"] > 0 and "done" in session.view.expanded
    assert ctx.banners == [f"--- Expanded effort: done ({expanded.result['tokens']} tokens loaded) ---"]
    ctx = context(session)
    again = await toolbox.execute(ctx, "expand_effort", {"id": "done"})
    assert again.result["status"] == "already expanded" and ctx.banners == []
    ctx = context(session)
    collapsed = await toolbox.execute(ctx, "collapse_effort", {"id": "done"})
    assert collapsed.result == {"status": "collapsed", "effort_id": "done"}
    assert "done" not in session.view.expanded and ctx.changes == [("done", "collapsed")]
    twice = await toolbox.execute(context(session), "collapse_effort", {"id": "done"})
    assert twice.result["error"] == "collapse_effort: effort 'done' is not expanded"


async def test_the_expansion_banner_keeps_its_shape_with_thousands_separated(session):
    concluded_effort(session, "big", [{"role": "user", "content": worded(i), "ts": TS} for i in range(1, 30)])
    ctx = context(session)
    tokens = (await toolbox.execute(ctx, "expand_effort", {"id": "big"})).result["tokens"]
    assert tokens >= 1_000 and ctx.banners == [f"--- Expanded effort: big ({tokens:,} tokens loaded) ---"]
    assert "," in ctx.banners[0]  # "(36,636 tokens loaded)", never "(36636 tokens loaded)"


async def test_switch_effort_names_the_previous_effort(session):
    open_effort(session, "alpha")
    open_effort(session, "beta")
    ctx = context(session)
    outcome = await toolbox.execute(ctx, "switch_effort", {"id": " alpha "})
    assert outcome.result == {"status": "switched", "effort_id": "alpha", "previous": "beta"}
    assert session.efforts.active.id == "alpha" and ctx.route == "alpha"
    missing = await toolbox.execute(context(session), "switch_effort", {"id": "gamma"})
    assert missing.result["error"].startswith("switch_effort: no effort with id 'gamma' (open: alpha, beta;")


async def test_reopen_effort_returns_the_prior_summary(session):
    concluded_effort(session, "done", exchange("q", "a"), summary="What was done.")
    ctx = context(session)
    outcome = await toolbox.execute(ctx, "reopen_effort", {"id": "done"})
    assert outcome.result == {"status": "reopened", "effort_id": "done", "prior_summary": "What was done."}
    assert session.efforts.active.id == "done" and ctx.route == "done"
    assert [m["content"] for m in session.effort_log("done")][-1] == lifecycle.REOPEN_SEPARATOR
    again = await toolbox.execute(context(session), "reopen_effort", {"id": "done"})
    assert again.result["error"] == "reopen_effort: effort 'done' is not concluded (status: open)"


async def test_search_efforts_returns_ranked_hits_with_passage_and_lines(session):
    concluded_effort(
        session,
        "db-pool",
        exchange("the connection pool is exhausted", "raise max connections to 25"),
        summary="Database pool raised to 25 connections.",
    )
    concluded_effort(session, "trip", exchange("plan kyoto", "ok"), summary="Kyoto trip in April.")
    with EffortIndex(session.dir / "derived.sqlite") as index:
        index.sync_session(session.dir)
        ctx = context(session, search=lambda query, limit: index.search(query, limit=limit))
        outcome = await toolbox.execute(ctx, "search_efforts", {"query": "connection pool exhausted"})

    assert outcome.ok and outcome.result["query"] == "connection pool exhausted"
    best = outcome.result["results"][0]
    assert best["id"] == "db-pool" and best["status"] == "concluded"
    assert best["summary"] == "Database pool raised to 25 connections."
    assert isinstance(best["score"], float) and best["score"] == round(best["score"], 3) and best["snippet"]
    assert "exhausted" in best["passage"] and best["lines"] == [1, 2]
    assert ctx.touched == {"db-pool"}  # the best match counts as referenced
    assert all(r["id"] != "trip" for r in outcome.result["results"])


async def test_search_efforts_leaves_out_passage_and_lines_when_only_the_summary_matched(session):
    concluded_effort(session, "trip", exchange("hello", "hi"), summary="Kyoto trip in April.")
    with EffortIndex(session.dir / "derived.sqlite") as index:
        index.sync_session(session.dir)
        ctx = context(session, search=lambda query, limit: index.search(query, limit=limit))
        outcome = await toolbox.execute(ctx, "search_efforts", {"query": "kyoto"})
    [hit] = outcome.result["results"]
    assert set(hit) == {"id", "status", "source", "summary", "score", "snippet"} and hit["source"] == "effort"


async def test_search_efforts_without_a_search_index_is_an_error(session):
    outcome = await toolbox.execute(context(session), "search_efforts", {"query": "x"})
    assert outcome.result == {"error": "search_efforts: search is not available in this session"}


async def test_search_efforts_with_no_match_touches_nothing(session):
    with EffortIndex(session.dir / "derived.sqlite") as index:
        index.sync_session(session.dir)
        ctx = context(session, search=lambda query, limit: index.search(query, limit=limit))
        outcome = await toolbox.execute(ctx, "search_efforts", {"query": "nothing here"})
    assert outcome.ok and outcome.result["results"] == [] and ctx.touched == set()


# ------------------------------------------------------------------ partial reads of a log
@pytest.fixture
def long_effort(session):
    return concluded_effort(session, "long", numbered_log(100), summary="A long one.")


@pytest.mark.parametrize(
    ("args", "span"),
    [
        ({"lines": "2-3"}, [2, 3]),
        ({"lines": "7"}, [7, 7]),
        ({"lines": " 10 - 12 "}, [10, 12]),
        ({"lines": "1-500"}, [1, 60]),  # at most 60 lines
        ({"lines": "95-120"}, [95, 100]),  # clipped to the log
        ({"around_line": "20"}, [14, 26]),
        ({"around_line": "2"}, [1, 8]),
        ({"around_line": "99"}, [93, 100]),
        ({"lines": "5-6", "around_line": "50"}, [5, 6]),  # lines wins
    ],
)
async def test_expand_effort_with_lines_reads_part_of_the_log_and_loads_nothing(session, long_effort, args, span):
    ctx = context(session)
    outcome = await toolbox.execute(ctx, "expand_effort", {"id": "long", **args})
    result = outcome.result
    assert outcome.ok and result["status"] == "lines" and result["effort_id"] == "long"
    assert result["lines"] == span and result["total_lines"] == 100
    assert [m["line"] for m in result["messages"]] == list(range(span[0], span[1] + 1))
    assert result["messages"][0] == {
        "line": span[0],
        "role": "user" if span[0] % 2 else "assistant",
        "content": f"message {span[0]}",
    }
    assert "read only" in result["note"]
    assert "long" not in session.view.expanded and ctx.banners == [] and ctx.changes == []
    assert ctx.touched == {"long"}
    assert events(session.dir, "effort_expanded") == []


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"lines": "abc"}, "lines must be a line number, got 'abc'"),
        ({"lines": "0-3"}, "lines must be 1 or more (lines are numbered from 1), got 0"),
        ({"lines": "9-5"}, "lines must go up, as in '120-140'; got '9-5'"),
        ({"lines": "3-x"}, "lines must be a line number, got 'x'"),
        ({"lines": "101"}, "effort 'long' has 100 log lines; line 101 does not exist (it is past the end)"),
        ({"around_line": "-4"}, "around_line must be 1 or more (lines are numbered from 1), got -4"),
        ({"around_line": "twelve"}, "around_line must be a line number, got 'twelve'"),
    ],
)
async def test_expand_effort_with_bad_line_numbers_is_an_error(session, long_effort, args, error):
    outcome = await toolbox.execute(context(session), "expand_effort", {"id": "long", **args})
    assert not outcome.ok and outcome.result == {"error": f"expand_effort: {error}"}


async def test_a_partial_read_skips_lines_that_are_not_messages_and_caps_long_messages(session):
    effort = concluded_effort(session, "odd", [{"role": "user", "content": "x" * 5_000, "ts": TS}], summary="Odd.")
    path = session.effort_path(effort.id)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("this is not json\n")
    calls = [{"id": "c1", "type": "function", "function": {"name": "effort_status", "arguments": "{}"}}]
    write_jsonl(path, [{"note": "not a message"}, {"role": "assistant", "content": None, "tool_calls": calls}])
    outcome = await toolbox.execute(context(session), "expand_effort", {"id": "odd", "lines": "1-10"})
    result = outcome.result
    assert result["lines"] == [1, 4] and result["total_lines"] == 4
    assert [m["line"] for m in result["messages"]] == [1, 4]
    assert result["messages"][0]["content"] == "x" * log_lines.MESSAGE_CHARS
    assert result["messages"][1] == {"line": 4, "role": "assistant", "content": "null"}


async def test_a_partial_read_of_an_open_effort_works_too(session):
    open_effort(session, "live", numbered_log(3))
    outcome = await toolbox.execute(context(session), "expand_effort", {"id": "live", "around_line": "2"})
    assert outcome.ok and outcome.result["lines"] == [1, 3]
    whole = await toolbox.execute(context(session), "expand_effort", {"id": "live"})
    assert whole.result["error"] == "expand_effort: effort 'live' is open, its log is already in context"


# ------------------------------------------------------------------ the budget: expansions and reads that cannot fit
def worded(i: int) -> str:
    return f"line {i}: " + " ".join(f"word{i}x{j}" for j in range(60))


async def test_an_expansion_larger_than_the_room_is_refused_with_the_passage_of_the_best_hit(session):
    big = concluded_effort(
        session, "auth bug", [{"role": "user", "content": worded(i), "ts": TS} for i in range(1, 41)]
    )
    ctx = context(session)
    ctx.room = lambda: 900
    ctx.pending = [{"role": "user", "content": "what did word17x3 mean?"}]
    ctx.search = lambda query, limit: [
        type("Hit", (), {"source": "effort", "id": "auth-bug", "lines": (17, 17)})(),
    ]
    outcome = await toolbox.execute(ctx, "expand_effort", {"id": "auth-bug"})
    result = outcome.result
    assert outcome.ok and result["status"] == "too_large" and result["room"] == 900
    assert result["tokens"] > 900 and result["log_lines"] == 40 and result["around_line"] == 17
    assert result["note"].startswith(f"not loaded: auth-bug is {result['tokens']:,} tokens; the budget leaves 900")
    lines = [m["line"] for m in result["passage"]["messages"]]
    assert 17 in lines and len(lines) < 13 and "narrowed" in result["passage"]["note"]  # cut to fit
    assert session.counter.count_text(json.dumps(result)) <= 900
    assert big.id not in session.view.expanded and not ctx.banners and not events(session.dir, "effort_expanded")


async def test_an_expansion_that_fits_the_room_loads_and_the_users_refusal_carries_details(session):
    concluded_effort(session, "small", numbered_log(4))
    concluded_effort(session, "big", [{"role": "user", "content": worded(i), "ts": TS} for i in range(1, 41)])
    ctx = context(session)
    ctx.room = lambda: 900
    assert (await toolbox.execute(ctx, "expand_effort", {"id": "small"})).result["status"] == "expanded"
    user = context(session, source="user")
    user.room = lambda: 900
    with pytest.raises(effort_ops.TooLarge) as refused:
        await effort_ops.perform(user, Action.EXPAND, "big")
    assert refused.value.cause == "budget" and refused.value.details["around_line"] is None
    assert str(refused.value).startswith("big is ") and "the budget leaves 900 — search it or read a passage" in str(
        refused.value
    )


async def test_a_partial_read_is_narrowed_around_its_line_to_what_the_budget_leaves(session):
    concluded_effort(session, "long", [{"role": "user", "content": worded(i), "ts": TS} for i in range(1, 41)])
    ctx = context(session)
    ctx.room = lambda: 700
    result = (await toolbox.execute(ctx, "expand_effort", {"id": "long", "around_line": "20"})).result
    lines = [m["line"] for m in result["messages"]]
    assert 20 in lines and lines == list(range(lines[0], lines[-1] + 1)) and len(lines) < 13
    assert result["lines"] == [lines[0], lines[-1]] and result["note"].startswith("narrowed to lines")
    assert session.counter.count_text(json.dumps(result)) <= 700
    ctx.room = lambda: 60  # not even one line: its text is cut
    (only,) = (await toolbox.execute(ctx, "expand_effort", {"id": "long", "lines": "5"})).result["messages"]
    assert only["line"] == 5 and only["content"].endswith("…") and len(only["content"]) < len(worded(5))


# ------------------------------------------------------------------ the event every call leaves
async def test_every_call_is_logged_as_tool_called_with_its_source(session):
    await toolbox.execute(context(session), "open_effort", {"name": "trip"})
    await toolbox.execute(context(session, source="user"), "switch_effort", {"id": "trip"})
    await toolbox.execute(context(session), "expand_effort", {"id": "trip", "lines": "x"})
    await toolbox.execute(context(session), "open_effort", "{bad")

    logged = events(session.dir, "tool_called")
    assert [(e["tool"], e["ok"], e["source"]) for e in logged] == [
        ("open_effort", True, "model"),
        ("switch_effort", True, "user"),
        ("expand_effort", False, "model"),
        ("open_effort", False, "model"),
    ]
    assert logged[0]["arguments"] == {"name": "trip"} and "error" not in logged[0]
    assert logged[2]["arguments"] == {"id": "trip", "lines": "x"}
    assert logged[2]["error"] == "expand_effort: lines must be a line number, got 'x'"
    assert logged[3]["arguments"] == {} and "not valid JSON" in logged[3]["error"]
    assert all(e["turn"] == 0 for e in logged)
