"""What each effort action does, for the model's tools and the user's actions alike.

An operation validates against the state table (through :mod:`.lifecycle`),
changes the effort there, and records what the turn must report: a banner, the
effort change, the route of the exchange, the efforts it referenced. The
model's tools (:mod:`.tools`) parse their arguments and call these; the session
controller's typed actions call :func:`perform`. So the user and the model can
never disagree about what an action does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import EffortNotFound
from ..manifest.effort import Effort
from ..models.interface import ChatModel
from ..models.provider_errors import LLMError
from ..search import DerivedError
from ..session.numbered_lines import file_records
from ..session.session import Session
from ..session.withdrawn import withdrawn_lines
from ..storage.durable import StoreError
from . import lifecycle
from .names import name_key, same_name_ids
from .states import EDIT_ACTIONS, Action, ActionRefused
from .summaries import offline_summary, summarize_messages
from .working_context import effort_context_tokens

Topic = tuple[str, int, int]  # a topic's lines in a log: (effort id or "ambient", first line, last line)
AMBIENT = "ambient"
MAX_OPENED_PER_TURN = 8  # efforts the model may open in one turn (1,000 would fill the budget)
NAMED_OPEN = 5  # open efforts a refusal names (then "and N more")


@dataclass
class ActionContext:
    """What an action (a tool call or a user action) may touch, and what it reports back to the turn."""

    session: Session
    llm: ChatModel | None
    turn: int
    pending: list[dict[str, Any]] = field(default_factory=list)  # this turn's messages, not yet logged
    summary_max_tokens: int = 150
    search: Callable[[str, int], list[Any]] | None = None
    read_ambient: Callable[[int, int], list[tuple[int, Any]]] | None = None  # lines of raw.jsonl (indexed)
    route: str | None = None  # "ambient" or an effort id; None = default routing
    banners: list[str] = field(default_factory=list)
    changes: list[tuple[str, str]] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)  # efforts an action referenced (salience)
    source: str = "model"  # "model" or "user" (the user's actions)
    message_cap: int | None = None  # the working context's per-message cap (for token figures)
    room: Callable[[], int] | None = None  # tokens an expansion may still add under the budget (None: unchecked)

    def banner(self, text: str) -> None:
        self.banners.append(f"--- {text} ---")

    def changed(self, effort_id: str, change: str) -> None:
        self.changes.append((effort_id, change))
        self.touched.add(effort_id)


def find_effort(ctx: ActionContext, effort_id: str | None, *, default_active: bool = False) -> Effort:
    """The effort ``effort_id`` names: its id, else the one effort its name means (``"vegetable
    garden"`` for ``vegetable-garden``, see :func:`named_effort`)."""
    efforts = ctx.session.efforts
    if not effort_id:
        if default_active and efforts.active is not None:
            return efforts.active
        raise ActionRefused("no effort id given and no effort is active")
    effort = efforts.get(effort_id.strip()) or named_effort(ctx.session, effort_id)
    if effort is None:
        opened = sorted(e.id for e in efforts.open_efforts())
        known = ", ".join(opened[:NAMED_OPEN]) or "none open"
        known += f" and {len(opened) - NAMED_OPEN} more" if len(opened) > NAMED_OPEN else ""
        shown = effort_id if len(effort_id) <= 80 else effort_id[:79] + "…"
        raise EffortNotFound(f"no effort with id '{shown}' (open: {known}; use search_efforts to find others)")
    return effort


def named_effort(session: Session, name: str) -> Effort | None:
    """The effort a person would take ``name`` to mean (:func:`~.efforts.name_key`: case, spaces,
    ``-``/``_``, a trivial plural do not count), or None. Several: an open one before a concluded
    one (the active first), then the latest. Looks at the open efforts and at the few ids the name
    could have, never at every effort."""
    key = name_key(name)
    if not key:
        return None
    found = {e.id: e for e in session.efforts.open_efforts() if key in (name_key(e.name or e.id), name_key(e.id))}
    for effort_id in sorted(session.efforts.existing(same_name_ids(name)) - found.keys()):
        effort = session.efforts.get(effort_id)
        if effort is not None and key in (name_key(effort.name or effort.id), name_key(effort.id)):
            found[effort.id] = effort
    if not found:
        return None
    return max(found.values(), key=lambda e: (e.is_open, e.active, e.concluded_at or "", e.created))


def _existing_instead(ctx: ActionContext, effort: Effort, name: str) -> dict[str, Any]:
    """The model asked to open ``name`` and ``effort`` already is that topic: no copy. An open one is
    made the active one; a concluded one is reported with its summary, for the model to offer
    reopening it (nothing changes until the user says so)."""
    if effort.is_concluded and ctx.source == "user":
        raise ActionRefused(
            f"'{name}' is the concluded effort {effort.id}: reopen it to continue it (/reopen {effort.id}), "
            "or give a new effort another name"
        )
    if effort.is_concluded:
        ctx.touched.add(effort.id)  # (its summary comes back into working memory)
        return {
            "status": "exists_concluded",
            "effort_id": effort.id,
            "summary": effort.summary,
            "note": (
                f"nothing was opened: '{name}' is the concluded effort '{effort.id}'. Ask the user whether to "
                f"reopen it (reopen_effort) or to start a separate effort (open_effort with a different name)"
            ),
        }
    if effort.active:
        if ctx.route != "ambient":
            ctx.route = effort.id
        ctx.touched.add(effort.id)
        return {
            "status": "already_active",
            "effort_id": effort.id,
            "note": f"'{effort.id}' is already the active effort: nothing new was opened",
        }
    result = switch(ctx, effort)
    result["note"] = f"'{effort.id}' was already open: it is now the active effort (nothing new was opened)"
    return result


def _topic_lines(session: Session, topic: Topic) -> list[dict[str, Any]]:
    """The chat of lines ``topic[1]..topic[2]`` of effort ``topic[0]``'s log, withdrawn exchanges left out."""
    effort_id, first, last = topic
    records = file_records(session.effort_path(effort_id), first, last)
    gone = withdrawn_lines(session, effort_id, first, last)
    return lifecycle.chat_copies(r for n, r in records if n not in gone)


def _ambient_topic(ctx: ActionContext, topic: Topic) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ambient chat of a topic proposed from it (lines ``topic[1]``.. through what was said after
    the offer), as the new effort's first messages, and its source: folded from the ambient chat, so
    those lines leave the ambient context (found in the effort, not twice). Lines folded already (a
    second yes to one offer) are not taken again."""
    session = ctx.session
    first, last = max(topic[1], session.efforts.folded_upto() + 1), max(topic[2], session.state.ambient_lines)
    if first > last:
        return [], {}
    gone = withdrawn_lines(session, AMBIENT, first, last)
    carried = lifecycle.chat_copies(r for n, r in file_records(session.raw_path, first, last) if n not in gone)
    return carried, ({"folded_from": AMBIENT, "lines": [first, last]} if carried else {})


def open_effort(
    ctx: ActionContext, name: str, topic: Topic | None = None, *, reuse: bool | None = None
) -> dict[str, Any]:
    """``topic``: the new effort starts with a copy of those lines of the effort it moved on from.

    ``reuse`` (always for the model; ``/open`` for the user): a name an effort already has opens no
    second one (``vegetable-garden-2`` beside ``vegetable-garden``), see :func:`_existing_instead`.
    The user's "open a new effort anyway" passes False."""
    if ctx.source == "model" if reuse is None else reuse:
        existing = named_effort(ctx.session, name)
        if existing is not None:
            return _existing_instead(ctx, existing, name)
    opened = sum(1 for _, change in ctx.changes if change == "opened")
    if ctx.source == "model" and opened >= MAX_OPENED_PER_TURN:
        raise ActionRefused(
            f"this turn already opened {opened} efforts (at most {MAX_OPENED_PER_TURN} per turn): "
            "work in the ones you opened, or open more in a later turn"
        )
    carried: list[dict[str, Any]] = []
    source: dict[str, Any] = {}
    moved_from = ctx.session.efforts.get(topic[0]) if topic is not None else None
    if topic is not None and topic[0] == AMBIENT:
        carried, source = _ambient_topic(ctx, topic)
    elif topic is not None and moved_from is not None and moved_from.is_concluded:  # (its conclusion may have failed)
        topic = (topic[0], topic[1], max(topic[2], moved_from.messages))  # and through what came after the offer
        carried = _topic_lines(ctx.session, topic)
        source = {"moved_from": topic[0], "lines": list(topic[1:])}
    effort = lifecycle.open_effort(ctx.session, name, turn=ctx.turn)
    ctx.route = effort.id
    ctx.banner(f"Opened effort: {effort.id}")
    if carried and topic is not None:
        lifecycle.carry_over(ctx.session, effort, carried, source)
        where = "the ambient chat" if topic[0] == AMBIENT else topic[0]
        ctx.banner(f"{len(carried)} messages on this topic moved from {where} to {effort.id}")
    ctx.changed(effort.id, "opened")
    return {"status": "opened", "effort_id": effort.id, "active": True}


async def conclude(ctx: ActionContext, effort: Effort, topic: Topic | None = None) -> dict[str, Any]:
    """``topic``: a new topic began in this effort at its line ``topic[1]``: the summary is of what came
    before (the effort the topic opens starts with those lines, see :func:`open_effort`)."""
    session = ctx.session
    lifecycle.require(session, effort, Action.CONCLUDE)  # before the summary call, not after it
    if ctx.llm is None and ctx.source != "user":
        raise ActionRefused("no model is configured to write the summary")
    log = list(session.effort_log(effort.id))
    if topic is not None and topic[0] == effort.id and topic[1] > 1:
        log = _topic_lines(session, (effort.id, 1, topic[1] - 1)) or log
    # The concluding exchange belongs to the effort: summarize it too (unless it is an aside).
    if ctx.route in (None, effort.id) and (effort.active or ctx.route == effort.id):
        log += [m for m in ctx.pending if m.get("role") in ("user", "assistant")]
    summary = await _summary(ctx, effort, log)
    was_active = effort.active
    lifecycle.conclude(session, effort, summary, turn=ctx.turn)
    if ctx.route is None and was_active:
        ctx.route = effort.id
    ctx.banner(f"Concluded effort: {effort.id}")
    ctx.changed(effort.id, "concluded")
    return {"status": "concluded", "effort_id": effort.id, "summary": summary}


async def _summary(ctx: ActionContext, effort: Effort, log: list[dict[str, Any]]) -> str:
    """The summary model's summary of the whole log. When the user concludes by hand and the summary
    model is missing or fails, an extractive summary is written instead (said in a banner): the
    conclusion the user asked for never fails for want of a model. The model's own call gets the error."""
    title, counter, cap = effort.name or effort.id, ctx.session.counter, ctx.summary_max_tokens
    if ctx.llm is not None:
        try:
            return await summarize_messages(ctx.llm, log, counter=counter, max_tokens=cap, title=title)
        except LLMError as exc:
            if ctx.source != "user":
                raise
            why = f"the summary model failed ({exc})"
    else:
        why = "no summary model is configured"
    ctx.banners.append(f"{why}: a summary was extracted from the log instead")
    return offline_summary(log, counter=counter, max_tokens=cap, title=title)


class TooLarge(ActionRefused):
    """An expansion that cannot fit in the budget beside what must stay in the context, with a twentieth
    of the budget kept for the messages to come: refused (it would only be collapsed again by the next
    auto-compaction, which collapses expansions first), with where a passage may be read instead. ``details``: effort_id, tokens, room, log_lines, around_line (the best hit for the
    turn's message, or None)."""

    cause = "budget"

    def __init__(self, effort: Effort, tokens: int, room: int, around: int | None) -> None:
        self.details: dict[str, Any] = {
            "effort_id": effort.id,
            "tokens": tokens,
            "room": max(0, room),
            "log_lines": effort.messages,
            "around_line": around,
        }
        where = f" (the best match for this message is around line {around})" if around else ""
        super().__init__(
            f"{effort.id} is {tokens:,} tokens; the budget leaves {max(0, room):,} — search it or read a "
            f"passage of its log instead{where}"
        )


def _best_line(ctx: ActionContext, effort: Effort) -> int | None:
    """The line of ``effort``'s log that best answers this turn's message (a search of it), if any."""
    query = next((str(m.get("content") or "") for m in reversed(ctx.pending) if m.get("role") == "user"), "")
    if ctx.search is None or not query.strip():
        return None
    try:
        hits = ctx.search(query, 8)
    except (DerivedError, StoreError):
        return None
    lines = next((h.lines for h in hits if h.source == "effort" and h.id == effort.id and h.lines), None)
    return (lines[0] + lines[1]) // 2 if lines else None


def _require_room(ctx: ActionContext, effort: Effort) -> None:
    """Refuse (:class:`TooLarge`) an expansion larger than what the budget leaves."""
    session = ctx.session
    if ctx.room is None or effort.id in session.view.expanded or not effort.is_concluded:
        return
    tokens = effort_context_tokens(session, effort, ctx.message_cap)
    room = ctx.room()
    if tokens > room:
        session.forget_log(effort.id)  # read to be counted; it does not enter the context
        raise TooLarge(effort, tokens, room, _best_line(ctx, effort))


def expand(ctx: ActionContext, effort: Effort) -> dict[str, Any]:
    """Load a concluded effort's log into the context; refused (:class:`TooLarge`) when it cannot fit."""
    _require_room(ctx, effort)
    expansion = lifecycle.expand(ctx.session, effort, turn=ctx.turn, message_cap=ctx.message_cap)
    if not expansion.already:
        ctx.banner(f"Expanded effort: {effort.id} ({expansion.tokens:,} tokens loaded)")  # (1,234: DESIGN's shape)
    ctx.changed(effort.id, "expanded")
    return {
        "status": "already expanded" if expansion.already else "expanded",
        "effort_id": effort.id,
        "tokens": expansion.tokens,
    }


def collapse(ctx: ActionContext, effort: Effort) -> dict[str, Any]:
    lifecycle.collapse(ctx.session, effort.id)
    ctx.banner(f"Collapsed effort: {effort.id}")
    ctx.changed(effort.id, "collapsed")
    return {"status": "collapsed", "effort_id": effort.id}


def switch(ctx: ActionContext, effort: Effort) -> dict[str, Any]:
    previous = lifecycle.switch_to(ctx.session, effort)
    if ctx.route != "ambient":
        ctx.route = effort.id
    ctx.banner(f"Switched to effort: {effort.id}")
    ctx.changed(effort.id, "switched")
    return {"status": "switched", "effort_id": effort.id, "previous": previous.id if previous else None}


def reopen(ctx: ActionContext, effort: Effort) -> dict[str, Any]:
    prior = lifecycle.reopen(ctx.session, effort, turn=ctx.turn)
    if ctx.route != "ambient":
        ctx.route = effort.id
    ctx.banner(f"Reopened effort: {effort.id}")
    ctx.changed(effort.id, "reopened")
    return {"status": "reopened", "effort_id": effort.id, "prior_summary": prior}


_ON_EFFORT: dict[Action, Callable[[ActionContext, Effort], dict[str, Any]]] = {
    Action.EXPAND: expand,
    Action.COLLAPSE: collapse,
    Action.SWITCH: switch,
    Action.REOPEN: reopen,
}


async def edit(ctx: ActionContext, action: Action, effort: Effort, value: str) -> dict[str, Any]:
    """One of the user's edits (:data:`.states.EDITS`): ``value`` is the new name, the new summary,
    or (merge) the effort that takes ``effort``'s lines."""
    session = ctx.session
    lifecycle.require(session, effort, action)
    if action is Action.RENAME:
        previous = lifecycle.rename(session, effort, value)
        ctx.changed(effort.id, "renamed")
        ctx.banner(f"Effort {effort.id} is now called “{effort.name}”")
        return {"id": effort.id, "name": effort.name, "previous": previous}
    if action is Action.SUMMARY:
        replaced = lifecycle.edit_summary(session, effort, value, turn=ctx.turn)
        ctx.changed(effort.id, "summary edited")
        ctx.banner(f"Summary of {effort.id} edited (the model's is kept in the event log)")
        return {"id": effort.id, "summary": effort.summary, "replaced": replaced}
    if action in (Action.PIN, Action.UNPIN):
        changed = lifecycle.set_pinned(session, effort, action is Action.PIN, turn=ctx.turn)
        if changed:
            ctx.changed(effort.id, "pinned" if effort.pinned else "unpinned")
            ctx.banner(f"Effort {effort.id} {'pinned: its summary stays in context' if effort.pinned else 'unpinned'}")
        return {"id": effort.id, "pinned": effort.pinned, "changed": changed}
    assert action is Action.MERGE
    into = find_effort(ctx, value)
    summary = None
    if into.is_concluded and into.id != effort.id and not effort.merged_into:  # re-made from both logs
        both = list(session.effort_log(into.id)) + lifecycle.merge_lines(session, effort)
        summary = await _summary(ctx, into, both)
    merged = lifecycle.merge(session, effort, into, summary, turn=ctx.turn)
    ctx.changed(effort.id, "merged")
    ctx.changed(into.id, "merged into")
    ctx.banner(f"Effort {effort.id} merged into {into.id} ({merged} lines)")
    return {"id": effort.id, "into": into.id, "lines": merged}


async def perform(
    ctx: ActionContext,
    action: Action,
    target: str,
    topic: Topic | None = None,
    *,
    reuse: bool = False,
    value: str = "",
) -> dict[str, Any]:
    """A user's action: ``target`` is the new effort's name for ``open``, else the effort id (``topic``,
    ``reuse``: see :class:`~.run_state.EffortAction`; ``value``: an edit's new name, summary or the
    effort merged into). Raises :class:`ActionRefused` (plain words) when it is not valid now."""
    if action is Action.OPEN:
        if not target.strip():
            raise ActionRefused("an effort needs a name")
        return open_effort(ctx, target, topic, reuse=reuse)
    effort = find_effort(ctx, target, default_active=action is Action.CONCLUDE)
    if action is Action.CONCLUDE:
        return await conclude(ctx, effort, topic)
    if action in EDIT_ACTIONS:
        return await edit(ctx, action, effort, value)
    return _ON_EFFORT[action](ctx, effort)
