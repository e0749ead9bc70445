"""The litellm adapter: one chat model (and optionally a cheaper summary model) behind :class:`ChatModel`.

litellm takes seconds to import, so it is imported on first use (or warmed up
in the background by the TUI), never at module import. Every provider failure
becomes an :class:`~.provider_errors.LLMError` (see :mod:`.provider_errors`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from ...config import env, note_url_secrets, prepare_offline_libraries
from ...errors import Interruption
from .interface import Completion, OnDelta, ToolCall
from .provider_errors import (
    AUTH,
    BAD_REQUEST,
    CONNECTION,
    CONTEXT_WINDOW,
    NO_TOOLS,
    NOT_FOUND,
    OTHER,
    RATE_LIMIT,
    STREAM_CUT,
    TRANSIENT,
    LLMError,
    classify,
)

__all__ = [
    "AUTH",
    "BAD_REQUEST",
    "CONNECTION",
    "CONTEXT_WINDOW",
    "NOT_FOUND",
    "NO_TOOLS",
    "OTHER",
    "RATE_LIMIT",
    "STREAM_CUT",
    "TRANSIENT",
    "Completion",
    "LLMClient",
    "LLMError",
    "ToolCall",
    "import_litellm",
    "parse_arguments",
    "takes_cache_hints",
    "usage_cost",
    "with_cache_hints",
]

_litellm = None


def import_litellm():
    """Import litellm once, offline-safe and quiet."""
    global _litellm
    if _litellm is None:
        prepare_offline_libraries()
        import litellm

        litellm.suppress_debug_info = True
        litellm.drop_params = True  # providers that lack an option (e.g. stream_options) still work
        # httpx's transport closes cleanly with each event loop; the aiohttp one leaves
        # "Unclosed client session" warnings behind when a loop ends (every `send`, every test).
        litellm.disable_aiohttp_transport = True
        _litellm = litellm
    return _litellm


async def release_loop_clients() -> None:
    """Close the HTTP clients litellm made for the running event loop, which is about to end.

    litellm keeps one client per provider and event loop in a process-wide cache and closes them only
    when they are evicted: a process that opens session after session (the TUI switching sessions,
    the MCP server) would keep a connection open for every loop that is gone. Best effort: a litellm
    that keys its cache otherwise is left as it is."""
    if _litellm is None:
        return  # no request was ever made
    try:
        from litellm.caching.evicted_client_closer import running_loop_token

        token: object = running_loop_token()
    except ImportError:
        token = id(asyncio.get_running_loop())
    store = getattr(_litellm, "in_memory_llm_clients_cache", None)
    cache = getattr(store, "cache_dict", None)
    if token is None or not isinstance(cache, dict):
        return
    for key in [key for key in list(cache) if isinstance(key, str) and key.endswith(f"-{token}")]:
        client = cache.get(key)
        with contextlib.suppress(Exception):
            store._remove_key(key)  # type: ignore[union-attr]  # (its expiry bookkeeping too)
        cache.pop(key, None)
        close = getattr(client, "aclose", None) or getattr(client, "close", None)
        try:
            result = close() if callable(close) else None
            if asyncio.iscoroutine(result):
                await result
        except Exception:  # noqa: BLE001 - closing a client that is gone is no failure
            pass


class _DeltaFailed(Interruption):
    """The streamed text's receiver raised: its error goes up as it is."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class _StreamAssembler:
    """Puts a streamed reply back together: text (reported as it arrives), tool calls, usage."""

    def __init__(self, on_delta: OnDelta | None) -> None:
        self.on_delta = on_delta
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, int] = {}
        self.finish_reason: str | None = None

    async def take(self, chunk: Any) -> None:
        usage = getattr(chunk, "usage", None)
        if usage:
            self.usage = _usage_dict(usage)
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return
        choice = choices[0]
        if getattr(choice, "finish_reason", None):
            self.finish_reason = choice.finish_reason
        delta = getattr(choice, "delta", None)
        if delta is None:
            return
        piece = getattr(delta, "content", None)
        if piece:
            self.text.append(piece)
            if self.on_delta is not None:
                try:
                    result = self.on_delta(piece)
                    if asyncio.iscoroutine(result):
                        await result
                except Exception as exc:  # ours (a write that failed), not the provider's
                    raise _DeltaFailed(exc) from exc
        for tc in getattr(delta, "tool_calls", None) or []:
            self._take_call(tc)

    def _take_call(self, tc: Any) -> None:
        index = getattr(tc, "index", None)
        if index is None:
            index = len(self.calls)
        slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": []})  # pieces: joined once
        if getattr(tc, "id", None):
            slot["id"] = tc.id
        fn = getattr(tc, "function", None)
        if fn is not None:
            if getattr(fn, "name", None):
                slot["name"] = fn.name
            if getattr(fn, "arguments", None):
                slot["arguments"].append(fn.arguments)

    def failure(self, err: LLMError) -> LLMError:
        """The error a failed stream raises, with the text that had arrived."""
        err.partial = "".join(self.text)
        if err.kind in (OTHER, CONNECTION) and self.text:
            # the server was reached and had started answering: the reply was cut, not refused
            return LLMError(STREAM_CUT, "the reply stream was cut off before it finished", partial=err.partial)
        return err

    def completion(self) -> Completion:
        out = Completion(content="".join(self.text), usage=self.usage, finish_reason=self.finish_reason)
        out.tool_calls = [
            ToolCall(id=slot["id"] or f"call_{i}", name=slot["name"], arguments="".join(slot["arguments"]))
            for i, slot in sorted(self.calls.items())
            if slot["name"]
        ]
        if out.finish_reason is None and not out.tool_calls and not out.usage and out.content:
            # The stream ended without a finish reason: the connection was cut mid-reply.
            raise LLMError(STREAM_CUT, "the reply stream was cut off before it finished", partial=out.content)
        return out


class LLMClient:
    """Talks to one chat model (and optionally a cheaper summary model) through litellm."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        summary_model: str | None = None,
        timeout: float = 120.0,
        extra: dict[str, Any] | None = None,
        reply_max_tokens: int | None = None,
    ) -> None:
        self.model = model
        self.reply_max_tokens = reply_max_tokens  # asked of every chat request (max_tokens), see reply_cap
        self._reply_cap: int | None = None
        self.summary_model = summary_model or model
        self.api_base = api_base
        note_url_secrets(api_base)  # its password or key is redacted wherever it is echoed
        self.timeout = timeout
        self.extra = dict(extra or {})

    @property
    def cache_hints(self) -> bool:
        """The provider caches only what ``cache_control`` hints mark (see :func:`takes_cache_hints`)."""
        return takes_cache_hints(self.model)

    @property
    def loaded(self) -> bool:
        """litellm is imported: a request starts at once."""
        return _litellm is not None

    def load(self) -> None:
        """Import litellm (seconds; blocking: call it in a thread)."""
        import_litellm()

    def _kwargs(self, model: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": model, "timeout": self.timeout, "num_retries": 0, "max_retries": 0}
        if self.api_base:
            kwargs["api_base"] = self.api_base
            if model.startswith("openai/") and not env("OPENAI_API_KEY"):
                # OpenAI-compatible local servers (vLLM, LM Studio, llama.cpp) need no key,
                # but the client insists on one; a real endpoint answers 401, reported clearly.
                kwargs["api_key"] = "no-key"
        kwargs.update(self.extra)
        return kwargs

    async def stream_chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: OnDelta | None = None,
    ) -> Completion:
        """One streamed request. Text deltas go to ``on_delta``; tool calls are reassembled. The reply
        is asked to stop at ``reply_max_tokens`` (the model's own output limit when lower); a
        receiver that stops reading (it raised) closes the stream, so a model that goes on
        regardless is not read further."""
        litellm = import_litellm()
        kwargs = self._kwargs(self.model)
        kwargs.update(messages=messages, stream=True, stream_options={"include_usage": True})
        if self.reply_max_tokens:
            kwargs.setdefault("max_tokens", self._cap())
        if tools:
            kwargs["tools"] = tools
        stream = _StreamAssembler(on_delta)
        response = None
        try:
            response = await litellm.acompletion(**kwargs)
            async for chunk in response:
                await stream.take(chunk)
        except asyncio.CancelledError:
            raise
        except _DeltaFailed as exc:  # the receiver failed (a full disk) or stopped: its error, not "the stream was cut"
            await _close(response)
            raise exc.error from None
        except Exception as exc:  # noqa: BLE001 - every provider failure becomes an LLMError
            raise stream.failure(classify(exc, self.model, self.api_base)) from None
        return stream.completion()

    def _cap(self) -> int:
        if self._reply_cap is None:
            from .capabilities import reply_cap

            self._reply_cap = reply_cap(self.reply_max_tokens or 0, self.model)
        return self._reply_cap

    async def _request(self, model: str, **kwargs: Any) -> Any:
        """One non-streamed request; provider failures become LLMError."""
        litellm = import_litellm()
        try:
            return await litellm.acompletion(**self._kwargs(model), **kwargs)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every provider failure becomes an LLMError
            raise classify(exc, model, self.api_base) from None

    async def complete(
        self, messages: list[dict[str, Any]], *, max_tokens: int | None = None, summary: bool = True
    ) -> Completion:
        """A plain (non-streamed, tool-less) request, used for summaries."""
        model = self.summary_model if summary else self.model
        response = await self._request(model, messages=messages, **({"max_tokens": max_tokens} if max_tokens else {}))
        choice = response.choices[0]
        return Completion(
            content=getattr(choice.message, "content", None) or "",
            usage=_usage_dict(getattr(response, "usage", None)),
            finish_reason=getattr(choice, "finish_reason", None),
        )

    async def chat_once(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Completion:
        """A non-streamed request with tools (restore's evidence loop)."""
        response = await self._request(self.summary_model, messages=messages, **({"tools": tools} if tools else {}))
        msg = response.choices[0].message
        calls = [
            ToolCall(id=tc.id or f"call_{i}", name=tc.function.name or "", arguments=tc.function.arguments or "")
            for i, tc in enumerate(getattr(msg, "tool_calls", None) or [])
        ]
        return Completion(
            content=getattr(msg, "content", None) or "",
            tool_calls=calls,
            usage=_usage_dict(getattr(response, "usage", None)),
        )


async def _close(response: Any) -> None:
    """Close a streamed response that is not read to its end (the connection goes: the server stops)."""
    close = getattr(response, "aclose", None)
    if close is None:
        return
    with contextlib.suppress(Exception):
        await close()


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _usage_dict(usage: Any) -> dict[str, int]:
    """The provider's usage as plain counts. ``prompt_tokens`` is every input token (litellm adds
    Anthropic's cache reads and writes to it); ``cached_tokens`` those read from the provider's prompt
    cache (OpenAI's ``prompt_tokens_details.cached_tokens``, Anthropic's ``cache_read_input_tokens``),
    ``cache_write_tokens`` those written to it (Anthropic's ``cache_creation_input_tokens``), when
    the provider reports them."""
    if not usage:
        return {}
    out = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = _field(usage, key)
        if isinstance(value, int):
            out[key] = value
    details = _field(usage, "prompt_tokens_details")
    read = _field(details, "cached_tokens") if details is not None else None
    if not isinstance(read, int) or not read:
        read = _field(usage, "cache_read_input_tokens")
    if isinstance(read, int) and read > 0:
        out["cached_tokens"] = read
    written = _field(usage, "cache_creation_input_tokens")
    if isinstance(written, int) and written > 0:
        out["cache_write_tokens"] = written
    return out


def usage_cost(model: str | None, usage: dict[str, int]) -> float | None:
    """Dollar cost of a request when litellm knows the model's price: tokens read from the provider's
    cache at its cache-read price and tokens written to it at its cache-write price, when the model map
    has them (else at the input price)."""
    if not model or not usage:
        return None
    try:
        litellm = import_litellm()
        prompt = int(usage.get("prompt_tokens", 0))
        read = min(prompt, int(usage.get("cached_tokens", 0)))
        written = min(prompt - read, int(usage.get("cache_write_tokens", 0)))
        total = _priced(litellm, model, prompt - read - written, read, written, int(usage.get("completion_tokens", 0)))
        if total is None:
            cost_in, cost_out = litellm.cost_per_token(
                model=model, prompt_tokens=prompt, completion_tokens=usage.get("completion_tokens", 0)
            )
            total = float(cost_in) + float(cost_out)
    except Exception:  # noqa: BLE001
        return None
    return total if total > 0 else None


def _priced(litellm: Any, model: str, uncached: int, read: int, written: int, completion: int) -> float | None:
    """The cost from the model map's per-token prices (None: the map has no input price for it)."""
    try:
        info = litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - a model the map does not know
        return None
    price_in = info.get("input_cost_per_token")
    if not price_in:
        return None
    price_read = info.get("cache_read_input_token_cost") or price_in
    price_write = info.get("cache_creation_input_token_cost") or price_in
    price_out = info.get("output_cost_per_token") or 0.0
    return uncached * price_in + read * price_read + written * price_write + completion * price_out


CACHE_HINT = {"type": "ephemeral"}  # Anthropic's 5-minute prompt cache
_HINT_ROUTES = ("bedrock", "vertex_ai", "vertex_ai_beta", "openrouter", "databricks", "snowflake")


def takes_cache_hints(model: str | None) -> bool:
    """Whether the provider caches only what ``cache_control`` marks: Anthropic, and Claude models on the
    routes litellm passes the hints through (Bedrock, Vertex AI, OpenRouter, ...). Others (OpenAI,
    Gemini, DeepSeek, local servers) cache a shared prefix by themselves and get no hint."""
    if not model:
        return False
    name = model.lower()
    route = name.split("/", 1)[0] if "/" in name else ""
    if route == "anthropic" or (not route and name.startswith("claude")):
        return True
    return route in _HINT_ROUTES and ("claude" in name or "anthropic" in name)


def with_cache_hints(
    messages: list[dict[str, Any]], marks: list[int], split: int | None = None
) -> list[dict[str, Any]]:
    """The messages with a ``cache_control`` hint on those at ``marks`` (at most 4: the provider's limit).
    litellm carries a message's hint onto its last content block; the text is unchanged. With
    ``split``, the first message goes as two text blocks cut there, the hint on the first (its stable
    head stays cached when the rest changes). The messages given are not modified."""
    out = list(messages)
    for index in sorted(set(marks))[:4]:
        if not 0 <= index < len(out):
            continue
        content = out[index].get("content")
        if index == 0 and split and isinstance(content, str) and 0 < split < len(content):
            blocks = [
                {"type": "text", "text": content[:split], "cache_control": dict(CACHE_HINT)},
                {"type": "text", "text": content[split:]},
            ]
            out[index] = {**out[index], "content": blocks}
        else:
            out[index] = {**out[index], "cache_control": dict(CACHE_HINT)}
    return out


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """Tool-call arguments as a dict, or an error message for the model."""
    if raw is None or not str(raw).strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc.msg} at position {exc.pos})"
    except ValueError as exc:  # e.g. a number too long to convert
        return None, f"arguments are not valid JSON ({exc})"
    except RecursionError:
        return None, "arguments are not valid JSON (nested too deeply)"
    if not isinstance(value, dict):
        return None, "arguments must be a JSON object"
    return value, None
