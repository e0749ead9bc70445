"""The MCP server: its tools (names, typed parameters, descriptions, annotations) and the stdio loop.

Read tools (search, read, list, status) are always there and never take the session's
writer lock; the write tools (remember, reopen) are listed only with ``--allow-writes``.
Arguments are checked twice: by their JSON schema (types, limits, patterns; a violation
is answered in plain words, see :func:`plain_validation`) and by the code that turns
them into paths (:mod:`.scope`). Integers are integers: ``true`` or ``"3"`` for a line
number is refused, not read as 1 or 3. An argument the tool does not take is refused too,
and so is a session name other than the one served. Over stdio, stdout carries JSON-RPC
only: the SDK points file descriptor 1 at stderr while it serves, every log goes to
stderr, and a line that is not a JSON-RPC message gets a JSON-RPC error (:mod:`.wire`).
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import ToolAnnotations
from pydantic import BeforeValidator, Field, ValidationError

from .. import __version__
from ..config import Settings
from ..core.api import MAX_NOTE_CHARS
from . import descriptions as words
from .reads import Reads
from .scope import (
    EFFORT_ID_PATTERN,
    READ_ID_PATTERN,
    SESSION_NAME_PATTERN,
    SESSION_NAME_RULE,
    Scope,
    ToolInputError,
    shown,
)
from .wire import Answering, CheckedLines, Cleaning, wire_stdin
from .writes import WRITE_WAIT, Writes

MAX_QUERY_CHARS = 500
MAX_SEARCH_HITS = 25
MAX_LINE = 100_000_000
MAX_PAGE_LINES = 60
MAX_LIST = 200


def _read_only(title: str) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def _write(title: str, *, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        title=title, read_only_hint=False, destructive_hint=False, idempotent_hint=idempotent, open_world_hint=False
    )


@dataclass(frozen=True)
class ServerOptions:
    scope: Scope
    settings: Settings
    allow_writes: bool = False
    write_wait: float = WRITE_WAIT
    debug: bool = False


# ----------------------------------------------------------------------------- parameter types
def _whole_number(value: Any) -> Any:
    """JSON integers only: pydantic's lax mode would read true as 1 and "3" as 3 (a float with no
    fraction, 3.0, is still an integer to JSON Schema and passes)."""
    if isinstance(value, bool | str):
        raise ValueError("input should be a whole number, not a string or true/false")
    return value


WHOLE = BeforeValidator(_whole_number)  # after Field: before it, the schema would say ge/le, not minimum/maximum
Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description=words.QUERY)]
SearchLimit = Annotated[int, Field(ge=1, le=MAX_SEARCH_HITS, description=words.SEARCH_LIMIT), WHOLE]
ReadId = Annotated[str, Field(min_length=1, max_length=64, pattern=READ_ID_PATTERN, description=words.READ_ID)]
AroundLine = Annotated[int | None, Field(ge=1, le=MAX_LINE, description=words.AROUND_LINE), WHOLE]
Offset = Annotated[int, Field(ge=1, le=MAX_LINE, description=words.OFFSET), WHOLE]
PageLimit = Annotated[int, Field(ge=1, le=MAX_PAGE_LINES, description=words.PAGE_LIMIT), WHOLE]
State = Annotated[
    Literal["any", "open", "active", "background", "concluded", "expanded", "evicted"], Field(description=words.STATE)
]
ListLimit = Annotated[int, Field(ge=1, le=MAX_LIST, description=words.LIST_LIMIT), WHOLE]
ListOffset = Annotated[int, Field(ge=0, le=MAX_LINE, description=words.LIST_OFFSET), WHOLE]
Session = Annotated[str | None, Field(max_length=64, pattern=SESSION_NAME_PATTERN, description=words.SESSION)]
SearchSession = Annotated[
    str | None, Field(max_length=64, pattern=SESSION_NAME_PATTERN, description=words.SEARCH_SESSION)
]
NoteText = Annotated[str, Field(min_length=1, max_length=MAX_NOTE_CHARS, description=words.NOTE)]
NoteEffort = Annotated[str | None, Field(max_length=64, pattern=EFFORT_ID_PATTERN, description=words.NOTE_EFFORT)]
EffortId = Annotated[str, Field(min_length=1, max_length=64, pattern=EFFORT_ID_PATTERN, description=words.REOPEN_ID)]


def plain_validation(error: ValidationError) -> str:
    """A schema violation in plain words: ``limit: input should be less than or equal to 25 (got 1000)``."""
    parts = []
    for issue in error.errors():
        field = ".".join(str(p) for p in issue.get("loc", ())) or "the arguments"
        kind, given = issue.get("type", ""), issue.get("input")
        if kind == "missing":
            message = "is required"
        elif kind == "string_pattern_mismatch" and field in ("id", "effort_id"):
            message = (
                f"{shown(given)} is not an effort id: ids are lowercase letters, digits and '-' (as search shows them)"
            )
            message += ", or 'ambient'" if field == "id" else ""
        elif kind == "string_pattern_mismatch":
            message = f"{shown(given)} is not a session name ({SESSION_NAME_RULE}, as status lists them)"
        else:
            said = str(issue.get("msg", "is not valid")).removeprefix("Value error, ")
            message = f"{said[:1].lower()}{said[1:]} (got {_given(given)})"
        parts.append(f"{field}: {message}")
    return "; ".join(parts)


def _given(value: object) -> str:
    """A caller's value as JSON (what the caller sent: true, "3", null), cut."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return shown(value)
    return text if len(text) <= 60 else text[:59] + "…"


class MemoryServer(MCPServer[Any]):
    """MCPServer whose argument errors read as plain words, that refuses arguments its tools do not
    take (a session other than the one served among them), whose errors show no local path, and that
    answers lines it cannot read (see :mod:`.wire`)."""

    def __init__(self, *args: Any, scope: Scope | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scope = scope
        self.accepted: dict[str, frozenset[str]] = {}  # each tool's arguments (build_server fills it)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, self._checked(name, arguments), context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(f"Error executing tool {name}: {plain_validation(exc.__cause__)}") from exc.__cause__
            if self.scope is not None and (private := self.scope.private(str(exc))) != str(exc):
                raise ToolError(private) from exc.__cause__
            raise

    def _checked(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments without a ``session`` naming the one session served; ToolInputError for one that
        names another, or for an argument the tool does not take (it would be ignored silently)."""
        accepted = self.accepted.get(name)
        if accepted is None or not isinstance(arguments, dict):
            return arguments  # an unknown tool, or no object: the SDK says so
        served = self.scope.served if self.scope is not None else None
        if "session" in arguments and "session" not in accepted and served is not None:
            value = arguments["session"]
            if value not in (None, "", served):
                raise ToolInputError(
                    f"Error executing tool {name}: session: this server serves session {served!r} only, "
                    f"not {_given(value)}; leave session out (every session is served with ccm-tui mcp --all-sessions)"
                )
            arguments = {k: v for k, v in arguments.items() if k != "session"}
        unknown = sorted(k for k in arguments if k not in accepted)
        if unknown:
            takes = ", ".join(sorted(accepted)) or "no arguments"
            raise ToolInputError(
                f"Error executing tool {name}: {name} takes no argument {', '.join(map(repr, unknown))}; "
                f"its arguments are: {takes}"
            )
        return arguments

    async def run_stdio_async(self) -> None:
        """Serve on stdin/stdout as the SDK does, the server reading the transport through :class:`Answering`
        and the SDK reading stdin through :class:`CheckedLines` (a request whose id is no string or integer);
        every message written is cleaned of terminal controls (:class:`Cleaning`)."""
        lowlevel = self._lowlevel_server
        with wire_stdin() as wire:
            lines = CheckedLines(anyio.wrap_file(wire))
            async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
                clean = Cleaning(write_stream)
                await lowlevel.run(Answering(read_stream, clean), clean, lowlevel.create_initialization_options())


def client_name(ctx: Context | None) -> str:
    """The name the MCP client gave itself at initialize (``clientInfo.name``: "claude-code" …), which a
    note is shown with; "" when it gave none."""
    try:
        params = ctx.session.client_params if ctx is not None else None
    except (AttributeError, ValueError):  # (outside a request)
        return ""
    name = getattr(getattr(params, "client_info", None), "name", "")
    return name if isinstance(name, str) else ""


def _fit_session(fn: Callable[..., Any], *, all_sessions: bool, optional: bool) -> None:
    """Serving one session, a tool takes no session name: drop it from the signature (the schema is
    built from it). Serving all, read, list and the writes must name one: it becomes required, first."""
    signature = inspect.signature(fn, eval_str=True)
    session = signature.parameters["session"]
    others = [p for p in signature.parameters.values() if p.name != "session"]
    if not all_sessions:
        kept = others
    elif optional:
        kept = [*others, session]
    else:
        kept = [session.replace(default=inspect.Parameter.empty), *others]
    fn.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]


def build_server(options: ServerOptions) -> tuple[MemoryServer, Reads, Writes | None]:
    """The server with its tools, and what it holds open (to close after serving)."""
    reads = Reads(options.scope, options.settings)
    writes = (
        Writes(options.scope, options.settings, wait=options.write_wait, reads=reads) if options.allow_writes else None
    )
    all_sessions = options.scope.all_sessions
    server = MemoryServer(
        "ccm-tui",
        title="ccm-tui memory",
        version=__version__,
        instructions=words.instructions(all_sessions=all_sessions, writes=writes is not None),
        log_level="DEBUG" if options.debug else "WARNING",
        scope=options.scope,
    )

    def search(query: Query, limit: SearchLimit = 10, session: SearchSession = None) -> str:
        return reads.search(query, limit, session)

    def read(
        id: ReadId,
        around_line: AroundLine = None,
        offset: Offset = 1,
        limit: PageLimit = 30,
        session: Session = None,
    ) -> str:
        return reads.read(id, around_line, offset, limit, session)

    def list_efforts(
        state: State = "any", limit: ListLimit = 30, offset: ListOffset = 0, session: Session = None
    ) -> str:
        return reads.list(state, limit, offset, session)

    def status(session: Session = None) -> str:
        return reads.status(session)

    extra = words.SEARCH_ALL if all_sessions else ""
    tools: list[tuple[str, Callable[..., Any], str, ToolAnnotations]] = [
        ("search", search, words.SEARCH + extra, _read_only("Search past conversations")),
        ("read", read, words.READ, _read_only("Read an effort's log")),
        ("list", list_efforts, words.LIST, _read_only("List efforts")),
        ("status", status, words.STATUS + (words.STATUS_ALL if all_sessions else ""), _read_only("Session status")),
    ]
    if writes is not None:
        active = writes

        async def remember(
            text: NoteText, effort_id: NoteEffort = None, session: Session = None, ctx: Context | None = None
        ) -> str:
            return await active.remember(text, effort_id, session, agent=client_name(ctx))

        async def reopen(id: EffortId, session: Session = None) -> str:
            return await active.reopen(id, session)

        tools.append(("remember", remember, words.REMEMBER, _write("Remember a note", idempotent=False)))
        tools.append(("reopen", reopen, words.REOPEN, _write("Reopen an effort", idempotent=True)))
    for name, fn, description, hints in tools:
        _fit_session(fn, all_sessions=all_sessions, optional=name in ("search", "status"))
        fn.__name__ = name  # the schema's title
        server.accepted[name] = frozenset(inspect.signature(fn).parameters) - {"ctx"}  # (the SDK's, not the caller's)
        server.add_tool(fn, name=name, description=description, annotations=hints, structured_output=False)
    return server, reads, writes


def serve(options: ServerOptions) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    logging.basicConfig(level=logging.DEBUG if options.debug else logging.WARNING, format="ccm-tui mcp: %(message)s")
    server, reads, writes = build_server(options)

    async def main() -> None:
        try:
            await server.run_stdio_async()
        finally:
            try:  # what is still open (a write under way at the end): a session gone meanwhile is no failure
                if writes is not None:
                    await writes.close()
                reads.close()
            except Exception as exc:  # noqa: BLE001 - the server is done; say why in one line, no path
                logging.getLogger(__name__).warning("closing: %s", options.scope.private(str(exc)))

    anyio.run(main)
    return 0
