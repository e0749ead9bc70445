"""The models the model picker offers, and how typed text narrows them.

Two sources, in this order: the server given by ``--api-base`` (its ``/models`` list), then
litellm's bundled model map for each provider whose API key is set (chat models only, read as
JSON: litellm itself is not imported). UI-free; :func:`server_group` and :func:`provider_groups`
block (network, a 1-2 MB file the first time): call them off the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...config import PROVIDER_KEYS, configured_providers
from .capabilities import input_window, model_map
from .id_check import served_listing

SERVER = "server"  # the source of the models the --api-base server lists
SERVER_TITLE = "served at --api-base"
SERVER_TIMEOUT = 2.0  # a picker waits less than a switch: the list is a convenience
GROUP_LIMIT = 50  # rows shown per source; the rest are counted ("type to narrow")
WINDOW_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length")


@dataclass(frozen=True)
class CatalogEntry:
    """One model that can be switched to."""

    id: str  # the litellm id, with its provider: "openai/gpt-4o-mini"
    source: str  # SERVER or the provider ("openai", "anthropic", …)
    window: int | None = None  # input window in tokens, when known
    tools: bool | None = None  # can it call tools? None: nobody says

    @property
    def name(self) -> str:
        """The id without its provider prefix."""
        return self.id.split("/", 1)[1] if "/" in self.id else self.id

    @property
    def served(self) -> bool:
        """Listed by the --api-base server (not taken from litellm's map)."""
        return self.source == SERVER

    def is_model(self, model: str | None) -> bool:
        """Whether ``model`` (an id as configured, with or without its provider) names this entry."""
        return bool(model) and model in (self.id, self.name)


@dataclass(frozen=True)
class ModelGroup:
    """The models of one source, or a note saying why there are none."""

    source: str
    title: str
    entries: tuple[CatalogEntry, ...] = ()
    note: str = ""  # said inline under the title ("not answering", "asking…")

    @property
    def served(self) -> bool:
        return self.source == SERVER


@dataclass(frozen=True)
class GroupMatches:
    group: ModelGroup
    entries: tuple[CatalogEntry, ...]  # the ones shown, best first
    hidden: int = 0  # matched but not shown (over the per-group limit)


@dataclass(frozen=True)
class Matches:
    groups: tuple[GroupMatches, ...]
    exact: CatalogEntry | None = None  # the listed model the text names exactly

    @property
    def count(self) -> int:
        return sum(len(g.entries) + g.hidden for g in self.groups)


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _served_window(item: Mapping[str, Any]) -> int | None:
    """The window a server states for a model (vLLM, LM Studio, Groq; llama.cpp's ``meta``)."""
    for field in WINDOW_FIELDS:
        if window := _positive_int(item.get(field)):
            return window
    meta = item.get("meta")
    return _positive_int(meta.get("n_ctx_train")) if isinstance(meta, dict) else None


def server_prefix(current: str | None) -> str:
    """The provider prefix a served model is reached through: the current model's, else ``openai``
    (litellm's route to any OpenAI-compatible server)."""
    return current.split("/", 1)[0] if current and "/" in current else "openai"


def asking_server() -> ModelGroup:
    """The server's group while its answer is awaited."""
    return ModelGroup(SERVER, SERVER_TITLE, note="asking the server for its models…")


def server_group(api_base: str, current: str | None, timeout: float = SERVER_TIMEOUT) -> ModelGroup:
    """The models the ``--api-base`` server lists (blocking: up to ``timeout`` per request)."""
    title = SERVER_TITLE
    listing = served_listing(api_base, timeout)
    if listing.problem:
        return ModelGroup(SERVER, title, note=f"server {listing.problem} ({api_base})")
    prefix = server_prefix(current)
    entries: dict[str, CatalogEntry] = {}
    for item in listing.items:
        served = str(item.get("id") or item.get("name") or "")
        if served and not any(c.isspace() for c in served):
            model = f"{prefix}/{served}"
            entries.setdefault(model, CatalogEntry(model, SERVER, _served_window(item) or input_window(model)))
    if not entries:
        return ModelGroup(SERVER, title, note="the server lists no models")
    return ModelGroup(SERVER, title, tuple(entries.values()))


def _map_entry(key: str, info: Mapping[str, Any], provider: str) -> CatalogEntry:
    model = key if key.startswith(provider + "/") else f"{provider}/{key}"
    window = _positive_int(info.get("max_input_tokens")) or _positive_int(info.get("max_tokens"))
    tools = info.get("supports_function_calling")
    return CatalogEntry(model, provider, window, tools if isinstance(tools, bool) else None)


def provider_groups(providers: Mapping[str, str] | None = None, *, api_base: str | None = None) -> list[ModelGroup]:
    """For each configured provider (name → the variable holding its key; default: the
    environment's), the chat models litellm's bundled map lists, by id. With ``api_base`` the
    run sends every model to that server, which each group's note says."""
    providers = configured_providers() if providers is None else providers
    if not providers:
        names = ", ".join(names[0] for names in list(PROVIDER_KEYS.values())[:3])
        return [ModelGroup("providers", "litellm's model map", note=f"no provider key is set ({names}, …)")]
    found: dict[str, dict[str, CatalogEntry]] = {p: {} for p in providers}
    for key, info in model_map().items():
        if not isinstance(info, dict) or info.get("mode") != "chat" or key.startswith("ft:"):
            continue  # ft: entries price fine-tunes; their ids are the user's own
        provider = info.get("litellm_provider")
        if isinstance(provider, str) and provider in found:
            entry = _map_entry(key, info, provider)
            if entry.window or entry.tools is not None:  # an entry that states nothing is no model (openai/container)
                found[provider].setdefault(entry.id, entry)
    groups: list[ModelGroup] = []
    for provider, variable in providers.items():
        entries = tuple(sorted(found[provider].values(), key=lambda e: e.id))
        note = "" if entries else f"litellm's map lists none: type {provider}/<model>"
        if entries and api_base and not any(g.entries for g in groups):  # said once, above the first
            note = "picked here, a model goes to its provider, not to --api-base (a server model goes back there)"
        groups.append(ModelGroup(provider, f"{provider} · {variable}", entries, note))
    return groups


def _rank(entry: CatalogEntry, text: str, terms: list[str]) -> int | None:
    """0 names it exactly, 1 its name starts with the first term, 2 holds every term; None: no match."""
    model = entry.id.lower()
    if not all(term in model for term in terms):
        return None
    if text in (model, entry.name.lower()):
        return 0
    return 1 if entry.name.lower().startswith(terms[0]) else 2


def match_models(groups: list[ModelGroup], text: str, limit: int = GROUP_LIMIT) -> Matches:
    """The entries that hold every word of ``text`` (case-insensitive), best first within each
    group, at most ``limit`` per group. Groups without a match are left out, except the server's
    with a note (a server not answering says so whatever is typed); nothing typed keeps every note."""
    text = text.strip().lower()
    terms = text.split()
    shown = []
    exact = None
    for group in groups:
        if not terms:
            ranked = list(group.entries)
        else:
            scored = sorted(
                ((rank, i, e) for i, e in enumerate(group.entries) if (rank := _rank(e, text, terms)) is not None),
                key=lambda s: s[:2],
            )
            ranked = [e for _, _, e in scored]
            if exact is None and scored and scored[0][0] == 0:
                exact = ranked[0]
        if ranked or (group.note and (not terms or group.served)):
            shown.append(GroupMatches(group, tuple(ranked[:limit]), max(0, len(ranked) - limit)))
    return Matches(tuple(shown), exact)
