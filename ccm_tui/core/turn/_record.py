"""How a turn's exchange reaches disk and how the turn ends: done, failed or cancelled.

:class:`TurnRecord` holds what one turn has produced so far (the user's message,
the reply's parts, the tool calls, the request it sent); :class:`TurnRecorder`
writes the exchange where its route says (``route_to_ambient``, a newly opened
effort, a concluded one, the active effort, else ambient), advances salience,
saves the snapshots, logs the terminal event and returns the turn's
:class:`~.events.Outcome`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...config import Settings
from ..efforts.operations import ActionContext
from ..efforts.proposals import EFFORT_TOOLS
from ..efforts.salience import IdIndex, end_of_turn, referenced_efforts
from ..efforts.working_context import WorkingContext
from ..manifest.effort import Effort
from ..models.provider_errors import LLMError
from ..session.session import Session
from ..storage import eventlog as ev
from ..storage.durable import StoreError, disk_full
from ..storage.eventlog import now_iso
from ._model_requests import ModelCalls
from .compaction import ContextTooLarge
from .events import (
    CANCELLED,
    DONE,
    FAILED,
    Banner,
    Cause,
    ContextFigures,
    EffortChanged,
    Outcome,
    TurnEvent,
    Work,
)


class TurnSteps(Protocol):
    """What ending a turn needs from the orchestrator that ran it."""

    session: Session
    settings: Settings

    @property
    def offered_tools(self) -> list[dict[str, Any]] | None: ...

    @property
    def usage_total(self) -> dict[str, int]: ...

    @property
    def calls(self) -> ModelCalls: ...

    def figures(self, wc: WorkingContext | None = None) -> ContextFigures: ...

    def id_index(self) -> IdIndex: ...

    async def fit(self, in_turn: list[dict[str, Any]], tools, ctx: ActionContext, emit: Emit) -> WorkingContext: ...


Emit = Callable[[TurnEvent], None]
HISTORY_LIMIT = 300
MAX_PARTIAL_KEPT = 20_000  # characters of a cut-off reply kept in the event log


@dataclass
class TurnRecord:
    """One turn in progress."""

    turn: int
    user_msg: dict[str, Any]
    ctx: ActionContext = field(init=False)
    in_turn: list[dict[str, Any]] = field(init=False)  # the turn's messages as the model sees them
    reply_parts: list[str] = field(default_factory=list)
    streamed: list[str] = field(default_factory=list)  # this round's text as it arrived
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    request: ContextFigures | None = None
    after_stored: str | None = None  # a write after the exchange was stored failed (why)
    recalled: str = ""  # logged lines that answer the message, in this turn's requests (core/turn/recall.py)
    cut: bool = False  # a reply stopped at its cap (reply_max_tokens)

    def __post_init__(self) -> None:
        self.in_turn = [self.user_msg]

    @property
    def text(self) -> str:
        return str(self.user_msg["content"])

    @property
    def reply(self) -> str:
        return "\n\n".join(self.reply_parts)

    def partial(self, extra: str = "") -> str:
        """What came back so far (the cut-off round included)."""
        return "\n\n".join(self.reply_parts + ([extra] if extra else [])).strip()


class TurnRecorder:
    """Ends the orchestrator's turns (it shares the orchestrator's session, settings and figures)."""

    def __init__(self, orchestrator: TurnSteps, on_logged: Callable[[str, list[dict[str, Any]]], None] | None) -> None:
        self.orchestrator = orchestrator
        self.on_logged = on_logged

    @property
    def session(self):
        return self.orchestrator.session

    # ------------------------------------------------------------ endings
    def cancelled(self, record: TurnRecord) -> Outcome:
        """Escape. Nothing came back and no tool changed an effort: the turn is withdrawn — nothing is
        logged, the message goes back to the input (sending it again cannot duplicate it). Otherwise
        the exchange is kept as far as it got, marked interrupted, and not given back (its tools ran)."""
        partial = record.partial("".join(record.streamed))
        if not partial and not record.ctx.changes:
            self.session.log_event(ev.TURN_CANCELLED, withdrawn=True, partial_chars=0)
            return Outcome(
                turn=record.turn,
                work=Work.TURN,
                status=CANCELLED,
                reason="cancelled",
                text=record.text,
                given_back=True,
                request=record.request,
                tool_calls=tuple(record.tool_calls),
            )
        reply_msg = {"role": "assistant", "content": partial, "ts": now_iso(), "interrupted": True}
        logged_to = self._finish(record, reply_msg, ev.TURN_CANCELLED, partial_chars=len(partial))
        return Outcome(
            turn=record.turn,
            work=Work.TURN,
            status=CANCELLED,
            reason="cancelled",
            text=record.text,
            partial=partial,
            logged_to=logged_to,
            banners=tuple(record.ctx.banners),
            request=record.request,
            tool_calls=tuple(record.tool_calls),
        )

    def failed(self, record: TurnRecord, exc: LLMError | ContextTooLarge) -> Outcome:
        """A provider failure or a context over the budget: the turn ends, the message is kept."""
        ctx = record.ctx
        partial = record.partial(getattr(exc, "partial", "") or "")
        retryable = not ctx.changes
        logged_to = None
        failure: dict[str, Any] = {
            "error": str(exc),
            "kind": exc.kind if isinstance(exc, LLMError) else "budget",
            "partial": partial[:MAX_PARTIAL_KEPT],
            "partial_chars": len(partial),
        }
        if not retryable:
            # Tools already changed efforts this turn: log the exchange so log and state agree,
            # marked failed; re-sending it would repeat the tool effects, so it is not retryable.
            reply_msg = {"role": "assistant", "content": partial, "ts": now_iso(), "failed": str(exc)}
            logged_to = self._finish(record, reply_msg, ev.TURN_FAILED, **failure)
        else:
            self.session.log_event(ev.TURN_FAILED, **failure, logged_to=None)
        return Outcome(
            turn=record.turn,
            work=Work.TURN,
            status=FAILED,
            reason=str(exc),
            cause=exc.kind if isinstance(exc, LLMError) else Cause.BUDGET,
            text=record.text,
            given_back=logged_to is None,
            retryable=retryable,
            partial=partial,
            logged_to=logged_to,
            banners=tuple(ctx.banners),
            request=record.request,
            tool_calls=tuple(record.tool_calls),
        )

    def empty_reply(self, record: TurnRecord) -> Outcome:
        message = "the model returned an empty reply; try again (your message is kept)"
        self.session.log_event(ev.TURN_FAILED, error=message, kind="empty_reply", partial="", partial_chars=0)
        return Outcome(
            turn=record.turn,
            work=Work.TURN,
            status=FAILED,
            reason=message,
            cause=Cause.EMPTY_REPLY,
            text=record.text,
            given_back=True,
            retryable=True,
            request=record.request,
        )

    async def commit(self, record: TurnRecord, emit: Emit) -> Outcome:
        """The reply is complete: log the exchange, advance salience, keep the context in budget."""
        reply = record.reply
        if not reply and not record.tool_calls:
            return self.empty_reply(record)
        session, ctx, turn = self.session, record.ctx, record.turn
        assistant: dict[str, Any] = {"role": "assistant", "content": reply, "ts": now_iso()}
        if record.tool_calls:
            assistant["tools"] = [c["name"] for c in record.tool_calls]
        if record.cut:
            assistant["cut"] = True  # stopped at reply_max_tokens: the chat's history says so
        session.state.turn = turn
        if any(c["ok"] and c["name"] in EFFORT_TOOLS for c in record.tool_calls):
            session.state.last_effort_tool_turn = turn  # the model manages efforts itself
        self._advance_salience(record, reply, emit)
        logged_to = self._finish(record, assistant, None)
        # The exchange is on disk; compaction for the next request may call the model (and be
        # cancelled): the turn is recorded as done either way.
        wc = None
        try:
            wc = await self._compact_after_turn(ctx, emit)
        finally:
            figures = self.orchestrator.figures(wc)
            session.state.history.append({"turn": turn, "ccm": figures.total, "naive": figures.naive})
            del session.state.history[:-HISTORY_LIMIT]
            with self._stored(record):
                spent = self.orchestrator.calls
                extra: dict[str, Any] = {"usage": dict(spent.turn_usage)} if spent.turn_usage else {}
                if spent.turn_cost is not None:
                    extra["cost"] = round(spent.turn_cost, 8)
                self._end(record, logged_to, ev.TURN_DONE, total=figures.total, naive=figures.naive, **extra)
        if record.after_stored is not None:
            ctx.banner(
                f"{record.after_stored.split(':')[0]}: the reply is stored; the rest catches up at the next start"
            )
            emit(Banner(turn=turn, text=ctx.banners[-1], kind="info"))
        emit(figures)
        return Outcome(
            turn=turn,
            work=Work.TURN,
            status=DONE,
            text=record.text,
            reply=reply,
            logged_to=logged_to,
            banners=tuple(ctx.banners),
            context=figures,
            request=record.request,
            usage=dict(self.orchestrator.usage_total),
            tool_calls=tuple(record.tool_calls),
            turn_usage=dict(self.orchestrator.calls.turn_usage),
            turn_cost=self.orchestrator.calls.turn_cost,
            cut=record.cut,
        )

    def _advance_salience(self, record: TurnRecord, reply: str, emit: Emit) -> None:
        session, settings, ctx, turn = self.session, self.orchestrator.settings, record.ctx, record.turn
        ids = self.orchestrator.id_index()
        referenced = referenced_efforts(session, ids, [record.text, reply], ctx.touched)
        report = end_of_turn(
            session,
            turn,
            referenced,
            decay_threshold=settings.decay_threshold,
            eviction_threshold=settings.summary_eviction_threshold,
        )
        for effort_id in report.collapsed:
            ctx.banner(f"Auto-collapsed effort: {effort_id} (inactive for {settings.decay_threshold} turns)")
            emit(Banner(turn=turn, text=ctx.banners[-1]))
            emit(EffortChanged(turn=turn, effort_id=effort_id, change="collapsed"))
        for effort_id in report.evicted:
            emit(EffortChanged(turn=turn, effort_id=effort_id, change="evicted"))
        for effort_id in report.restored:
            emit(EffortChanged(turn=turn, effort_id=effort_id, change="restored"))

    async def _compact_after_turn(self, ctx: ActionContext, emit: Emit) -> WorkingContext | None:
        """Keep the working context (what the next request starts from) within the budget,
        so the meter never shows more than the budget allows. Best effort: the turn is done.
        Returns that context (None if compaction could not finish)."""
        orchestrator = self.orchestrator
        try:
            return await orchestrator.fit([], orchestrator.offered_tools, ctx, emit)
        except (ContextTooLarge, LLMError):
            return None  # the next request compacts again, or reports why it cannot
        except asyncio.CancelledError:
            return None  # cancelled while compacting: the turn is logged and done all the same

    # ------------------------------------------------------------ logging
    def _destination(self, ctx: ActionContext) -> Effort | None:
        if ctx.route == "ambient":
            return None
        if ctx.route:
            effort = self.session.efforts.get(ctx.route)
            if effort is not None:
                return effort
        return self.session.efforts.active

    def _log_exchange(self, record: TurnRecord, reply: dict[str, Any]) -> str:
        """Append the exchange to its log (fsynced: the message is stored). Its ``message_logged``
        event is written with the turn's terminal event, in one append (:meth:`_end`); a kill in
        between leaves the exchange in its log, which recovery settles."""
        session = self.session
        effort = self._destination(record.ctx)
        records = [record.user_msg, reply]
        if effort is None:
            session.append_ambient(records)
            to = "ambient"
        else:
            session.append_effort(effort, records)
            to = effort.id
        if self.on_logged is not None:
            self.on_logged(to, records)
        return to

    def _end(self, record: TurnRecord, logged_to: str, terminal: str, **fields: Any) -> None:
        """The turn's one commit after its exchange: the snapshots (rewritten only when they
        changed, not fsynced: see ``Session.save_state``), then ``message_logged`` and the
        terminal event in one fsynced append."""
        session = self.session
        session.save_view()
        session.save_state()
        # with the efforts the turn changed and did not save yet (a concluded effort's counts, after
        # its exchange): efforts_saved, message_logged and the terminal event are one append
        session.save_manifest(
            (ev.MESSAGE_LOGGED, {"to": logged_to, "count": 2, "next_turn": record.turn}),
            (terminal, {"logged_to": logged_to, **fields}),
        )

    @contextlib.contextmanager
    def _stored(self, record: TurnRecord) -> Iterator[None]:
        """Bookkeeping after the exchange is stored (events, snapshots, counts): a failed write (a
        full disk) is noted and the session marked for recovery at the next start, but the turn is
        not reported failed — resending it would store it twice."""
        try:
            yield
        except (OSError, StoreError) as exc:
            if record.after_stored is None:
                record.after_stored = disk_full(exc) or str(exc)
                self.session.mark_unclean(f"bookkeeping after the exchange failed: {record.after_stored}")

    def _finish(self, record: TurnRecord, reply_msg: dict[str, Any], terminal: str | None, **fields: Any) -> str:
        """The one way a turn's exchange reaches disk: append it where its route says; with a
        ``terminal`` event, end the turn (:meth:`_end`; a done turn ends after its compaction)."""
        session = self.session
        logged_to = self._log_exchange(record, reply_msg)
        session.state.turn = record.turn
        if terminal:
            with self._stored(record):  # the exchange is on disk: what follows cannot fail the turn
                self._end(record, logged_to, terminal, **fields)
        return logged_to
