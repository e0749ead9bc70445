"""Whether a typed model id can be used, checked before switching to it (not at the next send).

For a server given by ``api_base`` (vLLM, llama.cpp, Ollama's ``/v1`` …) its ``/models`` list
answers, when the server can be reached; otherwise litellm's bundled model map and its provider
prefixes do (read as JSON: litellm itself is not imported). Blocking (file, network): call it off
the event loop.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .capabilities import model_info, model_map

SERVER_TIMEOUT = 3.0
EXAMPLES = "e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, ollama/llama3"


@dataclass(frozen=True)
class ModelCheck:
    ok: bool
    reason: str = ""  # refused: why; accepted: a caution worth saying ("" when none)


@lru_cache(maxsize=1)
def known_providers() -> frozenset[str]:
    """The provider prefixes litellm's model map names (openai, anthropic, ollama, …)."""
    providers = set()
    for key, entry in model_map().items():
        if isinstance(entry, dict) and isinstance(entry.get("litellm_provider"), str):
            providers.add(entry["litellm_provider"].split("-")[0])
        if "/" in key:
            providers.add(key.split("/", 1)[0])
    return frozenset(providers | {"openai", "ollama", "ollama_chat", "hosted_vllm", "lm_studio", "openrouter"})


@dataclass(frozen=True)
class ServedListing:
    """What a server said when asked for its models: their entries as it wrote them, or why not."""

    items: tuple[dict[str, Any], ...] = ()
    problem: str = ""  # "" when it answered; else "not answering", "does not list its models"

    @property
    def ids(self) -> list[str]:
        ids = [str(m.get("id") or m.get("name") or "") for m in self.items]
        return [i for i in ids if i]


def _listing_urls(api_base: str) -> list[str]:
    """``<api_base>/models``, then ``<api_base>/v1/models`` for a bare host (Ollama's native base)."""
    base = api_base.rstrip("/")
    return [base + "/models"] + ([] if base.endswith("/v1") else [base + "/v1/models"])


def served_listing(api_base: str, timeout: float = SERVER_TIMEOUT) -> ServedListing:
    """Ask the server at ``api_base`` for its models (``/models``; Ollama's ``/api/tags`` shape too)."""
    for url in _listing_urls(api_base):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                data = json.load(response)
        except (urllib.error.HTTPError, ValueError):
            continue  # it answers, but not there (or not JSON): the next place
        except OSError:
            return ServedListing(problem="not answering")
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list):
            items = data.get("models") if isinstance(data, dict) else None  # Ollama's /api/tags shape
        if isinstance(items, list):
            return ServedListing(tuple(m for m in items if isinstance(m, dict)))
    return ServedListing(problem="does not list its models")


def served_models(api_base: str, timeout: float = SERVER_TIMEOUT) -> list[str] | None:
    """The model ids a server lists at ``<api_base>/models``; None when it cannot be asked."""
    listing = served_listing(api_base, timeout)
    return listing.ids or None


def serves(served: list[str], name: str) -> bool:
    """Whether ``name`` is among a server's ids (Ollama lists ``llama3.1`` as ``llama3.1:latest``)."""
    return name in served or f"{name}:latest" in served


def check_model(model: str, api_base: str | None = None) -> ModelCheck:
    """Can ``model`` be used? Refused with a reason when it surely cannot."""
    model = model.strip()
    if not model or any(c.isspace() for c in model):
        return ModelCheck(False, f"“{model}” is not a model id ({EXAMPLES})")
    provider, _, name = model.partition("/") if "/" in model else ("", "", model)
    if api_base:
        served = served_models(api_base)
        if served is None:
            return ModelCheck(True, f"{api_base} could not be asked for its models: the first message will tell")
        if model in served or serves(served, name):
            return ModelCheck(True)
        listed = ", ".join(served[:8]) + (f" and {len(served) - 8} more" if len(served) > 8 else "")
        return ModelCheck(False, f"the server at {api_base} does not serve “{name}”; it serves: {listed}")
    if model_info(model):
        return ModelCheck(True)
    if not provider:
        return ModelCheck(False, f"litellm does not know “{model}”: write provider/model ({EXAMPLES})")
    if provider not in known_providers():
        return ModelCheck(False, f"“{provider}” is not a provider litellm knows ({EXAMPLES})")
    return ModelCheck(True, f"{model} is not in litellm's model list: {provider} decides at the first message")
