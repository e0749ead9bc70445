"""The tools the model uses to manage efforts.

Each tool is one small async handler plus its OpenAI-style definition,
registered with :func:`tool`. Handlers parse the model's arguments and call the
operations of :mod:`~ccm_tui.core.efforts.operations` (the same ones the user's actions run). Anything
wrong with a call (unknown id, wrong state, bad arguments) raises
:class:`ToolError` or :class:`~ccm_tui.core.efforts.states.ActionRefused`; the registry turns
that into a JSON error for the model, so a bad call never ends a turn.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from ...errors import NotFound, ToolError
from ..efforts import operations as ops
from ..efforts.operations import ActionContext, find_effort
from ..efforts.states import ActionRefused
from ..models.litellm_client import LLMError, parse_arguments
from ..session.numbered_lines import AMBIENT, MAX_LINES, LineRangeError, LogLines, line_range, read_log_lines
from ..storage import eventlog as ev
from ..storage.durable import StoreError
from ..text.tokens import cap_tokens

Handler = Callable[[ActionContext, dict[str, Any]], Awaitable[dict[str, Any]]]
READ_OVERHEAD_TOKENS = 60  # a read's result beside its messages: status, id, line numbers, note
PASSAGE_NOTE_TOKENS = 120  # a refused expansion's result beside its passage


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler

    @property
    def definition(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


REGISTRY: dict[str, Tool] = {}


def tool(tool_name: str, description: str, /, **params: str) -> Callable[[Handler], Handler]:
    """Register a handler. ``params`` maps argument name → description; a trailing ``_``
    on the name marks it optional (``id_``). All arguments are strings."""
    properties = {}
    required = []
    for key, desc in params.items():
        optional = key.endswith("_")
        arg = key.rstrip("_")
        properties[arg] = {"type": "string", "description": desc}
        if not optional:
            required.append(arg)
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}

    def register(fn: Handler) -> Handler:
        REGISTRY[tool_name] = Tool(tool_name, description, schema, fn)
        return fn

    return register


def definitions(names: list[str] | None = None) -> list[dict[str, Any]]:
    return [t.definition for n, t in REGISTRY.items() if names is None or n in names]


@dataclass
class ToolOutcome:
    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    ok: bool

    @property
    def content(self) -> str:
        return json.dumps(self.result, ensure_ascii=False)


def _validate(t: Tool, args: dict[str, Any]) -> None:
    props = t.parameters["properties"]
    for key in t.parameters["required"]:
        if key not in args or args[key] in (None, ""):
            raise ToolError(f"missing required argument '{key}'")
    for key, value in args.items():
        if key not in props:
            raise ToolError(f"unknown argument '{key}' (expected: {', '.join(props) or 'none'})")
        if value is not None and not isinstance(value, str):
            raise ToolError(f"argument '{key}' must be a string, got {type(value).__name__}")


async def execute(ctx: ActionContext, name: str, raw_arguments: str | dict[str, Any] | None) -> ToolOutcome:
    """Run one tool call and log it; never raises for the model's mistakes."""
    outcome = await _run(ctx, name, raw_arguments)
    extra = {} if outcome.ok else {"error": outcome.result.get("error")}
    ctx.session.log_event(
        ev.TOOL_CALLED, tool=name, arguments=outcome.arguments, ok=outcome.ok, source=ctx.source, **extra
    )
    return outcome


async def _run(ctx: ActionContext, name: str, raw_arguments: str | dict[str, Any] | None) -> ToolOutcome:
    args: dict[str, Any] | None
    if isinstance(raw_arguments, dict):
        args, problem = raw_arguments, None
    else:
        args, problem = parse_arguments(raw_arguments or "")
    t = REGISTRY.get(name)
    if t is None:
        return ToolOutcome(name, args or {}, {"error": f"unknown tool '{name}'", "available": sorted(REGISTRY)}, False)
    if problem or args is None:
        return ToolOutcome(name, {}, {"error": f"{name}: {problem}"}, False)
    try:
        _validate(t, args)
        return ToolOutcome(name, args, await t.handler(ctx, args), True)
    except (ToolError, ActionRefused, NotFound) as exc:
        return ToolOutcome(name, args, {"error": f"{name}: {exc}"}, False)
    except LLMError as exc:
        return ToolOutcome(name, args, {"error": f"{name}: the summary model failed: {exc}"}, False)


# --------------------------------------------------------------------------- tools
@tool(
    "open_effort",
    "Open a new effort: a focused topic with a natural end (a bug to fix, a trip to plan, a document to "
    "write). It becomes the active effort and the current exchange is logged to it. Other open efforts "
    "stay open in the background. Do not open efforts for greetings or one-off questions.",
    name="Short name for the effort, e.g. 'auth bug' or 'japan trip'; it becomes the effort id.",
)
async def open_effort(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    return ops.open_effort(ctx, args["name"])


@tool(
    "close_effort",
    "Conclude an effort. Summarizes the whole conversation and removes its raw log from working context; "
    "the log stays on disk, searchable. Concluded efforts can be reopened later with reopen_effort if the "
    "user returns to the topic. Only call when the user explicitly says the work is DONE or COMPLETE; "
    "never when they say pause, later, or switch topics.",
    id_="Effort id; defaults to the active effort.",
)
async def close_effort(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    return await ops.conclude(ctx, find_effort(ctx, args.get("id"), default_active=True))


@tool(
    "effort_status",
    "List efforts: open (which is active), expanded, and concluded ones in working memory, with token counts.",
)
async def effort_status(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    session = ctx.session
    open_ = [{"id": e.id, "active": e.active, "tokens": e.raw_tokens} for e in session.efforts.open_efforts()]
    expanded = [
        {"id": e.id, "tokens": e.raw_tokens, "turns_since_reference": session.view.expanded.get(e.id, 0)}
        for e in session.expanded_efforts()
    ]
    concluded = [
        {"id": e.id, "summary": e.summary, "summary_tokens": e.summary_tokens, "raw_tokens": e.raw_tokens}
        for e in session.summaries_in_memory()
    ]
    evicted = session.evicted_count
    return {"open": open_, "expanded": expanded, "concluded": concluded, "evicted_count": evicted}


@tool(
    "route_to_ambient",
    "Call when the user's current message is a quick aside unrelated to the active effort (e.g. a one-off "
    "question in the middle of other work). This exchange is then logged to the ambient log and the active "
    "effort's log is left untouched. Do not call it for messages about the active effort.",
)
async def route_to_ambient(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    ctx.route = "ambient"
    active = ctx.session.efforts.active
    return {"status": "routed", "logged_to": "ambient", "active_effort_untouched": active.id if active else None}


@tool(
    "expand_effort",
    "Load a concluded effort's raw log back into context (read-only) for detailed questions; it collapses "
    "by itself after a few turns without reference. With lines or around_line, only those lines come back "
    "in this result and nothing is loaded (fewer tokens); id 'ambient' reads the ambient chat that way.",
    id="Concluded effort id (or 'ambient' with lines or around_line).",
    lines_="Optional 1-based line range, e.g. '120-140' (at most 60 lines).",
    around_line_="Optional 1-based line (e.g. of a search passage): the lines around it.",
)
async def expand_effort(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    partial = bool(args.get("lines") or args.get("around_line"))
    if args["id"].strip() == AMBIENT:
        if not partial:
            raise ToolError("ambient chat is not an effort: read lines of it with around_line or lines")
        return _read_lines(ctx, AMBIENT, args.get("lines"), args.get("around_line"))
    effort = find_effort(ctx, args["id"])
    if partial:
        return _read_lines(ctx, effort.id, args.get("lines"), args.get("around_line"))
    try:
        return ops.expand(ctx, effort)
    except ops.TooLarge as exc:
        return _too_large(ctx, exc)


def _too_large(ctx: ActionContext, refused: ops.TooLarge) -> dict[str, Any]:
    """An expansion the budget cannot hold: nothing is loaded; the model gets the passage around the best
    match for the user's message when there is one, and how to read others."""
    details = refused.details
    effort_id, around = details["effort_id"], details["around_line"]
    result: dict[str, Any] = {"status": "too_large", **details}
    result["note"] = (
        f"not loaded: {refused}. Read a passage instead with expand_effort(id='{effort_id}', around_line=N) or "
        f"lines='A-B' (at most {MAX_LINES} lines of its {details['log_lines']}), or find one with search_efforts"
    )
    if around:
        with suppress(ToolError):
            result["passage"] = _read_lines(ctx, effort_id, None, around, room=details["room"] - PASSAGE_NOTE_TOKENS)
    return result


def _fit(ctx: ActionContext, read: LogLines, center: int, room: int) -> bool:
    """Narrow ``read`` to ``room`` tokens — the lines farthest from ``center`` go first, then the text
    of the one left is cut — since a tool result the request cannot carry fails the whole turn.
    Returns whether anything was left out."""
    count = ctx.session.counter.count_text
    sizes = [count(json.dumps(m, ensure_ascii=False)) for m in read.messages]
    if sum(sizes) + READ_OVERHEAD_TOKENS <= room:
        return False
    kept = sorted(range(len(sizes)), key=lambda i: (abs(read.messages[i]["line"] - center), i))
    while len(kept) > 1 and sum(sizes[i] for i in kept) + READ_OVERHEAD_TOKENS > room:
        kept.pop()
    read.messages = [read.messages[i] for i in sorted(kept)]
    if read.messages:
        read.first, read.last = read.messages[0]["line"], read.messages[-1]["line"]
        if sum(sizes[i] for i in kept) + READ_OVERHEAD_TOKENS > room:
            last = read.messages[-1]
            last["content"] = cap_tokens(
                str(last["content"]), max(16, room - READ_OVERHEAD_TOKENS), ctx.session.counter
            )
    return True


def _read_lines(ctx: ActionContext, log: str, lines: Any, around: Any, room: int | None = None) -> dict[str, Any]:
    """Part of an effort's raw log (or of the ambient chat), returned in the result: a read that
    changes no effort state, narrowed to what the budget leaves (``room``; by default the context's)."""
    try:
        first, last = line_range(lines, around)
    except LineRangeError as exc:
        raise ToolError(str(exc)) from None
    try:
        read = read_log_lines(ctx.session, log, first, last, ambient=ctx.read_ambient, asked=first)
    except LineRangeError as exc:
        raise ToolError(str(exc)) from None
    except (OSError, StoreError) as exc:
        raise ToolError(f"cannot read the log of '{log}': {exc}") from None
    if log != AMBIENT:
        ctx.touched.add(log)
    note = "read only: nothing was loaded into context; expand_effort(id) without lines loads the whole log"
    room = room if room is not None else ctx.room() if ctx.room is not None else None
    if room is not None and _fit(ctx, read, int(around) if around else first, room):
        note = f"narrowed to lines {read.first}-{read.last} to fit the token budget; " + note
    return {"status": "lines", "effort_id": log, **read.as_dict(), "note": note}


@tool(
    "collapse_effort",
    "Return an expanded effort to its summary, freeing working context.",
    id="Expanded effort id.",
)
async def collapse_effort(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    return ops.collapse(ctx, find_effort(ctx, args["id"]))


@tool(
    "switch_effort",
    "Make another open effort the active one (new messages go to it); the previous one stays open.",
    id="Open effort id.",
)
async def switch_effort(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    return ops.switch(ctx, find_effort(ctx, args["id"]))


@tool(
    "search_efforts",
    "Keyword search (stemmed BM25; not semantic: use words the conversation would contain) over ALL "
    "efforts, also those no longer in working memory: ids, names, summaries and full raw logs, and the ambient "
    "chat (id 'ambient'). Best first: "
    "id, status, summary, score and the best log passage with its line numbers.",
    query="What to look for, in plain words.",
)
async def search_efforts(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    if ctx.search is None:
        raise ToolError("search is not available in this session")
    hits = ctx.search(args["query"], 8)
    if hits and hits[0].source == "effort":
        ctx.touched.add(hits[0].id)  # the best match counts as referenced; the rest were only listed
    return {
        "query": args["query"],
        "results": [
            {
                "id": h.id,
                "status": h.status,
                "source": h.source,
                "summary": h.summary,
                "score": round(h.score, 3),
                "snippet": h.snippet,
                **({"passage": h.passage, "lines": list(h.lines)} if h.passage and h.lines else {}),
            }
            for h in hits
        ],
    }


@tool(
    "reopen_effort",
    "Reopen a concluded effort to continue working on it. The original conversation history is preserved "
    "— new messages append to the existing log. Use when the user wants to return to a past topic. If the "
    "user names a specific effort, call directly. If ambiguous, use search_efforts first and ask the user.",
    id="The concluded effort ID to reopen.",
)
async def reopen_effort(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    return ops.reopen(ctx, find_effort(ctx, args["id"]))
