"""A line of earlier chat as the chat pane shows it (a message or a banner rebuilt from the logs).

Vocabulary the UI imports at start-up: nothing here reads a session (that is
:mod:`.chat_history` and :mod:`.scrollback`), so the first paint does not wait for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

ROLE_ORDER = {"user": 0, "system": 1, "assistant": 2}
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
