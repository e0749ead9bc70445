"""A line of earlier chat as the chat pane shows it (a message or a banner rebuilt from the logs).

Vocabulary the UI imports at start-up: nothing here reads a session (that is
:mod:`~ccm_tui.core.views._history_lines` and :mod:`~ccm_tui.core.views.scrollback`), so the first paint does not wait for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

NOTE = "note"  # a note's role as the chat shows it (its log line says "user", marked "note": true)
ROLE_ORDER = {"user": 0, NOTE: 0, "system": 1, "assistant": 2}
AGENT_CHARS = 60  # of an agent's name as a note shows it
MAX_NOTE_CHARS = 20_000  # of a note's text (the MCP server's schema says so; engine/_notes enforces it)


def note_author(record: Mapping[str, Any]) -> str | None:
    """Who left a note — an agent, through ``ccm-tui mcp``'s remember — or None when ``record`` is
    no note. A note is a ``user`` line marked ``"note": true`` (older notes: ``"source": "mcp"``);
    ``"agent"`` names the MCP client that left it: shown quoted (``agent "claude-code"``), of the
    characters :func:`agent_name` keeps, so no name can close the frame, break the line or pose as the
    user (an agent named "You" is ``agent "You"``); none (older notes): "an agent"."""
    if record.get("role") != "user" or not (record.get("note") is True or record.get("source") == "mcp"):
        return None
    name = agent_name(record.get("agent"))
    return f'agent "{name}"' if name else "an agent"


def agent_name(agent: Any) -> str:
    """An MCP client's name as a note keeps it: letters, digits, spaces and ``. _ - + @ / :`` only (no
    brackets, quotes, line breaks or invisible characters), at most :data:`AGENT_CHARS`."""
    if not isinstance(agent, str):
        return ""
    kept = "".join(c if c.isalnum() or c in _AGENT_PUNCTUATION else " " for c in agent)
    return " ".join(kept.split())[:AGENT_CHARS].strip()


_AGENT_PUNCTUATION = " ._-+@/:"


def framed_note(author: str, text: str) -> str:
    """A note as a model reads it: framed as a note, never as the user's own words."""
    return f"[Note left by {author} via ccm-tui mcp — not the user's words] {text}"


# What closes a reply that was cut short (Escape, a crash after its tools ran): the log keeps the text
# as it came, flagged ``interrupted``; the history, the export and the model's context end it with this.
INTERRUPTED_END = "[… reply interrupted]"


def with_interrupted_end(text: str) -> str:
    """``text`` (an interrupted reply, maybe empty) with :data:`INTERRUPTED_END` after it."""
    return f"{text.rstrip()}\n\n{INTERRUPTED_END}" if text.strip() else INTERRUPTED_END


@dataclass(frozen=True)
class LoggedLine:
    role: str
    content: str
    ts: str
    logged_to: str  # "ambient" or an effort id
    interrupted: bool = False
    banner: bool = False  # a banner rebuilt from the event log, not a logged message
    kind: str = "effort"  # a banner's kind, as live: "effort" (--- … ---) or "compaction"
    place: str = ""  # a turn's banner logged after its reply (decay, compaction): shown above it, as live
    usage: tuple[int, int, float | None] | None = None  # a reply's turn: prompt, completion tokens, cost
    author: str = ""  # a note's: the agent that left it (role NOTE; shown "Note from <author>", not "You")
    cut: bool = False  # a reply that stopped at its cap (reply_max_tokens)

    @property
    def shown(self) -> str:
        """The text as the chat shows it: an interrupted reply says so at its end too (its header
        says it as well; ``content`` stays as logged, the key of the line)."""
        return with_interrupted_end(self.content) if self.interrupted else self.content

    @property
    def order(self) -> tuple[str, int]:
        """Sort key: time, then the order a turn logs things in when two share a millisecond."""
        return (self.place or self.ts, ROLE_ORDER.get(self.role, 1))

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.ts, self.role, self.content)


END_OF_CHAT = LoggedLine("user", "", "\uffff", "")  # after everything said: the newest page is the page before it


def sent_now(text: str) -> LoggedLine:
    """A message being sent now, as a line (the chat marks where scrolling back starts with it)."""
    return LoggedLine("user", text, datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"), "")
