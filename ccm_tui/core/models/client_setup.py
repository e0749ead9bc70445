"""What the settings' model needs before a session can use it: its client, its budget, its keys.

Building the client and the budget import nothing (the budget reads litellm's bundled model map
as JSON); the key check imports litellm (seconds), so the TUI calls it off the event loop. There
too the budget asks a local server for the window it actually runs with (:func:`served_window`:
llama.cpp's ``/props``, Ollama's ``/api/show``, an OpenAI-compatible ``/models`` entry): a local
model's window (8,192) is not the map's, nor the default 16,000 (issue 38). A request the provider
still finds too large lowers the budget to the window its error states (:func:`window_in_error`).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

from ...config import DEFAULT_BUDGET_CAP, Settings, default_budget
from .capabilities import input_window, learned_window
from .interface import ChatModel

SERVER_TIMEOUT = 2.0  # seconds a server is given to say its window (off the event loop)
OLLAMA_BASE = "http://localhost:11434"


def resolve_budget(settings: Settings, *, probe_model: bool = True, ask_server: bool = False) -> int:
    """``token_budget`` if set, else min(16,000, 75% of the model's input window) — the window the
    model's server states when ``ask_server`` (network: call it off the event loop) and it says one,
    else the bundled map's; never above 75% of a window a context-length error of this model's server
    stated on this machine (:func:`.capabilities.learned_window`)."""
    learned = learned_window(settings.model, settings.api_base) if settings.model else None
    ceiling = default_budget(learned) if learned else None  # a window the server's error stated before
    if settings.token_budget:
        return min(settings.token_budget, ceiling or settings.token_budget)
    window = None
    if ask_server and settings.model:
        window = served_window(settings.model, settings.api_base)
    if window is None and probe_model and settings.model:
        window = input_window(settings.model)
    return min(default_budget(window), ceiling or DEFAULT_BUDGET_CAP)


def _get_json(url: str, timeout: float, body: dict[str, Any] | None = None) -> Any:
    """The JSON at ``url`` (POSTed ``body`` when given), or None: not answering, not there, not JSON."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)
    except (OSError, ValueError):
        return None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def served_window(model: str, api_base: str | None, timeout: float = SERVER_TIMEOUT) -> int | None:
    """The context window the server running ``model`` says it has, or None (no local server, or it
    does not say): Ollama's ``/api/show`` (the ``num_ctx`` it runs with, else the model's
    ``context_length``); llama.cpp's ``/props`` (``n_ctx``, the context it was started with);
    an OpenAI-compatible ``/models`` entry (vLLM's ``max_model_len``, LM Studio's, llama.cpp's
    ``meta.n_ctx_train``)."""
    provider, _, name = model.partition("/") if "/" in model else ("", "", model)
    if provider in ("ollama", "ollama_chat"):
        shown = _get_json(f"{(api_base or OLLAMA_BASE).rstrip('/')}/api/show", timeout, {"model": name})
        return _ollama_window(shown) if isinstance(shown, dict) else None
    if not api_base:
        return None  # a hosted provider: the bundled map knows its models
    base = api_base.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    props = _get_json(f"{root}/props", timeout)
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        window = _positive(props.get("n_ctx")) or (
            _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
        )
        if window:
            return window
    from .choices import _served_window
    from .id_check import served_listing

    listing = served_listing(api_base, timeout)
    for item in listing.items:
        if name in (item.get("id"), item.get("name")) or f"{name}:latest" == item.get("id"):
            return _served_window(item)
    return None


def _ollama_window(shown: dict[str, Any]) -> int | None:
    parameters = shown.get("parameters")
    if isinstance(parameters, str) and (found := re.search(r"^\s*num_ctx\s+(\d+)", parameters, re.MULTILINE)):
        return _positive(int(found.group(1)))
    info = shown.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if key.endswith(".context_length") and (window := _positive(value)):
                return window
    return None


# "maximum context length is 8192 tokens" (OpenAI, vLLM), "the available context size (8192 tokens)"
# (llama.cpp), "context window of 8192", "n_ctx 8192" / "n_ctx: 8192"
_WINDOW_IN_ERROR = re.compile(
    r"(?:context (?:length|size|window)[^0-9]{0,40}|n_ctx[\s:=]{1,3})\(?([0-9][0-9,]{2,})", re.IGNORECASE
)


def window_in_error(text: str) -> int | None:
    """The context window a provider's context-length error states, or None."""
    found = _WINDOW_IN_ERROR.search(text or "")
    return _positive(int(found.group(1).replace(",", ""))) if found else None


def budget_after_overflow(budget: int, sent: int, error: str) -> int | None:
    """The budget after a request of ``sent`` tokens was refused as too large for the model's window:
    75% of the window the error states, else 75% of what was sent; None when that is no lower."""
    window = window_in_error(error)
    lowered = default_budget(window) if window else int(min(budget, sent or budget) * 0.75)
    return lowered if lowered < budget else None


def model_client(settings: Settings) -> ChatModel | None:
    """The litellm client the settings describe (None without a model). Building it imports nothing."""
    if not settings.model:
        return None
    from .litellm_client import LLMClient

    return LLMClient(
        settings.model,
        api_base=settings.api_base,
        summary_model=settings.summary_model,
        timeout=settings.request_timeout,
        reply_max_tokens=settings.reply_max_tokens,
    )


def missing_api_keys(settings: Settings) -> list[str]:
    """Environment variables the model's provider needs and that are unset (imports litellm: call
    it off the event loop). Unknown providers answer none: the first request will tell."""
    if not settings.model:
        return []
    from .litellm_client import import_litellm

    try:
        return list(import_litellm().validate_environment(model=settings.model).get("missing_keys") or [])
    except Exception:  # noqa: BLE001 - providers litellm cannot check
        return []


async def model_checks(settings: Settings) -> tuple[int | None, str | None]:
    """In worker threads (both may import litellm or ask the server): the budget from the model's
    input window, as its server states it when it can (None when one is configured), and a warning
    when the provider's key is missing."""
    import asyncio

    if not settings.model:
        return None, None
    budget = None if settings.token_budget else await asyncio.to_thread(resolve_budget, settings, ask_server=True)
    missing = [] if settings.api_base else await asyncio.to_thread(missing_api_keys, settings)
    warning = None
    if missing:
        warning = (
            f"No API key found for {settings.model}: set {', '.join(missing)} in the "
            "environment, or use --api-base for a local server (F4 opens the settings)."
        )
    return budget, warning
