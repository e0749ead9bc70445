"""Provider failures in plain words: every litellm/httpx/openai exception becomes an :class:`LLMError`.

``str(err)`` is one line, safe to show and log (secrets redacted), and ``kind``
says what the orchestrator can do about it: pause on rate limits, retry a
transient fault, tell the user what to fix (a key, a model id, an address).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
import time
from enum import StrEnum
from typing import Any

from ...errors import CcmError
from ..storage.eventlog import redact


class ProviderFailure(StrEnum):
    """What kind of failure a provider call met: what the orchestrator can do about it."""

    RATE_LIMIT = "rate_limit"
    """The provider's rate or quota limit: the session pauses and retries when it resets."""
    AUTH = "auth"
    """The API key is missing or refused: the user must set or fix it."""
    NOT_FOUND = "not_found"
    """The provider does not know the model id."""
    TRANSIENT = "transient"
    """A 5xx or a timeout after connecting: retried with backoff."""
    BAD_REQUEST = "bad_request"
    """The provider rejected the request as sent."""
    CONTEXT_WINDOW = "context_window"
    """The request is larger than the model's window."""
    STREAM_CUT = "stream_cut"
    """The reply stream ended before it finished (what came is kept)."""
    CONNECTION = "connection"
    """The request never reached the server (refused, host not found)."""
    NO_TOOLS = "no_tools"
    """The model, as served, cannot take tool definitions: the session goes on without tools."""
    CONFIGURATION = "configuration"
    """No model is configured: nothing was asked."""
    OTHER = "other"
    """Anything else, worded as the provider said it."""


RATE_LIMIT = ProviderFailure.RATE_LIMIT
AUTH = ProviderFailure.AUTH
NOT_FOUND = ProviderFailure.NOT_FOUND
TRANSIENT = ProviderFailure.TRANSIENT
BAD_REQUEST = ProviderFailure.BAD_REQUEST
CONTEXT_WINDOW = ProviderFailure.CONTEXT_WINDOW
STREAM_CUT = ProviderFailure.STREAM_CUT
CONNECTION = ProviderFailure.CONNECTION
NO_TOOLS = ProviderFailure.NO_TOOLS
OTHER = ProviderFailure.OTHER


class LLMError(CcmError):
    """A provider call failed. ``str(err)`` is one line, safe to show and log."""

    def __init__(
        self, kind: ProviderFailure, message: str, *, retry_after: float | None = None, partial: str = ""
    ) -> None:
        super().__init__(redact(message))
        self.kind = kind
        self.retry_after = retry_after
        self.partial = partial

    @property
    def transient(self) -> bool:
        return self.kind in (TRANSIENT, CONNECTION, STREAM_CUT)


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
            import email.utils  # here: the TUI's first frame imports this module (ProviderFailure), not the parser

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


# What each provider exception class means, most specific first (litellm's subclass openai's; openai's
# timeout is a kind of connection error, so it comes before it). Classes are named by module and
# attribute and looked up only in libraries already loaded: classifying never imports litellm.
_CLASSES: tuple[tuple[ProviderFailure, tuple[str, ...]], ...] = (
    (STREAM_CUT, ("litellm.exceptions:MidStreamFallbackError",)),
    (CONTEXT_WINDOW, ("litellm.exceptions:ContextWindowExceededError",)),
    (RATE_LIMIT, ("openai:RateLimitError",)),
    (AUTH, ("openai:AuthenticationError", "openai:PermissionDeniedError")),
    (NOT_FOUND, ("openai:NotFoundError",)),
    (TRANSIENT, ("openai:APITimeoutError", "httpx:TimeoutException", "builtins:TimeoutError")),
    (CONNECTION, ("openai:APIConnectionError", "httpx:ConnectError", "builtins:ConnectionError")),
    (
        TRANSIENT,
        (
            "openai:InternalServerError",
            "litellm.exceptions:ServiceUnavailableError",
            "litellm.exceptions:BadGatewayError",
        ),
    ),
    (BAD_REQUEST, ("openai:BadRequestError", "openai:UnprocessableEntityError")),
)
# The same, by HTTP status, for an exception of another client that carries one.
_STATUSES = {429: RATE_LIMIT, 401: AUTH, 403: AUTH, 404: NOT_FOUND, 400: BAD_REQUEST, 422: BAD_REQUEST}


def _loaded_class(where: str) -> type | None:
    module, _, name = where.partition(":")
    loaded = sys.modules.get(module)
    found = getattr(loaded, name, None) if loaded is not None else None
    return found if isinstance(found, type) else None


def failure_kind(exc: BaseException) -> ProviderFailure | None:
    """What a provider exception means, by its class (the table above), else by its HTTP status; None
    when neither says."""
    for kind, classes in _CLASSES:
        if any((cls := _loaded_class(where)) is not None and isinstance(exc, cls) for where in classes):
            return kind
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return TRANSIENT if status >= 500 else _STATUSES.get(status)
    return None


def classify(exc: BaseException, model: str | None, api_base: str | None = None) -> LLMError:
    """Map a litellm/httpx/openai exception onto an LLMError with a clear one-line message (plain
    words, no exception chain): what it says first (a model without tools, missing credentials, no
    connection), then its class (:func:`failure_kind`)."""
    if isinstance(exc, LLMError):
        return exc
    name = type(exc).__name__
    if any(marker in str(exc).lower() for marker in NO_TOOLS_MARKERS):
        return LLMError(NO_TOOLS, f"{model} cannot use tools ({_plain(_first_line(str(exc)))})")
    kind = failure_kind(exc)
    if kind is STREAM_CUT:
        partial = getattr(exc, "generated_content", "") or ""
        return LLMError(STREAM_CUT, "the reply stream was cut off before it finished", partial=partial)
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
    if "LLM Provider NOT provided" in raw:
        return LLMError(
            BAD_REQUEST, f"litellm does not know model {model!r}: use provider/model, e.g. openai/gpt-4o-mini"
        )
    if kind is None and isinstance(exc, asyncio.TimeoutError):
        kind = TRANSIENT
    if kind is None and status is None and "connect" in raw.lower():
        kind = CONNECTION  # (a client of its own that says so only in words)
    retry_after = _retry_after(exc) if kind is RATE_LIMIT else None
    return LLMError(kind or OTHER, _worded(kind, exc, model, api_base, status, detail, name), retry_after=retry_after)


def _worded(
    kind: ProviderFailure | None,
    exc: BaseException,
    model: str | None,
    api_base: str | None,
    status: object,
    detail: str,
    name: str,
) -> str:
    """The one line a user reads for a failure of ``kind``."""
    if kind is RATE_LIMIT:
        return f"rate limited by the provider: {detail}"
    if kind is AUTH:
        return (
            f"the provider refused the API key for {model}: set the provider's key variable "
            f"(e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY) or check it ({detail})"
        )
    if kind is NOT_FOUND:
        return f"model {model!r} was not found by the provider: check --model / CCM_MODEL ({detail})"
    if kind is CONTEXT_WINDOW:
        return f"the request is larger than {model}'s context window: {detail}"
    if kind is CONNECTION:
        return f"cannot reach {_endpoint(exc, api_base, model)} ({detail})"
    if kind is TRANSIENT and isinstance(status, int) and status >= 500:
        return f"provider error {status}: {detail}"
    if kind is TRANSIENT and (isinstance(exc, asyncio.TimeoutError) or "timeout" in name.lower()):
        return f"the provider did not answer in time ({detail})"
    if kind is TRANSIENT:
        return f"provider error: {detail}"
    if kind is BAD_REQUEST:
        return f"the provider rejected the request: {detail}"
    return f"{name}: {detail}"
