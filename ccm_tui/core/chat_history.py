"""What the chat pane shows of earlier turns: recent log lines from the session's files.

At start-up, and when another process wrote to the session, the chat pane shows
the newest lines of the ambient log and of the most recently written effort
logs, in time order, with the effort banners of that stretch (opened, concluded,
expanded, switched ...) rebuilt from the event log, worded as they were shown
live. Only file tails are read, so this stays fast however long the session is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import eventlog as ev
from .efforts import SLUG_RE
from .session import Session
from .store import read_jsonl_tail

RECENT_EFFORT_FILES = 6
RECENT_EVENTS = 600  # event-log tail searched for the banners of the lines shown
ROLE_ORDER = {"user": 0, "system": 1, "assistant": 2}
AFTER_REPLY = 3  # a collapse is logged once the turn is answered (decay), in the same millisecond or not

# The banner each effort event showed live (core/tools.py words them the same way).
EVENT_BANNERS = {
    ev.EFFORT_OPENED: "Opened effort: {id}",
    ev.EFFORT_CONCLUDED: "Concluded effort: {id}",
    ev.EFFORT_EXPANDED: "Expanded effort: {id} ({tokens} tokens loaded)",
    ev.EFFORT_COLLAPSED: "Collapsed effort: {id}",
    ev.EFFORT_SWITCHED: "Switched to effort: {id}",
    ev.EFFORT_REOPENED: "Reopened effort: {id}",
    ev.EFFORT_RESTORED: "Imported effort: {id}",
}


@dataclass(frozen=True)
class LoggedLine:
    role: str
    content: str
    ts: str
    logged_to: str  # "ambient" or an effort id
    interrupted: bool = False
    banner: bool = False  # an effort banner rebuilt from the event log, not a logged message

    @property
    def order(self) -> tuple[str, int]:
        """Sort key: time, then the order a turn logs things in when two share a millisecond."""
        if self.banner and self.content.startswith("Collapsed effort"):
            return (self.ts, AFTER_REPLY)
        return (self.ts, ROLE_ORDER.get(self.role, 1))

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.ts, self.role, self.content)


def _lines(records: list[dict[str, Any]], logged_to: str) -> list[LoggedLine]:
    out = []
    for r in records:
        content = r.get("content")
        if r.get("role") in ("user", "assistant", "system") and isinstance(content, str):
            out.append(LoggedLine(r["role"], content, str(r.get("ts") or ""), logged_to, bool(r.get("interrupted"))))
    return out


def _banners(session: Session, since: str) -> list[LoggedLine]:
    out = []
    for record in read_jsonl_tail(session.events.path, RECENT_EVENTS):
        template = EVENT_BANNERS.get(str(record.get("event")))
        ts, effort_id = str(record.get("ts") or ""), record.get("effort_id")
        if template is None or not isinstance(effort_id, str) or ts < since:
            continue
        text = template.format(id=effort_id, tokens=record.get("tokens", "?"))
        out.append(LoggedLine("system", text, ts, effort_id, banner=True))
    return out


def recent_lines(session: Session, limit: int = 40) -> list[LoggedLine]:
    """The newest ``limit`` logged lines across the ambient log and recent effort logs, with the
    effort banners of the same stretch of time."""
    lines = _logged_lines(session, limit)
    if lines:
        lines = sorted(lines + _banners(session, lines[0].ts), key=lambda line: line.order)
    return lines


def _recent_effort_logs(session: Session) -> list[Path]:
    """The most recently written effort logs: among the open efforts' and those the last events
    name (a session's other thousands of logs were finished long ago), the newest by mtime."""
    ids = {e.id for e in session.efforts.open_efforts()}
    ids.update(
        r["effort_id"]
        for r in read_jsonl_tail(session.events.path, RECENT_EVENTS)
        if isinstance(r.get("effort_id"), str)
    )
    dated = []
    for effort_id in ids:
        if not SLUG_RE.fullmatch(effort_id):
            continue
        path = session.effort_path(effort_id)
        try:
            dated.append((path.stat().st_mtime, path))
        except OSError:
            continue
    return [path for _, path in sorted(dated, reverse=True)[:RECENT_EFFORT_FILES]]


def _logged_lines(session: Session, limit: int) -> list[LoggedLine]:
    lines = _lines(read_jsonl_tail(session.raw_path, limit), "ambient")
    for path in _recent_effort_logs(session):
        lines += _lines(read_jsonl_tail(path, limit), path.stem)
    lines.sort(key=lambda line: line.order)
    return lines[-limit:]
