"""Read-only views of a session for the UI and the commands: typed, frozen, never live objects.

The sidebar, the effort menu, the detail panel and ``status`` all read these,
so they agree on what state an effort is in. :meth:`EffortView.as_json` is the
``status --json`` contract (keys unchanged since the first release).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..efforts.states import Action, EffortState, edit_actions, effort_state, valid_actions

if TYPE_CHECKING:  # the views are read without a session (the UI's start-up imports them)
    from ..manifest.effort import Effort
    from ..session.session import Session
    from ..turn.events import ContextFigures


@dataclass(frozen=True)
class EffortView:
    id: str
    name: str
    state: EffortState
    summary: str | None = None
    raw_tokens: int = 0
    messages: int = 0
    turns_since_reference: int | None = None  # expanded efforts: turns without a reference
    reopen_count: int = 0
    created: str = ""
    concluded_at: str | None = None
    source: dict[str, Any] | None = None  # provenance of an imported effort
    in_memory: bool = True  # open, or its summary is in working memory
    # open and expanded efforts: the tokens the effort takes in the working context — the one count the
    # meter's layer, the expansion banner, the sidebar, /status and ccm-tui status all show
    context_tokens: int | None = None
    pinned: bool = False  # the user pinned it: its summary stays in working memory
    summary_by: str | None = None  # "user": the summary is the user's edit
    merged_into: str | None = None  # merged into that effort: listed only by status --json

    @property
    def edits(self) -> tuple[Action, ...]:
        """The user's edits that apply to it (rename, summary, pin or unpin, merge)."""
        return edit_actions(self.state, self.pinned)

    @property
    def status(self) -> str:
        """The manifest status: ``open`` or ``concluded``."""
        return "open" if self.state.is_open else "concluded"

    @property
    def active(self) -> bool:
        return self.state is EffortState.ACTIVE

    @property
    def expanded(self) -> bool:
        return self.state is EffortState.EXPANDED

    @property
    def evicted(self) -> bool:
        return self.state is EffortState.EVICTED

    @property
    def actions(self) -> tuple[Action, ...]:
        """The actions valid for this effort in its state (the core's one table)."""
        return valid_actions(self.state)

    @property
    def title(self) -> str:
        """The human name, or the id when the effort has none."""
        return self.name or self.id

    def turns_left(self, decay_threshold: int) -> int:
        """Turns before an expanded effort collapses back to its summary."""
        return max(0, decay_threshold - (self.turns_since_reference or 0))

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "active": self.active,
            "expanded": self.expanded,
            "turns_since_reference": self.turns_since_reference,
            "in_memory": self.in_memory,
            "evicted": not self.in_memory,
            "summary": self.summary,
            "raw_file": f"efforts/{self.id}.jsonl",
            "raw_tokens": self.raw_tokens,
            "messages": self.messages,
            "reopen_count": self.reopen_count,
            "created": self.created,
            "concluded_at": self.concluded_at,
            "context_tokens": self.context_tokens,
        }
        if self.source:
            data["source"] = self.source
        if self.pinned:
            data["pinned"] = True
        if self.summary_by:
            data["summary_by"] = self.summary_by
        if self.merged_into:
            data["merged_into"] = self.merged_into
        return data


RECENT_CONCLUDED = 30  # concluded efforts a status lists beside the ones in use


@dataclass(frozen=True)
class SessionStatus:
    """The efforts in use (open, expanded, summaries in working memory) and the newest concluded
    ones — never all of them: ``total`` and ``concluded`` count those. ``complete``: every effort
    is listed (``status --json``, small sessions)."""

    turn: int
    efforts: tuple[EffortView, ...] = field(default_factory=tuple)
    total: int = -1  # every effort in the session (-1: as many as listed)
    concluded: int = -1  # every concluded effort (-1: as many as listed)

    @property
    def effort_count(self) -> int:
        return self.total if self.total >= 0 else len(self.efforts)

    @property
    def concluded_count(self) -> int:
        if self.concluded >= 0:
            return self.concluded
        return sum(1 for e in self.efforts if not e.state.is_open)

    @property
    def unlisted(self) -> int:
        """Concluded efforts not in ``efforts`` (page through them with the session's list)."""
        return max(0, self.concluded_count - sum(1 for e in self.efforts if not e.state.is_open))

    @property
    def complete(self) -> bool:
        return len(self.efforts) == self.effort_count

    @property
    def active(self) -> EffortView | None:
        return next((e for e in self.efforts if e.active), None)

    def get(self, effort_id: str) -> EffortView | None:
        return next((e for e in self.efforts if e.id == effort_id), None)

    def as_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "efforts": [e.as_json() for e in self.efforts]}


def context_tokens(session: Session, effort: Effort, state: EffortState, message_cap: int | None) -> int | None:
    """What an open or expanded effort takes in the working context (None for the others), counted
    as the context counts it; without ``message_cap``, the cap of the budget the session last used."""
    if not (state.is_open or state is EffortState.EXPANDED):
        return None
    from ..efforts.working_context import effort_context_tokens  # (the views are read at start-up)
    from ..efforts.working_context import message_cap as cap_of

    if message_cap is None and session.state.budget:
        message_cap = cap_of(None, session.state.budget)
    return effort_context_tokens(session, effort, message_cap)


def effort_view(
    session: Session, effort: Effort, message_cap: int | None = None, *, in_context: bool = True
) -> EffortView:
    """How ``effort`` is shown; ``in_context`` False leaves out what it takes in the working context
    (reading an open effort's log to count it: a list of efforts for another agent does not need it)."""
    state = effort_state(session, effort)
    return EffortView(
        id=effort.id,
        name=effort.name,
        state=state,
        summary=effort.summary,
        raw_tokens=effort.raw_tokens,
        messages=effort.messages,
        turns_since_reference=session.view.expanded.get(effort.id),
        reopen_count=effort.reopen_count,
        created=effort.created,
        concluded_at=effort.concluded_at,
        source=effort.source,
        in_memory=not session.is_evicted(effort),
        context_tokens=context_tokens(session, effort, state, message_cap) if in_context else None,
        pinned=effort.pinned,
        summary_by=effort.summary_by,
        merged_into=effort.merged_into,
    )


def efforts_in_use(session: Session) -> list[Effort]:
    """Open efforts, expanded ones and concluded ones whose summary is in working memory."""
    seen: dict[str, Effort] = {e.id: e for e in session.efforts.open_efforts()}
    for effort_id in [*session.view.expanded, *session.view.summaries]:
        if effort_id not in seen and (effort := session.efforts.get(effort_id)) is not None:
            seen[effort_id] = effort
    return list(seen.values())


def session_status(session: Session, recent: int = RECENT_CONCLUDED, message_cap: int | None = None) -> SessionStatus:
    """The efforts in use and the ``recent`` latest concluded, with the counts of all (cheap at
    any size: nothing here reads every effort)."""
    listed = efforts_in_use(session)
    ids = {e.id for e in listed}
    listed += [e for e in session.efforts.concluded_page(0, recent + len(ids)) if e.id not in ids][:recent]
    listed = [e for e in listed if not e.merged_into]  # a merged effort lives on in the one it went into
    return SessionStatus(
        turn=session.state.turn,
        efforts=tuple(effort_view(session, e, message_cap) for e in listed),
        total=len(session.efforts),
        concluded=session.efforts.concluded_count,
    )


def full_status(session: Session, message_cap: int | None = None) -> SessionStatus:
    """Every effort in manifest order (``status --json``: reads the whole catalog)."""
    efforts = tuple(effort_view(session, e, message_cap) for e in session.efforts)
    return SessionStatus(turn=session.state.turn, efforts=efforts, total=len(efforts))


def concluded_views(session: Session, offset: int, limit: int) -> list[EffortView]:
    """A page of concluded efforts, the latest conclusion first (the sidebar's long list)."""
    return [effort_view(session, e) for e in session.efforts.concluded_page(offset, limit) if not e.merged_into]


_GROUP = {
    EffortState.ACTIVE: 0,
    EffortState.BACKGROUND: 0,
    EffortState.EXPANDED: 1,
    EffortState.CONCLUDED: 2,
    EffortState.EVICTED: 3,
}


def listing_order(efforts: Iterable[EffortView]) -> tuple[EffortView, ...]:
    """``efforts`` in the one order every list shows them — the sidebar, the command palette's effort
    entries, ``ccm-tui status`` (issue 38: three lists, three orders): open ones (the active first),
    expanded ones, concluded ones whose summary is in working memory, then the ones out of it; the
    concluded ones of each group the latest conclusion first (as :func:`concluded_views` pages them),
    the rest as given."""
    given = list(efforts)
    in_use = sorted((e for e in given if _GROUP[e.state] < 2), key=lambda e: (_GROUP[e.state], not e.active))
    done = sorted((e for e in given if _GROUP[e.state] >= 2), key=lambda e: e.concluded_at or "", reverse=True)
    return (*in_use, *sorted(done, key=lambda e: _GROUP[e.state]))  # (sorts are stable: ties as given)


def status_data(session: Session, status: SessionStatus, figures: ContextFigures) -> dict[str, Any]:
    """``status --json`` (contract) for ``status``'s efforts, with the context figures and the session's
    own state: the one place its keys are written (``ccm-tui status``, ``/status``, another agent's status)."""
    data = status.as_json()
    data["context"] = figures.as_dict()
    data["session_dir"] = str(session.dir)
    data["clean_shutdown"] = session.state.clean_shutdown
    data["compactions"] = session.state.compaction_count
    data["usage"] = dict(session.state.usage)
    return data
