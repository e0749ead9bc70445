"""After a turn, for a model that does not manage efforts: fold old ambient chat, propose efforts.

The engine calls :func:`assist` after each turn (under the writer lock). It reads what
:mod:`.effort_assist` needs from the session and the search index (ambient lines by
number, through the index's seek), lands each fold as a concluded effort with an
extracted summary (:func:`.lifecycle.land_imported`: atomic, findable at once), and
returns the proposals (open / switch) for the controller to offer or carry out.
"""

from __future__ import annotations

from collections.abc import Callable

from ..efforts import lifecycle
from ..efforts.proposals import (
    FOLD_READ,
    MANAGED_WINDOW,
    RECENT,
    Exchange,
    Proposal,
    exchanges_of,
    propose_folds,
    propose_open,
    propose_switch,
)
from ..efforts.summaries import offline_summary
from ..search import DerivedError, EffortIndex
from ..session.numbered_lines import read_log_lines
from ..session.session import Session
from ..session.withdrawn import window_lines, withdrawn_lines
from .events import Banner, EffortChanged, TurnEvent

Emit = Callable[[TurnEvent], None]
READ_CHUNK = 200  # lines the index reads at a time


def manages_efforts(session: Session, tools_enabled: bool) -> bool:
    """Whether the model manages efforts itself: it has tools and called an effort tool lately (a new
    session gives it :data:`MANAGED_WINDOW` turns to show it)."""
    return tools_enabled and session.state.turn - session.state.last_effort_tool_turn <= MANAGED_WINDOW


def _ambient_records(index: EffortIndex, session: Session, first: int, last: int) -> list[tuple[int, dict]]:
    out: list[tuple[int, dict]] = []
    for start in range(max(1, first), last + 1, READ_CHUNK):
        end = min(last, start + READ_CHUNK - 1)
        rows = index.read_ambient_lines(session.raw_path, start, end)
        gone = withdrawn_lines(session, "ambient", start, end)
        out += [
            (line, record) for line, record in rows if isinstance(record, dict) and line not in gone
        ]  # a withdrawn exchange is neither folded nor read for a topic
    return out


def _ambient_exchanges(index: EffortIndex, session: Session, first: int, last: int) -> list[Exchange]:
    return exchanges_of(_ambient_records(index, session, first, last))


async def assist(session: Session, index: EffortIndex, *, tools_enabled: bool, emit: Emit) -> list[Proposal]:
    """Fold what left the window, then the proposal for now (empty while the model manages efforts)."""
    if manages_efforts(session, tools_enabled):
        return []
    total = index.ambient_line_count()
    window_starts = min(window_lines(session), default=total + 1)  # the window's first file line
    folded_upto = session.efforts.folded_upto()  # (the folded efforts' sources: a fold lands once)
    first = max(folded_upto + 1, total - 2 * FOLD_READ + 1)
    # the topics are read over the window too (where the last one goes on); only those that ended
    # before it are folded
    for fold in propose_folds(_ambient_exchanges(index, session, first, total), window_starts):
        _fold(session, index, fold, emit)
    active = session.efforts.active
    if active is not None:
        first = max(1, active.messages - 2 * RECENT)
        tail = read_log_lines(session, active.id, first, active.messages)
        numbered = [
            (m["line"], {"role": m["role"], "content": m["content"]}) for m in tail.messages if not m.get("withdrawn")
        ]
        switch = propose_switch(active.id, exchanges_of(numbered))
        return [switch] if switch else []
    recent_from = max(folded_upto + 1, total - 2 * RECENT + 1)
    opening = propose_open(_ambient_exchanges(index, session, recent_from, total))
    return [opening] if opening else []


def _fold(session: Session, index: EffortIndex, fold: Proposal, emit: Emit) -> None:
    """Ambient lines ``fold.lines`` become a concluded effort (their copy; raw.jsonl is never rewritten)."""
    assert fold.lines is not None
    first, last = fold.lines
    messages = lifecycle.chat_copies(r for _line, r in _ambient_records(index, session, first, last))
    if not messages:
        return
    summary = offline_summary(messages, counter=session.counter, title=fold.name.replace("-", " "))
    source = {"folded_from": "ambient", "lines": [first, last]}
    effort = lifecycle.land_imported(session, fold.name.replace("-", " "), messages, summary, source)
    try:
        index.sync_efforts()  # (land_imported saved it: its row is in the list)
        index.sync_effort_log(effort.id, session.effort_path(effort.id))
    except DerivedError:
        pass  # the index is derived data: the next sync catches up
    text = f"--- Folded ambient chat (lines {first}-{last}) into effort: {effort.id} ---"
    emit(Banner(turn=session.state.turn, text=text, kind="effort"))
    emit(EffortChanged(turn=session.state.turn, effort_id=effort.id, change="concluded"))
