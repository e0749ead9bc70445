"""The litellm adapter: streaming chat with tools, summaries, model facts, error mapping.

litellm takes seconds to import, so it is imported on first use (or warmed up
in the background by the TUI), never at module import. Every provider failure
becomes an :class:`LLMError` with a one-line message and a ``kind`` the
orchestrator can act on (pause on rate limits, retry transient faults, tell
the user what to fix for auth / unknown model).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..config import env, prepare_offline_libraries
from .eventlog import redact

RATE_LIMIT = "rate_limit"
AUTH = "auth"
NOT_FOUND = "not_found"
TRANSIENT = "transient"
BAD_REQUEST = "bad_request"
CONTEXT_WINDOW = "context_window"
STREAM_CUT = "stream_cut"
CONNECTION = "connection"
NO_TOOLS = "no_tools"  # the model (as served) cannot take tool definitions
OTHER = "other"

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


class LLMError(Exception):
    """A provider call failed. ``str(err)`` is one line, safe to show and log."""

    def __init__(self, kind: str, message: str, *, retry_after: float | None = None, partial: str = "") -> None:
        super().__init__(redact(message))
        self.kind = kind
        self.retry_after = retry_after
        self.partial = partial

    @property
    def transient(self) -> bool:
        return self.kind in (TRANSIENT, CONNECTION, STREAM_CUT)


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it

    def as_message_part(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class Completion:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None


def _first_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line[:limit] + ("…" if len(line) > limit else "")


# How servers say a model takes no tools (Ollama: "registry.ollama.ai/library/gemma:2b does not support tools").
NO_TOOLS_MARKERS = (
    "does not support tool",  # "… tools" too
    "tools are not supported",
    "tool use is not supported",
    "does not support function calling",
    "function calling is not supported",
)

_EXCEPTION_PREFIX = re.compile(r"^(?:litellm\.)?\w+(?:Error|Exception)(?: - |: )")


def _plain(detail: str) -> str:
    """A provider message without the exception names litellm chains in front of it
    ("litellm.InternalServerError: InternalServerError: OpenAIException - …")."""
    previous = None
    while previous != detail:
        previous = detail
        detail = _EXCEPTION_PREFIX.sub("", detail, count=1).strip()
    detail = re.sub(r" Handle with `litellm\.\w+`\.?", "", detail)
    return _error_body_message(detail) or detail or previous or ""


def _error_body_message(detail: str) -> str | None:
    """The message inside an error body the provider sent as JSON (``b'{"error": …}'`` too)."""
    start, end = detail.find("{"), detail.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        body = json.loads(detail[start : end + 1])
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return error.strip() if isinstance(error, str) and error.strip() else None


def _retry_after(exc: BaseException) -> float | None:
    """Seconds to wait, from Retry-After / provider reset headers when the error carries them."""
    headers: Any = None
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers:
            break
    if not headers:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        items = {str(k).lower(): str(v) for k, v in dict(headers).items()}
    except Exception:  # noqa: BLE001 - header objects vary by provider
        return None
    for key in ("retry-after-ms",):
        if key in items:
            try:
                return max(0.0, float(items[key]) / 1000)
            except ValueError:
                pass
    for key in ("retry-after", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens", "x-ratelimit-reset"):
        value = items.get(key)
        if not value:
            continue
        try:
            return max(0.0, float(value.rstrip("s")))
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(value) if "," in value else None
            if parsed is not None:
                return max(0.0, parsed.timestamp() - time.time())
    return None


def _exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first (bounded: chains can loop)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 20:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


CONNECTION_MARKERS = ("all connection attempts failed", "connect call failed", "cannot connect to host")


def connection_failure(exc: BaseException) -> str | None:
    """Why a request never reached the server ("connection refused", "host not found", …), or
    None when the server was reached (a real 5xx, a timeout after connecting)."""
    chain = _exception_chain(exc)
    for link in chain:
        if isinstance(link, ConnectionRefusedError):
            return "connection refused"
        if isinstance(link, socket.gaierror):
            return "host not found"
    for link in chain:
        text = str(link).lower()
        if "name or service not known" in text or "nodename nor servname" in text:
            return "host not found"
        if type(link).__name__ == "ConnectError" or any(marker in text for marker in CONNECTION_MARKERS):
            return "connection failed"
    return None


def _endpoint(exc: BaseException, api_base: str | None, model: str | None) -> str:
    """The address the request went to, as the user would recognise it."""
    if api_base:
        return api_base
    for link in _exception_chain(exc):
        try:  # httpx raises RuntimeError for a request it never set
            url = link.request.url  # type: ignore[attr-defined]
            return f"{url.scheme}://{url.host}{f':{url.port}' if url.port else ''}"
        except (AttributeError, RuntimeError):
            continue
    return f"the provider of {model}"


def classify(exc: BaseException, model: str | None, api_base: str | None = None) -> LLMError:
    """Map a litellm/httpx/openai exception onto an LLMError with a clear one-line message
    (plain words, no exception chain)."""
    if isinstance(exc, LLMError):
        return exc
    name = type(exc).__name__
    if name == "MidStreamFallbackError":
        return LLMError(
            STREAM_CUT,
            "the reply stream was cut off before it finished",
            partial=getattr(exc, "generated_content", "") or "",
        )
    if any(marker in str(exc).lower() for marker in NO_TOOLS_MARKERS):
        return LLMError(NO_TOOLS, f"{model} cannot use tools ({_plain(_first_line(str(exc)))})")
    failure = connection_failure(exc)
    if failure is not None:
        return LLMError(CONNECTION, f"cannot reach {_endpoint(exc, api_base, model)} ({failure})")
    status = getattr(exc, "status_code", None)
    raw = getattr(exc, "message", None) or str(exc) or name
    detail = _plain(_first_line(raw))
    if "Missing credentials" in raw or "api_key client option must be set" in raw:
        return LLMError(
            AUTH,
            f"no API key found for {model}: set the provider's key variable "
            f"(e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY); a local server accepts any value",
        )
    if name == "RateLimitError" or status == 429:
        return LLMError(RATE_LIMIT, f"rate limited by the provider: {detail}", retry_after=_retry_after(exc))
    if name in ("AuthenticationError", "PermissionDeniedError") or status in (401, 403):
        return LLMError(
            AUTH,
            f"the provider refused the API key for {model}: set the provider's key variable "
            f"(e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY) or check it ({detail})",
        )
    if name == "NotFoundError" or status == 404:
        return LLMError(
            NOT_FOUND, f"model {model!r} was not found by the provider: check --model / CCM_MODEL ({detail})"
        )
    if name == "ContextWindowExceededError":
        return LLMError(CONTEXT_WINDOW, f"the request is larger than {model}'s context window: {detail}")
    if name in ("Timeout", "APITimeoutError", "TimeoutError") or isinstance(exc, asyncio.TimeoutError):
        return LLMError(TRANSIENT, f"the provider did not answer in time ({detail})")
    if name in ("APIConnectionError", "ConnectError", "ConnectionError") or (
        status is None and "connect" in raw.lower()
    ):
        return LLMError(CONNECTION, f"cannot reach {_endpoint(exc, api_base, model)} ({detail})")
    if name in ("InternalServerError", "BadGatewayError") or (isinstance(status, int) and status >= 500):
        return LLMError(TRANSIENT, f"provider error {status or ''}: {detail}".replace("  ", " "))
    if "LLM Provider NOT provided" in raw:
        return LLMError(
            BAD_REQUEST, f"litellm does not know model {model!r}: use provider/model, e.g. openai/gpt-4o-mini"
        )
    if name in ("BadRequestError", "UnprocessableEntityError", "UnsupportedParamsError") or status == 400:
        return LLMError(BAD_REQUEST, f"the provider rejected the request: {detail}")
    return LLMError(OTHER, f"{name}: {detail}")


OnDelta = Callable[[str], Awaitable[None] | None]


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
    ) -> None:
        self.model = model
        self.summary_model = summary_model or model
        self.api_base = api_base
        self.timeout = timeout
        self.extra = dict(extra or {})

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
        """One streamed request. Text deltas go to ``on_delta``; tool calls are reassembled."""
        litellm = import_litellm()
        kwargs = self._kwargs(self.model)
        kwargs.update(messages=messages, stream=True, stream_options={"include_usage": True})
        if tools:
            kwargs["tools"] = tools
        out = Completion()
        calls: dict[int, dict[str, str]] = {}
        text: list[str] = []
        try:
            response = await litellm.acompletion(**kwargs)
            async for chunk in response:
                usage = getattr(chunk, "usage", None)
                if usage:
                    out.usage = _usage_dict(usage)
                choices = getattr(chunk, "choices", None) or []
                if not choices:
                    continue
                choice = choices[0]
                if getattr(choice, "finish_reason", None):
                    out.finish_reason = choice.finish_reason
                delta = getattr(choice, "delta", None)
                if delta is None:
                    continue
                piece = getattr(delta, "content", None)
                if piece:
                    text.append(piece)
                    if on_delta is not None:
                        result = on_delta(piece)
                        if asyncio.iscoroutine(result):
                            await result
                for tc in getattr(delta, "tool_calls", None) or []:
                    index = getattr(tc, "index", None)
                    if index is None:
                        index = len(calls)
                    slot = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                    if getattr(tc, "id", None):
                        slot["id"] = tc.id
                    fn = getattr(tc, "function", None)
                    if fn is not None:
                        if getattr(fn, "name", None):
                            slot["name"] = fn.name
                        if getattr(fn, "arguments", None):
                            slot["arguments"] += fn.arguments
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every provider failure becomes an LLMError
            err = classify(exc, self.model, self.api_base)
            err.partial = "".join(text)
            if err.kind in (OTHER, CONNECTION) and text:
                # the server was reached and had started answering: the reply was cut, not refused
                err = LLMError(STREAM_CUT, "the reply stream was cut off before it finished", partial=err.partial)
            raise err from None
        out.content = "".join(text)
        out.tool_calls = [
            ToolCall(id=slot["id"] or f"call_{i}", name=slot["name"], arguments=slot["arguments"])
            for i, slot in sorted(calls.items())
            if slot["name"]
        ]
        if out.finish_reason is None and not out.tool_calls and not out.usage and out.content:
            # The stream ended without a finish reason: the connection was cut mid-reply.
            raise LLMError(STREAM_CUT, "the reply stream was cut off before it finished", partial=out.content)
        return out

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


def _usage_dict(usage: Any) -> dict[str, int]:
    if not usage:
        return {}
    out = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = getattr(usage, key, None) if not isinstance(usage, dict) else usage.get(key)
        if isinstance(value, int):
            out[key] = value
    return out


def usage_cost(model: str | None, usage: dict[str, int]) -> float | None:
    """Dollar cost of a request when litellm knows the model's price."""
    if not model or not usage:
        return None
    try:
        litellm = import_litellm()
        prompt, completion = litellm.cost_per_token(
            model=model,
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
        )
        total = float(prompt) + float(completion)
    except Exception:  # noqa: BLE001
        return None
    return total if total > 0 else None


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
    if not isinstance(value, dict):
        return None, "arguments must be a JSON object"
    return value, None
