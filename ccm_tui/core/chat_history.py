"""What the chat pane shows of earlier turns: recent log lines from the session's files.

At start-up, and when another process wrote to the session, the chat pane shows
the newest lines of the ambient log and of the most recently written effort
logs, in time order, with the effort banners of that stretch (opened, concluded,
expanded, switched ...) rebuilt from the event log, worded as they were shown
live. Only file tails are read, so this stays fast however long the session is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import eventlog as ev
from .session import EFFORTS_DIR, Session
from .store import read_jsonl_tail

RECENT_EFFORT_FILES = 6
RECENT_EVENTS = 600  # event-log tail searched for the banners of the lines shown
ROLE_ORDER = {"user": 0, "system": 1, "assistant": 2}

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
        lines = sorted(lines + _banners(session, lines[0].ts), key=lambda line: (line.ts, ROLE_ORDER[line.role]))
    return lines


def _logged_lines(session: Session, limit: int) -> list[LoggedLine]:
    lines = _lines(read_jsonl_tail(session.raw_path, limit), "ambient")
    efforts_dir = session.dir / EFFORTS_DIR
    try:
        files = sorted(efforts_dir.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        files = []
    for path in files[:RECENT_EFFORT_FILES]:
        lines += _lines(read_jsonl_tail(path, limit), path.stem)
    lines.sort(key=lambda line: (line.ts, ROLE_ORDER.get(line.role, 1)))
    return lines[-limit:]
