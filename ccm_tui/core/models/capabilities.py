"""What is known about a model without importing litellm: its input window and whether it can
use tools (from litellm's bundled model map, read as plain JSON), plus what this machine learned
(models whose server refused tools, the window a server's context-length error stated), kept in a
small JSON file in the data directory."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from ...atomic_file import atomic_write_text
from ...config import bundled_model_map, model_facts_file
from ..storage.eventlog import now_iso, redact


@lru_cache(maxsize=1)
def model_map() -> dict[str, Any]:
    """litellm's bundled model map, read as JSON ({} when litellm is not installed)."""
    path = bundled_model_map()
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def model_info(model: str | None) -> dict[str, Any]:
    """The bundled map's entry for ``model`` (``provider/name`` or ``name``), or {}."""
    if not model:
        return {}
    table = model_map()
    candidates = [model]
    if "/" in model:
        provider, name = model.split("/", 1)
        candidates.append(name)
        if provider == "ollama_chat":  # the map lists Ollama's models once, as ollama/…
            candidates.append(f"ollama/{name}")
    for key in candidates:
        entry = table.get(key)
        if isinstance(entry, dict):
            return entry
    return {}


def input_window(model: str | None) -> int | None:
    """The model's input window in tokens, when the bundled map knows the model."""
    info = model_info(model)
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def output_limit(model: str | None) -> int | None:
    """The most tokens the model writes in one reply, when the bundled map knows the model."""
    value = model_info(model).get("max_output_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def reply_cap(configured: int, model: str | None) -> int:
    """A reply's cap: ``reply_max_tokens``, or the model's own output limit when lower (a provider
    refuses a max_tokens above it)."""
    limit = output_limit(model)
    return min(configured, limit) if limit is not None else configured


def known_without_tools(model: str | None) -> bool:
    """True only when the bundled map says outright that this provider's model has no function
    calling. A bare-name entry counts only for its own provider: ``openai/deepseek-reasoner`` on a
    local server is not DeepSeek's ``deepseek-reasoner``."""
    info = model_info(model)
    if info.get("supports_function_calling") is not False or not model:
        return False
    if "/" not in model or model in model_map():
        return True
    provider = model.split("/", 1)[0]
    return info.get("litellm_provider") in (provider, "ollama" if provider == "ollama_chat" else provider)


def _read_learned() -> dict[str, Any]:
    try:
        data = json.loads(model_facts_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # missing or damaged: nothing learned yet (the next write replaces it)
    return data if isinstance(data, dict) else {}


FROM_MODEL_MAP = "model map"  # an entry taken from litellm's map, not seen from a server


def learned_without_tools(model: str | None, api_base: str | None = None) -> bool:
    """This machine saw this model's server (``api_base``) refuse tools before — another server
    serving a model of the same name is asked again — or took it from litellm's map, which is
    asked again too: a litellm release that corrects the map brings the tools back."""
    no_tools = _read_learned().get("no_tools")
    if not model or not isinstance(no_tools, dict) or model not in no_tools:
        return False
    entry = no_tools[model] if isinstance(no_tools[model], dict) else {}
    if entry.get("from") == FROM_MODEL_MAP:
        return known_without_tools(model)
    return entry.get("api_base") == (redact(api_base) if api_base else api_base)


def remember_without_tools(model: str, reason: str, *, source: str = "server", api_base: str | None = None) -> None:
    """Record that ``model`` cannot use tools, so later runs chat without them from the start.
    Best effort: a read-only data directory only means the server is asked again next time."""
    data = _read_learned()
    no_tools = data.get("no_tools")
    if not isinstance(no_tools, dict):
        no_tools = {}
    where = redact(api_base) if api_base else api_base  # never a URL's password or key on disk
    no_tools[model] = {"since": now_iso(), "reason": redact(reason[:300]), "from": source, "api_base": where}
    data["no_tools"] = no_tools
    try:
        atomic_write_text(model_facts_file(), json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    except OSError:
        pass


def learned_window(model: str | None, api_base: str | None = None) -> int | None:
    """The window this model's server (``api_base``) stated in a context-length error on this machine."""
    windows = _read_learned().get("windows")
    entry = windows.get(model) if isinstance(windows, dict) and model else None
    if not isinstance(entry, dict) or entry.get("api_base") != (redact(api_base) if api_base else api_base):
        return None
    window = entry.get("window")
    return window if isinstance(window, int) and not isinstance(window, bool) and window > 0 else None


def remember_window(model: str, window: int, api_base: str | None = None) -> None:
    """Record the window a context-length error stated, so the next run's budget starts under it.
    Best effort, as :func:`remember_without_tools`."""
    data = _read_learned()
    windows = data.get("windows")
    if not isinstance(windows, dict):
        windows = {}
    windows[model] = {"since": now_iso(), "window": window, "api_base": redact(api_base) if api_base else api_base}
    data["windows"] = windows
    try:
        atomic_write_text(model_facts_file(), json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    except OSError:
        pass
