"""What the settings' model needs before a session can use it: its client, its budget, its keys.

Building the client and the budget import nothing (the budget reads litellm's bundled model map
as JSON); the key check imports litellm (seconds), so the TUI calls it off the event loop.
"""

from __future__ import annotations

from ...config import Settings, default_budget
from .capabilities import input_window
from .interface import ChatModel


def resolve_budget(settings: Settings, *, probe_model: bool = True) -> int:
    """``token_budget`` if set, else min(16,000, 75% of the model's input window)."""
    if settings.token_budget:
        return settings.token_budget
    window = None
    if probe_model and settings.model:
        window = input_window(settings.model)
    return default_budget(window)


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
    """In worker threads (both may import litellm): the budget from the model's input window
    (None when one is configured) and a warning when the provider's key is missing."""
    import asyncio

    if not settings.model:
        return None, None
    budget = None if settings.token_budget else await asyncio.to_thread(resolve_budget, settings)
    missing = [] if settings.api_base else await asyncio.to_thread(missing_api_keys, settings)
    warning = None
    if missing:
        warning = (
            f"No API key found for {settings.model}: set {', '.join(missing)} in the "
            "environment, or use --api-base for a local server (F4 opens the settings)."
        )
    return budget, warning
