"""Wiring: settings + session directory → an open session, search index and orchestrator.

The CLI (``send``, ``status``, ``search``) and the TUI build their engine
here, so both run exactly the same core.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings, default_budget
from .context import assemble
from .context import message_cap as default_message_cap  # the parameter below shadows the name
from .llm import LLMClient
from .orchestrator import Emit, Orchestrator
from .search import EffortIndex, SearchHit, SearchIndexError
from .tools import ToolError
from .session import SEARCH_DB, Session
from .tokens import TokenCounter
from .turn_events import EffortChanged, TurnEvent
from .. import paths



def resolve_budget(settings: Settings, *, probe_model: bool = True) -> int:
    """``token_budget`` if set, else min(16,000, 75% of the model's input window)."""
    if settings.token_budget:
        return settings.token_budget
    window = None
    if probe_model and settings.model:
        from .llm import model_input_window

        window = model_input_window(settings.model)
    return default_budget(window)


def open_index(session_dir: Path) -> EffortIndex:
    return EffortIndex(Path(session_dir) / SEARCH_DB)


def sync_index(index: EffortIndex, session: Session) -> None:
    index.sync_session(session.dir, ((e.id, e.status, e.summary) for e in session.efforts))


@dataclass
class Engine:
    session: Session
    orchestrator: Orchestrator
    index: EffortIndex

    def close(self, *, clean: bool = True) -> None:
        try:
            self.index.close()
        finally:
            self.session.close(clean=clean)

    def emit_through(self, emit: Emit | None) -> Emit:
        """Wrap an emit callback so effort changes also reach the search index."""

        def wrapped(event: TurnEvent) -> None:
            if isinstance(event, EffortChanged):
                self.reindex_effort(event.effort_id)
            if emit is not None:
                emit(event)

        return wrapped

    def reindex_effort(self, effort_id: str) -> None:
        """Bring one effort up to date in the index. The index is derived data: if it is busy
        (another process syncing it) or broken, the turn goes on and the next sync catches up."""
        effort = self.session.efforts.get(effort_id)
        try:
            if effort is None:
                self.index.remove_effort(effort_id)
            else:
                self.index.upsert_effort(effort.id, status=effort.status, summary=effort.summary, name=effort.name)
                self.index.sync_effort_log(effort.id, self.session.effort_path(effort.id))
        except SearchIndexError:
            pass

    async def run_turn(self, text: str, emit: Emit | None = None):
        async with self.session.writing():
            return await self.orchestrator.run_turn(text, self.emit_through(emit))

    async def run_action(self, tool_name: str, arguments: dict[str, Any], emit: Emit | None = None):
        async with self.session.writing():
            return await self.orchestrator.run_action(tool_name, arguments, self.emit_through(emit))

    def refresh(self) -> bool:
        """Re-read the session if another process changed it (the TUI's watcher calls this)."""
        return self.session.refresh_if_changed()


def open_engine(
    session_dir: Path,
    settings: Settings,
    *,
    budget: int | None = None,
    retry_base: float = 1.0,
    lock_wait: float = 2.0,
    hold_lock: bool = True,
    llm: LLMClient | None = None,
    sleep=None,
) -> Engine:
    """Open a session for writing, with its search index and an orchestrator.

    ``hold_lock=False`` (the TUI) takes the writer lock only around each turn or
    action (:meth:`Engine.run_turn`), so ``ccm-tui send`` from another terminal
    can write between them; the TUI sees those changes through the watcher.
    ``llm`` replaces the litellm client (the offline demo's scripted model).
    """
    counter = TokenCounter(settings.model)
    session = Session.open(session_dir, ambient_window=settings.ambient_window, lock_wait=lock_wait,
                           hold_lock=hold_lock, counter=counter)
    try:
        index = open_index(session.dir)
        sync_index(index, session)
        if llm is None and settings.model:
            llm = LLMClient(
                settings.model, api_base=settings.api_base, summary_model=settings.summary_model,
                timeout=settings.request_timeout,
            )

        def search(query: str, limit: int) -> list[SearchHit]:
            try:
                return index.search(query, limit=limit)
            except SearchIndexError as exc:
                raise ToolError(f"the search index is unavailable right now ({exc}); try again") from None

        def on_logged(to: str, records: list[dict[str, Any]]) -> None:
            if to != "ambient":
                effort = session.efforts.get(to)
                if effort is not None:
                    try:
                        index.sync_effort_log(effort.id, session.effort_path(effort.id))
                    except SearchIndexError:
                        pass  # derived data: the next sync catches up

        kwargs = {"sleep": sleep} if sleep is not None else {}
        orchestrator = Orchestrator(
            session, settings, llm, budget=budget or resolve_budget(settings), search=search,
            on_logged=on_logged, retry_base=retry_base, **kwargs,
        )
    except BaseException:
        session.close(clean=False)
        raise
    session.state.budget = orchestrator.budget
    return Engine(session=session, orchestrator=orchestrator, index=index)


def preview_context(session: Session, budget: int, message_cap: int | None = None) -> dict[str, Any]:
    """Context figures of a session without a model (``status``)."""
    from . import tools

    wc = assemble(session, paths.prompt("system"), [], tools=tools.definitions(),
                  message_cap=default_message_cap(message_cap, budget))
    savings = 0.0 if wc.naive <= 0 else max(0.0, 1 - wc.total / wc.naive)
    return {"total": wc.total, "naive": wc.naive, "budget": budget, "savings": round(savings, 4), "layers": wc.layers}
