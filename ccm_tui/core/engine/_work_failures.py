"""How work that fails before (or outside) the model's part is reported: input that cannot be
stored, a session another process keeps, a write that failed."""

from __future__ import annotations

from ...errors import NotFound
from ..session.session import SessionLocked
from ..storage.durable import StoreError, disk_full
from ..turn.events import FAILED, Cause, Outcome, Work
from ..turn.orchestrator import UserInputError


class SessionWriteError(StoreError):
    """A session file could not be written (disk full, I/O error); the run is marked unclean.
    ``given_back``: the user's message goes back to the input (false once the turn's tools changed
    efforts: the next start logs that turn, and sending it again would store it twice)."""

    def __init__(self, message: str, *, given_back: bool = True, note: str = "") -> None:
        super().__init__(message)
        self.given_back = given_back
        self.note = note  # said after the cause in any wording ("… an effort: do not send it again")


def check_text(text: str) -> None:
    """A message that cannot be stored as UTF-8 (undecodable bytes from a pipe or a terminal)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start].encode("utf-8", "surrogateescape")
        raise UserInputError(
            f"the message is not valid UTF-8 (byte 0x{bad.hex()} at character {exc.start + 1}); "
            "convert it first, e.g. with iconv -f latin1 -t utf-8"
        ) from None


def still_locked(pid: int | None) -> str:
    """Why a turn or an action could not start: another process kept the session through the wait."""
    who = f"pid {pid}" if pid else "another process"
    return (
        f"the session is still in use by {who} (another ccm-tui or a ccm-tui send on this session); "
        "send again once it is done"
    )


def failed_outcome(turn: int, work: Work, text: str, exc: Exception, *, given_back: bool) -> Outcome:
    """The outcome of work that failed before (or outside) the model's part: invalid input, a
    session locked elsewhere, a failed write."""
    if isinstance(exc, SessionLocked):
        reason, cause = still_locked(exc.pid), Cause.LOCKED
    elif isinstance(exc, NotFound):
        reason, cause = str(exc), Cause.NOT_FOUND
    else:
        reason, cause = disk_full(exc) or str(exc), Cause.INPUT if isinstance(exc, UserInputError) else Cause.IO
        if isinstance(exc, SessionWriteError) and exc.note and exc.note not in reason:
            reason = f"{reason} ({exc.note})"
    return Outcome(turn=turn, work=work, status=FAILED, reason=reason, cause=cause, text=text, given_back=given_back)
