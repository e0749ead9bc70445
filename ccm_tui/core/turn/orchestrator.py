"""One turn of conversation: context → model → tools → logs, reported as typed events.

The orchestrator is the only place where a turn's steps are ordered:

1. ``turn_start`` (with the user's text) goes to the event log first, so a
   message the user saw as sent is on disk even if the process dies;
2. the working context is assembled and fitted to the token budget;
3. the model streams a reply (:mod:`._model_requests`: retries, pauses); tool calls
   are executed and the loop repeats (bounded rounds) until the model answers
   without tools;
4. the exchange is appended to the log its route names, salience advances,
   snapshots are saved, and ``turn_done`` is logged (:mod:`.turn_record`).

Progress is reported through an ``emit`` callback with the events of
:mod:`.events`; how the turn ended is its one :class:`~.events.Outcome`
(returned, never emitted here: the session controller emits it). A cancelled
turn (``asyncio.CancelledError``) keeps what came so far and ends ``cancelled``.
"""

from __future__ import annotations

import asyncio
import json
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ... import paths
from ...config import Settings
from ...errors import EffortNotFound, InputError
from ..efforts.operations import ActionContext, Topic, perform
from ..efforts.salience import IdIndex
from ..efforts.states import Action, ActionRefused
from ..efforts.working_context import WorkingContext, assemble, message_cap
from ..models.capabilities import remember_window
from ..models.client_setup import budget_after_overflow, window_in_error
from ..models.interface import ChatModel, Completion, ToolCall
from ..models.provider_errors import LLMError, ProviderFailure
from ..session.session import Session
from ..storage import eventlog as ev
from ..storage.eventlog import now_iso
from . import tools as toolbox
from ._model_requests import CUT, Emit, ModelCalls
from ._record import TurnRecord, TurnRecorder
from ._text_tool_calls import CallHoldback, TextToolCall, extract_text_tool_calls
from .compaction import Compactor, ContextTooLarge
from .events import (
    CANCELLED,
    DONE,
    FAILED,
    Banner,
    Cause,
    ContextFigures,
    EffortChanged,
    Outcome,
    RoundReset,
    TextDelta,
    ToolCalled,
    TurnStarted,
    Work,
)
from .recall import Find, Recalled, recall_for

MAX_USER_CHARS = 200_000
MAX_CALLS_PER_REPLY = 32  # tool calls run from one model reply; the rest get one error
MAX_ECHOED_ARGUMENTS = 4_000  # a failed call's arguments longer than this are not sent back to the model
MODEL_ACTIONS = {Action.CONCLUDE, Action.MERGE}  # user actions the model takes part in (it writes the summary)
NO_TOOLS_NOTE = (
    "- this model is used without tools: you cannot open, conclude or search efforts yourself; the user manages them."
)


def clean_user_text(text: str) -> str:
    """Drop control characters (keeping newlines and tabs) and normalise line ends."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc").strip()


class UserInputError(InputError):
    """The user's message cannot be sent as it is (empty, too large)."""


def checked_user_text(text: str) -> str:
    """The message as it will be sent, or :class:`UserInputError` saying why it cannot be."""
    text = clean_user_text(text)
    if not text:
        raise UserInputError("the message is empty")
    if len(text) > MAX_USER_CHARS:
        raise UserInputError(f"the message is {len(text):,} characters; the limit is {MAX_USER_CHARS:,}")
    return text


class Orchestrator:
    """Runs turns and user actions against one open session."""

    def __init__(
        self,
        session: Session,
        settings: Settings,
        llm: ChatModel | None,
        *,
        budget: int,
        search: Callable[[str, int], list[Any]] | None = None,
        read_ambient: Callable[[int, int], list[tuple[int, Any]]] | None = None,
        recall: Find | None = None,
        on_logged: Callable[[str, list[dict[str, Any]]], None] | None = None,
        retry_base: float = 1.0,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        self.session = session
        self.settings = settings
        self.llm = llm
        self.budget = budget
        self.search = search
        self.read_ambient = read_ambient
        self.recall = recall
        self.last_recalled: Recalled | None = None  # the last turn's recall (the inspector shows its words)
        self.system_prompt = paths.prompt("system")
        self.tool_defs = toolbox.definitions()
        self.ids = IdIndex(lambda candidates: self.session.efforts.existing(candidates))
        self.compactor = Compactor(session, settings, llm)
        self.calls = ModelCalls(session, settings, llm, retry_base=retry_base, sleep=sleep)
        self.recorder = TurnRecorder(self, on_logged)

    # ---------------------------------------------------------------- context
    @property
    def tools_enabled(self) -> bool:
        return self.calls.tools_enabled

    @property
    def usage_total(self) -> dict[str, int]:
        """Tokens the provider reported for this run's requests."""
        return self.calls.usage_total

    @property
    def offered_tools(self) -> list[dict[str, Any]] | None:
        return self.tool_defs if self.tools_enabled or self.llm is None else None

    @property
    def message_cap(self) -> int:
        """Most tokens one logged message may take in the working context."""
        return message_cap(self.settings.message_max_tokens, self.budget)

    def assemble(self, turn_messages: list[dict[str, Any]], tools, recalled: str = "") -> WorkingContext:
        return assemble(
            self.session,
            self.system_prompt,
            turn_messages,
            tools=tools,
            message_cap=self.message_cap,
            budget=self.budget,
            notes=() if self.llm is None or self.tools_enabled else (NO_TOOLS_NOTE,),
            recalled=recalled,
        )

    def working_context(self, turn_messages: list[dict[str, Any]] | None = None) -> WorkingContext:
        return self.assemble(list(turn_messages or []), self.offered_tools)

    def figures(self, wc: WorkingContext | None = None) -> ContextFigures:
        return context_figures(self.session, wc or self.working_context(), self.budget, self.calls.cost_total)

    def id_index(self) -> IdIndex:
        """Finds the effort ids a text mentions (asking the session's effort table)."""
        return self.ids

    def _context(self, turn: int, **values: Any) -> ActionContext:
        pending = values.get("pending") or []
        return ActionContext(
            session=self.session,
            llm=self.llm,
            turn=turn,
            summary_max_tokens=self.settings.summary_max_tokens,
            search=self.search,
            read_ambient=self.read_ambient,
            message_cap=self.message_cap,
            # what an expansion may add: the budget less the next request and a twentieth (see efforts.operations.TooLarge)
            room=lambda: self.budget - self.budget // 20 - self.assemble(list(pending), self.offered_tools).total,
            **values,
        )

    def _report_effects(self, ctx: ActionContext, turn: int, emit: Emit, banners: int = 0, changes: int = 0) -> None:
        """The banners and effort changes an action added since ``banners``/``changes``."""
        for banner in ctx.banners[banners:]:
            emit(Banner(turn=turn, text=banner))
        for effort_id, change in ctx.changes[changes:]:
            emit(EffortChanged(turn=turn, effort_id=effort_id, change=change))

    # ------------------------------------------------------------------- turn
    async def run_turn(self, text: str, emit: Emit | None = None) -> Outcome:
        """Run one turn to its outcome: done, failed (a provider failure, the budget) or cancelled.
        Nothing the user said is lost; invalid input raises :class:`UserInputError` before anything
        is written."""
        emit = emit or (lambda event: None)
        text = checked_user_text(text)
        if self.llm is None:
            raise UserInputError("no model is configured (use --model or set CCM_MODEL)")
        session = self.session
        turn = session.state.turn + 1
        session.state.clean_shutdown = False
        self.calls.begin_turn()
        recalled = self.last_recalled = self._recall(text)
        # the recall rides on turn_start: one fsynced append, not two
        where = {"recalled": recalled.where()} if recalled is not None else {}
        session.log_event(ev.TURN_START, user=text, next_turn=turn, **where)
        emit(TurnStarted(turn=turn, user=text))
        # stamped after turn_start: recovery finds the logged message by a time at or after it
        record = TurnRecord(turn, {"role": "user", "content": text, "ts": now_iso()})
        record.ctx = self._context(turn, pending=[record.user_msg])
        if recalled is not None:
            record.recalled = recalled.text
            record.ctx.banners.append(f"Recalled: {recalled.label}")
            emit(Banner(turn=turn, text=record.ctx.banners[-1], kind="info"))
        self._note_capped(record, text, "Your message", emit)
        try:
            await self._converse(record, emit)
        except asyncio.CancelledError:
            return self.recorder.cancelled(record)
        except (LLMError, ContextTooLarge) as exc:
            return self.recorder.failed(record, exc)
        self._note_capped(record, record.reply, "The reply", emit, cut=record.cut)
        return await self.recorder.commit(record, emit)

    def _note_capped(self, record: TurnRecord, text: str, who: str, emit: Emit, *, cut: bool = False) -> None:
        """Say where it happens that a message will be shortened in later requests (its head and
        tail kept: ``message_max_tokens``), so a user never wonders why the model forgot its middle.
        A reply cut at its cap gets no second figure (the cut banner gave the one counted as it came)."""
        tokens, cap = self.session.counter.count_text(text), self.message_cap
        if tokens > cap:
            size = f"{who} is longer than" if cut else f"{who} is {tokens:,} tokens, over"
            note = (
                f"{size} what one message may take ({cap:,} tokens): later requests carry its first and last "
                "parts; the whole text stays in the log and in search"
            )
            record.ctx.banners.append(note)
            emit(Banner(turn=record.turn, text=note, kind="info"))

    async def _converse(self, record: TurnRecord, emit: Emit) -> None:
        """The model rounds of a turn: ask, run the tools it called, ask again (bounded)."""
        ctx, turn = record.ctx, record.turn
        for round_no in range(self.settings.max_tool_rounds + 1):
            tools = None if round_no == self.settings.max_tool_rounds else self.offered_tools
            completion = await self._ask(record, tools, round_no, emit)
            record.cut = record.cut or completion.finish_reason == CUT  # (its banner said so)
            if completion.content.strip():
                record.reply_parts.append(completion.content.strip())
            if not completion.tool_calls:
                return
            # text said alongside tool calls is part of the exchange (close_effort summarizes it too)
            ctx.pending[1:] = [{"role": "assistant", "content": record.reply}] if record.reply_parts else []
            calls, dropped = completion.tool_calls[: MAX_CALLS_PER_REPLY + 1], len(completion.tool_calls)
            parts = [c.as_message_part() for c in calls]
            record.in_turn.append({"role": "assistant", "content": completion.content or None, "tool_calls": parts})
            for call, part in zip(calls[:MAX_CALLS_PER_REPLY], parts):
                shown, changes = len(ctx.banners), len(ctx.changes)
                outcome = await toolbox.execute(ctx, call.name, call.arguments)
                if not outcome.ok and len(call.arguments) > MAX_ECHOED_ARGUMENTS:  # never a budget-sized echo
                    part["function"]["arguments"] = json.dumps({"omitted": f"{len(call.arguments):,} characters"})
                record.tool_calls.append({"name": call.name, "arguments": outcome.arguments, "ok": outcome.ok})
                record.in_turn.append({"role": "tool", "tool_call_id": call.id, "content": outcome.content})
                emit(
                    ToolCalled(
                        turn=turn, name=call.name, arguments=outcome.arguments, result=outcome.result, ok=outcome.ok
                    )
                )
                self._report_effects(ctx, turn, emit, shown, changes)
            if dropped > MAX_CALLS_PER_REPLY:  # one error for the excess: not thousands of events and messages
                self._refuse_excess_calls(record, calls[-1], parts[-1], dropped, emit)

    def _refuse_excess_calls(
        self, record: TurnRecord, call: ToolCall, part: dict[str, Any], total: int, emit: Emit
    ) -> None:
        excess = total - MAX_CALLS_PER_REPLY
        error = (
            f"too many tool calls in one reply: the first {MAX_CALLS_PER_REPLY} ran, the other {excess:,} "
            "were not run; make fewer calls at a time"
        )
        part["function"]["arguments"] = json.dumps({"omitted": f"{excess:,} calls"})
        record.in_turn.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps({"error": error})})
        record.tool_calls.append({"name": call.name, "arguments": {}, "ok": False})
        record.ctx.session.log_event(ev.TOOL_CALLED, tool=call.name, arguments={}, ok=False, error=error)
        emit(ToolCalled(turn=record.turn, name=call.name, arguments={}, result={"error": error}, ok=False))

    async def _ask(self, record: TurnRecord, tools, round_no: int, emit: Emit) -> Completion:
        """One round's request (asked again without tools if the model refuses them)."""
        turn = record.turn
        while True:
            wc = await self.fit(record.in_turn, tools, record.ctx, emit, record=record)
            record.request = self.figures(wc)
            emit(record.request)  # the meter shows what this request carries (recalled lines included)
            record.streamed.clear()
            holdback = CallHoldback() if tools else None

            limit = asyncio.timeout(None)  # armed at the reply's first piece: reply_max_seconds of streaming

            def on_delta(piece: str, holdback: CallHoldback | None = holdback, limit: asyncio.Timeout = limit) -> None:
                if not record.streamed and limit.when() is None:
                    limit.reschedule(asyncio.get_running_loop().time() + self.settings.reply_max_seconds)
                record.streamed.append(piece)
                if holdback is not None:
                    piece = holdback.feed(piece)
                if piece:
                    emit(TextDelta(turn=turn, text=piece))

            try:
                async with limit:
                    completion = await self.calls.call(wc.messages, tools, on_delta, turn, emit, record.ctx.banners)
            except TimeoutError:
                if not limit.expired():
                    raise
                completion = self._out_of_time(record, emit)
            except LLMError as exc:
                if exc.kind != ProviderFailure.CONTEXT_WINDOW or not self._lower_budget(
                    str(exc), wc.total, record, emit
                ):
                    raise
                continue  # asked again, fitted to the window the provider stated
            if completion is None:  # the model refused the tools: the next request goes without them
                tools = None
                continue
            if holdback is not None:
                self._take_text_tool_calls(completion, tools, holdback, round_no, turn, emit)
            return completion

    def _lower_budget(self, error: str, sent: int, record: TurnRecord, emit: Emit) -> bool:
        """The provider found the request larger than the model's window: the budget comes down to 75%
        of the window it stated (else of what was sent), and the user is told in one line. False when
        it is already that low (the failure stands)."""
        lowered = budget_after_overflow(self.budget, sent, error)
        if lowered is None:
            return False
        window = window_in_error(error)
        if window and self.settings.model:
            remember_window(self.settings.model, window, self.settings.api_base)  # the next run starts under it
        said = f"{self.settings.model}'s window is {window:,} tokens" if window else "the request was too large"
        note = f"Budget lowered from {self.budget:,} to {lowered:,} tokens: {said} (the provider said so)"
        self.budget = self.session.state.budget = lowered
        record.ctx.banners.append(note)
        emit(Banner(turn=record.turn, text=note, kind="info"))
        return True

    def _out_of_time(self, record: TurnRecord, emit: Emit) -> Completion:
        """The reply streamed for ``reply_max_seconds``: it ends where it is, cut (its unfinished tool
        calls left out), and the user is told in one line."""
        text = "".join(record.streamed)
        note = (
            f"The reply was cut after {self.settings.reply_max_seconds:g} s of streaming (reply_max_seconds): "
            "ask the model to go on, or raise the setting"
        )
        record.ctx.banners.append(note)
        emit(Banner(turn=record.turn, text=note, kind="info"))
        tokens = self.session.counter.count_text(text)
        return Completion(content=text, usage={"completion_tokens": tokens}, finish_reason=CUT)

    async def fit(
        self, in_turn, tools, ctx: ActionContext, emit: Emit, *, record: TurnRecord | None = None
    ) -> WorkingContext:
        """The working context for this request, compacted to the budget if needed, with room made for
        the turn's recalled lines (at most ``recall_share`` of the budget): they are left out only
        when compaction cannot make room. A compaction moves lines out of the context (a checkpoint, a
        shrunk ambient window), so the recall is looked for again after one."""
        recalled = record.recalled if record is not None else ""

        def build(text: str = "") -> WorkingContext:
            return self.assemble(in_turn, tools, text)

        self.compactor.relax(build, self.budget)
        wc = build(recalled)
        if wc.total <= self.budget:
            return wc
        try:
            wc = await self._compact(lambda: build(recalled), ctx, emit)
            again = self._recall(record.text) if record is not None else None
            if record is None or again is None or again.text == recalled:
                return wc
            record.recalled, self.last_recalled = again.text, again
            self.session.log_event(ev.RECALL_REVISED, next_turn=ctx.turn, recalled=again.where())
            ctx.banners.append(f"Recalled: {again.label}")
            emit(Banner(turn=ctx.turn, text=ctx.banners[-1], kind="info"))
            wc = build(again.text)
            return wc if wc.total <= self.budget else await self._compact(lambda: build(again.text), ctx, emit)
        except ContextTooLarge:
            if record is None or not record.recalled:
                raise
            record.recalled = ""  # no room for it: the request goes without
            wc = build()
            return wc if wc.total <= self.budget else await self._compact(build, ctx, emit)

    async def _compact(self, build: Callable[[], WorkingContext], ctx: ActionContext, emit: Emit) -> WorkingContext:
        turn = ctx.turn
        report = await self.compactor.compact(build, self.budget, turn)
        for banner in report.banners:
            ctx.banners.append(banner)
            emit(Banner(turn=turn, text=banner, kind="compaction"))
        for banner in report.effort_banners:
            ctx.banners.append(banner)
            emit(Banner(turn=turn, text=banner))
        for effort_id, change in report.changes:
            emit(EffortChanged(turn=turn, effort_id=effort_id, change=change))
        return report.context

    def recall_preview(self, text: str) -> Recalled | None:
        """The recall ``text`` would get if it were sent now (the inspector, with a draft); a read."""
        return self._recall(text, remember=False) if text.strip() else None

    def _recall(self, text: str, *, remember: bool = True) -> Recalled | None:
        """The logged lines that answer this message, for this turn's requests (see :mod:`.recall`)."""
        if self.recall is None or self.settings.recall == "off":
            return None
        share = int(self.budget * self.settings.recall_share)
        return recall_for(self.session, self.recall, text, share, self.message_cap, remember=remember)

    def _take_text_tool_calls(
        self, completion: Completion, tools, holdback: CallHoldback, round_no: int, turn: int, emit: Emit
    ) -> None:
        """Tool calls the model wrote as text become real calls; the user sees only the prose."""
        calls: list[TextToolCall] = []
        if not completion.tool_calls and completion.content:
            offered = {tool["function"]["name"] for tool in tools or []}
            remaining, calls = extract_text_tool_calls(completion.content, offered)
        if not calls:
            rest = holdback.flush()
            if rest:
                emit(TextDelta(turn=turn, text=rest))
            return
        shown = holdback.shown.rstrip()
        if remaining.startswith(shown):
            rest = remaining[len(shown) :]
            if rest.strip():
                emit(TextDelta(turn=turn, text=rest))
        else:
            emit(RoundReset(turn=turn))
            if remaining:
                emit(TextDelta(turn=turn, text=remaining))
        completion.content = remaining
        completion.tool_calls = [
            ToolCall(id=f"call_text_{turn}_{round_no}_{i}", name=call.name, arguments=call.arguments)
            for i, call in enumerate(calls)
        ]

    # ---------------------------------------------------------------- actions
    async def run_action(
        self,
        action: Action,
        target: str,
        emit: Emit | None = None,
        *,
        topic: Topic | None = None,
        reuse: bool = False,
        value: str = "",
    ) -> Outcome:
        """A user's action on an effort (``target``: its id, or the new effort's name for ``open``),
        through the same operations as the model's tools. Refused actions end ``failed`` with the
        reason; a conclusion cancelled while its summary is written changes nothing."""
        emit = emit or (lambda event: None)
        turn = self.session.state.turn
        what = f"{action.value} {target}".strip()
        ctx = self._context(turn, source="user")
        try:
            if action in MODEL_ACTIONS:
                await self.calls.ensure_client(turn, emit)
            result = await perform(ctx, action, target, topic, reuse=reuse, value=value)
        except asyncio.CancelledError:
            return Outcome(turn=turn, work=Work.ACTION, status=CANCELLED, reason="cancelled", text=what)
        except (ActionRefused, EffortNotFound, LLMError) as exc:
            reason = f"the summary model failed: {exc}" if isinstance(exc, LLMError) else str(exc)
            self._log_action(action, target, error=reason)
            cause: Cause | ProviderFailure
            if isinstance(exc, LLMError):
                cause, details = exc.kind, None
            elif isinstance(exc, EffortNotFound):
                cause, details = Cause.NOT_FOUND, None
            else:
                cause, details = Cause(exc.cause), exc.details
            failed = Outcome(turn=turn, work=Work.ACTION, status=FAILED, reason=reason, cause=cause, text=what)
            return replace(failed, result=details)  # a refusal's details: e.g. where a passage may be read instead
        self._log_action(action, target)
        self._report_effects(ctx, turn, emit)
        for effort_id in ctx.touched:
            self.session.view.last_referenced[effort_id] = turn
        self.session.save_view()
        figures = self.figures()
        emit(figures)
        return Outcome(
            turn=turn,
            work=Work.ACTION,
            status=DONE,
            text=what,
            reply=str(result.get("note") or ""),  # what the action did instead of what was asked (see open_effort)
            banners=tuple(ctx.banners),
            context=figures,
            result=result,
        )

    def _log_action(self, action: Action, target: str, *, error: str | None = None) -> None:
        """A user's action in the event log, as the equivalent tool call (``source: user``)."""
        arguments = {"name" if action is Action.OPEN else "id": target}
        extra = {} if error is None else {"error": error}
        self.session.log_event(
            ev.TOOL_CALLED, tool=action.tool_name, arguments=arguments, ok=error is None, source="user", **extra
        )


__all__ = ["Orchestrator", "UserInputError", "checked_user_text", "clean_user_text"]


def context_figures(session: Session, wc: WorkingContext, budget: int, cost: float | None = None) -> ContextFigures:
    """The meter's figures of a working context: per layer, per effort, the total, the naive figure."""
    in_context: dict[str, int] = {}
    for section in wc.sections:
        if section.effort_id:
            in_context[section.effort_id] = in_context.get(section.effort_id, 0) + section.tokens
    return ContextFigures(
        turn=session.state.turn,
        efforts=in_context,
        layers=dict(wc.layers),
        total=wc.total,
        naive=wc.naive,
        budget=budget,
        cost=cost,
    )


def figures_at_rest(session: Session, settings: Settings, budget: int) -> ContextFigures:
    """What the next request would carry, read without a model (``status``, another agent's status):
    the system prompt and the tool definitions as a request offers them, and the session's layers — the
    same assembly a turn makes, with no orchestrator built to answer."""
    wc = assemble(
        session,
        paths.prompt("system"),
        [],
        tools=toolbox.definitions(),
        message_cap=message_cap(settings.message_max_tokens, budget),
        budget=budget,
    )
    return context_figures(session, wc, budget)
