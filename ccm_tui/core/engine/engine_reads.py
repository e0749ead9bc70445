"""What an open session answers without changing it: the :class:`~.engine.Engine`'s questions.

Figures, statuses and views, the inspection of the next request, an effort's log or a few of
its lines, exports, the chat history shown at start-up and when scrolling back, the unanswered
turn, and search. A base class of the engine (which owns the session, the orchestrator and the
index); kept apart from the engine's running of work, which changes the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ...config import Settings
from ...errors import EffortNotFound
from ..efforts.working_context import WorkingContext
from ..search import EffortIndex, SearchHit, without_folded
from ..search.sync import sync_index
from ..session.chat_line import LoggedLine
from ..session.numbered_lines import AMBIENT, LogLines, file_lines, indexed_lines
from ..session.session import SEARCH_DB, Session
from ..storage.durable import JsonlRead, read_jsonl
from ..storage.long_lines import READ_BYTES, SHOW_BYTES, cut_size, shown_content
from ..text.tokens import TokenCounter
from ..turn.events import ContextFigures
from ..turn.orchestrator import Orchestrator
from ..turn.recall import RecallSource
from ..views.markdown_export import export_conversation, export_effort
from ..views.scrollback import PAGE, HistoryPage, ScrollBack, recent_lines
from ..views.status import EffortView, SessionStatus, concluded_views, effort_view, full_status, session_status
from .recovery import UnansweredTurn, unanswered_turn


@dataclass(frozen=True)
class ContextInspection:
    """Exactly what the model would receive next, for the inspector screen. ``recalled``: the passages
    the draft recalls (in ``context``'s recall layer), each with the words it was found by;
    ``last_recalled``: the last turn's, as it was sent (empty after a relaunch)."""

    context: WorkingContext
    tool_defs: list[dict[str, Any]]
    budget: int
    counter: TokenCounter
    recalled: tuple[RecallSource, ...] = ()
    last_recalled: tuple[RecallSource, ...] = ()


class EngineQuestions:
    """The read-only half of an open session (the engine owns these attributes)."""

    _session: Session
    _orchestrator: Orchestrator
    _index: EffortIndex | None
    settings: Settings
    _scrollback: ScrollBack | None = None

    @property
    def session_dir(self) -> Path:
        return self._session.dir

    @property
    def has_model(self) -> bool:
        return self._orchestrator.llm is not None

    @property
    def budget(self) -> int:
        return self._orchestrator.budget

    def set_budget(self, budget: int) -> None:
        self._orchestrator.budget = budget
        self._session.state.budget = budget

    @property
    def turn(self) -> int:
        return self._session.state.turn

    @property
    def counter(self) -> TokenCounter:
        """The session's token counter (one cache for every count)."""
        return self._session.counter

    @property
    def compactions(self) -> int:
        return self._session.state.compaction_count

    def status(self) -> SessionStatus:
        return session_status(self._session, message_cap=self._orchestrator.message_cap)

    def full_status(self) -> SessionStatus:
        """Every effort (reads the whole catalog: ``status --json``)."""
        return full_status(self._session, self._orchestrator.message_cap)

    def concluded_page(self, offset: int, limit: int) -> list[EffortView]:
        """Concluded efforts, the latest conclusion first (a page of the long list)."""
        return concluded_views(self._session, offset, limit)

    def effort(self, effort_id: str) -> EffortView | None:
        effort = self._session.efforts.get(effort_id)
        return effort_view(self._session, effort, self._orchestrator.message_cap) if effort is not None else None

    def active_effort(self) -> EffortView | None:
        active = self._session.efforts.active
        return effort_view(self._session, active, self._orchestrator.message_cap) if active is not None else None

    def figures(self) -> ContextFigures:
        return self._orchestrator.figures()

    def usage(self) -> dict[str, int]:
        """Tokens the provider reported for this run's requests (prompt, completion, total)."""
        return dict(self._orchestrator.calls.usage_total)

    def history(self) -> list[dict[str, int]]:
        """Per-turn context figures (``ccm`` and ``naive`` tokens), oldest first."""
        return list(self._session.state.history)

    def status_json(self, status: SessionStatus | None = None) -> dict[str, Any]:
        """``status --json`` (contract): every effort, unless ``status`` says which."""
        data = (status or self.full_status()).as_json()
        data["context"] = self.figures().as_dict()
        data["session_dir"] = str(self._session.dir)
        data["clean_shutdown"] = self._session.state.clean_shutdown
        data["compactions"] = self._session.state.compaction_count
        data["usage"] = self.session_usage()
        return data

    def session_usage(self) -> dict[str, Any]:
        """What the provider reported for this session's requests, across launches (cost when known)."""
        return dict(self._session.state.usage)

    def inspect(self, draft: str = "") -> ContextInspection:
        """The next request, with ``draft`` as its message and the lines it would recall."""
        orchestrator = self._orchestrator
        turn = [{"role": "user", "content": draft}] if draft else []
        recalled = orchestrator.recall_preview(draft)
        last = orchestrator.last_recalled
        return ContextInspection(
            orchestrator.assemble(turn, orchestrator.offered_tools, recalled.text if recalled else ""),
            orchestrator.offered_tools or [],
            self.budget,
            self._session.counter,
            recalled=recalled.sources() if recalled else (),
            last_recalled=last.sources() if last else (),
        )

    def effort_log(self, effort_id: str) -> JsonlRead:
        """An effort's raw log as on disk, to show (unreadable lines counted, not fatal): a huge line by
        its head, its content saying how much is left out (:mod:`.long_lines`)."""
        read = read_jsonl(self._session.effort_path(effort_id), line_cap=SHOW_BYTES)
        read.records = [{**r, "content": shown_content(r)} if cut_size(r) else r for r in read.records]
        return read

    def read_lines(self, log: str, first: int, last: int) -> LogLines:
        """Lines ``first``..``last`` of an effort's log or of the ambient chat (``log="ambient"``),
        read without loading anything into the context (the ambient log through the index's seek)."""
        if log == AMBIENT:
            raw, index = self._session.raw_path, self._index
            if index is None:
                return file_lines(raw, first, last)
            read = partial(index.read_ambient_lines, raw, cap=READ_BYTES)
            return indexed_lines(read, first, last, self._session.state.ambient_messages)
        if self._session.efforts.get(log) is None:
            raise EffortNotFound(f"there is no effort '{log}'")
        return file_lines(self._session.effort_path(log), first, last)

    def export_effort(self, effort_id: str, target: Path) -> Path:
        effort = self.effort(effort_id)
        if effort is None:
            raise EffortNotFound(f"there is no effort '{effort_id}'")
        return export_effort(effort, self._session.effort_path(effort_id), target)

    def export_conversation(self, target: Path) -> Path:
        """The whole conversation (ambient chat and every effort's log, in order) as Markdown."""
        session = self._session
        logs = sorted(session.effort_path(e.id) for e in self.full_status().efforts)
        return export_conversation(session.dir.name, session.raw_path, [p for p in logs if p.is_file()], target)

    def recent_lines(self, limit: int = 40) -> list[LoggedLine]:
        """The newest logged lines across the ambient log and recent effort logs (chat history)."""
        return recent_lines(self._session, limit)

    def older_lines(self, before: LoggedLine, limit: int = PAGE) -> HistoryPage:
        """The chat said before ``before`` (the oldest line shown), a page: scrolling back."""
        if self._scrollback is None:
            self._scrollback = ScrollBack(self._session)
        return self._scrollback.page(before, limit)

    def unanswered_turn(self) -> UnansweredTurn | None:
        return unanswered_turn(self._session)

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """Ranked search over every effort (raises :class:`SearchIndexError` when the index is unusable)."""
        folded = self._session.state.ambient_folded_upto
        if self._index is not None:
            return without_folded(self._index.search(query, limit=limit), folded)
        with EffortIndex(self._session.dir / SEARCH_DB) as index:  # a read-only engine keeps none open
            sync_index(index, self._session)
            return without_folded(index.search(query, limit=limit), folded)
