"""The questions one can ask an open session through its controller, answered on the session thread.

Searches, a raw log, the inspection of the next request, an export, and the slash
commands that only read (``/search``, ``/status``, ``/help``): none of them waits for
the running work, and none runs on the caller's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ...errors import Interruption
from ..engine.engine import Engine
from ..engine.engine_reads import ContextInspection
from ..search import SearchHit
from ..session.numbered_lines import LogLines
from ..storage.durable import JsonlRead
from ..turn.events import Outcome
from ..views.scrollback import PAGE, HistoryPage
from ._slash_reads import answer
from ._thread import SessionThread
from .run_state import LoggedLine, SlashCommand
from .slash_commands import spec_of

T = TypeVar("T")


class SessionClosed(Interruption, RuntimeError):
    """A query or work was asked of a session that is not open (yet, or any more)."""


class SessionQueries:
    """The controller's questions (a base class: the controller owns ``_thread`` and ``_engine``)."""

    _thread: SessionThread
    _engine: Engine | None

    async def run(self, intent: Any) -> Outcome:  # the controller's
        raise NotImplementedError

    async def command(self, command: SlashCommand) -> Outcome:
        """Run a slash command: one that changes an effort is work like an action (queued behind
        what runs); ``/search``, ``/status`` and ``/help`` only read, and are answered at once."""
        if spec_of(command).action is not None:
            return await self.run(command)
        return await self._query(lambda engine: answer(engine, command))

    # ------------------------------------------------------------------ questions
    async def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """Ranked search over the session (raises SearchIndexError when the index is unusable)."""
        return await self._query(lambda engine: engine.search(query, limit))

    async def effort_log(self, effort_id: str) -> JsonlRead:
        return await self._query(lambda engine: engine.effort_log(effort_id))

    async def read_lines(self, log: str, first: int, last: int) -> LogLines:
        """A few lines of an effort's log or of the ambient chat (``"ambient"``), e.g. around a hit."""
        return await self._query(lambda engine: engine.read_lines(log, first, last))

    async def older_lines(self, before: LoggedLine, limit: int = PAGE) -> HistoryPage:
        """The chat said before ``before`` (the oldest line the pane shows), a page at a time."""
        return await self._query(lambda engine: engine.older_lines(before, limit))

    async def inspect(self, draft: str = "") -> ContextInspection:
        """Exactly what the next request would carry (with ``draft`` as the message)."""
        return await self._query(lambda engine: engine.inspect(draft))

    async def export_effort(self, effort_id: str, target: Path) -> Path:
        return await self._query(lambda engine: engine.export_effort(effort_id, target))

    async def export_conversation(self, target: Path) -> Path:
        """The whole conversation, ambient chat and efforts in the order said, as one Markdown file."""
        return await self._query(lambda engine: engine.export_conversation(target))

    async def _query(self, ask: Callable[[Engine], T]) -> T:
        """Run ``ask(engine)`` on the session thread."""
        return await asyncio.wrap_future(self._thread.submit(self._ask(ask)))

    async def _ask(self, ask: Callable[[Engine], T]) -> T:
        if self._engine is None:
            raise SessionClosed("the session is not open")
        return ask(self._engine)
