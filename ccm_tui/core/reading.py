"""Using a session without running work in it: status, search, repair — for the commands and the MCP server.

Work on a session (turns, effort actions, cancel, retry) goes through the session
controller (:mod:`.controller`), which owns its run state. What needs no run state
comes through here: reading the status without the writer lock, ranking a search,
rebuilding a broken manifest, the models the model picker offers (:mod:`.model_catalog`),
checking a typed model id before switching to it, the
input's own memory (:class:`PromptHistory`: sent messages and the draft), a long-lived
reader that searches and reads a session while another process writes to it
(:class:`SessionReader`, the MCP server's), the sessions of the data directory (the TUI's
session picker: list, create, rename, :mod:`.session_catalog`), and the errors those report.
None of it imports litellm.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings

if TYPE_CHECKING:
    from .efforts import ManifestError, name_key
    from .eventlog import redact
    from .model_catalog import (
        CatalogEntry,
        GroupMatches,
        Matches,
        ModelGroup,
        asking_server,
        match_models,
        provider_groups,
        server_group,
    )
    from .model_check import ModelCheck, check_model
    from .opening import load_model_library, search_session
    from .prompt_history import PromptHistory
    from .repair import RepairNotNeeded, RepairReport
    from .search import SearchHit, SearchIndexError
    from .session_catalog import (
        SessionCatalogError,
        SessionInfo,
        check_name,
        check_rename,
        create_session,
        last_used_ago,
        list_sessions,
        rename_session,
        same_session,
        session_paths,
        shown_size,
    )
    from .session_reader import EffortEntry, ReadError, SearchAnswer, SessionReader
    from .session_state import SessionTooNew
    from .store import StoreError, disk_full
    from .text_reports import ReportLine, hit_json, render_report, search_report, search_text, status_text
    from .views import EffortView, SessionStatus

_LAZY = {  # name -> the module it lives in, imported when first asked for (the TUI starts without the core)
    "asking_server": ".model_catalog",
    "CatalogEntry": ".model_catalog",
    "check_model": ".model_check",
    "check_name": ".session_catalog",
    "check_rename": ".session_catalog",
    "create_session": ".session_catalog",
    "disk_full": ".store",
    "EffortEntry": ".session_reader",
    "EffortView": ".views",
    "GroupMatches": ".model_catalog",
    "hit_json": ".text_reports",
    "last_used_ago": ".session_catalog",
    "list_sessions": ".session_catalog",
    "load_model_library": ".opening",
    "ManifestError": ".efforts",
    "name_key": ".efforts",
    "match_models": ".model_catalog",
    "Matches": ".model_catalog",
    "ModelCheck": ".model_check",
    "ModelGroup": ".model_catalog",
    "open_read_only": ".opening",
    "PromptHistory": ".prompt_history",
    "provider_groups": ".model_catalog",
    "ReadError": ".session_reader",
    "rebuild_manifest": ".repair",
    "redact": ".eventlog",
    "rename_session": ".session_catalog",
    "RepairNotNeeded": ".repair",
    "RepairReport": ".repair",
    "same_session": ".session_catalog",
    "search_session": ".opening",
    "search_text": ".text_reports",
    "search_report": ".text_reports",
    "render_report": ".text_reports",
    "ReportLine": ".text_reports",
    "SearchAnswer": ".session_reader",
    "SearchHit": ".search",
    "SearchIndexError": ".search",
    "server_group": ".model_catalog",
    "session_paths": ".session_catalog",
    "SessionCatalogError": ".session_catalog",
    "SessionInfo": ".session_catalog",
    "SessionReader": ".session_reader",
    "SessionStatus": ".views",
    "SessionTooNew": ".session_state",
    "shown_size": ".session_catalog",
    "status_text": ".text_reports",
    "StoreError": ".store",
}


def __getattr__(name: str) -> Any:
    """The names below are looked up in their modules only when first used: ``from .reading import
    PromptHistory`` loads the prompt history, not the whole core (the TUI paints before that)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __package__), name)
    globals()[name] = value
    return value


def read_status(
    session_dir: Path, settings: Settings, *, every_effort: bool = False
) -> tuple[SessionStatus, dict[str, Any]]:
    """The efforts and the context figures (``status``; ``status --json`` with ``every_effort``),
    without the writer lock. Without ``every_effort`` only the efforts in use and the newest
    concluded are listed, so it costs the same at any size."""
    from .opening import open_read_only

    engine = open_read_only(session_dir, settings)
    try:
        status = engine.full_status() if every_effort else engine.status()
        return status, engine.status_json(status)
    finally:
        engine.close()  # (the catalog's connection: a long-lived caller must not keep it)


def repair(session_dir: Path, *, force: bool = False) -> RepairReport:
    """Rebuild ``manifest.yaml`` from the event log and the effort files (see :mod:`.repair`)."""
    from .repair import rebuild_manifest

    return rebuild_manifest(session_dir, force=force)


__all__ = [
    "CatalogEntry",
    "GroupMatches",
    "Matches",
    "ModelGroup",
    "EffortEntry",
    "EffortView",
    "ManifestError",
    "ModelCheck",
    "PromptHistory",
    "ReadError",
    "RepairNotNeeded",
    "RepairReport",
    "SearchAnswer",
    "SearchHit",
    "SearchIndexError",
    "SessionCatalogError",
    "SessionInfo",
    "SessionReader",
    "SessionTooNew",
    "StoreError",
    "asking_server",
    "disk_full",
    "check_model",
    "check_name",
    "check_rename",
    "create_session",
    "last_used_ago",
    "list_sessions",
    "rename_session",
    "same_session",
    "session_paths",
    "shown_size",
    "hit_json",
    "name_key",
    "load_model_library",
    "match_models",
    "provider_groups",
    "read_status",
    "redact",
    "repair",
    "search_session",
    "search_text",
    "search_report",
    "render_report",
    "ReportLine",
    "server_group",
    "status_text",
]
