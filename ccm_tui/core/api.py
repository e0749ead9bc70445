"""The core's one public module: everything ``ui/``, ``commands/`` and ``memory_server/`` may use.

Work on a session (turns, effort actions, cancel, retry) goes through the session controller
(:class:`SessionController`), which owns its run state; its vocabulary (run state, intents, the turn's
events, effort views, chat lines, slash commands) comes from here too. What needs no run state comes
through here as well: reading the status without the writer lock, ranking a search, rebuilding a broken
manifest, the models the picker offers, checking a typed model id, the input's own memory
(:class:`PromptHistory`), a long-lived reader that searches and reads a session while another process
writes to it (:class:`SessionReader`, the MCP server's), the sessions of the data directory, and the
errors those report. Names are resolved on first use, so the TUI paints before the session machinery
loads; none of it imports litellm. An import-linter contract (``pyproject.toml``) keeps every other
core package out of reach of those three.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings

if TYPE_CHECKING:
    from ..errors import EffortNotFound
    from .efforts.names import name_key
    from .efforts.proposals import Proposal
    from .efforts.states import Action, EffortState
    from .engine.all_sessions import AllSessionsAnswer, CaptureFilter, SessionHit, search_all_sessions
    from .engine.engine import ContextInspection
    from .engine.forget import ForgetKind, ForgetReport, ForgetRequest, forget, pending_forget
    from .engine.opening import OpenOptions, load_model_library, search_session
    from .engine.reader import EffortEntry, SearchAnswer, SessionReader
    from .engine.repair import RepairNotNeeded, RepairReport, rebuild_manifest
    from .manifest.effort import ManifestError
    from .manifest.effort_list import check_manifest
    from .models.choices import (
        CatalogEntry,
        GroupMatches,
        Matches,
        ModelGroup,
        asking_server,
        match_models,
        provider_groups,
        server_group,
    )
    from .models.id_check import ModelCheck, check_model
    from .models.interface import ChatModel
    from .search import SearchHit, SearchIndexError
    from .service import run_state as run_state
    from .service.controller import SessionController
    from .service.run_state import (
        ControllerEvent,
        EffortAction,
        Phase,
        Remember,
        RetryOrphan,
        RunState,
        SendMessage,
        SessionSnapshot,
        SlashCommand,
        StateChanged,
        Suggestion,
        TakeBack,
    )
    from .service.slash_commands import COMMANDS, SlashError, completions, parse, spec_of
    from .session.chat_line import END_OF_CHAT, LoggedLine, sent_now, with_interrupted_end
    from .session.fork import ForkReport, fork_session
    from .session.numbered_lines import AMBIENT, LineRangeError, LogLines, line_range, page
    from .session.prompt_history import PromptHistory
    from .session.sessions_folder import (
        SessionCatalogError,
        SessionInfo,
        archive_session,
        capture_of,
        check_delete,
        check_name,
        check_rename,
        create_session,
        delete_session,
        is_archived,
        last_used_ago,
        list_sessions,
        rename_session,
        same_session,
        session_paths,
        shown_size,
    )
    from .session.snapshots import SessionTooNew
    from .storage.durable import StoreError, disk_full
    from .storage.eventlog import redact
    from .text.terminal import StreamCleaner, json_safe, terminal_safe
    from .turn import events as turn_events
    from .turn.events import Cause, ContextFigures, Outcome, Status, Work
    from .turn.recall import RecallSource
    from .views.data_export import export_session, export_text
    from .views.markdown_export import ROLE_TITLES, effort_markdown
    from .views.reports import ReportLine, hit_json, render_report, search_report, search_text, status_text
    from .views.status import EffortView, SessionStatus

_LAZY = {  # name -> (the module it lives in, its name there; None: the module itself), imported when first asked for
    "Action": (".efforts.states", "Action"),
    "AMBIENT": (".session.numbered_lines", "AMBIENT"),
    "asking_server": (".models.choices", "asking_server"),
    "CatalogEntry": (".models.choices", "CatalogEntry"),
    "ChatModel": (".models.interface", "ChatModel"),
    "check_model": (".models.id_check", "check_model"),
    "check_name": (".session.sessions_folder", "check_name"),
    "check_rename": (".session.sessions_folder", "check_rename"),
    "COMMANDS": (".service.slash_commands", "COMMANDS"),
    "completions": (".service.slash_commands", "completions"),
    "Cause": (".turn.events", "Cause"),
    "ContextFigures": (".turn.events", "ContextFigures"),
    "ContextInspection": (".engine.engine", "ContextInspection"),
    "ControllerEvent": (".service.run_state", "ControllerEvent"),
    "create_session": (".session.sessions_folder", "create_session"),
    "disk_full": (".storage.durable", "disk_full"),
    "effort_markdown": (".views.markdown_export", "effort_markdown"),
    "EffortAction": (".service.run_state", "EffortAction"),
    "EffortEntry": (".engine.reader", "EffortEntry"),
    "EffortState": (".efforts.states", "EffortState"),
    "EffortView": (".views.status", "EffortView"),
    "END_OF_CHAT": (".session.chat_line", "END_OF_CHAT"),
    "GroupMatches": (".models.choices", "GroupMatches"),
    "hit_json": (".views.reports", "hit_json"),
    "json_safe": (".text.terminal", "json_safe"),
    "last_used_ago": (".session.sessions_folder", "last_used_ago"),
    "line_range": (".session.numbered_lines", "line_range"),
    "LineRangeError": (".session.numbered_lines", "LineRangeError"),
    "list_sessions": (".session.sessions_folder", "list_sessions"),
    "load_model_library": (".engine.opening", "load_model_library"),
    "LoggedLine": (".session.chat_line", "LoggedLine"),
    "LogLines": (".session.numbered_lines", "LogLines"),
    "ManifestError": (".manifest.effort", "ManifestError"),
    "check_manifest": (".manifest.effort_list", "check_manifest"),
    "match_models": (".models.choices", "match_models"),
    "Matches": (".models.choices", "Matches"),
    "ModelCheck": (".models.id_check", "ModelCheck"),
    "ModelGroup": (".models.choices", "ModelGroup"),
    "name_key": (".efforts.names", "name_key"),
    "OpenOptions": (".engine.opening", "OpenOptions"),
    "Outcome": (".turn.events", "Outcome"),
    "page": (".session.numbered_lines", "page"),
    "parse": (".service.slash_commands", "parse"),
    "Phase": (".service.run_state", "Phase"),
    "PromptHistory": (".session.prompt_history", "PromptHistory"),
    "Proposal": (".efforts.proposals", "Proposal"),
    "provider_groups": (".models.choices", "provider_groups"),
    "rebuild_manifest": (".engine.repair", "rebuild_manifest"),
    "RecallSource": (".turn.recall", "RecallSource"),
    "redact": (".storage.eventlog", "redact"),
    "Remember": (".service.run_state", "Remember"),
    "rename_session": (".session.sessions_folder", "rename_session"),
    "render_report": (".views.reports", "render_report"),
    "RepairNotNeeded": (".engine.repair", "RepairNotNeeded"),
    "RepairReport": (".engine.repair", "RepairReport"),
    "ReportLine": (".views.reports", "ReportLine"),
    "RetryOrphan": (".service.run_state", "RetryOrphan"),
    "ROLE_TITLES": (".views.markdown_export", "ROLE_TITLES"),
    "run_state": (".service.run_state", None),
    "RunState": (".service.run_state", "RunState"),
    "same_session": (".session.sessions_folder", "same_session"),
    "search_report": (".views.reports", "search_report"),
    "search_session": (".engine.opening", "search_session"),
    "search_text": (".views.reports", "search_text"),
    "SearchAnswer": (".engine.reader", "SearchAnswer"),
    "SearchHit": (".search", "SearchHit"),
    "SearchIndexError": (".search", "SearchIndexError"),
    "SendMessage": (".service.run_state", "SendMessage"),
    "sent_now": (".session.chat_line", "sent_now"),
    "server_group": (".models.choices", "server_group"),
    "session_paths": (".session.sessions_folder", "session_paths"),
    "SessionCatalogError": (".session.sessions_folder", "SessionCatalogError"),
    "SessionController": (".service.controller", "SessionController"),
    "SessionInfo": (".session.sessions_folder", "SessionInfo"),
    "SessionReader": (".engine.reader", "SessionReader"),
    "SessionSnapshot": (".service.run_state", "SessionSnapshot"),
    "SessionStatus": (".views.status", "SessionStatus"),
    "SessionTooNew": (".session.snapshots", "SessionTooNew"),
    "shown_size": (".session.sessions_folder", "shown_size"),
    "SlashCommand": (".service.run_state", "SlashCommand"),
    "SlashError": (".service.slash_commands", "SlashError"),
    "spec_of": (".service.slash_commands", "spec_of"),
    "StateChanged": (".service.run_state", "StateChanged"),
    "status_text": (".views.reports", "status_text"),
    "StoreError": (".storage.durable", "StoreError"),
    "StreamCleaner": (".text.terminal", "StreamCleaner"),
    "Suggestion": (".service.run_state", "Suggestion"),
    "Status": (".turn.events", "Status"),
    "TakeBack": (".service.run_state", "TakeBack"),
    "terminal_safe": (".text.terminal", "terminal_safe"),
    "turn_events": (".turn.events", None),
    "Work": (".turn.events", "Work"),
    "with_interrupted_end": (".session.chat_line", "with_interrupted_end"),
    "AllSessionsAnswer": (".engine.all_sessions", "AllSessionsAnswer"),
    "CaptureFilter": (".engine.all_sessions", "CaptureFilter"),
    "SessionHit": (".engine.all_sessions", "SessionHit"),
    "search_all_sessions": (".engine.all_sessions", "search_all_sessions"),
    "capture_of": (".session.sessions_folder", "capture_of"),
    # sessions and efforts the user manages (issue 41)
    "archive_session": (".session.sessions_folder", "archive_session"),
    "check_delete": (".session.sessions_folder", "check_delete"),
    "delete_session": (".session.sessions_folder", "delete_session"),
    "is_archived": (".session.sessions_folder", "is_archived"),
    "fork_session": (".session.fork", "fork_session"),
    "ForkReport": (".session.fork", "ForkReport"),
    "forget": (".engine.forget", "forget"),
    "ForgetKind": (".engine.forget", "ForgetKind"),
    "ForgetReport": (".engine.forget", "ForgetReport"),
    "ForgetRequest": (".engine.forget", "ForgetRequest"),
    "pending_forget": (".engine.forget", "pending_forget"),
    "export_session": (".views.data_export", "export_session"),
    "export_text": (".views.data_export", "export_text"),
    "EffortNotFound": ("..errors", "EffortNotFound"),
}


def __getattr__(name: str) -> Any:
    """The names below are looked up in their modules only when first used: ``from .reading import
    PromptHistory`` loads the prompt history, not the whole core (the TUI paints before that)."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where[0], __package__)
    value = module if where[1] is None else getattr(module, where[1])
    globals()[name] = value
    return value


def read_status(
    session_dir: Path, settings: Settings, *, every_effort: bool = False
) -> tuple[SessionStatus, dict[str, Any]]:
    """The efforts and the context figures (``status``; ``status --json`` with ``every_effort``),
    without the writer lock and without a model (see :meth:`.engine.reader.SessionReader.status`).

    Raises:
        StoreError: the session cannot be read.
    """
    from .engine.reader import SessionReader

    with SessionReader(Path(session_dir), settings) as reader:
        return reader.status(every_effort=every_effort)


def repair(session_dir: Path, *, force: bool = False) -> RepairReport:
    """Rebuild ``manifest.yaml`` from the event log and the effort files (see :mod:`.repair`)."""
    from .engine.repair import rebuild_manifest

    return rebuild_manifest(session_dir, force=force)


__all__ = [
    "Action",
    "AMBIENT",
    "asking_server",
    "CatalogEntry",
    "Cause",
    "ChatModel",
    "check_model",
    "check_name",
    "check_rename",
    "COMMANDS",
    "completions",
    "ContextFigures",
    "ContextInspection",
    "ControllerEvent",
    "create_session",
    "disk_full",
    "effort_markdown",
    "EffortAction",
    "EffortEntry",
    "EffortState",
    "EffortView",
    "END_OF_CHAT",
    "GroupMatches",
    "hit_json",
    "json_safe",
    "last_used_ago",
    "line_range",
    "LineRangeError",
    "list_sessions",
    "load_model_library",
    "LoggedLine",
    "LogLines",
    "ManifestError",
    "check_manifest",
    "match_models",
    "Matches",
    "ModelCheck",
    "ModelGroup",
    "name_key",
    "OpenOptions",
    "Outcome",
    "page",
    "parse",
    "Phase",
    "PromptHistory",
    "Proposal",
    "provider_groups",
    "read_status",
    "rebuild_manifest",
    "RecallSource",
    "redact",
    "Remember",
    "rename_session",
    "render_report",
    "repair",
    "RepairNotNeeded",
    "RepairReport",
    "ReportLine",
    "RetryOrphan",
    "ROLE_TITLES",
    "run_state",
    "RunState",
    "same_session",
    "search_report",
    "search_session",
    "search_text",
    "SearchAnswer",
    "SearchHit",
    "SearchIndexError",
    "SendMessage",
    "sent_now",
    "server_group",
    "session_paths",
    "SessionCatalogError",
    "SessionController",
    "SessionInfo",
    "SessionReader",
    "SessionSnapshot",
    "SessionStatus",
    "SessionTooNew",
    "shown_size",
    "SlashCommand",
    "SlashError",
    "spec_of",
    "StateChanged",
    "Status",
    "status_text",
    "StoreError",
    "StreamCleaner",
    "Suggestion",
    "TakeBack",
    "terminal_safe",
    "turn_events",
    "with_interrupted_end",
    "Work",
    "AllSessionsAnswer",
    "CaptureFilter",
    "SessionHit",
    "search_all_sessions",
    "capture_of",
    # sessions and efforts the user manages (issue 41)
    "archive_session",
    "check_delete",
    "delete_session",
    "is_archived",
    "fork_session",
    "ForkReport",
    "forget",
    "ForgetKind",
    "ForgetReport",
    "ForgetRequest",
    "pending_forget",
    "export_session",
    "export_text",
    "EffortNotFound",
]
