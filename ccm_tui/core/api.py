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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for mypy; tests/core/test_api.py checks these name exactly the table below
    from .efforts.names import name_key as name_key
    from .efforts.proposals import Proposal as Proposal
    from .efforts.states import Action as Action
    from .efforts.states import EffortState as EffortState
    from .engine.all_sessions import CaptureFilter as CaptureFilter
    from .engine.all_sessions import search_all_sessions as search_all_sessions
    from .engine.engine import ContextInspection as ContextInspection
    from .engine.forget import ForgetRequest as ForgetRequest
    from .engine.forget import forget as forget
    from .engine.opening import OpenOptions as OpenOptions
    from .engine.opening import load_model_library as load_model_library
    from .engine.opening import search_session as search_session
    from .engine.reader import EffortEntry as EffortEntry
    from .engine.reader import SearchAnswer as SearchAnswer
    from .engine.reader import SessionReader as SessionReader
    from .engine.reader import read_status as read_status
    from .engine.repair import rebuild_manifest as rebuild_manifest
    from .manifest.effort import ManifestError as ManifestError
    from .manifest.effort_list import check_manifest as check_manifest
    from .models.choices import CatalogEntry as CatalogEntry
    from .models.choices import Matches as Matches
    from .models.choices import ModelGroup as ModelGroup
    from .models.choices import asking_server as asking_server
    from .models.choices import match_models as match_models
    from .models.choices import provider_groups as provider_groups
    from .models.choices import server_group as server_group
    from .models.id_check import ModelCheck as ModelCheck
    from .models.id_check import check_model as check_model
    from .models.interface import ChatModel as ChatModel
    from .search import SearchHit as SearchHit
    from .service.controller import SessionController as SessionController
    from .service.run_state import ControllerEvent as ControllerEvent
    from .service.run_state import EffortAction as EffortAction
    from .service.run_state import Notice as Notice
    from .service.run_state import Phase as Phase
    from .service.run_state import Remember as Remember
    from .service.run_state import RetryOrphan as RetryOrphan
    from .service.run_state import RunState as RunState
    from .service.run_state import SendMessage as SendMessage
    from .service.run_state import SessionOpened as SessionOpened
    from .service.run_state import SessionSnapshot as SessionSnapshot
    from .service.run_state import SlashCommand as SlashCommand
    from .service.run_state import SnapshotChanged as SnapshotChanged
    from .service.run_state import StateChanged as StateChanged
    from .service.run_state import Suggestion as Suggestion
    from .service.run_state import Withdraw as Withdraw
    from .service.run_state import WrittenElsewhere as WrittenElsewhere
    from .service.slash_commands import COMMANDS as COMMANDS
    from .service.slash_commands import SlashError as SlashError
    from .service.slash_commands import completions as completions
    from .service.slash_commands import parse as parse
    from .service.slash_commands import spec_of as spec_of
    from .session.chat_line import END_OF_CHAT as END_OF_CHAT
    from .session.chat_line import MAX_NOTE_CHARS as MAX_NOTE_CHARS
    from .session.chat_line import LoggedLine as LoggedLine
    from .session.chat_line import sent_now as sent_now
    from .session.chat_line import with_interrupted_end as with_interrupted_end
    from .session.fork import fork_session as fork_session
    from .session.numbered_lines import AMBIENT as AMBIENT
    from .session.numbered_lines import LineRangeError as LineRangeError
    from .session.numbered_lines import LogLines as LogLines
    from .session.numbered_lines import line_range as line_range
    from .session.numbered_lines import page as page
    from .session.prompt_history import PromptHistory as PromptHistory
    from .session.sessions_folder import SessionCatalogError as SessionCatalogError
    from .session.sessions_folder import SessionInfo as SessionInfo
    from .session.sessions_folder import archive_session as archive_session
    from .session.sessions_folder import capture_of as capture_of
    from .session.sessions_folder import check_delete as check_delete
    from .session.sessions_folder import check_rename as check_rename
    from .session.sessions_folder import create_session as create_session
    from .session.sessions_folder import delete_session as delete_session
    from .session.sessions_folder import last_used_ago as last_used_ago
    from .session.sessions_folder import list_sessions as list_sessions
    from .session.sessions_folder import rename_session as rename_session
    from .session.sessions_folder import same_session as same_session
    from .session.sessions_folder import session_paths as session_paths
    from .session.sessions_folder import shown_size as shown_size
    from .storage.derived import DerivedError as DerivedError
    from .storage.durable import StoreError as StoreError
    from .storage.durable import disk_full as disk_full
    from .storage.eventlog import redact as redact
    from .text.terminal import StreamCleaner as StreamCleaner
    from .text.terminal import json_safe as json_safe
    from .text.terminal import terminal_safe as terminal_safe
    from .turn.events import DONE as DONE
    from .turn.events import Asking as Asking
    from .turn.events import Banner as Banner
    from .turn.events import ContextFigures as ContextFigures
    from .turn.events import EffortChanged as EffortChanged
    from .turn.events import ExchangeWithdrawn as ExchangeWithdrawn
    from .turn.events import Outcome as Outcome
    from .turn.events import Paused as Paused
    from .turn.events import Resumed as Resumed
    from .turn.events import RoundReset as RoundReset
    from .turn.events import TextDelta as TextDelta
    from .turn.events import ToolCalled as ToolCalled
    from .turn.events import TurnEvent as TurnEvent
    from .turn.events import TurnStarted as TurnStarted
    from .turn.events import Waiting as Waiting
    from .turn.events import Work as Work
    from .turn.events import cache_words as cache_words
    from .turn.recall import RecallSource as RecallSource
    from .views.data_export import export_session as export_session
    from .views.data_export import export_text as export_text
    from .views.markdown_export import ROLE_TITLES as ROLE_TITLES
    from .views.markdown_export import effort_markdown as effort_markdown
    from .views.reports import captured_json as captured_json
    from .views.reports import hit_json as hit_json
    from .views.reports import render_report as render_report
    from .views.reports import search_report as search_report
    from .views.reports import status_text as status_text
    from .views.status import EffortView as EffortView
    from .views.status import listing_order as listing_order

# The one list of what the core offers: name -> the module it lives in (under the same name), imported when
# first asked for. tests/core/test_api.py checks that ui/, commands/ and memory_server/ together use every
# name here and nothing else.
_LAZY = {
    "Action": ".efforts.states",
    "AMBIENT": ".session.numbered_lines",
    "archive_session": ".session.sessions_folder",
    "Asking": ".turn.events",
    "asking_server": ".models.choices",
    "Banner": ".turn.events",
    "cache_words": ".turn.events",
    "capture_of": ".session.sessions_folder",
    "CaptureFilter": ".engine.all_sessions",
    "CatalogEntry": ".models.choices",
    "ChatModel": ".models.interface",
    "check_delete": ".session.sessions_folder",
    "check_manifest": ".manifest.effort_list",
    "check_model": ".models.id_check",
    "check_rename": ".session.sessions_folder",
    "COMMANDS": ".service.slash_commands",
    "completions": ".service.slash_commands",
    "ContextFigures": ".turn.events",
    "ContextInspection": ".engine.engine",
    "ControllerEvent": ".service.run_state",
    "create_session": ".session.sessions_folder",
    "delete_session": ".session.sessions_folder",
    "DerivedError": ".storage.derived",
    "disk_full": ".storage.durable",
    "DONE": ".turn.events",
    "effort_markdown": ".views.markdown_export",
    "EffortAction": ".service.run_state",
    "EffortChanged": ".turn.events",
    "EffortEntry": ".engine.reader",
    "EffortState": ".efforts.states",
    "EffortView": ".views.status",
    "listing_order": ".views.status",
    "END_OF_CHAT": ".session.chat_line",
    "ExchangeWithdrawn": ".turn.events",
    "export_session": ".views.data_export",
    "export_text": ".views.data_export",
    "forget": ".engine.forget",
    "ForgetRequest": ".engine.forget",
    "fork_session": ".session.fork",
    "hit_json": ".views.reports",
    "captured_json": ".views.reports",
    "json_safe": ".text.terminal",
    "last_used_ago": ".session.sessions_folder",
    "line_range": ".session.numbered_lines",
    "LineRangeError": ".session.numbered_lines",
    "list_sessions": ".session.sessions_folder",
    "load_model_library": ".engine.opening",
    "LoggedLine": ".session.chat_line",
    "LogLines": ".session.numbered_lines",
    "ManifestError": ".manifest.effort",
    "match_models": ".models.choices",
    "Matches": ".models.choices",
    "MAX_NOTE_CHARS": ".session.chat_line",
    "ModelCheck": ".models.id_check",
    "ModelGroup": ".models.choices",
    "name_key": ".efforts.names",
    "Notice": ".service.run_state",
    "OpenOptions": ".engine.opening",
    "Outcome": ".turn.events",
    "page": ".session.numbered_lines",
    "parse": ".service.slash_commands",
    "Paused": ".turn.events",
    "Phase": ".service.run_state",
    "PromptHistory": ".session.prompt_history",
    "Proposal": ".efforts.proposals",
    "provider_groups": ".models.choices",
    "read_status": ".engine.reader",
    "rebuild_manifest": ".engine.repair",
    "RecallSource": ".turn.recall",
    "redact": ".storage.eventlog",
    "Remember": ".service.run_state",
    "rename_session": ".session.sessions_folder",
    "render_report": ".views.reports",
    "Resumed": ".turn.events",
    "RetryOrphan": ".service.run_state",
    "ROLE_TITLES": ".views.markdown_export",
    "RoundReset": ".turn.events",
    "RunState": ".service.run_state",
    "same_session": ".session.sessions_folder",
    "search_all_sessions": ".engine.all_sessions",
    "search_report": ".views.reports",
    "search_session": ".engine.opening",
    "SearchAnswer": ".engine.reader",
    "SearchHit": ".search",
    "SendMessage": ".service.run_state",
    "sent_now": ".session.chat_line",
    "server_group": ".models.choices",
    "session_paths": ".session.sessions_folder",
    "SessionCatalogError": ".session.sessions_folder",
    "SessionController": ".service.controller",
    "SessionInfo": ".session.sessions_folder",
    "SessionOpened": ".service.run_state",
    "SessionReader": ".engine.reader",
    "SessionSnapshot": ".service.run_state",
    "shown_size": ".session.sessions_folder",
    "SlashCommand": ".service.run_state",
    "SlashError": ".service.slash_commands",
    "SnapshotChanged": ".service.run_state",
    "spec_of": ".service.slash_commands",
    "StateChanged": ".service.run_state",
    "status_text": ".views.reports",
    "StoreError": ".storage.durable",
    "StreamCleaner": ".text.terminal",
    "Suggestion": ".service.run_state",
    "terminal_safe": ".text.terminal",
    "TextDelta": ".turn.events",
    "ToolCalled": ".turn.events",
    "TurnEvent": ".turn.events",
    "TurnStarted": ".turn.events",
    "Waiting": ".turn.events",
    "with_interrupted_end": ".session.chat_line",
    "Withdraw": ".service.run_state",
    "Work": ".turn.events",
    "WrittenElsewhere": ".service.run_state",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    """The names above are looked up in their modules only when first used: ``from .api import
    PromptHistory`` loads the prompt history, not the whole core (the TUI paints before that)."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __package__), name)
    globals()[name] = value
    return value
