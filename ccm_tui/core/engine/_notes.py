"""Notes other agents leave in a session (``ccm-tui mcp``'s remember): appended, never rewritten.

A note is one log record, ``{"role": "user", "content": text, "ts": …, "note": true,
"source": "mcp", "agent": <the MCP client's name>}``, appended to the log of the effort it names — or, when it names
none, to the notes effort: landed as a concluded effort with the first note (through
the lifecycle, like an imported transcript), so it sits in no model's context by
itself and search finds it like any other effort. The caller holds the writer lock
and re-indexes the effort (:meth:`.engine.Engine.remember`); ``note_added`` is logged.

Its role stays ``user`` (the log's contract), but nothing shows it as the user's words: the
working context frames it (:func:`~ccm_tui.core.session.chat_line.framed_note`), the chat labels it "Note from
<agent>", a summary's transcript says NOTE — older notes, marked ``"source": "mcp"``, too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import EffortNotFound
from ..efforts import lifecycle
from ..manifest.effort import Effort
from ..session.chat_line import MAX_NOTE_CHARS, agent_name
from ..session.session import Session
from ..storage import eventlog as ev
from ..storage.durable import open_nofollow
from ..text.terminal import drop_invisible
from ..turn.orchestrator import UserInputError, clean_user_text

NOTES_NAME = "notes"  # the notes effort's name (and id, unless that id is taken)
NOTES_KIND = "notes"  # its source's kind: how it is found again whatever its id
NOTES_SUMMARY = "Notes that agents left through ccm-tui mcp (remember): decisions, facts and results to find again."
READ_CHUNK = 1 << 20


class NoteError(UserInputError):
    """The note cannot be added as asked (empty, too long, an effort that does not exist)."""


@dataclass(frozen=True)
class Note:
    effort_id: str
    line: int  # the note's 1-based line in the effort's log
    created: bool  # the notes effort was made for it

    def as_dict(self) -> dict[str, Any]:
        return {"effort_id": self.effort_id, "line": self.line, "created": self.created}


def note_text(text: str) -> str:
    """The note as it will be stored (control characters dropped), or :class:`NoteError`."""
    cleaned = drop_invisible(clean_user_text(text))  # no words a model reads and no one sees
    if not cleaned:
        raise NoteError("the note is empty")
    if len(cleaned) > MAX_NOTE_CHARS:
        raise NoteError(f"the note is {len(cleaned):,} characters; the limit is {MAX_NOTE_CHARS:,}")
    return cleaned


def notes_effort(session: Session) -> Effort | None:
    """The effort notes go to when none is named: the one made for them, else one called 'notes'."""
    made = next(iter(session.efforts.by_source_kind(NOTES_KIND)), None)
    return made or session.efforts.get(NOTES_NAME)


def append_note(session: Session, text: str, effort_id: str = "", *, source: str = "mcp", agent: str = "") -> Note:
    """Append a note to ``effort_id``'s log (any state), or to the notes effort, made on first use
    (``agent``: who leaves it, as its MCP client names itself)."""
    text = note_text(text)
    record: dict[str, Any] = {"role": "user", "content": text, "ts": ev.now_iso(), "note": True, "source": source}
    if name := agent_name(agent):  # (restricted again when shown: older notes, hand-edited logs)
        record["agent"] = name
    effort = session.efforts.get(effort_id) if effort_id else notes_effort(session)
    if effort is None and effort_id:
        raise EffortNotFound(
            f"there is no effort '{effort_id}' in this session (search and list give the ids; leave effort_id out "
            "to add the note to the notes effort)"
        )
    if effort is None:
        effort = lifecycle.land_imported(
            session, NOTES_NAME, [record], NOTES_SUMMARY, {"kind": NOTES_KIND, "via": source}, reserved=NOTES_NAME
        )
        note = Note(effort.id, 1, True)
    else:
        line = _next_line(session.effort_path(effort.id))
        session.append_effort(effort, [record])
        if effort.is_concluded:
            session.save_manifest()  # its message and token counts
        note = Note(effort.id, line, False)
    session.log_event(ev.NOTE_ADDED, effort_id=note.effort_id, line=note.line, chars=len(text), source=source)
    return note


def _next_line(path: Path) -> int:
    """The 1-based line the next appended record lands on (after a torn last line, the one after it)."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except FileNotFoundError:
        return 1
    lines, last = 0, b"\n"
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(READ_CHUNK):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (1 if last != b"\n" else 0) + 1
