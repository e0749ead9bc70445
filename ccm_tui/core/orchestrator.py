"""One turn of conversation: context → model → tools → logs, reported as typed events.

The orchestrator is the only place where a turn's steps are ordered:

1. ``turn_start`` (with the user's text) goes to the event log first, so a
   message the user saw as sent is on disk even if the process dies;
2. the working context is assembled and fitted to the token budget;
3. the model streams a reply; tool calls are executed and the loop repeats
   (bounded rounds) until the model answers without tools;
4. the exchange is appended to the log its route names (tool calls decide:
   ``route_to_ambient``, a newly opened effort, a concluded one, the active
   effort, else ambient), salience advances, snapshots are saved, and
   ``turn_done`` is logged.

Progress is reported through an ``emit`` callback with the events of
:mod:`.turn_events`; the CLI prints them and the TUI posts them as messages.
"""

from __future__ import annotations

import asyncio
import random
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import paths
from ..config import Settings
from . import eventlog as ev
from . import tools as toolbox
from .chat_model import ChatModel
from .compaction import Compactor, ContextTooLarge
from .context import WorkingContext, assemble, message_cap
from .eventlog import now_iso
from .llm import CONNECTION, NO_TOOLS, RATE_LIMIT, Completion, LLMError, ToolCall
from .model_facts import FROM_MODEL_MAP, known_without_tools, learned_without_tools, remember_without_tools
from .salience import IdIndex, end_of_turn, referenced_efforts
from .session import Session
from .text_tool_calls import CallHoldback, TextToolCall, extract_text_tool_calls
from .turn_events import (
    Banner,
    ContextFigures,
    EffortChanged,
    Paused,
    Resumed,
    RoundReset,
    TextDelta,
    ToolCalled,
    TurnCancelled,
    TurnDone,
    TurnEvent,
    TurnFailed,
    TurnStarted,
    Waiting,
)

Emit = Callable[[TurnEvent], None]
MAX_USER_CHARS = 200_000
HISTORY_LIMIT = 300
MAX_PARTIAL_KEPT = 20_000  # characters of a cut-off reply kept in the event log
LOADING_CLIENT = "loading the model client…"
MODEL_ACTIONS = {"close_effort"}  # user actions the model takes part in (it writes the summary)
NO_TOOLS_NOTE = (
    "- this model is used without tools: you cannot open, conclude or search efforts yourself; the user manages them."
)


def no_tools_notice(model: str) -> str:
    """What the user is told, once, when a model cannot use tools."""
    return (
        f"{model} cannot use tools, so it cannot manage efforts itself. The chat goes on without them: "
        "open, conclude and expand efforts by hand (Ctrl+O, the effort list, the command palette)."
    )


def clean_user_text(text: str) -> str:
    """Drop control characters (keeping newlines and tabs) and normalise line ends."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc").strip()


class UserInputError(ValueError):
    """The user's message cannot be sent as it is (empty, too large)."""


@dataclass
class TurnResult:
    turn: int
    reply: str = ""
    logged_to: str | None = None  # "ambient" or an effort id; None when nothing was logged
    banners: list[str] = field(default_factory=list)
    context: ContextFigures | None = None
    request: ContextFigures | None = None
    usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    cancelled: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.cancelled


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
        on_logged: Callable[[str, list[dict[str, Any]]], None] | None = None,
        retry_base: float = 1.0,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        self.session = session
        self.settings = settings
        self.llm = llm
        self.budget = budget
        self.search = search
        self.on_logged = on_logged
        self.retry_base = retry_base
        self._sleep = sleep
        self.system_prompt = paths.prompt("system")
        self.tool_defs = toolbox.definitions()
        self.ids = IdIndex.build(session.efforts.ids())
        self.ids_generation = session.generation
        self.compactor = Compactor(session, settings, llm)
        self.usage_total: dict[str, int] = {}
        self.cost_total: float | None = None
        self._tools_enabled: bool | None = None  # looked up on first use
        self._tell_no_tools = False

    # ------------------------------------------------------------------ tools
    @property
    def tools_enabled(self) -> bool:
        """Whether requests offer the tools: not for a model that cannot use them (learned on
        this machine, or stated by litellm's model map)."""
        if self._tools_enabled is None:
            model = getattr(self.llm, "model", None)
            if self.llm is None or not model:
                self._tools_enabled = True  # nothing to ask: no request is made
            elif learned_without_tools(model, getattr(self.llm, "api_base", None)):
                self._tools_enabled = False
            elif known_without_tools(model):
                self._tools_enabled = False
                self._tell_no_tools = True
            else:
                self._tools_enabled = True
        return self._tools_enabled

    @property
    def offered_tools(self) -> list[dict[str, Any]] | None:
        return self.tool_defs if self.tools_enabled or self.llm is None else None

    def _without_tools(self, reason: str, turn: int, emit: Emit, banners: list[str], *, source: str = "server") -> None:
        """From now on this model chats without tools; the user is told once (per machine)."""
        self._tools_enabled = False
        self._tell_no_tools = False
        model = getattr(self.llm, "model", None) or "this model"
        remember_without_tools(model, reason, source=source, api_base=getattr(self.llm, "api_base", None))
        self.session.log_event(ev.MODEL_WITHOUT_TOOLS, model=model, reason=reason)
        banners.append(no_tools_notice(model))
        emit(Banner(turn=turn, text=banners[-1], kind="info"))

    # ---------------------------------------------------------------- context
    @property
    def message_cap(self) -> int:
        """Most tokens one logged message may take in the working context."""
        return message_cap(self.settings.message_max_tokens, self.budget)

    def assemble(self, turn_messages: list[dict[str, Any]], tools) -> WorkingContext:
        return assemble(
            self.session,
            self.system_prompt,
            turn_messages,
            tools=tools,
            message_cap=self.message_cap,
            budget=self.budget,
            notes=() if self.llm is None or self.tools_enabled else (NO_TOOLS_NOTE,),
        )

    def working_context(self, turn_messages: list[dict[str, Any]] | None = None) -> WorkingContext:
        return self.assemble(list(turn_messages or []), self.offered_tools)

    def figures(self, wc: WorkingContext | None = None) -> ContextFigures:
        wc = wc or self.working_context()
        in_context: dict[str, int] = {}
        for section in wc.sections:
            if section.effort_id:
                in_context[section.effort_id] = in_context.get(section.effort_id, 0) + section.tokens
        return ContextFigures(
            turn=self.session.state.turn,
            efforts=in_context,
            layers=dict(wc.layers),
            total=wc.total,
            naive=wc.naive,
            budget=self.budget,
            cost=self.cost_total,
        )

    def id_index(self) -> IdIndex:
        """Every effort id as a phrase, rebuilt only after the session was reloaded from disk."""
        if self.ids_generation != self.session.generation:
            self.ids = IdIndex.build(self.session.efforts.ids())
            self.ids_generation = self.session.generation
        return self.ids

    # ------------------------------------------------------------------- turn
    async def run_turn(self, text: str, emit: Emit | None = None) -> TurnResult:
        """Run one turn. Provider failures end it with ``error`` set; nothing the user said is lost."""
        emit = emit or (lambda event: None)
        text = clean_user_text(text)
        if not text:
            raise UserInputError("the message is empty")
        if len(text) > MAX_USER_CHARS:
            raise UserInputError(f"the message is {len(text):,} characters; the limit is {MAX_USER_CHARS:,}")
        if self.llm is None:
            raise UserInputError("no model is configured (use --model or set CCM_MODEL)")
        session = self.session
        turn = session.state.turn + 1
        session.state.clean_shutdown = False
        session.log_event(ev.TURN_START, user=text, next_turn=turn)
        emit(TurnStarted(turn=turn, user=text))
        user_msg = {"role": "user", "content": text, "ts": now_iso()}
        ctx = toolbox.ToolContext(
            session=session,
            llm=self.llm,
            turn=turn,
            pending=[user_msg],
            summary_max_tokens=self.settings.summary_max_tokens,
            search=self.search,
            message_cap=self.message_cap,
        )
        result = TurnResult(turn=turn)
        in_turn: list[dict[str, Any]] = [user_msg]
        reply_parts: list[str] = []
        streamed: list[str] = []
        try:
            for round_no in range(self.settings.max_tool_rounds + 1):
                last_round = round_no == self.settings.max_tool_rounds
                completion: Completion | None = None
                while completion is None:  # None: the model refused the tools; ask again without them
                    tools = None if last_round else self.offered_tools
                    wc = await self._fit(in_turn, tools, ctx, emit)
                    result.request = self.figures(wc)
                    streamed.clear()
                    holdback = CallHoldback() if tools else None

                    def on_delta(piece: str, holdback: CallHoldback | None = holdback) -> None:
                        streamed.append(piece)
                        if holdback is not None:
                            piece = holdback.feed(piece)
                        if piece:
                            emit(TextDelta(turn=turn, text=piece))

                    completion = await self._call(wc.messages, tools, on_delta, turn, emit, ctx.banners)
                self._add_usage(completion.usage)
                if holdback is not None:
                    self._take_text_tool_calls(completion, tools, holdback, round_no, turn, emit)
                if completion.content.strip():
                    reply_parts.append(completion.content.strip())
                if not completion.tool_calls:
                    break
                # text said alongside tool calls is part of the exchange (close_effort summarizes it too)
                ctx.pending[1:] = [{"role": "assistant", "content": "\n\n".join(reply_parts)}] if reply_parts else []
                in_turn.append(
                    {
                        "role": "assistant",
                        "content": completion.content or None,
                        "tool_calls": [c.as_message_part() for c in completion.tool_calls],
                    }
                )
                for call in completion.tool_calls:
                    shown = len(ctx.banners)
                    changes = len(ctx.changes)
                    outcome = await toolbox.execute(ctx, call.name, call.arguments)
                    result.tool_calls.append({"name": call.name, "arguments": outcome.arguments, "ok": outcome.ok})
                    in_turn.append({"role": "tool", "tool_call_id": call.id, "content": outcome.content})
                    emit(
                        ToolCalled(
                            turn=turn, name=call.name, arguments=outcome.arguments, result=outcome.result, ok=outcome.ok
                        )
                    )
                    for banner in ctx.banners[shown:]:
                        emit(Banner(turn=turn, text=banner))
                    for effort_id, change in ctx.changes[changes:]:
                        if change == "opened":
                            self.id_index().add(effort_id)
                        emit(EffortChanged(turn=turn, effort_id=effort_id, change=change))
        except asyncio.CancelledError:
            # Escape: keep the exchange as far as it got, marked, as complete log lines.
            partial = "\n\n".join(reply_parts + (["".join(streamed)] if streamed else [])).strip()
            reply_msg = {"role": "assistant", "content": partial, "ts": now_iso(), "interrupted": True}
            self._finish(turn, user_msg, reply_msg, ctx, ev.TURN_CANCELLED, partial_chars=len(partial))
            emit(TurnCancelled(turn=turn, partial=partial))
            raise
        except (LLMError, ContextTooLarge) as exc:
            partial = getattr(exc, "partial", "") or ""
            partial = "\n\n".join(reply_parts + ([partial] if partial else [])).strip()
            retryable = not ctx.changes
            logged_to = None
            if not retryable:
                # Tools already changed efforts this turn: log the exchange so log and state agree,
                # marked failed; re-sending it would repeat the tool effects, so it is not retryable.
                reply_msg = {"role": "assistant", "content": partial, "ts": now_iso(), "failed": str(exc)}
                logged_to = self._finish(turn, user_msg, reply_msg, ctx, None)
                result.logged_to = logged_to
            session.log_event(
                ev.TURN_FAILED,
                error=str(exc),
                kind=getattr(exc, "kind", "budget"),
                partial=partial[:MAX_PARTIAL_KEPT],
                partial_chars=len(partial),
                logged_to=logged_to,
            )
            result.error = str(exc)
            result.banners = list(ctx.banners)
            emit(TurnFailed(turn=turn, message=str(exc), partial=partial, retryable=retryable))
            return result

        reply = "\n\n".join(reply_parts)
        if not reply and not result.tool_calls:
            message = "the model returned an empty reply; try again (your message is kept)"
            session.log_event(ev.TURN_FAILED, error=message, kind="empty_reply", partial="", partial_chars=0)
            result.error = message
            emit(TurnFailed(turn=turn, message=message, retryable=True))
            return result
        await self._commit(turn, user_msg, reply, ctx, result, emit)
        return result

    # ------------------------------------------------------------- internals
    async def _fit(self, in_turn, tools, ctx: toolbox.ToolContext, emit: Emit) -> WorkingContext:
        """The working context for this request, compacted to the budget if needed."""
        turn = ctx.turn

        def build() -> WorkingContext:
            return self.assemble(in_turn, tools)

        self.compactor.relax(build, self.budget)
        wc = build()
        if wc.total <= self.budget:
            return wc
        report = await self.compactor.compact(build, self.budget, turn)
        for banner in report.banners:
            ctx.banners.append(banner)
            emit(Banner(turn=turn, text=banner, kind="compaction"))
        for effort_id, change in report.changes:
            emit(EffortChanged(turn=turn, effort_id=effort_id, change=change))
        return report.context

    async def _call(self, messages, tools, on_delta, turn: int, emit: Emit, banners: list[str]) -> Completion | None:
        """One model request with the retry policy: pause on rate limits, back off on transient faults.
        None when the model refused the tools (from now on it is asked without them)."""
        if self.llm is None:
            raise LLMError("configuration", "no model is configured")
        await self._ensure_client(turn, emit)
        if self._tell_no_tools:
            self._without_tools(
                "litellm's model map says it has no function calling", turn, emit, banners, source=FROM_MODEL_MAP
            )
        attempt = 0
        waited = 0.0
        while True:
            try:
                return await self.llm.stream_chat(messages, tools, on_delta)
            except LLMError as exc:
                if exc.kind == NO_TOOLS and tools:
                    self._without_tools(str(exc), turn, emit, banners)
                    return None  # the caller assembles the request again, without tools
                attempt += 1
                if exc.kind == RATE_LIMIT:
                    delay = exc.retry_after if exc.retry_after is not None else min(60.0, 5.0 * 2 ** (attempt - 1))
                    delay = delay * (self.retry_base if exc.retry_after is None else 1.0)
                    if waited + delay > self.settings.max_rate_limit_wait:
                        raise LLMError(RATE_LIMIT, f"{exc} (gave up after waiting {int(waited)} s)") from None
                    resume_at = time.time() + delay
                    self.session.log_event(ev.SESSION_PAUSE, reason=str(exc), resets_at=resume_at, attempt=attempt)
                    emit(Paused(turn=turn, reason=str(exc), resume_at=resume_at, attempt=attempt))
                    await self._sleep(delay)
                    waited += delay
                    self.session.log_event(ev.SESSION_RESUME, attempt=attempt)
                    emit(Resumed(turn=turn))
                    continue
                if exc.kind == CONNECTION:
                    # Nothing reached the server: one brief second try (a local server starting up),
                    # then the turn fails saying the address cannot be reached.
                    if attempt <= min(1, self.settings.max_retries):
                        delay = self.retry_base * (1 + random.random() / 4)
                        emit(Banner(turn=turn, text=f"{exc}; trying again in {delay:.1f} s", kind="info"))
                        await self._sleep(delay)
                        continue
                    raise
                if exc.transient and not exc.partial and attempt <= self.settings.max_retries:
                    delay = self.retry_base * (2 ** (attempt - 1)) * (1 + random.random() / 4)
                    emit(Banner(turn=turn, text=f"provider hiccup ({exc}); retrying in {delay:.1f} s", kind="info"))
                    await self._sleep(delay)
                    continue
                if exc.partial:
                    emit(RoundReset(turn=turn))
                raise

    async def _ensure_client(self, turn: int, emit: Emit) -> None:
        """litellm imported (seconds) off the event loop before the model is asked, saying so
        (``Waiting``) when it was not loaded yet: a cold start never looks like a silent hang."""
        if self.llm is not None and getattr(self.llm, "loaded", True) is False:
            emit(Waiting(turn=turn, reason=LOADING_CLIENT))
            await asyncio.to_thread(self.llm.load)  # type: ignore[attr-defined]

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

    def _add_usage(self, usage: dict[str, int]) -> None:
        for key, value in usage.items():
            self.usage_total[key] = self.usage_total.get(key, 0) + value
        if usage and self.llm is not None:
            from .llm import usage_cost

            cost = usage_cost(self.llm.model, usage)
            if cost is not None:
                self.cost_total = (self.cost_total or 0.0) + cost

    def _destination(self, ctx: toolbox.ToolContext):
        if ctx.route == "ambient":
            return None
        if ctx.route:
            effort = self.session.efforts.get(ctx.route)
            if effort is not None:
                return effort
        return self.session.efforts.active

    def _log_exchange(self, turn: int, user_msg: dict[str, Any], reply: dict[str, Any], ctx) -> str:
        effort = self._destination(ctx)
        records = [user_msg, reply]
        if effort is None:
            self.session.append_ambient(records)
            to = "ambient"
        else:
            self.session.append_effort(effort, records)
            to = effort.id
        self.session.log_event(ev.MESSAGE_LOGGED, to=to, count=len(records), next_turn=turn)
        if self.on_logged is not None:
            self.on_logged(to, records)
        return to

    def _finish(self, turn: int, user_msg, reply_msg, ctx, terminal: str | None, **fields: Any) -> str:
        """The one way a turn's exchange reaches disk: append it where its route says, refresh the
        manifest's counts if it went to a concluded effort, save the snapshots, log ``terminal``."""
        session = self.session
        logged_to = self._log_exchange(turn, user_msg, reply_msg, ctx)
        destination = session.efforts.get(logged_to)
        if destination is not None and destination.is_concluded:
            session.save_manifest()  # the concluded effort's token and message counts
        session.state.turn = turn
        session.save_view()
        session.save_state()
        if terminal:
            session.log_event(terminal, logged_to=logged_to, **fields)
        return logged_to

    async def _commit(self, turn, user_msg, reply, ctx, result: TurnResult, emit: Emit) -> None:
        session = self.session
        assistant = {"role": "assistant", "content": reply, "ts": now_iso()}
        if result.tool_calls:
            assistant["tools"] = [c["name"] for c in result.tool_calls]
        result.reply = reply
        session.state.turn = turn
        referenced = referenced_efforts(session, self.id_index(), [user_msg["content"], reply], ctx.touched)
        report = end_of_turn(
            session,
            turn,
            referenced,
            decay_threshold=self.settings.decay_threshold,
            eviction_threshold=self.settings.summary_eviction_threshold,
        )
        for effort_id in report.collapsed:
            ctx.banner(f"Auto-collapsed effort: {effort_id} (inactive for {self.settings.decay_threshold} turns)")
            emit(Banner(turn=turn, text=ctx.banners[-1]))
            emit(EffortChanged(turn=turn, effort_id=effort_id, change="collapsed"))
        for effort_id in report.evicted:
            emit(EffortChanged(turn=turn, effort_id=effort_id, change="evicted"))
        for effort_id in report.restored:
            emit(EffortChanged(turn=turn, effort_id=effort_id, change="restored"))
        result.logged_to = self._finish(turn, user_msg, assistant, ctx, None)
        # The exchange is on disk; compaction for the next request may call the model (and be
        # cancelled): the turn is recorded as done either way.
        wc = None
        try:
            wc = await self._compact_after_turn(ctx, emit)
        finally:
            figures = self.figures(wc)
            session.state.history.append({"turn": turn, "ccm": figures.total, "naive": figures.naive})
            del session.state.history[:-HISTORY_LIMIT]
            session.save_view()
            session.save_state()
            session.log_event(ev.TURN_DONE, logged_to=result.logged_to, total=figures.total, naive=figures.naive)
        result.banners = list(ctx.banners)
        result.context = figures
        emit(figures)
        emit(
            TurnDone(
                turn=turn,
                reply=reply,
                logged_to=result.logged_to,
                banners=tuple(ctx.banners),
                usage=dict(self.usage_total),
                context=figures,
            )
        )

    async def _compact_after_turn(self, ctx: toolbox.ToolContext, emit: Emit) -> WorkingContext | None:
        """Keep the working context (what the next request starts from) within the budget,
        so the meter never shows more than the budget allows. Best effort: the turn is done.
        Returns that context (None if compaction could not finish)."""
        try:
            return await self._fit([], self.offered_tools, ctx, emit)
        except (ContextTooLarge, LLMError):
            return None  # the next request compacts again, or reports why it cannot

    # ---------------------------------------------------------------- actions
    async def run_action(
        self, tool_name: str, arguments: dict[str, Any], emit: Emit | None = None
    ) -> toolbox.ToolOutcome:
        """A user action from the UI (expand, conclude, reopen ...), through the same tools as the model's."""
        emit = emit or (lambda event: None)
        turn = self.session.state.turn
        ctx = toolbox.ToolContext(
            session=self.session,
            llm=self.llm,
            turn=turn,
            summary_max_tokens=self.settings.summary_max_tokens,
            search=self.search,
            message_cap=self.message_cap,
            source="user",
        )
        if tool_name in MODEL_ACTIONS:
            await self._ensure_client(turn, emit)
        outcome = await toolbox.execute(ctx, tool_name, arguments)
        for banner in ctx.banners:
            emit(Banner(turn=turn, text=banner))
        for effort_id, change in ctx.changes:
            if change == "opened":
                self.id_index().add(effort_id)
            emit(EffortChanged(turn=turn, effort_id=effort_id, change=change))
        if outcome.ok:
            referenced = set(ctx.touched)
            for effort_id in referenced:
                self.session.view.last_referenced[effort_id] = turn
            self.session.save_view()
            emit(self.figures())
        return outcome
