"""Command palette providers: every action of the app, and live effort search.

``CcmCommands`` lists the app's actions and, for each effort, the actions valid
for its state. ``EffortSearch`` (Ctrl+F) runs the same ranked search as the
model's ``search_efforts`` tool as you type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..core.api import listing_order
from .action_looks import edit_looks_for, looks_for
from .keys import key_for
from .plain_text import highlighted, lines, plain
from .screens.chat import ChatScreen
from .widgets.sidebar import Sidebar

SEARCH_LIMIT = 8
NEW_EFFORT_HELP = "asks for the new effort's name (this query filled in); Enter there opens it"


def _chat(provider: Provider) -> ChatScreen | None:
    """The chat screen under the palette (the newest one on the stack)."""
    for screen in reversed(provider.app.screen_stack):
        if isinstance(screen, ChatScreen):
            return screen
    return None


def app_commands(chat: ChatScreen) -> Iterator[tuple[str, Callable[[], object], str]]:
    def keys(action: str, help: str) -> str:
        """The help text with the action's keys, read from the bindings (never a stale copy)."""
        key = key_for(action)
        return f"{help} ({key})" if key else help

    yield "Open effort…", chat.action_open_effort, keys("open_effort", "start a new effort by name")
    yield (
        "Search efforts…",
        partial(chat.app.run_action, "search_efforts"),
        keys("app.search_efforts", "ranked search over all efforts"),
    )
    yield "Find in the chat…", chat.action_find_in_chat, keys("find_next", "text in the messages shown here")
    yield "Sessions…", chat.action_sessions, keys("sessions", "switch to another session, start a new one, rename one")
    yield "Context inspector", chat.action_inspector, keys("inspector", "exactly what the model will see, per section")
    yield (
        "Settings",
        partial(chat.app.run_action, "settings"),
        keys("app.settings", "model, API base, budget, thresholds, theme"),
    )
    yield "Switch model…", partial(chat.app.run_action, "switch_model"), "use another model for this run"
    yield "Toggle sidebar", chat.action_toggle_sidebar, keys("toggle_sidebar", "show or hide the efforts and the meter")
    yield "Focus the efforts", chat.action_focus_efforts, keys("focus_efforts", "move the keyboard to the effort list")
    yield "Copy last reply", chat.action_copy_reply, keys("copy_reply", "the assistant's last message, as Markdown")
    yield "Copy last code block", chat.action_copy_code, keys("copy_code", "the last fenced code block of the replies")
    yield "Clear the input", chat.action_clear_prompt, keys("clear_prompt", "empty the message being written")
    yield (
        "Tokens per message",
        chat.action_toggle_usage,
        keys("toggle_usage", "show or hide what each reply cost; the meter has the session's total"),
    )
    yield "Regenerate the last reply", chat.action_regenerate, keys("regenerate", "withdraw it, ask the model again")
    yield (
        "Edit the last message",
        chat.action_edit_last,
        keys("edit_last", "back in the input to change and send again; its exchange is withdrawn"),
    )
    yield (
        "Export the conversation…",
        chat.efforts.export_conversation,
        "ambient chat and efforts, in order, to Markdown",
    )
    yield "Keys", partial(chat.app.run_action, "help"), "every key of the app, from its bindings (F1)"
    if chat.busy:
        yield (
            "Cancel the running turn",
            chat.action_cancel_turn,
            keys("cancel_turn", "stop the model; the partial reply is kept"),
        )
    if chat.demo:
        yield (
            "Demo: autoplay on/off",
            chat.action_demo_autoplay,
            keys("demo_autoplay", "the scripted demo types and sends by itself"),
        )


def effort_commands(chat: ChatScreen) -> Iterator[tuple[str, Callable[[], object], str]]:
    for effort in listing_order(chat.query_one(Sidebar).efforts.values()):
        for look in looks_for(effort):
            label = f"{look.label}: {effort.id}"
            yield label, partial(chat.efforts.run, effort.id, look.action), look.help
        for look in edit_looks_for(effort):  # the user's edits: rename, summary, pin, merge
            yield f"{look.label.rstrip('…')}: {effort.id}", partial(chat.efforts.run, effort.id, look.action), look.help


class CcmCommands(Provider):
    """All actions of the chat screen and the valid actions of every listed effort."""

    def _all(self) -> list[tuple[str, Callable[[], object], str]]:
        chat = _chat(self)
        if chat is None:
            return []
        return [*app_commands(chat), *effort_commands(chat)]

    async def discover(self) -> Hits:
        for text, command, help in self._all():
            yield DiscoveryHit(text, command, help=help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        chat = _chat(self)
        for text, command, help in self._all():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), command, help=help)
        if chat is not None and query.strip():
            async for hit in search_hits(chat, query, base=0.2):
                yield hit


def hit_help(hit) -> str | None:
    """The help lines of a search result: its summary, then its passage with line numbers, the matched
    terms highlighted. Built as content from the logged text, never as markup: a log line holding
    ``[pgbouncer]`` or ``[/]`` is shown as it is."""
    shown = []
    if hit.summary:
        shown.append(plain(" ".join(hit.summary.split())[:160]))
    elif hit.marked_snippet is not None and hit.marked_passage is None:
        shown.append(highlighted(hit.marked_snippet.text, hit.marked_snippet.spans))
    if hit.marked_passage is not None and hit.lines:
        first, last = hit.lines
        if hit.source != "ambient":  # (an ambient hit's title says its lines already)
            shown.append(plain(f"lines {first}-{last}:"))
        shown.extend(highlighted(line.text, line.spans) for line in hit.marked_passage.lines())
    # The palette takes content for its help (``Content.from_markup`` returns it as it is), though
    # ``Hit.help`` is annotated as a string.
    return cast(str, lines(*shown)) if shown else None


async def search_hits(chat: ChatScreen, query: str, *, base: float) -> Hits:
    """Ranked effort search results, and an 'open a new effort' entry."""
    for rank, hit in enumerate(await found(chat, query)):
        if hit.source == "ambient":
            where = f"lines {hit.lines[0]}-{hit.lines[1]}" if hit.lines else ""
            yield Hit(
                base - rank * 0.01,
                plain(f"Ambient chat  {where}"),
                partial(chat.show_lines, "ambient", hit.lines),
                text=f"Ambient chat {where}",
                help=hit_help(hit),
            )
            continue
        where = f"  lines {hit.lines[0]}-{hit.lines[1]}" if hit.lines else ""
        yield Hit(
            base - rank * 0.01,
            plain(f"Effort {hit.id}  [{hit.status}]{where}"),
            # Enter reads the passage's lines in the effort's log (as for ambient chat); a hit on the
            # name or summary alone offers the effort's actions
            partial(chat.show_lines, hit.id, hit.lines) if hit.lines else partial(chat.efforts.activate, hit.id),
            text=f"Effort {hit.id}",
            help=hit_help(hit),
        )
    name = query.strip()
    yield Hit(
        base / 4,
        plain(f"Open a new effort: {name}…"),
        partial(chat.efforts.ask_open, name),  # asks first: a query is not a decision
        help=NEW_EFFORT_HELP,
    )


async def found(chat: ChatScreen, query: str) -> list:
    """The session's ranked hits (none while it is not open, or when its index is unusable)."""
    if not chat.is_open:
        return []
    try:
        return await chat.link.controller.search(query, SEARCH_LIMIT)
    except Exception as exc:  # noqa: BLE001 - a broken index must not break the palette
        chat.log.warning(f"search failed: {exc}")
        return []


ALL_SESSIONS = "*"  # a query starting with it searches every session, the captured agents' sessions included


class EffortSearch(Provider):
    """Live ranked search over all efforts (open, concluded, evicted); a query that starts with ``*``
    searches every session of the data directory instead (captures of other agents included)."""

    async def search(self, query: str) -> Hits:
        if query.lstrip().startswith(ALL_SESSIONS):
            async for hit in all_sessions_hits(self.app, query.lstrip()[1:]):
                yield hit
            return
        chat = _chat(self)
        if chat is not None and query.strip():
            async for hit in search_hits(chat, query, base=1.0):
                yield hit


async def all_sessions_hits(app: object, query: str) -> Hits:
    """Hits over every session (``search --all-sessions``): the session, and for a captured agent
    session its agent, project and date; Enter says how to resume it in its agent (and copies that)."""
    import asyncio

    from .. import config
    from ..core.api import search_all_sessions

    if not query.strip():
        return
    try:
        answer = await asyncio.to_thread(search_all_sessions, config.sessions_dir(), query, SEARCH_LIMIT)
    except Exception as exc:  # noqa: BLE001 - a broken index must not break the palette
        cast(Any, app).notify(f"search failed: {' '.join(str(exc).split())}", severity="warning")
        return
    for rank, found in enumerate(answer.hits):
        capture = found.capture or {}
        where = " · ".join(str(v) for v in (capture.get("agent"), capture.get("project"), capture.get("started")) if v)
        title = f"{found.session} · {found.hit.id}" + (f"  ({where})" if where else "")
        yield Hit(1.0 - rank * 0.01, plain(title), partial(_resume_said, app, found.session, found.hit.id, capture),
                  text=title, help=hit_help(found.hit))  # fmt: skip


def _resume_said(app: object, session: str, effort_id: str, capture: dict) -> None:
    shown = cast(Any, app)
    resume = capture.get("resume")
    gone = " (its file is gone; the capture stays)" if capture.get("source_gone") else ""
    if resume:
        shown.copy_to_clipboard(resume)
        shown.notify(f"{resume} — copied{gone}", title=f"{session} · {effort_id}")
    else:
        shown.notify(f"open it with ccm-tui --session {session} (effort {effort_id}){gone}", title=session)
