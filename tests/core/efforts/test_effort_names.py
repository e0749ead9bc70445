"""Names a person would call the same effort (core/efforts.name_key), and the guard that keeps the
model's open_effort from making a second effort of a name already taken (issue 30: the model opened
"vegetable garden" while vegetable-garden was open and got vegetable-garden-2)."""

from __future__ import annotations

import pytest

from ccm_tui.core.efforts import operations as effort_ops
from ccm_tui.core.efforts.names import name_key
from ccm_tui.core.efforts.operations import ActionContext, named_effort
from ccm_tui.core.efforts.states import Action, ActionRefused
from ccm_tui.core.session.session import Session
from ccm_tui.core.turn import tools as toolbox
from tests.helpers.sessionkit import concluded_effort, events, exchange, open_effort


@pytest.fixture
def session(tmp_path):
    session = Session.open(tmp_path / "s")
    yield session
    session.close()


def context(session: Session, source: str = "model") -> ActionContext:
    return ActionContext(session=session, llm=None, turn=session.state.turn + 1, source=source)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("vegetable-garden", "vegetable garden"),
        ("Vegetable Garden", "vegetable_garden"),
        ("vegetable garden", "vegetable gardens"),
        ("the vegetable garden", "Vegetable-Garden effort"),
        ("db queries", "DB query"),
        ("tax boxes", "tax box"),
        ("  auth   bug ", "AUTH-BUG"),
        ("Café menu", "cafe menu"),
    ],
)
def test_names_a_person_would_call_the_same(a, b):
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("vegetable garden", "flower garden"),
        ("garden", "garden shed"),
        ("auth bug", "auth bug 2"),
        ("python 3", "python"),
        ("status", "statu"),  # "-us" is not a plural
        ("glass", "glas"),
    ],
)
def test_names_that_are_not_the_same(a, b):
    assert name_key(a) != name_key(b)


def test_named_effort_finds_open_and_concluded_efforts_and_prefers_an_open_one(session):
    concluded_effort(session, "Vegetable garden", exchange("beds?", "raised"), summary="Raised beds, tomatoes.")
    assert named_effort(session, "vegetable gardens").id == "vegetable-garden"
    copy = open_effort(session, "vegetable garden")  # a copy the user asked for ("open anyway")
    assert copy.id == "vegetable-garden-2"
    assert named_effort(session, "the vegetable garden").id == "vegetable-garden-2"
    assert named_effort(session, "vegetable-garden-2") is copy
    assert named_effort(session, "flower garden") is None and named_effort(session, "!!") is None


async def test_the_model_opening_the_active_effort_by_another_spelling_opens_nothing(session):
    open_effort(session, "vegetable-garden", exchange("tomatoes?", "yes"))
    ctx = context(session)
    outcome = await toolbox.execute(ctx, "open_effort", {"name": "vegetable garden"})
    assert outcome.ok and outcome.result["status"] == "already_active"
    assert outcome.result["effort_id"] == "vegetable-garden" and "nothing new was opened" in outcome.result["note"]
    assert ctx.route == "vegetable-garden" and not ctx.banners and not ctx.changes
    assert [e.id for e in session.efforts] == ["vegetable-garden"]
    assert not events(session.dir, "effort_opened")[1:]


async def test_the_model_opening_a_backgrounded_effort_switches_to_it(session):
    open_effort(session, "Vegetable garden")
    open_effort(session, "tax return")
    ctx = context(session)
    outcome = await toolbox.execute(ctx, "open_effort", {"name": "Vegetable_Gardens"})
    assert outcome.result["status"] == "switched" and outcome.result["previous"] == "tax-return"
    assert "already open" in outcome.result["note"]
    assert session.efforts.active.id == "vegetable-garden" and ctx.route == "vegetable-garden"
    assert ctx.banners == ["--- Switched to effort: vegetable-garden ---"]
    assert sorted(e.id for e in session.efforts) == ["tax-return", "vegetable-garden"]


async def test_the_model_opening_a_concluded_effort_gets_its_summary_to_offer_reopening(session):
    concluded_effort(session, "vegetable garden", exchange("beds?", "raised"), summary="Raised beds, tomatoes.")
    session.view.summaries.pop("vegetable-garden")  # evicted: a mention brings it back
    ctx = context(session)
    outcome = await toolbox.execute(ctx, "open_effort", {"name": "Vegetable Garden"})
    assert outcome.ok and outcome.result["status"] == "exists_concluded"
    assert outcome.result["summary"] == "Raised beds, tomatoes." and "reopen_effort" in outcome.result["note"]
    assert ctx.route is None and not ctx.banners and "vegetable-garden" in ctx.touched
    effort = session.efforts.get("vegetable-garden")
    assert effort.is_concluded and [e.id for e in session.efforts] == ["vegetable-garden"]


async def test_other_tools_take_an_effort_by_its_name_too(session):
    concluded_effort(session, "vegetable garden", summary="Raised beds.")
    outcome = await toolbox.execute(context(session), "reopen_effort", {"id": "Vegetable Garden"})
    assert outcome.ok and outcome.result["effort_id"] == "vegetable-garden"
    missing = await toolbox.execute(context(session), "switch_effort", {"id": "flower garden"})
    assert "no effort with id 'flower garden'" in missing.result["error"]


async def test_the_user_may_open_a_second_effort_of_a_name_and_slash_open_reuses(session):
    open_effort(session, "vegetable garden")
    anyway = await effort_ops.perform(context(session, "user"), Action.OPEN, "vegetable garden")
    assert anyway["effort_id"] == "vegetable-garden-2"  # Ctrl+O's "open a new effort anyway"
    slash = await effort_ops.perform(context(session, "user"), Action.OPEN, "Vegetable-Garden-2", reuse=True)
    assert slash["status"] == "already_active"
    concluded_effort(session, "pond")
    with pytest.raises(ActionRefused, match=r"concluded effort pond: reopen it .*/reopen pond"):
        await effort_ops.perform(context(session, "user"), Action.OPEN, "ponds", reuse=True)
