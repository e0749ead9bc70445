"""What the user typed, per session: the messages sent (Up/Down walk them) and the unsent draft.

Kept in the session directory beside the contract files, but not one of them: nothing else
reads them, a session without them is whole, and losing them loses no conversation.
``prompt_history.jsonl`` holds one ``{"text", "ts"}`` line per sent message; ``prompt_draft.txt``
what was in the input when the app last saw it.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...atomic_file import atomic_write_text
from ..storage.eventlog import now_iso

HISTORY_FILE = "prompt_history.jsonl"
DRAFT_FILE = "prompt_draft.txt"
MAX_ENTRIES = 500  # walked with Up/Down: the newest are the ones that matter


def is_forget(text: str) -> bool:
    """A ``/forget`` command: never remembered (it names what is to be forgotten)."""
    return text.lstrip().casefold().startswith("/forget")


class PromptHistory:
    """The sent messages of one session, newest last, and a position while the user walks them."""

    def __init__(self, session_dir: Path) -> None:
        self.dir = Path(session_dir)
        self.entries = self._read()
        self._at: int | None = None  # the entry shown while walking; None: not walking

    def _read(self) -> list[str]:
        try:
            lines = (self.dir / HISTORY_FILE).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return []
        entries = []
        for line in lines[-MAX_ENTRIES:]:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn last line (a crash mid-write) costs that line only
            if isinstance(record, dict) and isinstance(record.get("text"), str) and record["text"].strip():
                entries.append(record["text"])
        return entries

    def add(self, text: str) -> None:
        """A message was sent: it becomes the newest entry (not twice in a row)."""
        self._at = None
        if not text.strip() or (self.entries and self.entries[-1] == text) or is_forget(text):
            return
        self.entries.append(text)
        del self.entries[:-MAX_ENTRIES]
        if self.dir.is_dir():  # a session not created yet keeps it for this run only
            try:
                with open(self.dir / HISTORY_FILE, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"text": text, "ts": now_iso()}, ensure_ascii=False) + "\n")
            except OSError:
                pass  # a convenience: never worth failing a send for

    def remind(self, text: str) -> None:
        """``text`` becomes the newest entry for this run only (an unanswered message from before a
        crash: Up in the empty input brings it back to edit), without writing it again."""
        self._at = None
        if text.strip() and (not self.entries or self.entries[-1] != text):
            self.entries.append(text)

    def older(self) -> str | None:
        """The entry before the one shown (the newest when not walking); None when there is none."""
        if not self.entries or self._at == 0:
            return None
        self._at = len(self.entries) - 1 if self._at is None else self._at - 1
        return self.entries[self._at]

    def newer(self) -> str | None:
        """The entry after the one shown; "" past the newest (the input empties); None when not walking."""
        if self._at is None:
            return None
        if self._at >= len(self.entries) - 1:
            self._at = None
            return ""
        self._at += 1
        return self.entries[self._at]

    def stop(self) -> None:
        self._at = None

    # ------------------------------------------------------------------ draft
    def draft(self) -> str:
        try:
            return (self.dir / DRAFT_FILE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def save_draft(self, text: str) -> None:
        """What is in the input now (an empty input removes the draft)."""
        path = self.dir / DRAFT_FILE
        try:
            if text.strip():
                if self.dir.is_dir():
                    atomic_write_text(path, text, durable=False)
            else:
                path.unlink(missing_ok=True)
        except OSError:
            pass
