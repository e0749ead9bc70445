"""Every error ccm-tui raises descends from :class:`CcmError`; ``str(error)`` is one line a user can read.

The tree (where each class lives in brackets; a second base in parentheses keeps ``except ValueError``
and the like working where the error is also one of those)::

    CcmError
    ├── ConfigError (ValueError)              a setting, the config file, a variable      [config]
    ├── CommandError                          a command line                    [commands.common]
    │   ├── UsageError                        … used wrongly: exit 2
    │   └── CliError                          … that could not run: exit 1
    ├── NotFound (LookupError)                no such thing: the one "not found"
    │   ├── EffortNotFound                    no effort by that id or name                  [here]
    │   ├── SessionMissing                    no session by that name        [session.sessions_folder]
    │   └── NoTranscriptFound                 no transcript where one was looked for [restore.discovery]
    ├── InputError (ValueError)               input that cannot be taken as given
    │   ├── UserInputError → NoteError        a message or a note that cannot be stored  [turn.orchestrator]
    │   ├── SlashError                        a slash command                 [service.slash_commands]
    │   ├── LineRangeError                    lines a log does not have (not a range, past its end)
    │   ├── TranscriptError → UnknownTranscriptFormat, NoTranscriptFound      [restore.turns]
    │   │   (and ExportError: not a ccm-tui export             [restore.formats.ccm_export])
    │   ├── SummaryParseError                 a restore summary the model wrote in another shape
    │   ├── BoundaryError, BudgetTooSmall, PlotError                           [replay]
    │   └── ToolInputError                    an MCP tool call asked what cannot be answered [memory_server.scope]
    │       └── OutOfDescriptors              no descriptor left for an MCP tool [memory_server.descriptors]
    ├── Refused                               an action not valid now, or beyond a limit
    │   ├── ActionRefused → TooLarge          an effort action in the wrong state / too large to expand
    │   ├── ToolError                         a tool call that cannot be served as asked (model, evidence) [here]
    │   ├── ContextTooLarge                   a request the budget cannot hold         [turn.compaction]
    │   ├── CannotWithdraw                    an exchange that cannot be withdrawn        [engine._withdraw]
    │   └── SessionCatalogError → SessionExists, SessionInUse, SessionNameError, SessionOpen
    ├── StoreError (RuntimeError)             a session's files                  [storage.durable]
    │   └── ManifestError, SessionLocked, SessionTooNew, SessionWriteError, RepairNotNeeded
    ├── DerivedError (RuntimeError) → DerivedBusy, DerivedWriteFailed         [storage.derived]
    ├── RowRejected (sqlite3.DatabaseError: rebuilds the file in run)          [storage.derived]
    ├── LLMError                              a model provider's call failed (``kind``) [models]
    ├── RestoreFailed → ProviderRefused, NotATranscript; RestoreAborted; AlreadyImported  [restore]
    ├── ReplayFailed, ReplayToolError (RuntimeError)                                    [replay]
    └── Interruption                          a signal inside one module, never shown
        (ReplyCapped, SessionClosed, and the private _DeltaFailed, _ForeignDatabase)

A test walks every module and checks that each exception class it defines descends from CcmError.
"""

from __future__ import annotations


class CcmError(Exception):
    """The root: anything ccm-tui reports. ``str(error)`` is one line, safe to show."""


class NotFound(CcmError, LookupError):
    """Something named does not exist (an effort, a session, a transcript)."""


class EffortNotFound(NotFound):
    """No effort has that id (or name): one type, whoever asks — a tool, an action, a read, a note."""


class InputError(CcmError, ValueError):
    """Input (the user's, the model's, another agent's or a file's) that cannot be taken as given."""


class Refused(CcmError):
    """An action that is not valid now: the wrong state, over a limit, or not allowed."""


class ToolError(Refused):
    """A tool call that cannot be served as asked (the model's, the evidence search's); the message
    goes back to the model."""


class Interruption(CcmError):
    """A signal from deep inside one module to its caller, caught there and never shown as an error."""
