"""core/compaction.py: the Compactor fits the working context under the budget in order of least harm
(collapse expansions → evict summaries → shrink the ambient window → checkpoint open efforts), never
touching a raw log. Sessions are built on disk; only checkpoints ask the fake model server."""

from __future__ import annotations

import re

import pytest

from ccm_tui.config import Settings
from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.efforts.working_context import assemble
from ccm_tui.core.manifest.effort_list import load_manifest
from ccm_tui.core.session.session import MANIFEST_FILE, Session
from ccm_tui.core.turn.compaction import KEEP_RECENT_MESSAGES, Compactor, ContextTooLarge
from ccm_tui.core.turn.events import Banner, EffortChanged
from tests.helpers.openai_server import fault, text
from tests.helpers.sessionkit import Emitted, concluded_effort, events, exchange, llm_for, open_effort, orchestrator_for

CHECKPOINT_MARK = "You compress the oldest part"  # the checkpoint prompt's opening words


def words(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def conversation(tag: str, exchanges: int) -> list[dict]:
    return [m for k in range(exchanges) for m in exchange(words(f"{tag}{k}q", 30), words(f"{tag}{k}a", 30))]


@pytest.fixture
def session(tmp_path):
    """Ten ambient exchanges; 'old' and 'new' expanded (old referenced least recently); summaries of
    'a', 'b', 'c' referenced at turns 7, 3, 5; open efforts 'side' (backgrounded) and 'main' (active)."""
    session = Session.open(tmp_path / "s")
    for i in range(10):
        session.append_ambient(exchange(f"ambient {i} " + words("a", 20), words("b", 20)))
    for name in ("new", "old"):
        concluded_effort(session, name, exchange(words(name, 60), words(name, 60)), summary=f"{name} summary.")
    lifecycle.expand(session, session.efforts.get("new"), turn=6)
    lifecycle.expand(session, session.efforts.get("old"), turn=2)  # expanded last, referenced earlier
    for name, turn in (("a", 7), ("b", 3), ("c", 5)):
        session.state.turn = turn
        concluded_effort(session, name, exchange("q", "a"), summary=f"{name} summary " + words("x", 30))
    session.state.turn = 7
    open_effort(session, "side", conversation("side", 6))
    open_effort(session, "main", conversation("main", 6))
    yield session
    session.close()


def builder(session: Session, budget: int):
    def build():
        return assemble(session, "SYSTEM", [{"role": "user", "content": "new"}], budget=budget)

    return build


def without_expansions(session: Session) -> int:
    """The context's size once every expansion is collapsed (measured on the view, then put back)."""
    expanded = dict(session.view.expanded)
    session.view.expanded.clear()
    try:
        return builder(session, 10_000)().total
    finally:
        session.view.expanded.update(expanded)


def raw_files(session: Session) -> dict[str, bytes]:
    files = [session.raw_path, *sorted((session.dir / "efforts").glob("*.jsonl"))]
    return {p.name: p.read_bytes() for p in files}


def compactor(session: Session, server=None) -> Compactor:
    return Compactor(session, Settings(), llm_for(server) if server is not None else None)


def step_kinds(steps: list[str]) -> list[str]:
    return [s.split()[0] for s in steps]


# ------------------------------------------------------------------ the order of least harm
async def test_the_least_recently_referenced_expansion_collapses_first_and_compaction_stops_once_it_fits(session):
    total = builder(session, 10_000)().total
    budget = total - 1
    report = await compactor(session).compact(builder(session, budget), budget, turn=8)

    assert report.steps == ["collapsed old"] and report.changes == [("old", "collapsed")]
    assert "new" in session.view.expanded and "old" not in session.view.expanded
    assert set(session.view.summaries) == {"old", "new", "a", "b", "c"}
    assert session.state.ambient_window is None
    assert report.before == total and report.after <= budget
    collapsed = events(session.dir, "effort_collapsed")[-1]
    assert collapsed["effort_id"] == "old" and collapsed["reason"] == "compaction"


async def test_summaries_are_evicted_only_after_every_expansion_collapsed_least_recent_first(session):
    budget = without_expansions(session) - 5  # collapsing both expansions is not enough
    report = await compactor(session).compact(builder(session, budget), budget, turn=8)

    assert report.steps[:3] == ["collapsed old", "collapsed new", "evicted old"]
    assert step_kinds(report.steps) == ["collapsed", "collapsed"] + ["evicted"] * (len(report.steps) - 2)
    assert session.state.ambient_window is None and report.after <= budget
    evicted = events(session.dir, "summary_evicted")
    assert evicted[0]["effort_id"] == "old" and evicted[0]["reason"] == "compaction"


async def test_the_ambient_window_shrinks_by_halves_after_summaries_are_gone(session):
    wc = builder(session, 10_000)()
    budget = wc.total - wc.layers["expanded"] - wc.layers["summaries"] - 100
    before = raw_files(session)
    report = await compactor(session).compact(builder(session, budget), budget, turn=8)

    ambient_steps = [s for s in report.steps if s.startswith("ambient")]
    assert (
        ambient_steps
        and ambient_steps == ["ambient window → 5", "ambient window → 2", "ambient window → 1"][: len(ambient_steps)]
    )
    assert report.steps.index(ambient_steps[0]) > max(i for i, s in enumerate(report.steps) if s.startswith("evicted"))
    assert session.state.ambient_window == int(ambient_steps[-1].rsplit(" ", 1)[1])
    assert session.ambient_window == session.state.ambient_window
    shown = [m["content"] for m in session.ambient_messages() if m["role"] == "user"]
    assert shown == [f"ambient {i} " + words("a", 20) for i in range(10 - session.ambient_window, 10)]
    assert session.view.summaries == {}
    assert raw_files(session) == before  # the ambient log keeps every line


async def test_checkpoints_come_last_backgrounded_effort_first_and_raw_logs_stay_untouched(session, llm_server):
    llm_server.responder = lambda body: text("Checkpoint: the older part, compressed.")
    before = raw_files(session)
    budget = 1_500
    report = await compactor(session, llm_server).compact(builder(session, budget), budget, turn=8)

    kinds = step_kinds(report.steps)
    order = ["collapsed", "evicted", "ambient", "checkpointed"]
    assert [order.index(k) for k in kinds] == sorted(order.index(k) for k in kinds)
    assert set(kinds) == set(order)
    checkpointed = [s.split()[1] for s in report.steps if s.startswith("checkpointed")]
    assert checkpointed[0] == "side" and checkpointed == sorted(checkpointed, key=lambda e: e != "side")
    assert report.after <= budget
    assert raw_files(session) == before
    requests = llm_server.chat_requests()
    assert requests and all(CHECKPOINT_MARK in r["messages"][0]["content"] for r in requests)
    assert "side0q0" in requests[0]["messages"][1]["content"]  # the oldest part goes first
    manifest = {e.id: e.to_dict() for e in load_manifest(session.dir / MANIFEST_FILE)}  # the file and its journal
    for effort_id in set(checkpointed):
        assert manifest[effort_id]["checkpoint"] == "Checkpoint: the older part, compressed."
        assert 0 < manifest[effort_id]["checkpoint_upto"] <= 12 - KEEP_RECENT_MESSAGES


async def test_a_checkpointed_effort_keeps_its_newest_messages_verbatim_in_context(session, llm_server):
    llm_server.responder = lambda body: text("Compressed.")
    budget = 1_500
    await compactor(session, llm_server).compact(builder(session, budget), budget, turn=8)

    side = session.efforts.get("side")
    assert side.checkpoint == "Compressed." and side.checkpoint_upto == 12 - KEEP_RECENT_MESSAGES
    section = next(s for s in builder(session, budget)().sections if s.effort_id == "side")
    contents = [m["content"] for m in section.messages]
    assert contents[1].startswith(f"[Checkpoint summary of the first {side.checkpoint_upto} messages of 'side'")
    assert contents[2:] == [m["content"] for m in session.effort_log("side")[-KEEP_RECENT_MESSAGES:]]


async def test_a_failed_checkpoint_is_a_step_not_a_crash_and_changes_no_effort(session, llm_server):
    llm_server.push(fault(401), fault(401))
    before = raw_files(session)
    with pytest.raises(ContextTooLarge, match="after compaction"):
        await compactor(session, llm_server).compact(builder(session, 1_500), 1_500, turn=8)
    failed = [s for s in events(session.dir, "compaction_complete")[-1]["steps"] if "failed" in s]
    assert [s.split()[2] for s in failed] == ["side", "main"]
    assert session.efforts.get("side").checkpoint is None and session.efforts.get("main").checkpoint is None
    assert raw_files(session) == before


def test_a_shrunk_ambient_window_of_n_holds_exactly_the_last_n_exchanges(session):
    session.state.ambient_window = 2
    shown = session.ambient_messages()
    assert [m["role"] for m in shown] == ["user", "assistant", "user", "assistant"]
    assert shown[0]["content"].startswith("ambient 8 ")


# ------------------------------------------------------------------ what a compaction reports
async def test_compaction_logs_start_and_complete_with_its_number_and_figures(session):
    total = builder(session, 10_000)().total
    budget = total - 1
    report = await compactor(session).compact(builder(session, budget), budget, turn=8)

    [start] = events(session.dir, "compaction_start")
    [complete] = events(session.dir, "compaction_complete")
    assert start["compaction_number"] == 1 and start["tokens"] == report.before and start["budget"] == budget
    assert complete["compaction_number"] == 1 and complete["tokens"] == report.after
    assert complete["steps"] == report.steps and complete["fitted"] is True and complete["full_reload"] is False
    assert report.number == 1 and session.state.compaction_count == 1
    kinds = [e["event"] for e in events(session.dir)]
    assert kinds.index("compaction_start") < kinds.index("effort_collapsed") < kinds.index("compaction_complete")


async def test_the_banner_names_the_compaction_and_its_before_and_after_figures(session):
    budget = builder(session, 10_000)().total - 1
    report = await compactor(session).compact(builder(session, budget), budget, turn=8)
    assert report.banners == [f"AUTO-COMPACTION #1: {report.before:,} → {report.after:,} tokens"]
    assert report.after < report.before
    assert re.fullmatch(r"AUTO-COMPACTION #1: [\d,]+ → [\d,]+ tokens", report.banners[0])


async def test_every_second_compaction_reloads_the_session_from_disk(session):
    c = compactor(session)
    budget = builder(session, 10_000)().total - 1
    generation = session.generation
    first = await c.compact(builder(session, budget), budget, turn=8)
    assert session.generation == generation

    budget = builder(session, 10_000)().total - 1
    second = await c.compact(builder(session, budget), budget, turn=9)
    assert session.generation == generation + 1
    assert (first.number, second.number) == (1, 2)
    assert [e["full_reload"] for e in events(session.dir, "compaction_complete")] == [False, True]
    reloaded = Session.open(session.dir, readonly=True)
    assert reloaded.state.compaction_count == 2 and set(reloaded.view.expanded) == set(session.view.expanded) == set()


async def test_a_message_too_large_for_the_budget_is_refused_before_compacting(session):
    huge = [{"role": "user", "content": words("w", 3_000)}]

    def build():
        return assemble(session, "SYSTEM", huge, budget=1_000)

    with pytest.raises(ContextTooLarge, match="shorten it or raise token_budget"):
        await compactor(session).compact(build, 1_000, turn=8)
    assert events(session.dir, "compaction_start") == [] and session.state.compaction_count == 0
    assert set(session.view.expanded) == {"old", "new"}


async def test_context_too_large_when_nothing_more_can_be_done(session):
    before = raw_files(session)
    with pytest.raises(ContextTooLarge, match="after compaction, over the 1,000-token budget"):
        await compactor(session).compact(builder(session, 1_000), 1_000, turn=8)  # no model: no checkpoints
    complete = events(session.dir, "compaction_complete")[-1]
    assert complete["fitted"] is False and complete["tokens"] > 1_000
    assert set(step_kinds(complete["steps"])) == {"collapsed", "evicted", "ambient"}
    assert session.state.ambient_window == 0
    assert raw_files(session) == before


# ------------------------------------------------------------------ giving space back
def test_relax_gives_the_ambient_window_back_once_there_is_room(session):
    session.state.ambient_window = 2
    c = compactor(session)
    c.relax(builder(session, 100_000), 100_000)
    assert session.state.ambient_window is None and session.ambient_window == 10


def test_relax_keeps_the_shrunk_window_while_the_context_would_be_near_the_budget(session):
    full = builder(session, 10_000)().total  # with the whole window
    session.state.ambient_window = 2
    c = compactor(session)
    c.relax(builder(session, full), full)  # over 80% of the budget: keep it small
    assert session.state.ambient_window == 2
    c.relax(builder(session, int(full / 0.8) + 50), int(full / 0.8) + 50)
    assert session.state.ambient_window is None


def test_relax_does_nothing_when_the_window_was_never_shrunk(session):
    compactor(session).relax(builder(session, 10), 10)
    assert session.state.ambient_window is None


# ------------------------------------------------------------------ through a turn
async def test_a_turn_over_the_budget_compacts_and_shows_the_banner(tmp_path, llm_server):
    session = Session.open(tmp_path / "t")
    concluded_effort(session, "big", conversation("big", 10), summary="Big summary.")
    lifecycle.expand(session, session.efforts.get("big"), turn=0)
    llm_server.push(text("ok"))
    orchestrator = orchestrator_for(session, llm_server, budget=3_000)
    assert orchestrator.working_context([{"role": "user", "content": "hi"}]).total > 3_000
    emitted = Emitted()

    outcome = await orchestrator.run_turn("hi", emitted)

    assert outcome.ok
    compaction = [b for b in emitted.of(Banner) if b.kind == "compaction"]
    assert len(compaction) == 1 and compaction[0].text.startswith("AUTO-COMPACTION #1: ")
    assert compaction[0].text in outcome.banners
    assert ("big", "collapsed") in [(e.effort_id, e.change) for e in emitted.of(EffortChanged)]
    assert outcome.request is not None and outcome.request.total <= 3_000
    # the expansion it removed is said where it happens, as every other collapse is
    collapsed = [b for b in emitted.of(Banner) if b.kind == "effort"]
    assert [b.text for b in collapsed] == ["--- Collapsed effort: big (auto-compaction) ---"]
    assert collapsed[0].text in outcome.banners
    session.close()


# ------------------------------------------------------------------ pinned summaries (issue 41)
async def test_a_pinned_summary_outlasts_the_other_summaries_and_the_ambient_window(session):
    lifecycle.set_pinned(session, session.efforts.get("b"), True, turn=7)  # the stalest summary
    wc = builder(session, 10_000)()
    budget = wc.total - wc.layers["expanded"] - wc.layers["summaries"] + 60  # room for b's summary alone
    report = await compactor(session).compact(builder(session, budget), budget, turn=8)

    assert report.after <= budget
    assert "b" in session.view.summaries and set(session.view.summaries) == {"b"}
    assert "evicted b" not in report.steps
    assert not any("pinned effort" in b for b in report.banners)


async def test_compaction_drops_a_pinned_summary_only_as_its_last_step_and_says_so(session, llm_server):
    llm_server.responder = lambda body: text("Checkpoint.")
    lifecycle.set_pinned(session, session.efforts.get("b"), True, turn=7)
    wc = builder(session, 10_000)()
    budget = wc.layers["system"] + wc.layers.get("tools", 0) + 150  # nothing fits but a bare context
    with pytest.raises(ContextTooLarge):
        await compactor(session, llm_server).compact(builder(session, budget), budget, turn=8)
    evicted = [e["effort_id"] for e in events(session.dir, "summary_evicted")]
    assert evicted[-1] == "b" and evicted.count("b") == 1  # after every other summary
    assert "b" not in session.view.summaries
