"""What the chat pane shows of earlier turns: recent log lines from the session's files.

At start-up, and when another process wrote to the session, the chat pane shows
the newest lines of the ambient log and of the most recently written effort
logs, in time order. Only file tails are read, so this stays fast however long
the session is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .session import EFFORTS_DIR, Session
from .store import read_jsonl_tail

RECENT_EFFORT_FILES = 6
ROLE_ORDER = {"user": 0, "system": 1, "assistant": 2}


@dataclass(frozen=True)
class LoggedLine:
    role: str
    content: str
    ts: str
    logged_to: str  # "ambient" or an effort id
    interrupted: bool = False

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


def recent_lines(session: Session, limit: int = 40) -> list[LoggedLine]:
    """The newest ``limit`` logged lines across the ambient log and recent effort logs."""
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
