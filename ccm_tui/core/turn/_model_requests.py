"""One model request with the retry policy, and what the session learns about its model.

The orchestrator asks :class:`ModelCalls` for each request of a turn. It makes
sure the client library is loaded (saying so while it loads), pauses on rate
limits (``SESSION PAUSED``, resumed by itself), retries transient faults with
backoff, tries an unreachable address once more, and notices a model that
cannot take tools: from then on requests go without them and the user is told
once. It also adds up the tokens and the cost the provider reports.

A reply is capped (``reply_max_tokens``, the model's own output limit when lower): the request
asks for no more, and its tokens are counted as they stream in, so a model that goes on regardless
(a looping local model) is not read past the cap — the reply ends there, marked cut
(``finish_reason`` "length", as a provider says when it stopped at max_tokens itself).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from typing import Any

from ...config import Settings
from ...errors import Interruption
from ..models.capabilities import (
    FROM_MODEL_MAP,
    known_without_tools,
    learned_without_tools,
    remember_without_tools,
    reply_cap,
)
from ..models.interface import ChatModel, Completion, OnDelta
from ..models.provider_errors import CONNECTION, NO_TOOLS, RATE_LIMIT, LLMError, ProviderFailure
from ..session.session import Session
from ..storage import eventlog as ev
from ..text.tokens import TokenCounter
from .events import Asking, Banner, Paused, Resumed, RoundReset, TurnEvent, Waiting, WaitingFor

Emit = Callable[[TurnEvent], None]
LOADING_CLIENT = "loading the model client…"
CUT = "length"  # the finish reason of a reply that reached its cap


class ReplyCapped(Interruption):
    """The reply reached its cap: the stream is not read further."""


class _Counted:
    """The receiver of a reply's text that counts its tokens as they arrive, and stops the stream
    (raising :class:`ReplyCapped`) at the piece that would pass ``cap``."""

    def __init__(self, on_delta: OnDelta | None, cap: int, encoding: Any) -> None:
        self.on_delta = on_delta
        self.cap = cap
        self.encoding = encoding
        self.tokens = 0
        self.text: list[str] = []

    def __call__(self, piece: str) -> Any:
        tokens = len(self.encoding.encode(piece, disallowed_special=()))
        if self.tokens + tokens > self.cap:
            raise ReplyCapped
        self.tokens += tokens
        self.text.append(piece)
        return self.on_delta(piece) if self.on_delta is not None else None

    def completion(self) -> Completion:
        """The reply as far as it was read (its tool calls, unfinished, are left out)."""
        return Completion(content="".join(self.text), usage={"completion_tokens": self.tokens}, finish_reason=CUT)


def no_tools_notice(model: str) -> str:
    """What the user is told, once, when a model cannot use tools."""
    return (
        f"{model} cannot use tools, so it cannot manage efforts itself. The chat goes on without them: "
        "open, conclude and expand efforts by hand (Ctrl+O, the effort list, the command palette)."
    )


class ModelCalls:
    """The requests of one session's model (``llm`` None: no model is configured)."""

    def __init__(
        self,
        session: Session,
        settings: Settings,
        llm: ChatModel | None,
        *,
        retry_base: float = 1.0,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        self.session = session
        self.settings = settings
        self.llm = llm
        self.retry_base = retry_base
        self._sleep = sleep
        self.usage_total: dict[str, int] = {}  # this run's requests
        self.cost_total: float | None = None
        self.turn_usage: dict[str, int] = {}  # the current turn's requests (begin_turn resets it)
        self.turn_cost: float | None = None
        self._tools_enabled: bool | None = None  # looked up on first use
        self._tell_no_tools = False
        self._reply_cap: int | None = None  # looked up on first use (the model map)
        self._sent: list[int] = []  # the previous request's messages, fingerprinted (the prefix estimate)

    @property
    def reply_cap(self) -> int:
        """Most tokens of one reply: ``reply_max_tokens``, or the model's output limit when lower."""
        if self._reply_cap is None:
            model = self.llm.model if self.llm is not None else None
            self._reply_cap = reply_cap(self.settings.reply_max_tokens, model)
        return self._reply_cap

    # ------------------------------------------------------------------ tools
    @property
    def tools_enabled(self) -> bool:
        """Whether requests offer the tools: not for a model that cannot use them (learned on
        this machine, or stated by litellm's model map)."""
        if self._tools_enabled is None:
            llm = self.llm
            if llm is None or not llm.model:
                self._tools_enabled = True  # nothing to ask: no request is made
            elif learned_without_tools(llm.model, llm.api_base):
                self._tools_enabled = False
            elif known_without_tools(llm.model):
                self._tools_enabled = False
                self._tell_no_tools = True
            else:
                self._tools_enabled = True
        return self._tools_enabled

    def _without_tools(self, reason: str, turn: int, emit: Emit, banners: list[str], *, source: str = "server") -> None:
        """From now on this model chats without tools; the user is told once (per machine)."""
        self._tools_enabled = False
        self._tell_no_tools = False
        model = self.llm.model if self.llm is not None and self.llm.model else "this model"
        remember_without_tools(model, reason, source=source, api_base=self.llm.api_base if self.llm else None)
        self.session.log_event(ev.MODEL_WITHOUT_TOOLS, model=model, reason=reason)
        banners.append(no_tools_notice(model))
        emit(Banner(turn=turn, text=banners[-1], kind="info"))

    # --------------------------------------------------------------- requests
    async def ensure_client(self, turn: int, emit: Emit) -> None:
        """The client library imported (seconds) off the event loop before the model is asked, saying
        so (``Waiting``) when it was not loaded yet: a cold start never looks like a silent hang."""
        if self.llm is not None and not self.llm.loaded:
            emit(Waiting(turn=turn, reason=LOADING_CLIENT, cause=WaitingFor.MODEL))
            await asyncio.to_thread(self.llm.load)

    async def call(self, messages, tools, on_delta, turn: int, emit: Emit, banners: list[str]) -> Completion | None:
        """One model request with the retry policy: pause on rate limits, back off on transient faults.
        None when the model refused the tools (from now on it is asked without them)."""
        if self.llm is None:
            raise LLMError(ProviderFailure.CONFIGURATION, "no model is configured")
        await self.ensure_client(turn, emit)
        if self._tell_no_tools:
            self._without_tools(
                "litellm's model map says it has no function calling", turn, emit, banners, source=FROM_MODEL_MAP
            )
        attempt = 0
        waited = 0.0
        while True:
            emit(Asking(turn=turn, attempt=attempt + 1))
            counted = _Counted(on_delta, self.reply_cap, self._encoding())
            try:
                completion = await self.llm.stream_chat(self._hinted(messages), tools, counted)
            except ReplyCapped:
                completion = counted.completion()
            except LLMError as exc:
                if exc.kind == NO_TOOLS and tools:
                    self._without_tools(str(exc), turn, emit, banners)
                    return None  # the caller assembles the request again, without tools
                attempt += 1
                delay = self._delay_before_retry(exc, attempt, waited, turn, emit)
                if exc.kind == RATE_LIMIT:
                    await self._pause(exc, delay, attempt, turn, emit)
                    waited += delay
                else:
                    emit(Waiting(turn=turn, reason=f"retrying in {delay:.1f} s", cause=WaitingFor.RETRY))
                    await self._sleep(delay)
                continue
            usage = completion.usage
            shared = self._repeated_prefix(messages)
            if usage and shared and not usage.get("cached_tokens") and not usage.get("cache_write_tokens"):
                usage = {**usage, "cached_estimate": shared}  # the provider said nothing of its cache
            self._add_usage(usage)
            if completion.finish_reason == CUT:
                self._say_cut(turn, emit, banners)
                completion.tool_calls = []  # cut in the middle: not run
            return completion

    def _repeated_prefix(self, messages: list[dict[str, Any]]) -> int:
        """Tokens of the messages this request repeats, in order, from the start of the previous one (what
        a provider's prefix cache could serve; counted with the session's counter, cached per message)."""
        keys = [hash(json.dumps(m, sort_keys=True, default=str)) for m in messages]
        shared = 0
        counter = self.session.counter if self.session is not None else None
        for n, (a, b) in enumerate(zip(self._sent, keys, strict=False)):
            if a != b or counter is None:
                break
            shared += counter.count_message(messages[n])
        self._sent = keys
        return shared

    def _hinted(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The request with prompt-cache hints where the provider needs them (Anthropic's ``cache_control``:
        the system prompt, the ends of the stable layers and the conversation so far); as it is for every
        other provider."""
        if not getattr(self.llm, "cache_hints", False):
            return messages
        from ..efforts.working_context import cache_breakpoints
        from ..models.litellm_client import with_cache_hints

        return with_cache_hints(messages, cache_breakpoints(messages))

    def _say_cut(self, turn: int, emit: Emit, banners: list[str]) -> None:
        """The reply stopped at its cap: the user is told, with the way out."""
        banners.append(
            f"The reply was cut at {self.reply_cap:,} tokens (reply_max_tokens): ask the model to go on, "
            "or raise the setting"
        )
        emit(Banner(turn=turn, text=banners[-1], kind="info"))

    def _delay_before_retry(self, exc: LLMError, attempt: int, waited: float, turn: int, emit: Emit) -> float:
        """Seconds to wait before trying again, or raise when this failure is not retried."""
        settings = self.settings
        if exc.kind == RATE_LIMIT:
            delay = exc.retry_after if exc.retry_after is not None else min(60.0, 5.0 * 2 ** (attempt - 1))
            delay = delay * (self.retry_base if exc.retry_after is None else 1.0)
            if waited + delay > settings.max_rate_limit_wait:
                raise LLMError(RATE_LIMIT, f"{exc} (gave up after waiting {int(waited)} s)") from None
            return delay
        if exc.kind == CONNECTION:
            # Nothing reached the server: one brief second try (a local server starting up),
            # then the turn fails saying the address cannot be reached.
            if attempt <= min(1, settings.max_retries):
                delay = self.retry_base * (1 + random.random() / 4)
                emit(Banner(turn=turn, text=f"{exc}; trying again in {delay:.1f} s", kind="info"))
                return delay
            raise exc
        if exc.transient and not exc.partial and attempt <= settings.max_retries:
            delay = self.retry_base * (2 ** (attempt - 1)) * (1 + random.random() / 4)
            emit(Banner(turn=turn, text=f"provider hiccup ({exc}); retrying in {delay:.1f} s", kind="info"))
            return delay
        if exc.partial:
            emit(RoundReset(turn=turn))
        raise exc

    async def _pause(self, exc: LLMError, delay: float, attempt: int, turn: int, emit: Emit) -> None:
        resume_at = time.time() + delay
        self.session.log_event(ev.SESSION_PAUSE, reason=str(exc), resets_at=resume_at, attempt=attempt)
        emit(Paused(turn=turn, reason=str(exc), resume_at=resume_at, attempt=attempt))
        await self._sleep(delay)
        self.session.log_event(ev.SESSION_RESUME, attempt=attempt)
        emit(Resumed(turn=turn))

    def _encoding(self) -> Any:
        counter = self.session.counter if self.session is not None else TokenCounter(self.llm and self.llm.model)
        return counter.encoding

    def begin_turn(self) -> None:
        self.turn_usage, self.turn_cost = {}, None

    def _add_usage(self, usage: dict[str, int]) -> None:
        """What a request cost: added to this run's, this turn's and the session's figures (those are
        kept in ``session_state.json`` across launches)."""
        kept: dict[str, Any] = self.session.state.usage if self.session is not None else {}
        for counts in (self.usage_total, self.turn_usage, kept):
            counts["requests"] = int(counts.get("requests", 0)) + 1
            for key in ("prompt_tokens", "completion_tokens"):
                counts[key] = int(counts.get(key, 0)) + int(usage.get(key, 0) or 0)
            for key in ("cached_tokens", "cache_write_tokens", "cached_estimate"):  # when there are any
                if usage.get(key):
                    counts[key] = int(counts.get(key, 0)) + int(usage[key])
        if "total_tokens" in usage:
            self.usage_total["total_tokens"] = self.usage_total.get("total_tokens", 0) + usage["total_tokens"]
        if usage and self.llm is not None:
            from ..models.litellm_client import usage_cost

            cost = usage_cost(self.llm.model, usage)
            if cost is not None:
                self.cost_total = (self.cost_total or 0.0) + cost
                self.turn_cost = (self.turn_cost or 0.0) + cost
                kept["cost"] = float(kept.get("cost", 0.0)) + cost
