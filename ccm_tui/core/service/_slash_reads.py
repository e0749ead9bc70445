"""The answers of the slash commands that only read the session: ``/search``, ``/status``, ``/help``.

With ``search_captures`` on, ``/search`` then lists the hits in the captured agents' sessions
(``ccm-tui watch``), each with its agent, project, date and the command that resumes it.

They need no run state and no model: the controller answers them at once, even
while a reply streams. What they show is the words of ``ccm-tui search`` and
``status`` (:mod:`~ccm_tui.core.views.reports`); ``result`` carries the same data as their
``--json``, and ``/search``'s its lines with the spans of the words found (``report``:
indent, text, spans), for the chat to style.
"""

from __future__ import annotations

from ...config import sessions_dir
from ..engine.all_sessions import CaptureFilter, search_all_sessions
from ..engine.engine import Engine
from ..search import DerivedError
from ..turn.events import DONE, FAILED, Cause, Outcome, Work
from ..views.reports import captured_json, captured_report, hit_json, search_report, status_text
from .run_state import SlashCommand
from .slash_commands import help_text

SEARCH_LIMIT = 8


def answer(engine: Engine, command: SlashCommand) -> Outcome:
    turn = engine.turn
    if command.name == "search":
        try:
            hits = engine.search(command.argument, SEARCH_LIMIT)
        except DerivedError as exc:
            return Outcome(
                turn=turn, work=Work.COMMAND, status=FAILED, reason=str(exc), cause=Cause.SEARCH, text=command.line
            )
        report = search_report(hits)  # (the TUI styles the matches from ``report``: text, spans)
        result = {"results": [hit_json(h) for h in hits]}
        if engine.settings.search_captures:  # then the captured agents' sessions (``ccm-tui watch``)
            captured = search_all_sessions(
                sessions_dir(), command.argument, SEARCH_LIMIT, where=CaptureFilter(captures_only=True),
                settings=engine.settings,
            )  # fmt: skip
            report += captured_report(captured.hits)
            result["captures"] = [captured_json(found) for found in captured.hits]
        reply = "\n".join(line.plain for line in report)
        result["report"] = [line.as_json() for line in report]
    elif command.name == "status":
        status = engine.status()
        data = engine.status_json(status)
        reply, result = status_text(status, data), data
    else:
        reply, result = help_text(), {}
    return Outcome(turn=turn, work=Work.COMMAND, status=DONE, text=command.line, reply=reply, result=result)
